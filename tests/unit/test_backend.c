// SPDX-License-Identifier: MIT
/*
 * test_backend.c - uring/ backend contract, run once per backend
 * (argv[1] = "uring" or "sync"): full reads and writes, EOF, vectors,
 * batches in one system call, fsync, fallocate, errors, statistics that
 * survive thread exit, and single writes, syncs and fallocates made without
 * io_uring's worker threads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cunit_main.h"

static enum backend_kind kind;
static char path[64];
static int fd = -1;

static void fill(char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (char)((i * 31 + seed) & 0xff);
}

static int suite_init(void)
{
	snprintf(path, sizeof(path), "/tmp/accelfs-test-backend.XXXXXX");
	fd = mkstemp(path);
	return fd < 0 ? -1 : 0;
}

static int suite_clean(void)
{
	close(fd);
	unlink(path);
	return 0;
}

static void test_write_read(void)
{
	size_t len = 8 << 20; /* larger than one request of the daemon */
	char *w = malloc(len), *r = malloc(len);

	CU_ASSERT_FATAL(w && r);
	fill(w, len, 7);
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(backend_pwrite(fd, w, len, 4096), (ssize_t)len);
	CU_ASSERT_EQUAL(backend_pread(fd, r, len, 4096), (ssize_t)len);
	CU_ASSERT_EQUAL(memcmp(w, r, len), 0);
	/* reads stop at end of file, and past it return 0 */
	CU_ASSERT_EQUAL(backend_pread(fd, r, 8192, (off_t)len), 4096);
	CU_ASSERT_EQUAL(memcmp(w + len - 4096, r, 4096), 0);
	CU_ASSERT_EQUAL(backend_pread(fd, r, 100, (off_t)len + 8192), 0);
	CU_ASSERT_EQUAL(backend_pwrite(fd, w, 0, 0), 0);
	free(w);
	free(r);
}

static void test_vectors(void)
{
	char a[1000], b[3000], c[5], ra[1000], rb[3000], rc[5];
	struct iovec wv[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };
	struct iovec rv[3] = { { ra, sizeof(ra) }, { rb, sizeof(rb) }, { rc, sizeof(rc) } };

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(c, sizeof(c), 3);
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(backend_pwritev(fd, wv, 3, 10), 4005);
	CU_ASSERT_EQUAL(backend_preadv(fd, rv, 3, 10), 4005);
	CU_ASSERT_EQUAL(memcmp(a, ra, sizeof(a)) | memcmp(b, rb, sizeof(b)) | memcmp(c, rc, 5), 0);
	/* a vector read crossing EOF returns what is there */
	CU_ASSERT_EQUAL(backend_preadv(fd, rv, 3, 2010), 2005);
}

static void test_batch_one_syscall(void)
{
	struct backend_op ops[8];
	char bufs[8][512];
	struct backend_stats before, after;
	int i;

	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	for (i = 0; i < 8; i++) {
		fill(bufs[i], sizeof(bufs[i]), i);
		ops[i] = (struct backend_op){ .op = BACKEND_OP_WRITE,
					      .fd = fd,
					      .buf = bufs[i],
					      .len = sizeof(bufs[i]),
					      .off = i * 4096 };
	}
	backend_stats_get(&before);
	CU_ASSERT_EQUAL(backend_submit(ops, 8), 0);
	backend_stats_get(&after);
	for (i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(ops[i].res, 512);
	CU_ASSERT_EQUAL(after.writes - before.writes, 8);
	CU_ASSERT_EQUAL(after.write_bytes - before.write_bytes, 8 * 512);
	/* io_uring: the whole batch in one io_uring_enter(); sync: one pwrite each */
	CU_ASSERT_EQUAL(after.syscalls - before.syscalls, kind == BACKEND_URING ? 1 : 8);
	for (i = 0; i < 8; i++) {
		char r[512];

		CU_ASSERT_EQUAL(pread(fd, r, sizeof(r), i * 4096), 512);
		CU_ASSERT_EQUAL(memcmp(r, bufs[i], sizeof(r)), 0);
	}
}

static void test_sync_and_fallocate(void)
{
	char w[16384], r[16384], zero[4096] = { 0 };
	struct backend_stats before, after;

	fill(w, sizeof(w), 9);
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(backend_pwrite(fd, w, sizeof(w), 0), (ssize_t)sizeof(w));
	backend_stats_get(&before);
	CU_ASSERT_EQUAL(backend_fsync(fd, false), 0);
	CU_ASSERT_EQUAL(backend_fsync(fd, true), 0);
	backend_stats_get(&after);
	CU_ASSERT_EQUAL(after.fsyncs - before.fsyncs, 2);
	CU_ASSERT_EQUAL(
	    backend_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096), 0);
	CU_ASSERT_EQUAL(backend_pread(fd, r, sizeof(r), 0), (ssize_t)sizeof(r));
	CU_ASSERT_EQUAL(memcmp(r + 4096, zero, 4096), 0);
	CU_ASSERT_EQUAL(memcmp(r, w, 4096), 0);
	CU_ASSERT_EQUAL(backend_fallocate(fd, 0, 0, 1 << 20), 0);
	CU_ASSERT_EQUAL(lseek(fd, 0, SEEK_END), 1 << 20);
}

