// SPDX-License-Identifier: MIT
/*
 * fsx: a random-operation exerciser in the spirit of the classic fsx.
 *
 *   fsx [-N ops] [-S seed] [-F] [-C] [-M] [-D] DIR
 *
 * Works on DIR/fsx.file with writes, reads, truncates, fallocate (plain,
 * KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE), copy_file_range from DIR/fsx.src, mmap
 * reads and writes (msync) and close/reopen, keeping what the file must hold
 * in memory and checking every byte every read returns.  The file lives in
 * the first MAIN_LEN bytes plus a window that straddles 4 GiB, so 64-bit
 * offsets are exercised without a multi-gigabyte model.
 *
 * The seed comes first on stdout ("fsx: seed N"); -S N replays a run.  On a
 * mismatch it prints the last ops and the first differing offset and exits 1.
 * -F, -C, -M leave out fallocate, copy_file_range, mmap (for file systems
 * that do not support them; the caller must say why). -D adds reads and
 * writes through a second, O_DIRECT descriptor: 4 KiB-aligned, up to 1 MiB,
 * from page-aligned buffers, mixed with the buffered ones (and, as the
 * classic fsx -Z, without mmap, whose pages O_DIRECT does not keep coherent).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAIN_LEN (4LL << 20)
#define FAR_BASE ((4LL << 30) - (512LL << 10))
#define FAR_LEN (1LL << 20)
#define SRC_LEN (1LL << 20)
#define MAX_IO (256LL << 10)
#define DIO_ALIGN 4096LL
#define MAX_DIO (1LL << 20)
#define LOG_LEN 20

/* What the file must hold: bytes below MAIN_LEN, the far window, zeros between. */
struct model {
	unsigned char *main, *far;
	long long size;
};

static struct model file, src;
static unsigned char *iobuf, *cmpbuf;
static int fd = -1, src_fd = -1;
static char path[4096], src_path[4096];
static uint64_t rng;
static unsigned long long seed;
static unsigned long opno;
static char oplog[LOG_LEN][128];
static int no_falloc, no_copy, no_mmap, use_direct;
static int dfd = -1;	    /* -D: the O_DIRECT descriptor */
static unsigned char *dbuf; /* -D: page-aligned, MAX_DIO bytes */
static long pagesz;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static long long rnd_below(long long n)
{
	return n > 0 ? (long long)(rnd() % (uint64_t)n) : 0;
}

static void logop(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(oplog[opno % LOG_LEN], sizeof(oplog[0]), fmt, ap);
	va_end(ap);
}

static void dump_log(void)
{
	unsigned long i, first = opno >= LOG_LEN ? opno - LOG_LEN + 1 : 0;

	printf("fsx: last operations (op number, operation):\n");
	for (i = first; i <= opno; i++)
		printf("  %lu %s\n", i, oplog[i % LOG_LEN]);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	printf("fsx: FAIL at op %lu: ", opno);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	dump_log();
	printf("fsx: replay with -S %llu; files kept: %s %s\n", seed, path, src_path);
	exit(1);
}

/* The part of [off, off + len) that falls in one region: a window or the gap. */
static long long segment(const struct model *m, long long off, long long len, unsigned char **mem)
{
	long long end;

	if (off < MAIN_LEN) {
		*mem = m->main + off;
		end = MAIN_LEN;
	} else if (off >= FAR_BASE && off < FAR_BASE + FAR_LEN) {
		*mem = m->far + (off - FAR_BASE);
		end = FAR_BASE + FAR_LEN;
	} else {
		*mem = NULL;
		end = off < FAR_BASE ? FAR_BASE : off + len;
	}
	return end - off < len ? end - off : len;
}

/* Copies model bytes [off, off + len) into buf (zeros outside the windows). */
static void model_get(const struct model *m, long long off, long long len, unsigned char *buf)
{
	unsigned char *mem;
	long long n;

	for (; len > 0; off += n, len -= n, buf += n) {
		n = segment(m, off, len, &mem);
		if (mem)
			memcpy(buf, mem, n);
		else
			memset(buf, 0, n);
	}
}

static int all_zero(const unsigned char *buf, long long len)
{
	return len == 0 || (buf[0] == 0 && !memcmp(buf, buf + 1, len - 1));
}

/* Stores buf (or zeros if buf is NULL) at [off, off + len); never grows size. */
static void model_put(struct model *m, long long off, long long len, const unsigned char *buf)
{
	unsigned char *mem;
	long long n;

	for (; len > 0; off += n, len -= n, buf = buf ? buf + n : NULL) {
		n = segment(m, off, len, &mem);
		if (mem && buf)
			memcpy(mem, buf, n);
		else if (mem)
			memset(mem, 0, n);
		else if (buf && !all_zero(buf, n))
			die("model: data outside the windows at %lld", off);
	}
}

