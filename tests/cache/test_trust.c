// SPDX-License-Identifier: MIT
/*
 * test_trust.c - the pool trusts only its owner, and a slow or broken pool is
 * never fatal (issue #12): attach refuses segments of another owner, with a
 * wider mode, symlinks, FIFOs, directories and short ones, naming the
 * segment; a lock held by a stopped process costs a bounded wait and a
 * counted timeout, after which the pool works again; a segment truncated
 * under a mapping turns into a broken pool (-EIO everywhere), not a SIGBUS
 * death. The owner tests need root (fchown); they skip otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cache_test.h"
#include "pool_i.h"

#define BS 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* pool_open(@name) with @mode as pool_mode; the error text into @err. */
static int try_open(const char *name, mode_t mode, char *err, size_t len, struct pool **out)
{
	struct pool_config cfg = { .name = name,
				   .nbufs = 64,
				   .bucket_size = BS,
				   .mode = mode,
				   .err = err,
				   .errlen = len };

	err[0] = '\0';
	*out = NULL;
	return pool_open(&cfg, out);
}

/* Create pool @name, then change its segment with @fn(fd) before anyone attaches. */
static void make_then(const char *name, int (*fn)(int fd))
{
	struct pool *pool = ct_open(name, BS, 64);
	int fd = shm_open(name, O_RDWR, 0);

	CU_ASSERT_FATAL(pool && fd >= 0);
	CU_ASSERT_EQUAL(fn(fd), 0);
	close(fd);
	pool_close(pool);
}

static int to_nobody(int fd)
{
	return fchown(fd, 65534, 65534);
}

static int to_0666(int fd)
{
	return fchmod(fd, 0666);
}

static int to_0660(int fd)
{
	return fchmod(fd, 0660);
}

/* Both attaches refuse with -EPERM and a message naming the segment and @what. */
static void assert_refused(const char *name, const char *what)
{
	struct pool *pool;
	char err[512], path[96];
	double t0 = now_s();

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	CU_ASSERT_EQUAL(try_open(name, 0, err, sizeof(err), &pool), -EPERM);
	CU_ASSERT_PTR_NULL(pool);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, what));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "accel pool --reset"));
	if (!strstr(err, what))
		fprintf(stderr, "message: %s\n", err);
	CU_ASSERT_EQUAL(pool_open_readonly(name, &pool, err, sizeof(err)), -EPERM);
	CU_ASSERT(now_s() - t0 < 1.0); /* refused at once, never waited on */
}

static void test_wrong_owner(void)
{
	const char *name = ct_name("owner");

	if (geteuid() != 0) {
		printf("  skipped: needs root to fchown the segment\n");
		return;
	}
	make_then(name, to_nobody);
	assert_refused(name, "owned by uid 65534 mode 0600");
}

static void test_wide_mode(void)
{
	const char *name = ct_name("mode");
	struct pool *pool;
	char err[512];

	make_then(name, to_0666);
	assert_refused(name, "mode 0666, not by uid");
	/* 0660 is within pool_mode=0660 (sharing with a group is explicit), not 0600 */
	CU_ASSERT_EQUAL(to_0660(shm_open(name, O_RDWR, 0)) == 0, 1);
	CU_ASSERT_EQUAL(try_open(name, 0, err, sizeof(err), &pool), -EPERM);
	CU_ASSERT_EQUAL(try_open(name, 0660, err, sizeof(err), &pool), 0);
	pool_close(pool);
}

static void test_symlink(void)
{
	const char *target = ct_name("target"), *name = ct_name("link");
	char tpath[96], lpath[96];
	struct pool *pool = ct_open(target, BS, 64);
	struct stat before, after;

	CU_ASSERT_FATAL(pool != NULL);
	pool_close(pool);
	snprintf(tpath, sizeof(tpath), "/dev/shm%s", target);
	snprintf(lpath, sizeof(lpath), "/dev/shm%s", name);
	CU_ASSERT_FATAL(stat(tpath, &before) == 0 && symlink(tpath, lpath) == 0);
	assert_refused(name, "a symbolic link");
	CU_ASSERT(stat(tpath, &after) == 0 && after.st_size == before.st_size);
	CU_ASSERT(lstat(lpath, &after) == 0 && S_ISLNK(after.st_mode)); /* left as it was */
}

