// SPDX-License-Identifier: MIT
/*
 * cfsio.c - the I/O side of the cachefs tests: data whose every byte can be
 * checked, and the cross-mount coherence checks.
 *
 *   cfsio gen FILE SIZE          write the pattern of FILE's name, SIZE bytes
 *   cfsio verify [-t SEC] [-s STOP] [-k] [-w] FILE...
 *                                random reads of the FILEs (paths on a mount),
 *                                every byte checked against the pattern, until
 *                                SEC seconds passed or STOP exists; -k keeps
 *                                going through errors (a daemon being killed),
 *                                -w also rewrites random ranges with the bytes
 *                                they must hold (write-invalidate, lease)
 *   cfsio seq A B SRC ITERS SEED write (and truncate) through path A, then read
 *                                through path B of the same file: B returns
 *                                exactly what was acknowledged, every time
 *   cfsio conc A B SEC           writers and readers through both paths at once:
 *                                per byte, a read returns a version no older
 *                                than the last write acknowledged before it
 *                                began and no newer than the last one begun
 *                                before it returned (reads may be torn across
 *                                versions: FUSE splits direct I/O and SOURCE's
 *                                own pread/pwrite are not atomic to each other)
 *   cfsio reval MNTFILE SRCFILE MS
 *                                through one open handle on MNTFILE: read, change
 *                                SRCFILE in place (same size, new bytes, same
 *                                mtime), wait MS ms, read: the new bytes
 *   cfsio list DIR BYTES         the names of DIR, one per line, read with
 *                                getdents64 into BYTES at a time (the size of
 *                                the kernel's READDIR requests follows it)
 *
 * Exit 0 on success, 1 with a message naming the first wrong byte, 2 on usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_IO (256 << 10)

static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cfsio: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t *state)
{
	return mix(*state += 0x9e3779b97f4a7c15ULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the pattern: byte @off of a file named @name ---- */

static uint64_t name_seed(const char *path)
{
	const char *base = strrchr(path, '/');
	uint64_t h = 0xcbf29ce484222325ULL;

	for (base = base ? base + 1 : path; *base; base++)
		h = (h ^ (unsigned char)*base) * 0x100000001b3ULL;
	return h;
}

static void pattern(uint64_t seed, uint64_t off, unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++, off++)
		buf[i] = (unsigned char)(mix(seed ^ (off >> 3)) >> ((off & 7) * 8));
}

static int cmd_gen(int argc, char **argv)
{
	unsigned char *buf = malloc(MAX_IO);
	uint64_t size, seed, off;
	int fd;

	if (argc != 4 || !buf)
		return 2;
	size = strtoull(argv[3], NULL, 0);
	seed = name_seed(argv[2]);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("%s: %s", argv[2], strerror(errno));
	for (off = 0; off < size; off += MAX_IO) {
		size_t n = size - off < MAX_IO ? size - off : MAX_IO;

		pattern(seed, off, buf, n);
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			die("%s: write: %s", argv[2], strerror(errno));
	}
	if (close(fd))
		die("%s: close: %s", argv[2], strerror(errno));
	free(buf);
	return 0;
}

/* ---- verify: random checked reads (and pattern rewrites) ---- */

struct vopts {
	double secs;
	const char *stop;
	bool keep_going, rewrite;
	unsigned long reads, writes, errors, bytes;
};

/* Check @n bytes read at @off of @path; die on the first wrong one. */
static void check_pattern(const char *path, uint64_t seed, uint64_t off, const unsigned char *got,
			  size_t n, unsigned char *want)
{
	pattern(seed, off, want, n);
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			die("%s: byte %llu is 0x%02x, must be 0x%02x (read of %zu at %llu)", path,
			    (unsigned long long)(off + i), got[i], want[i], n,
			    (unsigned long long)off);
}

/* One random operation on @path; false if it failed (error or short). */
static bool verify_one(const char *path, struct vopts *o, uint64_t *rs, unsigned char *buf,
		       unsigned char *want)
{
	int fd = open(path, o->rewrite ? O_RDWR : O_RDONLY);
	uint64_t seed = name_seed(path), off, len, expect;
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	for (int i = 0; i < 8; i++) {
		off = rnd(rs) % (uint64_t)st.st_size;
		len = 1 + rnd(rs) % MAX_IO;
		expect = (uint64_t)st.st_size - off < len ? (uint64_t)st.st_size - off : len;
		if (o->rewrite && rnd(rs) % 5 == 0) {
			pattern(seed, off, buf, expect);
			n = pwrite(fd, buf, expect, (off_t)off);
			o->writes++;
		} else {
			n = pread(fd, buf, len, (off_t)off);
			if (n > 0)
				check_pattern(path, seed, off, buf, (size_t)n, want);
			o->reads++;
			o->bytes += n > 0 ? (unsigned long)n : 0;
		}
		if (n != (ssize_t)expect) {
			close(fd);
			return false;
		}
	}
	close(fd);
	return true;
}

