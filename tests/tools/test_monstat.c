// SPDX-License-Identifier: MIT
/*
 * test_monstat.c - the MONITOR arithmetic, value by value: CUR of the last
 * interval, AVE of a rate over the whole time, AVE of a percentage as total
 * hits / total attempts (not a mean of percentages), MIN/MAX over intervals,
 * idle intervals, restarts, and the read share / candidate rule.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "cunit_main.h"
#include "monstat.h"

#define EPS 1e-9

/*
 * One sample at time @t of a file whose counters stand at local attempts and
 * hits, global attempts and hits, global buffer reads (all others 0); what
 * monstat_feed returns (1: an interval was closed).
 */
static int feed(struct monstat *m, double t, uint64_t la, uint64_t lh, uint64_t ga, uint64_t gh,
		uint64_t gr)
{
	uint64_t c[POOL_C_FILE_MAX] = { 0 };

	c[POOL_C_LOCAL_ATTEMPTS] = la;
	c[POOL_C_LOCAL_HITS] = lh;
	c[POOL_C_GLOBAL_ATTEMPTS] = ga;
	c[POOL_C_GLOBAL_HITS] = gh;
	c[POOL_C_GBUF_READ_IOS] = gr;
	return monstat_feed(m, t, c);
}

static void expect(const struct monstat *m, enum monstat_row r, double cur, double ave, double min,
		   double max)
{
	struct monstat_val v = monstat_get(m, r);

	CU_ASSERT_DOUBLE_EQUAL(v.cur, cur, EPS);
	CU_ASSERT_DOUBLE_EQUAL(v.ave, ave, EPS);
	CU_ASSERT_DOUBLE_EQUAL(v.min, min, EPS);
	CU_ASSERT_DOUBLE_EQUAL(v.max, max, EPS);
}

static void test_first_sample(void)
{
	struct monstat m;

	monstat_init(&m);
	CU_ASSERT_EQUAL(feed(&m, 10.0, 100, 50, 7, 7, 3), 0);
	CU_ASSERT_EQUAL(monstat_intervals(&m), 0);
	for (int r = 0; r < MONSTAT_NROWS; r++)
		expect(&m, r, 0, 0, 0, 0);
}

/* Counts before monitoring began (100 attempts, 50 hits) never enter AVE. */
static void test_intervals(void)
{
	struct monstat m;

	monstat_init(&m);
	feed(&m, 0.0, 100, 50, 0, 0, 0);
	/* 2 s: 40 attempts, 10 hits */
	CU_ASSERT_EQUAL(feed(&m, 2.0, 140, 60, 30, 15, 15), 1);
	expect(&m, MONSTAT_LOCAL_HIT_PCT, 25, 25, 25, 25);
	expect(&m, MONSTAT_LOCAL_ATTEMPT_RATE, 20, 20, 20, 20);
	expect(&m, MONSTAT_GLOBAL_HIT_PCT, 50, 50, 50, 50);
	expect(&m, MONSTAT_GBUF_READ_RATE, 7.5, 7.5, 7.5, 7.5);
	/* idle (the same counters): 0 %, 0/s */
	CU_ASSERT_EQUAL(feed(&m, 4.0, 140, 60, 30, 15, 15), 1);
	expect(&m, MONSTAT_LOCAL_HIT_PCT, 0, 25, 0, 25);
	expect(&m, MONSTAT_LOCAL_ATTEMPT_RATE, 0, 10, 0, 20);
	/* 1 s: 10 attempts, 10 hits */
	CU_ASSERT_EQUAL(feed(&m, 5.0, 150, 70, 30, 15, 15), 1);
	/* AVE = 20 hits / 50 attempts = 40 %, not (25 + 0 + 100) / 3 */
	expect(&m, MONSTAT_LOCAL_HIT_PCT, 100, 40, 0, 100);
	expect(&m, MONSTAT_LOCAL_ATTEMPT_RATE, 10, 10, 0, 20);
	expect(&m, MONSTAT_GLOBAL_HIT_PCT, 0, 50, 0, 50);
	expect(&m, MONSTAT_GLOBAL_ATTEMPT_RATE, 0, 6, 0, 15);
	expect(&m, MONSTAT_LBUF_WRITE_RATE, 0, 0, 0, 0);
	CU_ASSERT_EQUAL(monstat_intervals(&m), 3);
}

