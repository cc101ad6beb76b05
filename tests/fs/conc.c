// SPDX-License-Identifier: MIT
/*
 * conc: concurrent readers and writers on shared files, then verification.
 *
 *   conc [-t threads] [-n iterations] [-S seed] DIR [SOURCE]
 *
 * Four phases, each on its own file in DIR:
 *   disjoint  each thread owns a range (boundaries not page aligned, so
 *             neighbours share pages), writes random pieces of it and checks
 *             every read against its own model;
 *   slots     threads write and read 3000-byte slots that straddle pages;
 *             a per-slot rwlock orders a slot's writes and reads, so every
 *             read must return exactly the last write, while other slots on
 *             the same pages change concurrently;
 *   append    O_APPEND records from all threads: none lost, none torn,
 *             none duplicated, each thread's in order;
 *   race      unsynchronised whole-slot writes to the same slots: every slot
 *             ends up holding one intact record (writes are atomic, POSIX
 *             2.9.7).
 * After each phase the whole file is compared with the model, through DIR
 * and, if given, directly in SOURCE (the files must have reached it).
 * Exit status: 0 ok, 1 a check failed, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REGION (256 * 1024 + 1000)
#define SLOT 3000
#define NSLOTS 96
#define REC 1000
#define MAXT 64

struct worker {
	pthread_t tid;
	int id;
	uint64_t rng;
	unsigned char *buf, *buf2;
};

static int nthreads = 8, iters = 2000;
static const char *dir, *srcdir;
static int shared_fd = -1;
static unsigned char *model;
static pthread_rwlock_t slot_lock[NSLOTS];
/* Set by any thread's failed check, read by every worker's loop: an atomic. */
static atomic_int failed;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("conc: FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	atomic_store(&failed, 1);
}

static uint64_t rnd(struct worker *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void fill(struct worker *w, unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)rnd(w);
}

static int open_file(const char *base, const char *name, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", base, name);
	fd = open(path, flags, 0644);
	if (fd < 0)
		fail("open %s: %s", path, strerror(errno));
	return fd;
}

/* Compares len bytes at off of fd with want; returns 0 if equal. */
static int verify(int fd, const char *what, off_t off, const unsigned char *want, size_t len,
		  unsigned char *tmp)
{
	ssize_t n = pread(fd, tmp, len, off);
	size_t i;

	if (n != (ssize_t)len) {
		fail("%s: pread %zu at %lld returned %zd (%s)", what, len, (long long)off, n,
		     n < 0 ? strerror(errno) : "short");
		return -1;
	}
	if (!memcmp(tmp, want, len))
		return 0;
	for (i = 0; tmp[i] == want[i]; i++)
		;
	fail("%s: byte %lld is 0x%02x, expected 0x%02x", what, (long long)(off + i), tmp[i],
	     want[i]);
	return -1;
}

/* Checks the whole file name against model[0, len), in dir and in srcdir. */
static void verify_file(const char *name, size_t len)
{
	const char *base[2] = { dir, srcdir };
	unsigned char *tmp = malloc(len);
	char what[256];
	int i, fd;

	for (i = 0; i < 2 && base[i] && !failed; i++) {
		fd = open_file(base[i], name, O_RDONLY);
		if (fd < 0)
			break;
		snprintf(what, sizeof(what), "%s/%s after the run", base[i], name);
		if (lseek(fd, 0, SEEK_END) != (off_t)len)
			fail("%s: size %lld, expected %zu", what, (long long)lseek(fd, 0, SEEK_END),
			     len);
		else
			verify(fd, what, 0, model, len, tmp);
		close(fd);
	}
	free(tmp);
}

/* An fd per thread for even ids, the shared fd for odd ones. */
static int thread_fd(struct worker *w, const char *name, int flags)
{
	return w->id % 2 ? shared_fd : open_file(dir, name, flags);
}

static void put_fd(int fd)
{
	if (fd != shared_fd) {
		if (fsync(fd) < 0)
			fail("fsync: %s", strerror(errno));
		close(fd);
	}
}

static void *disjoint_worker(void *arg)
{
	struct worker *w = arg;
	unsigned char *mine = model + (size_t)w->id * REGION;
	int i, fd = thread_fd(w, "conc.disjoint", O_RDWR);

	for (i = 0; i < iters && !failed && fd >= 0; i++) {
		size_t off = rnd(w) % REGION, len = 1 + rnd(w) % (REGION - off);

		len = len > 65536 ? 1 + len % 65536 : len;
		if (rnd(w) % 2) {
			fill(w, w->buf, len);
			if (pwrite(fd, w->buf, len, (off_t)w->id * REGION + off) != (ssize_t)len)
				fail("disjoint: pwrite: %s", strerror(errno));
			memcpy(mine + off, w->buf, len);
		} else {
			verify(fd, "disjoint read", (off_t)w->id * REGION + off, mine + off, len,
			       w->buf2);
		}
	}
	put_fd(fd);
	return NULL;
}

