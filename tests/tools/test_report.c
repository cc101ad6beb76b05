// SPDX-License-Identifier: MIT
/*
 * test_report.c - the suggestion logic of `accel report` (tools/report.c):
 * knees, the budget split by marginal gain, local buffers and the verdicts.
 * Curves come from the real estimator (cache/mrc.c) fed with known traces,
 * in a private memory block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "report.h"

static void *region;

static struct mrc_curve *curve_of(uint32_t slot)
{
	struct mrc_curve *c = malloc(sizeof(*c));

	CU_ASSERT_FATAL(c && mrc_file_curve(region, MRC_REGION_SIZE, slot, 1, c) == 0);
	return c;
}

/* @passes loops over @n buckets of file @slot. */
static struct mrc_curve *loop(uint32_t slot, uint64_t n, int passes)
{
	for (int p = 0; p < passes; p++)
		for (uint64_t b = 0; b < n; b++)
			mrc_access(region, MRC_REGION_SIZE, slot, 1, b);
	return curve_of(slot);
}

/* A skewed trace: bucket i drawn with probability ~ 1/(i+1). */
static struct mrc_curve *skewed(uint32_t slot, uint64_t m, uint64_t refs)
{
	uint64_t x = 88172645463325252ULL;

	for (uint64_t i = 0; i < refs; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* 1/(i+1) over m: exponentiate a uniform log */
		double u = (double)(x >> 11) / (double)(1ULL << 53);
		uint64_t b = (uint64_t)__builtin_exp(u * __builtin_log((double)m)) - 1;

		mrc_access(region, MRC_REGION_SIZE, slot, 1, b);
	}
	return curve_of(slot);
}

static int setup(void)
{
	region = aligned_alloc(64, MRC_REGION_SIZE);
	return !region || mrc_init(region, MRC_REGION_SIZE);
}

static int teardown(void)
{
	free(region);
	return 0;
}

static void test_knee(void)
{
	struct mrc_curve *l = loop(1, 300, 20), *s = loop(2, 5000, 1);
	uint64_t k = report_knee(l, 0);

	CU_ASSERT(k >= 280 && k <= 340); /* a loop's knee is its length */
	CU_ASSERT(mrc_curve_hit(l, k) > 0.9);
	CU_ASSERT_EQUAL(report_knee(s, 0), 0); /* a scan: no buffers help */
	CU_ASSERT_EQUAL(report_knee(l, 100), 100);
	free(l);
	free(s);
}

/* A loop over a whole file whose sampled distances overshoot its size. */
static void test_clamp(void)
{
	struct mrc_curve *l = loop(12, 48, 20);
	double top;

	l->bins[100] += 500; /* scatter: a distance of 100 or more in a 48-bucket file */
	l->total += 500;
	top = mrc_curve_hit(l, 1000);
	CU_ASSERT(mrc_curve_hit(l, 48) < top - 0.1);
	report_clamp(l, 48);
	CU_ASSERT(mrc_curve_hit(l, 48) >= top - 0.001); /* all of it within the file */
	CU_ASSERT(l->working_set <= 48);
	CU_ASSERT(report_knee(l, 48) <= 48 && report_knee(l, 48) >= 40);
	report_clamp(l, 0); /* unknown size: unchanged */
	CU_ASSERT(mrc_curve_hit(l, 48) >= top - 0.001);
	free(l);
}

/* Total hits of @a's allocation. */
static double hits(const struct report_alloc *a, size_t n)
{
	double h = 0;

	for (size_t i = 0; i < n; i++)
		h += a[i].weight * mrc_curve_hit(a[i].curve, a[i].buffers);
	return h;
}

static void test_split_loops(void)
{
	struct mrc_curve *small = loop(3, 100, 20), *big = loop(4, 1000, 20);
	struct report_alloc a[2] = {
		{ small, 1000, report_knee(small, 0), 0, 0 },
		{ big, 20000, report_knee(big, 0), 0, 0 },
	};

	/* 500 buffers: the big loop cannot reach its cliff, give them to the small */
	CU_ASSERT(report_split(a, 2, 500) <= 500);
	CU_ASSERT_EQUAL(a[0].buffers, a[0].cap);
	CU_ASSERT_EQUAL(a[1].buffers, 0);
	/* enough for both knees: both get exactly their knee, not more */
	CU_ASSERT_EQUAL(report_split(a, 2, 5000), a[0].cap + a[1].cap);
	CU_ASSERT_EQUAL(a[0].buffers, a[0].cap);
	CU_ASSERT_EQUAL(a[1].buffers, a[1].cap);
	/* room for the big one only: it brings 10x the hits */
	report_split(a, 2, a[1].cap + 50);
	CU_ASSERT_EQUAL(a[1].buffers, a[1].cap);
	CU_ASSERT_EQUAL(a[0].buffers, 0);
	CU_ASSERT_EQUAL(report_split(a, 2, 0), 0);
	/* the big loop already hits 90 % without a quota: the small one goes first */
	a[1].base = 0.9;
	report_split(a, 2, a[1].cap + 50);
	CU_ASSERT_EQUAL(a[0].buffers, a[0].cap);
	CU_ASSERT(a[1].buffers <= 50);
	free(small);
	free(big);
}