static void test_time_and_restart(void)
{
	struct monstat m;

	monstat_init(&m);
	feed(&m, 1.0, 10, 5, 0, 0, 0);
	/* no time passed, or time went back: ignored */
	CU_ASSERT_EQUAL(feed(&m, 1.0, 20, 10, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(feed(&m, 0.5, 20, 10, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(monstat_intervals(&m), 0);
	CU_ASSERT_EQUAL(feed(&m, 3.0, 20, 10, 0, 0, 0), 1);
	expect(&m, MONSTAT_LOCAL_ATTEMPT_RATE, 5, 5, 5, 5);
	/* slot reused: counters went back */
	CU_ASSERT_EQUAL(feed(&m, 4.0, 4, 4, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(monstat_intervals(&m), 0);
	expect(&m, MONSTAT_LOCAL_ATTEMPT_RATE, 0, 0, 0, 0);
	CU_ASSERT_EQUAL(feed(&m, 8.0, 8, 6, 0, 0, 0), 1);
	expect(&m, MONSTAT_LOCAL_ATTEMPT_RATE, 1, 1, 1, 1);
	expect(&m, MONSTAT_LOCAL_HIT_PCT, 50, 50, 50, 50);
}

static void test_helpers(void)
{
	uint64_t c[POOL_C_FILE_MAX] = { 0 };

	CU_ASSERT_DOUBLE_EQUAL(monstat_pct(0, 0), 0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(monstat_pct(1, 3), 100.0 / 3, EPS);
	CU_ASSERT_DOUBLE_EQUAL(monstat_pct(5, 4), 100, EPS); /* torn read clamps */
	CU_ASSERT_DOUBLE_EQUAL(monstat_rate(10, 4, 2), 3, EPS);
	CU_ASSERT_DOUBLE_EQUAL(monstat_rate(10, 4, 0), 0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(monstat_rate(3, 4, 1), 0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(monstat_read_share(c), -1, EPS);
	CU_ASSERT_FALSE(monstat_candidate(c));
	c[POOL_C_LOCAL_HITS] = 1;
	c[POOL_C_GLOBAL_ATTEMPTS] = 2; /* one hit, one miss */
	c[POOL_C_GLOBAL_HITS] = 1;
	c[POOL_C_BACKEND_READS] = 5; /* read-ahead and read-modify-write too: not reads */
	c[POOL_C_BACKEND_WRITES] = 1;
	CU_ASSERT_EQUAL(monstat_reads(c), 3);
	CU_ASSERT_EQUAL(monstat_writes(c), 1);
	CU_ASSERT_DOUBLE_EQUAL(monstat_read_share(c), 75, EPS);
	CU_ASSERT_TRUE(monstat_candidate(c)); /* exactly 75 % is a candidate */
	c[POOL_C_BACKEND_WRITES] = 2;
	CU_ASSERT_FALSE(monstat_candidate(c));
	/* 10 deferred writes, written back by 3 flushes: 11 writes, not 14 */
	c[POOL_C_DEFERRED_WRITES] = 10;
	c[POOL_C_FLUSH_WRITES] = 3;
	c[POOL_C_BACKEND_WRITES] = 4;
	CU_ASSERT_EQUAL(monstat_writes(c), 11);
	CU_ASSERT_STRING_EQUAL(monstat_label(MONSTAT_GBUF_WRITE_RATE), "Global Buf Write I/O Rate");
	CU_ASSERT_TRUE(monstat_is_pct(MONSTAT_GLOBAL_HIT_PCT));
	CU_ASSERT_FALSE(monstat_is_pct(MONSTAT_GLOBAL_ATTEMPT_RATE));
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("monstat", NULL, NULL);
	CU_add_test(s, "first sample", test_first_sample);
	CU_add_test(s, "CUR/AVE/MIN/MAX over intervals", test_intervals);
	CU_add_test(s, "time order and restart", test_time_and_restart);
	CU_add_test(s, "percent, rate, read share", test_helpers);
	return cunit_run();
}