static void model_resize(struct model *m, long long size)
{
	if (size < m->size) {
		long long end = m->size;

		/* Bytes cut off must read as zeros if the file grows again. */
		if (size < MAIN_LEN)
			model_put(m, size, (end < MAIN_LEN ? end : MAIN_LEN) - size, NULL);
		if (end > FAR_BASE) {
			long long from = size > FAR_BASE ? size : FAR_BASE;

			model_put(m, from, end - from, NULL);
		}
	}
	m->size = size;
}

/* A random offset: mostly in the main window, sometimes in the far one. */
static long long rnd_off(void)
{
	if (rnd_below(40) == 0)
		return FAR_BASE + rnd_below(FAR_LEN - MAX_IO);
	return rnd_below(MAIN_LEN - 1);
}

static long long rnd_len(long long off, long long max)
{
	long long lim = off < MAIN_LEN ? MAIN_LEN - off : FAR_BASE + FAR_LEN - off;
	long long len = rnd_below(4) ? 1 + rnd_below(4096 * 4) : 1 + rnd_below(MAX_IO);

	if (len > max)
		len = max;
	return len > lim ? lim : len;
}

static void fill_random(unsigned char *buf, long long len)
{
	long long i;
	uint64_t x = rnd();

	for (i = 0; i < len; i++) {
		if (i % 8 == 0)
			x = rnd();
		buf[i] = (unsigned char)(x >> (8 * (i % 8)));
	}
}

/* Compares got[0, n) with the model at off; dies at the first difference. */
static void check(const char *what, long long off, const unsigned char *got, long long n)
{
	long long i;

	model_get(&file, off, n, cmpbuf);
	if (!memcmp(got, cmpbuf, n))
		return;
	for (i = 0; got[i] == cmpbuf[i]; i++)
		;
	die("%s: data differs at file offset %lld (0x%llx): expected 0x%02x, got 0x%02x "
	    "(read started at %lld, %lld bytes)",
	    what, off + i, off + i, cmpbuf[i], got[i], off, n);
}

static void check_size(void)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		die("fstat: %s", strerror(errno));
	if (st.st_size != file.size)
		die("size is %lld, model says %lld", (long long)st.st_size, file.size);
}

static void op_read(void)
{
	long long off = rnd_below(6) ? rnd_below(file.size + 1) : rnd_off();
	long long len = rnd_len(off < FAR_BASE + FAR_LEN ? off : 0, MAX_IO);
	long long want = off >= file.size ? 0 : (len < file.size - off ? len : file.size - off);
	ssize_t n;

	logop("read %lld+%lld (size %lld)", off, len, file.size);
	n = pread(fd, iobuf, len, off);
	if (n < 0)
		die("pread %lld+%lld: %s", off, len, strerror(errno));
	if (n != want)
		die("pread %lld+%lld returned %zd, expected %lld (size %lld)", off, len, n, want,
		    file.size);
	check("read", off, iobuf, n);
}

static void op_write(void)
{
	long long off = rnd_off(), len = rnd_len(off, MAX_IO);
	ssize_t n;

	logop("write %lld+%lld", off, len);
	fill_random(iobuf, len);
	n = pwrite(fd, iobuf, len, off);
	if (n != len)
		die("pwrite %lld+%lld returned %zd: %s", off, len, n, strerror(errno));
	model_put(&file, off, len, iobuf);
	if (off + len > file.size)
		file.size = off + len;
}

static void op_truncate(void)
{
	long long size = rnd_below(40) ? rnd_below(MAIN_LEN) : FAR_BASE + rnd_below(FAR_LEN);

	logop("truncate %lld -> %lld", file.size, size);
	if (ftruncate(fd, size) < 0)
		die("ftruncate %lld: %s", size, strerror(errno));
	model_resize(&file, size);
	check_size();
}

static void op_fallocate(void)
{
	static const int modes[] = { 0, FALLOC_FL_KEEP_SIZE,
				     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				     FALLOC_FL_ZERO_RANGE,
				     FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE };
	int mode = modes[rnd_below(5)];
	long long off = rnd_off(), len = rnd_len(off, MAX_IO);
	long long end = off + len;

	logop("fallocate mode 0x%x %lld+%lld (size %lld)", mode, off, len, file.size);
	if (fallocate(fd, mode, off, len) < 0)
		die("fallocate mode 0x%x %lld+%lld: %s", mode, off, len, strerror(errno));
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		long long zend = (mode & FALLOC_FL_KEEP_SIZE) && end > file.size ? file.size : end;

		if (zend > off)
			model_put(&file, off, zend - off, NULL);
	}
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > file.size)
		file.size = end;
	check_size();
}