/* A loop against a skewed file: the split must beat the obvious alternatives. */
static void test_split_mixed(void)
{
	struct mrc_curve *lp = loop(5, 400, 25), *sk = skewed(6, 20000, 200000);
	struct report_alloc a[2] = {
		{ lp, 10000, report_knee(lp, 0), 0, 0 },
		{ sk, 200000, report_knee(sk, 0), 0, 0 },
	};
	static const uint64_t budgets[] = { 100, 450, 1000, 3000 };

	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		uint64_t b = budgets[i], used = report_split(a, 2, b);
		double h = hits(a, 2);
		struct report_alloc alt[2] = { a[0], a[1] };

		CU_ASSERT(used <= b && a[0].buffers + a[1].buffers == used);
		CU_ASSERT(a[0].buffers <= a[0].cap && a[1].buffers <= a[1].cap);
		alt[0].buffers = 0; /* everything to the skewed file */
		alt[1].buffers = b < alt[1].cap ? b : alt[1].cap;
		printf("\n  budget %llu: loop %llu, skewed %llu, hits %.0f vs all-to-skewed %.0f",
		       (unsigned long long)b, (unsigned long long)a[0].buffers,
		       (unsigned long long)a[1].buffers, h, hits(alt, 2));
		CU_ASSERT(h >= 0.97 * hits(alt, 2));
		if (b >= alt[0].cap) { /* the loop's knee, the rest to the skewed file */
			alt[0].buffers = alt[0].cap;
			alt[1].buffers = b - alt[0].cap < alt[1].cap ? b - alt[0].cap : alt[1].cap;
			CU_ASSERT(h >= 0.97 * hits(alt, 2));
		}
	}
	free(lp);
	free(sk);
}

static void test_local(void)
{
	struct mrc_curve *scan = loop(8, 3000, 1);
	int more = 0;

	/* Loops of 10 buckets: 8 or 16 local buffers hold them (a file curve
	 * samples every bucket while it has fewer than 1024). */
	for (uint32_t slot = 11; slot < 16; slot++) {
		struct mrc_curve *tight = loop(slot, 10, 200);

		more += report_local(tight) >= 8;
		free(tight);
	}
	CU_ASSERT_EQUAL(more, 5);
	CU_ASSERT_EQUAL(report_local(scan), 2);
	free(scan);
}

static void test_verdicts(void)
{
	struct mrc_curve *scan = loop(9, 4000, 1), *hot = loop(10, 50, 40);

	CU_ASSERT(report_readahead(100, 90, 10, NULL).yes);
	CU_ASSERT(!report_readahead(100, 10, 90, NULL).yes);
	CU_ASSERT(report_readahead(0, 0, 0, scan).yes);
	CU_ASSERT(!report_readahead(0, 0, 0, hot).yes && !report_readahead(0, 0, 0, hot).known);
	CU_ASSERT(!report_readahead(0, 0, 0, NULL).known);
	CU_ASSERT(report_deferred(500, 500, 500, 500 * 4096, 65536).yes);
	CU_ASSERT(!report_deferred(500, 500, 500, 500 * 65536ULL, 65536).yes);
	CU_ASSERT(!report_deferred(990, 10, 10, 40960, 65536).yes);
	CU_ASSERT(!report_defrag(1, 1, 0).yes);
	CU_ASSERT(!report_defrag(3, 2, 33.3).yes);
	CU_ASSERT(report_defrag(40, 1, 97.5).yes);
	CU_ASSERT(!report_defrag(2, 1, 50).yes); /* one seek more: not worth a rewrite */
	free(scan);
	free(hot);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("report", setup, teardown);
	CU_add_test(s, "knee", test_knee);
	CU_add_test(s, "clamp to the file size", test_clamp);
	CU_add_test(s, "budget split: two loops", test_split_loops);
	CU_add_test(s, "budget split: loop and skewed file", test_split_mixed);
	CU_add_test(s, "local buffers", test_local);
	CU_add_test(s, "read-ahead, deferred write, defrag", test_verdicts);
	return cunit_run();
}