/* Writes or reads one slot under its lock; reads must see the last write. */
static void slot_op(struct worker *w, int fd)
{
	int s = rnd(w) % NSLOTS;
	int span = rnd(w) % 4 == 0 ? 1 + rnd(w) % 3 : 1;
	int k;

	if (s + span > NSLOTS)
		span = NSLOTS - s;
	if (rnd(w) % 2) {
		pthread_rwlock_wrlock(&slot_lock[s]);
		fill(w, w->buf, SLOT);
		if (pwrite(fd, w->buf, SLOT, (off_t)s * SLOT) != SLOT)
			fail("slots: pwrite: %s", strerror(errno));
		memcpy(model + (size_t)s * SLOT, w->buf, SLOT);
		pthread_rwlock_unlock(&slot_lock[s]);
		return;
	}
	for (k = 0; k < span; k++)
		pthread_rwlock_rdlock(&slot_lock[s + k]);
	verify(fd, "slots read", (off_t)s * SLOT, model + (size_t)s * SLOT, (size_t)span * SLOT,
	       w->buf2);
	for (k = 0; k < span; k++)
		pthread_rwlock_unlock(&slot_lock[s + k]);
}

static void *slots_worker(void *arg)
{
	struct worker *w = arg;
	int i, fd = thread_fd(w, "conc.slots", O_RDWR);

	for (i = 0; i < iters && !failed && fd >= 0; i++)
		slot_op(w, fd);
	put_fd(fd);
	return NULL;
}

/* A self-describing record: thread, sequence number, payload, checksum. */
static void make_record(unsigned char *r, uint32_t thread, uint32_t seq, uint32_t slot)
{
	uint64_t sum = 0;
	size_t i;

	memcpy(r, &thread, 4);
	memcpy(r + 4, &seq, 4);
	memcpy(r + 8, &slot, 4);
	for (i = 12; i < REC - 8; i++)
		r[i] = (unsigned char)(thread * 131 + seq * 7 + slot * 3 + i);
	for (i = 0; i < REC - 8; i++)
		sum = sum * 31 + r[i];
	memcpy(r + REC - 8, &sum, 8);
}

/* Returns 0 if r is an intact record, filling its fields. */
static int parse_record(const unsigned char *r, uint32_t *thread, uint32_t *seq, uint32_t *slot)
{
	unsigned char want[REC];

	memcpy(thread, r, 4);
	memcpy(seq, r + 4, 4);
	memcpy(slot, r + 8, 4);
	if (*thread >= MAXT)
		return -1;
	make_record(want, *thread, *seq, *slot);
	return memcmp(want, r, REC) ? -1 : 0;
}

static void *append_worker(void *arg)
{
	struct worker *w = arg;
	int i, fd = open_file(dir, "conc.append", O_WRONLY | O_APPEND);

	for (i = 0; i < iters && !failed && fd >= 0; i++) {
		make_record(w->buf, w->id, i, 0);
		if (write(fd, w->buf, REC) != REC)
			fail("append: write: %s", strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *race_worker(void *arg)
{
	struct worker *w = arg;
	int i, fd = thread_fd(w, "conc.race", O_RDWR);

	for (i = 0; i < iters && !failed && fd >= 0; i++) {
		uint32_t slot = rnd(w) % 16;

		make_record(w->buf, w->id, i, slot);
		if (pwrite(fd, w->buf, REC, (off_t)slot * REC) != REC)
			fail("race: pwrite: %s", strerror(errno));
	}
	put_fd(fd);
	return NULL;
}

/* Checks the appended file: every thread's records, complete and in order. */
static void check_append(const char *base)
{
	int fd = open_file(base, "conc.append", O_RDONLY);
	unsigned char rec[REC];
	uint32_t next[MAXT] = { 0 }, t, seq, slot;
	long n = 0;
	int i;

	if (fd < 0)
		return;
	while (!failed && pread(fd, rec, REC, (off_t)n * REC) == REC) {
		if (parse_record(rec, &t, &seq, &slot) || slot || t >= (uint32_t)nthreads)
			fail("%s/conc.append: record %ld is torn or foreign", base, n);
		else if (seq != next[t])
			fail("%s/conc.append: thread %u record %u where %u was due", base, t, seq,
			     next[t]);
		else
			next[t]++;
		n++;
	}
	for (i = 0; i < nthreads && !failed; i++)
		if (next[i] != (uint32_t)iters)
			fail("%s/conc.append: thread %d has %u of %d records", base, i, next[i],
			     iters);
	if (!failed && lseek(fd, 0, SEEK_END) != (off_t)n * REC)
		fail("%s/conc.append: size is not a whole number of records", base);
	close(fd);
}

/* Every written race slot holds one intact record that was written to it. */
static void check_race(const char *base)
{
	int fd = open_file(base, "conc.race", O_RDONLY);
	unsigned char rec[REC];
	uint32_t t, seq, slot;
	int s;

	for (s = 0; s < 16 && fd >= 0 && !failed; s++) {
		if (pread(fd, rec, REC, (off_t)s * REC) != REC)
			fail("%s/conc.race: slot %d short", base, s);
		else if (parse_record(rec, &t, &seq, &slot) || slot != (uint32_t)s)
			fail("%s/conc.race: slot %d holds no intact record of its own (torn write)",
			     base, s);
		else if (t >= (uint32_t)nthreads || seq >= (uint32_t)iters)
			fail("%s/conc.race: slot %d holds an impossible record", base, s);
	}
	if (fd >= 0)
		close(fd);
}

static void run_phase(const char *name, void *(*fn)(void *), struct worker *w)
{
	struct timespec t0, t1;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&w[i].tid, NULL, fn, &w[i])) {
			fail("pthread_create");
			nthreads = i;
		}
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].tid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("conc: %s: %d threads x %d operations, %.2fs%s\n", name, nthreads, iters,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, failed ? ", FAILED" : "");
}