static void op_copy_range(void)
{
	long long off = rnd_off(), len = rnd_len(off, MAX_IO);
	long long in0 = rnd_below(SRC_LEN), done = 0;
	long long want = len < SRC_LEN - in0 ? len : SRC_LEN - in0;
	loff_t in = in0, out = off;
	ssize_t n;

	logop("copy_file_range src %lld -> %lld +%lld", in0, off, len);
	while (done < len) {
		n = copy_file_range(src_fd, &in, fd, &out, len - done, 0);
		if (n < 0)
			die("copy_file_range: %s", strerror(errno));
		if (n == 0)
			break;
		done += n;
	}
	if (done != want)
		die("copy_file_range copied %lld, expected %lld", done, want);
	if (in != in0 + done || out != off + done)
		die("copy_file_range left offsets at %lld/%lld", (long long)in, (long long)out);
	model_get(&src, in0, done, iobuf);
	model_put(&file, off, done, iobuf);
	if (done && off + done > file.size)
		file.size = off + done;
}

/* Maps [off, off + len) of the file; *delta is off's distance into the map. */
static unsigned char *map(long long off, long long len, int prot, long long *delta)
{
	long long base = off & ~(long long)(pagesz - 1);
	void *p;

	*delta = off - base;
	p = mmap(NULL, len + *delta, prot, MAP_SHARED, fd, base);
	if (p == MAP_FAILED)
		die("mmap %lld+%lld: %s", base, len + *delta, strerror(errno));
	return p;
}

/* A random range inside the file and inside one window (size never ends in the gap). */
static long long rnd_in_file(long long *len)
{
	long long off;

	if (file.size > FAR_BASE && !rnd_below(8))
		off = FAR_BASE + rnd_below(file.size - FAR_BASE);
	else
		off = rnd_below(file.size < MAIN_LEN ? file.size : MAIN_LEN);

	*len = rnd_len(off, file.size - off);
	return off;
}

static void op_mmap_read(void)
{
	long long off, len, delta;
	unsigned char *p;

	if (!file.size)
		return op_write();
	off = rnd_in_file(&len);
	logop("mmap read %lld+%lld", off, len);
	p = map(off, len, PROT_READ, &delta);
	memcpy(iobuf, p + delta, len);
	munmap(p, len + delta);
	check("mmap read", off, iobuf, len);
}

static void op_mmap_write(void)
{
	long long off, len, delta;
	unsigned char *p;

	if (!file.size)
		return op_write();
	off = rnd_in_file(&len);
	logop("mmap write %lld+%lld", off, len);
	fill_random(iobuf, len);
	p = map(off, len, PROT_READ | PROT_WRITE, &delta);
	memcpy(p + delta, iobuf, len);
	if (msync(p, len + delta, MS_SYNC) < 0)
		die("msync: %s", strerror(errno));
	munmap(p, len + delta);
	model_put(&file, off, len, iobuf);
}

/* An aligned offset and length for O_DIRECT, inside one window. */
static long long rnd_dio(long long *len)
{
	long long off = rnd_off() & ~(DIO_ALIGN - 1);
	long long lim = off < MAIN_LEN ? MAIN_LEN - off : FAR_BASE + FAR_LEN - off;

	*len = rnd_below(3) ? DIO_ALIGN * (1 + rnd_below(16)) : DIO_ALIGN * (1 + rnd_below(256));
	if (*len > lim)
		*len = lim;
	return off;
}

static void op_dwrite(void)
{
	long long len, off = rnd_dio(&len);
	ssize_t n;

	logop("O_DIRECT write %lld+%lld", off, len);
	fill_random(dbuf, len);
	n = pwrite(dfd, dbuf, len, off);
	if (n != len)
		die("O_DIRECT pwrite %lld+%lld returned %zd: %s", off, len, n, strerror(errno));
	model_put(&file, off, len, dbuf);
	if (off + len > file.size)
		file.size = off + len;
}

static void op_dread(void)
{
	long long len, off = rnd_dio(&len);
	long long want = off >= file.size ? 0 : (len < file.size - off ? len : file.size - off);
	ssize_t n;

	logop("O_DIRECT read %lld+%lld (size %lld)", off, len, file.size);
	n = pread(dfd, dbuf, len, off);
	if (n != want)
		die("O_DIRECT pread %lld+%lld returned %zd, expected %lld: %s", off, len, n, want,
		    n < 0 ? strerror(errno) : "short");
	check("O_DIRECT read", off, dbuf, n);
}

static void op_reopen(void)
{
	logop("close/reopen%s", opno % 2 ? " + fsync" : "");
	if (opno % 2 && fsync(fd) < 0)
		die("fsync: %s", strerror(errno));
	if (close(fd) < 0)
		die("close: %s", strerror(errno));
	fd = open(path, O_RDWR);
	if (fd < 0)
		die("reopen %s: %s", path, strerror(errno));
	check_size();
}