static int cmd_verify(int argc, char **argv)
{
	struct vopts o = { .secs = 10 };
	unsigned char *buf = malloc(MAX_IO), *want = malloc(MAX_IO);
	uint64_t rs = (uint64_t)getpid() * 7919 + (uint64_t)time(NULL);
	double end;
	int opt;

	while ((opt = getopt(argc - 1, argv + 1, "t:s:kw")) != -1) {
		if (opt == 't')
			o.secs = atof(optarg);
		else if (opt == 's')
			o.stop = optarg;
		else if (opt == 'k')
			o.keep_going = true;
		else if (opt == 'w')
			o.rewrite = true;
		else
			return 2;
	}
	argc -= optind + 1;
	argv += optind + 1;
	if (argc < 1 || !buf || !want)
		return 2;
	for (end = now() + o.secs; now() < end && !(o.stop && !access(o.stop, F_OK));) {
		const char *path = argv[rnd(&rs) % (uint64_t)argc];

		if (verify_one(path, &o, &rs, buf, want))
			continue;
		o.errors++;
		if (!o.keep_going)
			die("%s: read or write failed or short: %s", path, strerror(errno));
		usleep(2000);
	}
	printf("verify: %lu reads (%lu MiB) checked, %lu rewrites, %lu failed operations\n",
	       o.reads, o.bytes >> 20, o.writes, o.errors);
	free(buf);
	free(want);
	return 0;
}

/* ---- seq: write through A, read through B, against a model ---- */

struct seq {
	int fa, fb;
	unsigned char *model, *buf, *data;
	uint64_t size, max, rs;
	unsigned long iter;
};

static void seq_check(struct seq *s, uint64_t off, uint64_t len, const char *what)
{
	uint64_t expect = off >= s->size ? 0 : s->size - off < len ? s->size - off : len;
	ssize_t n = pread(s->fb, s->buf, len, (off_t)off);

	if (n < 0)
		die("iteration %lu: read through B: %s", s->iter, strerror(errno));
	if ((uint64_t)n != expect)
		die("iteration %lu, after %s: read of %llu at %llu through B returned %zd, "
		    "file size is %llu",
		    s->iter, what, (unsigned long long)len, (unsigned long long)off, n,
		    (unsigned long long)s->size);
	for (uint64_t i = 0; i < expect; i++)
		if (s->buf[i] != s->model[off + i])
			die("iteration %lu, after %s: byte %llu read through B is 0x%02x, the "
			    "acknowledged write left 0x%02x (stale or wrong)",
			    s->iter, what, (unsigned long long)(off + i), s->buf[i],
			    s->model[off + i]);
}

static void seq_write(struct seq *s, uint64_t off, uint64_t len, char *what)
{
	for (uint64_t i = 0; i < len; i++)
		s->data[i] = (unsigned char)rnd(&s->rs);
	if (pwrite(s->fa, s->data, len, (off_t)off) != (ssize_t)len)
		die("iteration %lu: write through A: %s", s->iter, strerror(errno));
	memcpy(s->model + off, s->data, len);
	if (off > s->size)
		memset(s->model + s->size, 0, off - s->size);
	if (off + len > s->size)
		s->size = off + len;
	snprintf(what, 64, "write of %llu at %llu", (unsigned long long)len,
		 (unsigned long long)off);
}

static void seq_truncate(struct seq *s, uint64_t size, char *what)
{
	if (ftruncate(s->fa, (off_t)size))
		die("iteration %lu: truncate through A: %s", s->iter, strerror(errno));
	if (size > s->size)
		memset(s->model + s->size, 0, size - s->size);
	s->size = size;
	snprintf(what, 64, "truncate to %llu", (unsigned long long)size);
}