static void test_errors(void)
{
	char buf[16] = "x";
	int rfd = open(path, O_RDONLY);

	CU_ASSERT_FATAL(rfd >= 0);
	CU_ASSERT_EQUAL(backend_pwrite(rfd, buf, sizeof(buf), 0), -EBADF);
	close(rfd);
	CU_ASSERT_EQUAL(backend_pread(rfd, buf, sizeof(buf), 0), -EBADF);
	CU_ASSERT_EQUAL(backend_fsync(rfd, false), -EBADF);
	CU_ASSERT_EQUAL(backend_fallocate(fd, 0, -1, 10), -EINVAL);
}

static void *thread_io(void *arg)
{
	char buf[4096];
	off_t off = (off_t)(uintptr_t)arg * 4096;
	int i;

	fill(buf, sizeof(buf), (unsigned int)off);
	for (i = 0; i < 100; i++)
		if (backend_pwrite(fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf))
			return (void *)1;
	return NULL;
}

static void test_threads_counted(void)
{
	struct backend_stats before, after;
	pthread_t t[4];
	void *ret;
	uintptr_t i;

	backend_stats_get(&before);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(pthread_create(&t[i], NULL, thread_io, (void *)i), 0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(pthread_join(t[i], &ret), 0);
		CU_ASSERT_PTR_NULL(ret);
	}
	backend_stats_get(&after);
	/* the threads are gone: their counts must have been kept */
	CU_ASSERT_EQUAL(after.writes - before.writes, 400);
}

/* io_uring's io-wq worker threads serving the calling thread: "iou-wrk-TID" */
static int iowq_workers(void)
{
	char want[32], comm[32], p[300];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	snprintf(want, sizeof(want), "iou-wrk-%d\n", (int)gettid());
	while ((e = readdir(d))) {
		FILE *f;

		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(p, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, want))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void *single_ops(void *arg)
{
	int *workers = arg;
	char w[4096];
	int i;

	fill(w, sizeof(w), 5);
	for (i = 0; i < 20; i++) {
		if (backend_pwrite(fd, w, sizeof(w), i * 4096) != (ssize_t)sizeof(w) ||
		    backend_fsync(fd, true) || backend_fallocate(fd, 0, 0, 8192))
			return (void *)1;
	}
	*workers = iowq_workers();
	backend_thread_release();
	return NULL;
}

/*
 * A write, fdatasync or fallocate alone is the plain system call: io_uring
 * always hands fsync and fallocate (and a buffered write on ext4) to an
 * io-wq worker, whose wake-up a single op pays for nothing (backend_uring.c).
 */
static void test_single_ops_inline(void)
{
	int workers = -1;
	void *ret = NULL;
	pthread_t t;

	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, single_ops, &workers), 0);
	CU_ASSERT_EQUAL(pthread_join(t, &ret), 0);
	CU_ASSERT_PTR_NULL(ret);
	CU_ASSERT_EQUAL(workers, 0);
}

static void test_names(void)
{
	enum backend_kind k;

	CU_ASSERT_EQUAL(backend_parse_kind("sync", &k), 0);
	CU_ASSERT_EQUAL(k, BACKEND_SYNC);
	CU_ASSERT_EQUAL(backend_parse_kind("uring", &k), 0);
	CU_ASSERT_EQUAL(k, BACKEND_URING);
	CU_ASSERT_EQUAL(backend_parse_kind("aio", &k), -EINVAL);
	CU_ASSERT_STRING_EQUAL(backend_kind_name(BACKEND_SYNC), "sync");
	CU_ASSERT_EQUAL(backend_active(), kind);
}

int main(int argc, char **argv)
{
	char why[160];
	CU_pSuite s;

	if (argc != 2 || backend_parse_kind(argv[1], &kind) || kind == BACKEND_AUTO) {
		fprintf(stderr, "usage: %s uring|sync\n", argv[0]);
		return 2;
	}
	if (backend_init(kind, 16, why, sizeof(why))) {
		printf("SKIP: io_uring not usable here: %s\n", why);
		return 77;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite(argv[1], suite_init, suite_clean);
	CU_add_test(s, "write and read back", test_write_read);
	CU_add_test(s, "vectors", test_vectors);
	CU_add_test(s, "batch in one system call", test_batch_one_syscall);
	CU_add_test(s, "fsync and fallocate", test_sync_and_fallocate);
	CU_add_test(s, "errors are -errno", test_errors);
	CU_add_test(s, "statistics survive thread exit", test_threads_counted);
	CU_add_test(s, "single writes and syncs without io-wq", test_single_ops_inline);
	CU_add_test(s, "names", test_names);
	return cunit_run();
}