/* Reads the whole main window and the far window back. */
static void check_all(void)
{
	long long off, n, end;

	opno++;
	logop("full check (size %lld)", file.size);
	check_size();
	for (off = 0; off < file.size; off += n) {
		if (off >= MAIN_LEN && off < FAR_BASE)
			off = FAR_BASE;
		end = off < MAIN_LEN ? MAIN_LEN : FAR_BASE + FAR_LEN;
		n = MAX_IO < end - off ? MAX_IO : end - off;
		n = n < file.size - off ? n : file.size - off;
		if (n <= 0)
			break;
		if (pread(fd, iobuf, n, off) != n)
			die("full check: short read at %lld", off);
		check("full check", off, iobuf, n);
	}
}

/* Creates the copy source with random content and an empty target. */
static void setup(const char *dir)
{
	snprintf(path, sizeof(path), "%s/fsx.file", dir);
	snprintf(src_path, sizeof(src_path), "%s/fsx.src", dir);
	file.main = calloc(1, MAIN_LEN);
	file.far = calloc(1, FAR_LEN);
	src.main = calloc(1, MAIN_LEN);
	src.far = calloc(1, FAR_LEN);
	iobuf = malloc(MAX_IO > SRC_LEN ? MAX_IO : SRC_LEN);
	cmpbuf = malloc(MAX_IO > SRC_LEN ? MAX_IO : SRC_LEN);
	if (!file.main || !file.far || !src.main || !src.far || !iobuf || !cmpbuf)
		die("out of memory");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	src_fd = open(src_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || src_fd < 0)
		die("create %s: %s", path, strerror(errno));
	fill_random(iobuf, SRC_LEN);
	if (pwrite(src_fd, iobuf, SRC_LEN, 0) != SRC_LEN)
		die("write %s: %s", src_path, strerror(errno));
	model_put(&src, 0, SRC_LEN, iobuf);
	src.size = SRC_LEN;
	if (!use_direct)
		return;
	dfd = open(path, O_RDWR | O_DIRECT);
	if (dfd < 0)
		die("open %s O_DIRECT: %s", path, strerror(errno));
	if (posix_memalign((void **)&dbuf, (size_t)pagesz, MAX_DIO))
		die("out of memory");
}

/* Relative weights of the operations, in the order of ops[]. */
static void (*const ops[])(void) = { op_read,	    op_write,	  op_truncate,	 op_fallocate,
				     op_copy_range, op_mmap_read, op_mmap_write, op_reopen,
				     op_dread,	    op_dwrite };
static const int weight[] = { 24, 24, 6, 10, 8, 8, 8, 2, 16, 16 };

static int op_enabled(int i)
{
	if (ops[i] == op_fallocate)
		return !no_falloc;
	if (ops[i] == op_copy_range)
		return !no_copy;
	if (ops[i] == op_mmap_read || ops[i] == op_mmap_write)
		return !no_mmap;
	if (ops[i] == op_dread || ops[i] == op_dwrite)
		return use_direct;
	return 1;
}

static void run(unsigned long nops)
{
	int i, total = 0, nw = sizeof(weight) / sizeof(weight[0]);

	for (i = 0; i < nw; i++)
		total += op_enabled(i) ? weight[i] : 0;
	for (opno = 1; opno <= nops; opno++) {
		int r = (int)rnd_below(total);

		for (i = 0; i < nw; i++) {
			if (!op_enabled(i))
				continue;
			if (r < weight[i])
				break;
			r -= weight[i];
		}
		ops[i]();
		if (opno % 2500 == 0)
			check_all();
	}
	opno = nops;
	check_all();
}

static void usage(void)
{
	fprintf(stderr, "usage: fsx [-N ops] [-S seed] [-F] [-C] [-M] [-D] DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long nops = 20000;
	int opt;

	seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
	while ((opt = getopt(argc, argv, "N:S:FCMD")) != -1) {
		if (opt == 'N')
			nops = strtoul(optarg, NULL, 0);
		else if (opt == 'S')
			seed = strtoull(optarg, NULL, 0);
		else if (opt == 'F')
			no_falloc = 1;
		else if (opt == 'C')
			no_copy = 1;
		else if (opt == 'M')
			no_mmap = 1;
		else if (opt == 'D')
			use_direct = no_mmap = 1;
		else
			usage();
	}
	if (argc - optind != 1)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("fsx: seed %llu\n", seed);
	rng = seed;
	pagesz = sysconf(_SC_PAGESIZE);
	setup(argv[optind]);
	run(nops);
	close(fd);
	close(src_fd);
	if (dfd >= 0)
		close(dfd);
	free(dbuf);
	unlink(path);
	unlink(src_path);
	printf("fsx: %lu operations ok (seed %llu)\n", nops, seed);
	free(file.main);
	free(file.far);
	free(src.main);
	free(src.far);
	free(iobuf);
	free(cmpbuf);
	return 0;
}