static int cmd_seq(int argc, char **argv)
{
	struct seq s = { 0 };
	unsigned long iters;
	char what[64];
	ssize_t n;
	int fd;

	if (argc != 7)
		return 2;
	iters = strtoul(argv[5], NULL, 0);
	s.rs = strtoull(argv[6], NULL, 0);
	s.fa = open(argv[2], O_RDWR);
	s.fb = open(argv[3], O_RDONLY);
	if (s.fa < 0 || s.fb < 0)
		die("open %s / %s: %s", argv[2], argv[3], strerror(errno));
	s.max = 2ULL << 20;
	s.model = calloc(1, s.max + MAX_IO);
	s.buf = malloc(s.max + MAX_IO);
	s.data = malloc(MAX_IO);
	fd = open(argv[4], O_RDONLY);
	n = s.model && fd >= 0 ? pread(fd, s.model, s.max, 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0 || !s.buf || !s.data)
		die("%s: cannot load the initial contents", argv[4]);
	s.size = (uint64_t)n;
	for (s.iter = 0; s.iter < iters; s.iter++) {
		uint64_t off = rnd(&s.rs) % (s.size + 4096), len = 1 + rnd(&s.rs) % (96 << 10);
		uint64_t lo, hi;

		if (off + len > s.max)
			off = s.max - len;
		lo = off > 70000 ? off - 70000 : 0;
		hi = off + len + 70000;
		seq_check(&s, lo, hi - lo, "nothing (priming B's buffers)");
		if (rnd(&s.rs) % 16 == 0)
			seq_truncate(&s, rnd(&s.rs) % s.max, what);
		else
			seq_write(&s, off, len, what);
		seq_check(&s, lo, hi - lo, what);
		if (s.iter % 64 == 0)
			seq_check(&s, 0, s.max, what);
	}
	printf("seq: %lu writes and truncates through A, each read back through B\n", iters);
	free(s.model);
	free(s.buf);
	free(s.data);
	close(s.fa);
	close(s.fb);
	return 0;
}

/* ---- conc: versioned records, writers and readers on both mounts ---- */

#define NREC 96
#define RECSZ 5000 /* not a divisor of any bucket size: records straddle buckets */

static atomic_uint started[NREC], acked[NREC];
static atomic_bool conc_stop;
static atomic_ulong conc_reads, conc_torn, conc_unsure, conc_writes;
static int conc_fd[2];

static unsigned char rec_byte(unsigned int r, unsigned int j, unsigned int v)
{
	return (unsigned char)(v + r * 7 + j * 13 + (j >> 8) * 3);
}

static void rec_fill(unsigned char *buf, unsigned int r, unsigned int v)
{
	for (unsigned int j = 0; j < RECSZ; j++)
		buf[j] = rec_byte(r, j, v);
}

/* Writer @w owns the records r with r % 2 == w and writes through mount w. */
static void *conc_writer(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;
	uint64_t rs = w + 1;
	unsigned char buf[RECSZ];

	while (!atomic_load(&conc_stop)) {
		unsigned int r = (unsigned int)(rnd(&rs) % (NREC / 2)) * 2 + w;
		unsigned int v = atomic_load(&started[r]) + 1;

		rec_fill(buf, r, v);
		atomic_store(&started[r], v);
		if (pwrite(conc_fd[w], buf, RECSZ, (off_t)r * RECSZ) != RECSZ)
			die("writer %u: record %u: %s", w, r, strerror(errno));
		atomic_store(&acked[r], v);
		atomic_fetch_add(&conc_writes, 1);
	}
	return NULL;
}

/* Check record @r as read into @buf, @lo and @hi sampled around the read. */
static void conc_check(unsigned int m, unsigned int r, const unsigned char *buf, unsigned int lo,
		       unsigned int hi)
{
	unsigned int first = 0;

	if (hi - lo >= 255) {
		atomic_fetch_add(&conc_unsure, 1);
		return;
	}
	for (unsigned int j = 0; j < RECSZ; j++) {
		unsigned int v = lo + (unsigned char)(buf[j] - rec_byte(r, j, lo));

		if (v > hi)
			die("reader on mount %c: record %u byte %u holds version %u (mod 256), "
			    "outside [%u, %u]: %u was acknowledged before the read began, %u "
			    "is the newest begun before it returned",
			    "AB"[m], r, j, v % 256, lo, hi, lo, hi);
		if (j == 0)
			first = v;
		else if (v != first)
			first = UINT32_MAX;
	}
	if (first == UINT32_MAX)
		atomic_fetch_add(&conc_torn, 1);
}

/* Reader @arg % 2 reads 1-3 consecutive records through that mount. */
static void *conc_reader(void *arg)
{
	unsigned int m = (unsigned int)(uintptr_t)arg % 2;
	uint64_t rs = (uintptr_t)arg + 100;
	static _Thread_local unsigned char buf[3 * RECSZ];

	while (!atomic_load(&conc_stop)) {
		unsigned int r = (unsigned int)(rnd(&rs) % NREC),
			     k = 1 + (unsigned int)(rnd(&rs) % 3);
		unsigned int lo[3], hi[3];

		k = r + k > NREC ? NREC - r : k;
		for (unsigned int i = 0; i < k; i++)
			lo[i] = atomic_load(&acked[r + i]);
		ssize_t n = pread(conc_fd[m], buf, k * RECSZ, (off_t)r * RECSZ);

		if (n != (ssize_t)(k * RECSZ))
			die("reader on mount %c: records %u-%u: %s", "AB"[m], r, r + k - 1,
			    n < 0 ? strerror(errno) : "short read");
		for (unsigned int i = 0; i < k; i++)
			hi[i] = atomic_load(&started[r + i]);
		for (unsigned int i = 0; i < k; i++)
			conc_check(m, r + i, buf + i * RECSZ, lo[i], hi[i]);
		atomic_fetch_add(&conc_reads, 1);
	}
	return NULL;
}

