// SPDX-License-Identifier: MIT
/*
 * test_mstate.c - cache/mstate.c, the per-mount state file's reader and the
 * arithmetic on its request histograms: the log2 bucket of a time, the
 * bounds and the percentiles readers print, the totals, and a file with
 * every kind of line (the watcher's keys, the pool counters, request
 * kinds, a key a newer daemon might add) read back as written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_test.h"
#include "mstate.h"

static void test_bucket(void)
{
	CU_ASSERT_EQUAL(mstate_hist_bucket(0), 0);
	CU_ASSERT_EQUAL(mstate_hist_bucket(999), 0);  /* under 1 us */
	CU_ASSERT_EQUAL(mstate_hist_bucket(1000), 1); /* [1, 2) us */
	CU_ASSERT_EQUAL(mstate_hist_bucket(1999), 1);
	CU_ASSERT_EQUAL(mstate_hist_bucket(2000), 2);	/* [2, 4) us */
	CU_ASSERT_EQUAL(mstate_hist_bucket(255999), 8); /* [128, 256) us */
	CU_ASSERT_EQUAL(mstate_hist_bucket(256000), 9);
	CU_ASSERT_EQUAL(mstate_hist_bucket((1ULL << 22) * 1000 - 1), MSTATE_HIST - 2);
	CU_ASSERT_EQUAL(mstate_hist_bucket((1ULL << 22) * 1000), MSTATE_HIST - 1); /* 4.2 s */
	CU_ASSERT_EQUAL(mstate_hist_bucket(UINT64_MAX), MSTATE_HIST - 1);
	/* a bucket's times are under its bound */
	for (unsigned int b = 0; b + 1 < MSTATE_HIST; b++) {
		CU_ASSERT_EQUAL(mstate_hist_le_us(b), 1ULL << b);
		CU_ASSERT_EQUAL(mstate_hist_bucket(mstate_hist_le_us(b) * 1000 - 1), b);
	}
	CU_ASSERT_EQUAL(mstate_hist_le_us(MSTATE_HIST - 1), 0); /* +Inf */
}

static void test_quantile(void)
{
	struct mstate_req r = { .count = 100 };

	CU_ASSERT_EQUAL(mstate_req_quantile_us(&r, 0.5), 0); /* nothing counted */
	r.hist[3] = 50;					     /* under 8 us */
	r.hist[5] = 49;					     /* under 32 us */
	r.hist[MSTATE_HIST - 1] = 1;			     /* 4.2 s and more */
	CU_ASSERT_EQUAL(mstate_req_quantile_us(&r, 0.5), 8);
	CU_ASSERT_EQUAL(mstate_req_quantile_us(&r, 0.51), 32);
	CU_ASSERT_EQUAL(mstate_req_quantile_us(&r, 0.99), 32);
	CU_ASSERT_EQUAL(mstate_req_quantile_us(&r, 1.0), 1ULL << (MSTATE_HIST - 2));
}