/* Creates name with len zero bytes and opens the shared descriptor on it. */
static int prepare(const char *name, size_t len)
{
	int fd = open_file(dir, name, O_RDWR | O_CREAT | O_TRUNC);

	if (fd < 0 || ftruncate(fd, len) < 0) {
		fail("prepare %s: %s", name, strerror(errno));
		return -1;
	}
	memset(model, 0, len);
	shared_fd = fd;
	return 0;
}

static void finish(const char *name, size_t len)
{
	if (fsync(shared_fd) < 0)
		fail("fsync %s: %s", name, strerror(errno));
	close(shared_fd);
	shared_fd = -1;
	verify_file(name, len);
}

static void usage(void)
{
	fprintf(stderr, "usage: conc [-t threads] [-n iterations] [-S seed] DIR [SOURCE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long seed = time(NULL);
	struct worker w[MAXT];
	int opt, i;

	while ((opt = getopt(argc, argv, "t:n:S:")) != -1) {
		if (opt == 't')
			nthreads = atoi(optarg);
		else if (opt == 'n')
			iters = atoi(optarg);
		else if (opt == 'S')
			seed = strtoull(optarg, NULL, 0);
		else
			usage();
	}
	if (argc - optind < 1 || argc - optind > 2 || nthreads < 2 || nthreads > MAXT || iters < 1)
		usage();
	dir = argv[optind];
	srcdir = argv[optind + 1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("conc: seed %llu\n", seed);
	model = calloc(nthreads, REGION > NSLOTS * SLOT ? REGION : NSLOTS * SLOT);
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .id = i, .rng = seed * 1000 + i };
		w[i].buf = malloc(4 * SLOT > 65536 ? 4 * SLOT : 65536);
		w[i].buf2 = malloc(4 * SLOT > 65536 ? 4 * SLOT : 65536);
	}
	for (i = 0; i < NSLOTS; i++)
		pthread_rwlock_init(&slot_lock[i], NULL);

	if (!prepare("conc.disjoint", (size_t)nthreads * REGION)) {
		run_phase("disjoint", disjoint_worker, w);
		finish("conc.disjoint", (size_t)nthreads * REGION);
	}
	if (!failed && !prepare("conc.slots", NSLOTS * SLOT)) {
		run_phase("slots", slots_worker, w);
		finish("conc.slots", NSLOTS * SLOT);
	}
	if (!failed && !prepare("conc.append", 0)) {
		close(shared_fd);
		run_phase("append", append_worker, w);
		check_append(dir);
		if (srcdir)
			check_append(srcdir);
	}
	if (!failed && !prepare("conc.race", 16 * REC)) {
		run_phase("race", race_worker, w);
		if (fsync(shared_fd) < 0)
			fail("fsync conc.race: %s", strerror(errno));
		close(shared_fd);
		check_race(dir);
		if (srcdir)
			check_race(srcdir);
	}
	for (i = 0; i < nthreads; i++) {
		free(w[i].buf);
		free(w[i].buf2);
	}
	free(model);
	printf("conc: %s\n", failed ? "FAILED" : "all phases verified");
	return failed ? 1 : 0;
}