static void test_fifo(void)
{
	const char *name = ct_name("fifo");
	char path[96];

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	CU_ASSERT_FATAL(mkfifo(path, 0600) == 0);
	alarm(20); /* a blocking open would hang here */
	assert_refused(name, "a FIFO");
	alarm(0);
}

static void test_directory(void)
{
	const char *name = ct_name("dir");
	char path[96];

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	CU_ASSERT_FATAL(mkdir(path, 0700) == 0);
	assert_refused(name, "a directory");
	rmdir(path);
}

static void test_too_small(void)
{
	const char *name = ct_name("small");
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	struct pool *pool;
	char err[512];

	CU_ASSERT_FATAL(fd >= 0 && ftruncate(fd, 100) == 0);
	close(fd);
	CU_ASSERT_EQUAL(try_open(name, 0, err, sizeof(err), &pool), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "accel pool --reset"));
}

/* Child: hold shard @s with buffer @idx half-written, stop; on SIGCONT finish and exit. */
static void hold_and_stop(struct pool *pool, uint32_t s, uint32_t idx)
{
	if (pool_shard_lock(pool, s))
		_exit(1);
	pool->bufs[idx].seq++; /* as a writer between the two increments (I1) */
	raise(SIGSTOP);
	pool->bufs[idx].seq++;
	pool_shard_unlock(pool, s);
	_exit(0);
}

static uint32_t buf_of(struct pool *pool, uint32_t slot, uint64_t bucket)
{
	for (uint32_t i = 0; i < pool->nbufs; i++)
		if (pool->bufs[i].state == POOL_BUF_VALID && pool->bufs[i].file == slot &&
		    pool->bufs[i].bucket == bucket)
			return i;
	return POOL_NONE;
}

static void test_stopped_holder(void)
{
	const char *name = ct_name("stopped");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(1, 16 * BS);
	struct pool_file *pf;
	struct pool_stats st;
	uint8_t buf[BS];
	uint32_t s, v, other = 0;
	int status;
	double t0;
	pid_t pid;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "x", 0, &pf) == 0);
	for (int b = 0; b < 16; b++)
		CU_ASSERT_EQUAL(ct_fill(pf, 1, b, 1, BS), 1);
	s = pool_shard_of(pool, pf->slot, 5);
	while (other < 16 && pool_shard_of(pool, pf->slot, other) == s)
		other++;
	pid = fork();
	if (pid == 0)
		hold_and_stop(pool, s, buf_of(pool, pf->slot, 5));
	CU_ASSERT_FATAL(pid > 0 && waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status));
	t0 = now_s();
	CU_ASSERT_EQUAL(pool_buf_read(pf, 5, buf, 0, BS), -ETIMEDOUT);
	CU_ASSERT(now_s() - t0 >= 1.5 && now_s() - t0 < 3.5);
	t0 = now_s(); /* now suspect: the next waits are short */
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 5, 2, BS), -ETIMEDOUT);
	CU_ASSERT(now_s() - t0 < 0.5);
	CU_ASSERT_EQUAL(pool_stats_get(pool, &st), 0);
	CU_ASSERT(st.c[POOL_C_LOCK_TIMEOUTS] >= 2);
	CU_ASSERT(pool_guard_lock_timeouts(pool) >= 2);
	/* a write that cannot drop bucket 5 under its lock drops the whole file (I4) */
	CU_ASSERT_EQUAL(pool_buf_write_begin(pf, 5 * BS, 10), 0);
	CU_ASSERT_EQUAL(pool_buf_write_end(pf), 0);
	if (other < 16)
		CU_ASSERT_EQUAL(pool_buf_read(pf, other, buf, 0, BS), -ENOENT);
	kill(pid, SIGCONT);
	CU_ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* consistent again: fills and reads of the shard work */
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 5, 3, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 5, buf, 0, BS), BS);
	CU_ASSERT(ct_verify(buf, BS, 1, 5, &v) && v == 3);
	pool_file_put(pf);
	pool_close(pool);
}