static void test_read(void)
{
	char path[] = "/tmp/accelfs-test-mstate.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct mstate *m = calloc(1, sizeof(*m));
	uint64_t n, err;

	CU_ASSERT_FATAL(f && m);
	fprintf(f,
		"pid 4242\nmountpoint /mnt/a b\nsource /srv/data\nwatch fanotify\n"
		"watch_events 7\nshared off (SOURCE is ext4)\nlocks forward\npool /p\n"
		"read_bytes 4096\nwrite_bytes 512\npool_local_hits 3\npool_flush_errors 2\n"
		"readahead_delay_us 2210\npool_no_such_counter 9\nsomething_newer 1 2 3\n"
		"req read 10 1 300 0 0 2 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
		"req setxattr 3 3 6 3\nreq %s 1 0 0\n",
		"a_name_longer_than_the_field_holds");
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(mstate_read(path, m), 0);
	unlink(path);
	CU_ASSERT_EQUAL(m->pid, 4242);
	CU_ASSERT_STRING_EQUAL(m->mountpoint, "/mnt/a b");
	CU_ASSERT_STRING_EQUAL(m->pool, "/p");
	CU_ASSERT_EQUAL(m->watch_events, 7);
	CU_ASSERT_EQUAL(m->read_bytes, 4096);
	CU_ASSERT_EQUAL(m->write_bytes, 512);
	CU_ASSERT_EQUAL(m->ra_delay_us, 2210);
	CU_ASSERT_EQUAL(m->c[POOL_C_LOCAL_HITS], 3);
	CU_ASSERT_EQUAL(m->c[POOL_C_FLUSH_ERRORS], 2);
	CU_ASSERT_EQUAL(m->c[POOL_C_GLOBAL_HITS], 0);
	CU_ASSERT_EQUAL_FATAL(m->nreq, 2); /* the over-long name is skipped */
	CU_ASSERT_STRING_EQUAL(m->req[0].name, "read");
	CU_ASSERT_EQUAL(m->req[0].count, 10);
	CU_ASSERT_EQUAL(m->req[0].errors, 1);
	CU_ASSERT_EQUAL(m->req[0].time_us, 300);
	CU_ASSERT_EQUAL(m->req[0].hist[2], 2);
	CU_ASSERT_EQUAL(m->req[0].hist[3], 8);
	CU_ASSERT_EQUAL(mstate_req_quantile_us(&m->req[0], 0.5), 8);
	CU_ASSERT_STRING_EQUAL(m->req[1].name, "setxattr");
	CU_ASSERT_EQUAL(m->req[1].hist[0], 3); /* a short line: the rest 0 */
	CU_ASSERT_EQUAL(m->req[1].hist[1], 0);
	mstate_req_totals(m, &n, &err);
	CU_ASSERT_EQUAL(n, 13);
	CU_ASSERT_EQUAL(err, 4);
	free(m);
}

/* The passthrough list: mode 0600, read back as written, removed with the state. */
static void test_pt_list(void)
{
	char dir[] = "/tmp/accelfs-test-rt.XXXXXX", line[256];
	const char text[] = "auto: bulk sequential reads\t/srv/f\\011x\n";
	uint32_t pid = (uint32_t)getpid();
	struct stat st;
	FILE *f;

	if (geteuid() != 0) { /* a user's daemon writes in $XDG_RUNTIME_DIR/accelfs */
		CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
		setenv("XDG_RUNTIME_DIR", dir, 1);
	}
	CU_ASSERT_EQUAL_FATAL(mstate_pt_write(pid, text, sizeof(text) - 1), 0);
	f = mstate_pt_open(pid, (unsigned int)geteuid());
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(fstat(fileno(f), &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600); /* it names files */
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof(line), f));
	CU_ASSERT_STRING_EQUAL(line, text);
	fclose(f);
	mstate_remove(pid);
	errno = 0;
	CU_ASSERT_PTR_NULL(mstate_pt_open(pid, (unsigned int)geteuid()));
	CU_ASSERT_EQUAL(errno, ENOENT);
	if (geteuid() != 0) {
		snprintf(line, sizeof(line), "%s/accelfs", dir);
		rmdir(line);
		rmdir(dir);
	}
}

static void test_find(void)
{
	struct mstate *m = calloc(1, sizeof(*m));

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_EQUAL(mstate_find(0, "/nonexistent/accelfs-test", m), -ENOENT);
	/* / is served by no accelfs daemon */
	CU_ASSERT_EQUAL(mstate_find(0, "/", m), -ESRCH);
	free(m);
}

int main(void)
{
	CU_pSuite s = ct_suite("mstate");

	if (!s)
		return 2;
	CU_add_test(s, "log2 buckets of a time", test_bucket);
	CU_add_test(s, "percentiles from a histogram", test_quantile);
	CU_add_test(s, "a state file read back", test_read);
	CU_add_test(s, "finding a mount's daemon", test_find);
	CU_add_test(s, "the list of passthrough files", test_pt_list);
	return ct_run();
}