static int cmd_conc(int argc, char **argv)
{
	pthread_t th[6];
	unsigned char buf[RECSZ];

	if (argc != 5)
		return 2;
	conc_fd[0] = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
	conc_fd[1] = open(argv[3], O_RDWR);
	if (conc_fd[0] < 0 || conc_fd[1] < 0)
		die("open %s / %s: %s", argv[2], argv[3], strerror(errno));
	for (unsigned int r = 0; r < NREC; r++) {
		rec_fill(buf, r, 0);
		if (pwrite(conc_fd[0], buf, RECSZ, (off_t)r * RECSZ) != RECSZ)
			die("initial write: %s", strerror(errno));
	}
	for (uintptr_t i = 0; i < 6; i++)
		if (pthread_create(&th[i], NULL, i < 2 ? conc_writer : conc_reader, (void *)i))
			die("pthread_create failed");
	usleep((useconds_t)(atof(argv[4]) * 1e6));
	atomic_store(&conc_stop, true);
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	printf("conc: %lu writes, %lu reads checked (%lu torn across versions, %lu too slow to "
	       "judge), no stale byte\n",
	       atomic_load(&conc_writes), atomic_load(&conc_reads), atomic_load(&conc_torn),
	       atomic_load(&conc_unsure));
	if (atomic_load(&conc_reads) - atomic_load(&conc_unsure) < 100)
		die("too few reads could be judged");
	return 0;
}

/* ---- reval: an open handle notices a change made behind accelfs's back ---- */

static int cmd_reval(int argc, char **argv)
{
	static unsigned char before[4 << 20], after[4 << 20], fresh[4 << 20];
	struct stat st;
	struct timespec times[2];
	ssize_t n;
	int fd, sfd;

	if (argc != 5)
		return 2;
	fd = open(argv[2], O_RDONLY);
	sfd = open(argv[3], O_RDWR);
	if (fd < 0 || sfd < 0 || fstat(sfd, &st) || st.st_size > (off_t)sizeof(before))
		die("open %s / %s: %s", argv[2], argv[3], strerror(errno));
	n = pread(fd, before, sizeof(before), 0);
	if (n != st.st_size)
		die("first read through the mount returned %zd of %lld", n, (long long)st.st_size);
	for (ssize_t i = 0; i < n; i++)
		fresh[i] = (unsigned char)~before[i];
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	if (pwrite(sfd, fresh, (size_t)n, 0) != n || futimens(sfd, times))
		die("changing %s: %s", argv[3], strerror(errno));
	usleep((useconds_t)(atoi(argv[4]) * 1000));
	if (pread(fd, after, sizeof(after), 0) != n)
		die("second read through the mount failed or was short");
	if (memcmp(after, fresh, (size_t)n))
		die("%d ms after SOURCE changed, the open handle still reads %s bytes",
		    atoi(argv[4]), memcmp(after, before, (size_t)n) ? "mixed" : "the old");
	printf("reval: the open handle reads the new bytes\n");
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	size_t size = argc == 4 ? strtoul(argv[3], NULL, 0) : 0;
	char *buf = size >= 512 ? malloc(size) : NULL;
	int fd = argc == 4 ? open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	long n;

	if (argc != 4 || !buf || fd < 0) {
		if (argc == 4)
			fprintf(stderr, "cfsio list: %s: %s\n", argv[2],
				fd < 0 ? strerror(errno) : "BYTES below 512");
		return argc == 4 ? 1 : 2;
	}
	while ((n = syscall(SYS_getdents64, fd, buf, size)) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(buf + off);

			printf("%s\n", de->name);
			off += de->reclen;
		}
	}
	if (n < 0)
		die("getdents64 of %s: %s", argv[2], strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "gen"))
		ret = cmd_gen(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "verify"))
		ret = cmd_verify(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "seq"))
		ret = cmd_seq(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "conc"))
		ret = cmd_conc(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "reval"))
		ret = cmd_reval(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "list"))
		ret = cmd_list(argc, argv);
	if (ret == 2)
		fprintf(stderr, "usage: cfsio gen|verify|seq|conc|reval|list ... (see cfsio.c)\n");
	return ret;
}