/* The files lock held by a stopped process: opens give up within the bound. */
static void test_stopped_files_lock(void)
{
	const char *name = ct_name("stopfiles");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(2, BS);
	struct pool_file *pf = NULL;
	struct pool_stats st;
	int status;
	double t0;
	pid_t pid;

	CU_ASSERT_FATAL(pool != NULL);
	pid = fork();
	if (pid == 0) {
		if (pool_files_lock(pool))
			_exit(1);
		raise(SIGSTOP);
		pool_files_unlock(pool);
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0 && waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status));
	t0 = now_s();
	CU_ASSERT_EQUAL(pool_file_get(pool, &id, "y", 0, &pf), -ETIMEDOUT);
	CU_ASSERT(now_s() - t0 >= 1.5 && now_s() - t0 < 3.5);
	t0 = now_s();
	CU_ASSERT_EQUAL(pool_file_get(pool, &id, "y", 0, &pf), -ETIMEDOUT);
	CU_ASSERT(now_s() - t0 < 0.5);
	CU_ASSERT(pool_stats_get(pool, &st) == 0 && st.c[POOL_C_LOCK_TIMEOUTS] >= 2);
	kill(pid, SIGCONT);
	CU_ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(pool_file_get(pool, &id, "y", 0, &pf), 0);
	pool_file_put(pf);
	pool_close(pool);
}

static void test_truncated(void)
{
	const char *name = ct_name("trunc");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(1, 16 * BS);
	struct pool_file *pf;
	struct pool_stats st;
	uint8_t buf[BS] = { 1 };
	int fd;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "x", 0, &pf) == 0);
	CU_ASSERT_EQUAL(pool_guard_sigbus(pool), 0);
	for (int b = 0; b < 16; b++)
		CU_ASSERT_EQUAL(ct_fill(pf, 1, b, 1, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_write_begin_mode(pf, 3 * BS, 10, true), 0);
	CU_ASSERT_EQUAL(pool_dirty_defer(pf, 3, 0, buf, 10, NULL, 0, 0, (uint32_t)getpid()), 1);
	CU_ASSERT_EQUAL(pool_buf_write_end(pf), 0);
	CU_ASSERT_FALSE(pool_guard_broken(pool));
	fd = shm_open(name, O_RDWR, 0);
	CU_ASSERT_FATAL(fd >= 0 && ftruncate(fd, 4096) == 0);
	close(fd);
	/* every access past 4096 faults: caught, the pool is broken, nothing is served */
	for (int b = 0; b < 16; b++)
		CU_ASSERT_EQUAL(pool_buf_read(pf, b, buf, 0, BS), -EIO);
	CU_ASSERT_TRUE(pool_guard_broken(pool));
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 1, 1, BS), -EIO);
	CU_ASSERT_EQUAL(pool_buf_write_begin(pf, 0, 10), -EIO);
	CU_ASSERT_EQUAL(pool_stats_get(pool, &st), -EIO);
	/* our deferred bytes went with it: reported once */
	CU_ASSERT_TRUE(pool_dirty_lost(pf, true));
	CU_ASSERT_FALSE(pool_dirty_lost(pf, true));
	pool_file_put(pf);
	pool_close(pool);
}

int main(void)
{
	CU_pSuite s = ct_suite("trust");

	if (!s)
		return 1;
	CU_add_test(s, "segment of another owner", test_wrong_owner);
	CU_add_test(s, "segment with a wider mode", test_wide_mode);
	CU_add_test(s, "symlink in /dev/shm", test_symlink);
	CU_add_test(s, "FIFO in /dev/shm", test_fifo);
	CU_add_test(s, "directory in /dev/shm", test_directory);
	CU_add_test(s, "segment shorter than a header", test_too_small);
	CU_add_test(s, "lock held by a stopped process", test_stopped_holder);
	CU_add_test(s, "files lock held by a stopped process", test_stopped_files_lock);
	CU_add_test(s, "segment truncated under the mapping", test_truncated);
	return ct_run();
}
