// SPDX-License-Identifier: MIT
/*
 * test_readahead.c - the read-ahead detector (cache/readahead.c) driven by
 * simulated readers: a sequential reader gets windows that double up to the
 * maximum, stay ahead of it and never name a bucket twice; a strided reader
 * gets only the buckets it will read; random readers get nothing; a changed
 * pattern starts small again; offsets and counts at the limits of their
 * types never wrap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "readahead.h"

/* A simulated handle: what was asked for, and whether twice. */
struct sim {
	struct ra_state ra;
	uint32_t bs, max;
	uint8_t *asked; /* per bucket: times requested */
	uint8_t *have;	/* per bucket: requested, or read by the reader itself */
	uint64_t nbuckets;
	unsigned int decisions, windows, dup, behind, reads_prefetched, reads_on_demand;
	uint32_t first_count, max_count;
	uint64_t last_read_bucket;
};

static void sim_init(struct sim *s, uint32_t bs, uint32_t max, uint64_t nbuckets)
{
	memset(s, 0, sizeof(*s));
	s->bs = bs;
	s->max = max;
	s->nbuckets = nbuckets;
	s->asked = calloc(nbuckets, 1);
	s->have = calloc(nbuckets, 1);
	CU_ASSERT_FATAL(s->asked && s->have);
}

static void sim_window(struct sim *s, const struct ra_window *w)
{
	CU_ASSERT(w->count >= 1 && w->count <= s->max);
	if (w->first <= s->last_read_bucket)
		s->behind++;
	if (!s->windows)
		s->first_count = w->count;
	if (w->count > s->max_count)
		s->max_count = w->count;
	s->windows++;
	for (uint64_t b = w->first; b < w->first + w->count && b < s->nbuckets; b++) {
		if (s->have[b])
			s->dup++;
		s->asked[b]++;
		s->have[b] = 1;
	}
}

/* One read; returns the number of windows it produced. */
static unsigned int sim_read(struct sim *s, uint64_t off, size_t len)
{
	struct ra_window w;
	unsigned int before = s->windows;
	uint64_t b, last = (off + len - 1) / s->bs;
	bool all = true;

	for (b = off / s->bs; b <= last && b < s->nbuckets; b++) {
		all = all && s->have[b];
		s->have[b] = 1;
	}
	if (all)
		s->reads_prefetched++;
	else
		s->reads_on_demand++;
	s->last_read_bucket = last;
	if (ra_on_read(&s->ra, off, len, s->bs, s->max, &w)) {
		s->decisions++;
		sim_window(s, &w);
		while (ra_next(&s->ra, &w))
			sim_window(s, &w);
	} else {
		CU_ASSERT_FALSE(ra_next(&s->ra, &w));
	}
	return s->windows - before;
}

static void sim_free(struct sim *s)
{
	free(s->asked);
	free(s->have);
}

static void test_sequential(void)
{
	static const size_t lens[] = { 4096, 120, 65536, 200000 };
	struct sim s;

	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t off, size = 64ULL << 20; /* 1024 buckets of 64 KiB */

		sim_init(&s, 65536, 32, size / 65536 + 64);
		for (off = 0; off + lens[i] <= size; off += lens[i])
			sim_read(&s, off, lens[i]);
		CU_ASSERT_EQUAL(s.first_count, 2);
		CU_ASSERT_EQUAL(s.max_count, 32);
		CU_ASSERT_EQUAL(s.dup, 0);
		CU_ASSERT_EQUAL(s.behind, 0);
		/* only the reads before the windows got ahead went to the backend */
		CU_ASSERT(s.reads_on_demand <= 3);
		sim_free(&s);
	}
}

/* Windows double one at a time: 2, 4, 8, ... and stay at the maximum. */
static void test_sequential_doubling(void)
{
	struct ra_state ra = { 0 };
	struct ra_window w;
	uint32_t expect = 2;
	uint64_t off;
	unsigned int n = 0;

	for (off = 0; off < 4096ULL * 4096; off += 4096) {
		if (!ra_on_read(&ra, off, 4096, 4096, 64, &w))
			continue;
		CU_ASSERT_EQUAL(w.count, expect);
		CU_ASSERT(w.first > off / 4096);
		expect = expect * 2 > 64 ? 64 : expect * 2;
		n++;
	}
	CU_ASSERT(n > 6);
}

/* Small gaps and overlaps inside a bucket are still sequential. */
static void test_sequential_gaps(void)
{
	struct sim s;
	uint64_t off = 0;

	sim_init(&s, 4096, 16, 2048);
	for (int i = 0; i < 3000; i++) {
		sim_read(&s, off, 500);
		off += i % 3 == 0 ? 400 : 700; /* overlap 100, or skip 200 */
	}
	CU_ASSERT(s.windows > 10);
	CU_ASSERT_EQUAL(s.dup, 0);
	CU_ASSERT_EQUAL(s.behind, 0);
	CU_ASSERT(s.reads_on_demand <= 2);
	sim_free(&s);
}

/* Every 3rd record block: only the blocks that will be read are asked for. */
static void test_strided(void)
{
	struct sim s;
	uint64_t b, k;

	sim_init(&s, 4096, 16, 3 * 2000 + 4096);
	for (k = 0; k < 2000; k++) {
		unsigned int got = sim_read(&s, k * 3 * 4096 + 100, 512);

		if (k < 2)
			CU_ASSERT_EQUAL(got, 0); /* a stride needs three reads */
	}
	CU_ASSERT(s.windows > 0);
	CU_ASSERT_EQUAL(s.dup, 0);
	CU_ASSERT_EQUAL(s.behind, 0);
	CU_ASSERT(s.reads_on_demand <= 3);
	for (b = 0; b < s.nbuckets; b++)
		if (s.asked[b] && b % 3)
			CU_FAIL("a bucket the strided reader never reads was asked for");
	/* the distance grows: one decision covers up to 16 predicted reads */
	CU_ASSERT(s.decisions < 2000 / 4);
	sim_free(&s);
}

/* A stride whose gaps are smaller than a bucket touches every bucket: sequential. */
static void test_strided_dense(void)
{
	struct sim s;
	uint64_t k;

	sim_init(&s, 4096, 8, 512);
	for (k = 0; k < 5000; k++)
		sim_read(&s, k * 360, 120); /* every 3rd 120-byte record */
	CU_ASSERT(s.windows > 10);
	CU_ASSERT_EQUAL(s.dup, 0);
	CU_ASSERT(s.reads_on_demand <= 2);
	sim_free(&s);
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 11;
}

static void test_random(void)
{
	struct ra_state ra = { 0 };
	struct ra_window w;
	uint64_t x = 42;
	unsigned int issued = 0;

	for (int i = 0; i < 100000; i++) {
		uint64_t off = lcg(&x) % (1ULL << 40);

		issued += ra_on_read(&ra, off, 1 + lcg(&x) % 8192, 65536, 64, &w);
	}
	CU_ASSERT_EQUAL(issued, 0);
}

/* Reads sequentially until the window is at the maximum; returns the next offset. */
static uint64_t run_to_max(struct ra_state *ra, uint64_t off, uint32_t max)
{
	struct ra_window w;
	uint32_t top = 0;

	for (int i = 0; i < 100000 && top < max; i++, off += 4096)
		if (ra_on_read(ra, off, 4096, 4096, max, &w))
			top = w.count;
	CU_ASSERT_EQUAL(top, max);
	return off;
}

/* Buckets of the first decision of the next pattern seen after @off, or 0. */
static uint32_t next_window(struct ra_state *ra, uint64_t off, uint64_t step, uint32_t max)
{
	struct ra_window w;
	uint32_t n = 0;

	for (int i = 0; i < 10 && !n; i++, off += step)
		if (ra_on_read(ra, off, 512, 4096, max, &w))
			do
				n += w.count;
			while (ra_next(ra, &w));
	return n;
}

static void test_pattern_change(void)
{
	struct ra_state ra = { 0 };
	struct ra_window w;
	uint64_t off = run_to_max(&ra, 0, 64);

	/* one random read drops the window; sequential again starts small */
	CU_ASSERT_FALSE(ra_on_read(&ra, off + (1ULL << 30), 4096, 4096, 64, &w));
	CU_ASSERT_EQUAL(next_window(&ra, off + (1ULL << 31), 512, 64), 2);

	/* sequential turning strided starts small as well */
	ra_reset(&ra);
	off = run_to_max(&ra, 0, 64);
	CU_ASSERT_EQUAL(next_window(&ra, off + 65536, 65536, 64), 2);
}

static void test_jump_back(void)
{
	struct sim s;
	uint64_t off, first_after = 0;
	unsigned int windows;

	sim_init(&s, 4096, 32, 8192);
	for (off = 0; off < (8ULL << 20); off += 4096)
		sim_read(&s, off, 4096);
	windows = s.windows;
	/* back to the start: no window on the jump itself, then a small one ahead */
	CU_ASSERT_EQUAL(sim_read(&s, 0, 4096), 0);
	memset(s.asked, 0, s.nbuckets);
	memset(s.have, 0, s.nbuckets);
	s.max_count = 0;
	s.first_count = 0;
	s.windows = 0;
	for (off = 4096; off < (1ULL << 20); off += 4096) {
		sim_read(&s, off, 4096);
		if (s.windows && !first_after)
			first_after = s.first_count;
	}
	CU_ASSERT(windows > 0);
	CU_ASSERT_EQUAL(first_after, 2);
	CU_ASSERT_EQUAL(s.dup, 0);
	CU_ASSERT_EQUAL(s.behind, 0);
	sim_free(&s);
}

/*
 * The kernel's read-ahead of a file reaches the daemon as several READs at
 * once, in either order: 1 MiB reads whose pairs come swapped still grow the
 * window to the maximum and never ask for a bucket twice. Before, each
 * swap restarted the window at 2 buckets.
 */
static void test_reordered(void)
{
	struct sim s;
	uint64_t off, size = 64ULL << 20, mib = 1 << 20;

	sim_init(&s, 65536, 128, size / 65536 + 256);
	sim_read(&s, 0, mib); /* the kernel's first read comes alone, then two at a time */
	for (off = mib; off + 2 * mib <= size; off += 2 * mib) {
		sim_read(&s, off + mib, mib);
		sim_read(&s, off, mib);
	}
	CU_ASSERT_EQUAL(s.max_count, 128);
	CU_ASSERT_EQUAL(s.dup, 0);
	/* a read far behind (more than the window) is still a new pattern */
	CU_ASSERT_EQUAL(sim_read(&s, 0, mib), 0);
	CU_ASSERT_EQUAL(s.ra.size, 0);
	sim_free(&s);
}

static void test_disabled(void)
{
	struct ra_state ra = { 0 };
	struct ra_window w;
	uint64_t off;
	unsigned int issued = 0;

	for (off = 0; off < (1 << 20); off += 4096)
		issued += ra_on_read(&ra, off, 4096, 4096, 0, &w);
	for (off = 0; off < (1 << 20); off += 4096)
		issued += ra_on_read(&ra, off, 4096, 0, 16, &w);
	CU_ASSERT_EQUAL(issued, 0);
	/* enabling again needs the pattern to be seen again */
	CU_ASSERT_FALSE(ra_on_read(&ra, off, 4096, 4096, 16, &w));
	CU_ASSERT_TRUE(ra_on_read(&ra, off + 4096, 4096, 4096, 16, &w));
	/* turning it off mid-pattern forgets the pattern */
	CU_ASSERT_FALSE(ra_on_read(&ra, off + 8192, 4096, 4096, 0, &w));
	CU_ASSERT_FALSE(ra_on_read(&ra, off + 12288, 4096, 4096, 16, &w));
	/* zero-length reads change nothing */
	CU_ASSERT_FALSE(ra_on_read(&ra, 1ULL << 40, 0, 4096, 16, &w));
	CU_ASSERT_TRUE(ra_on_read(&ra, off + 16384, 4096, 4096, 16, &w));
}

/* The last bucket of a read, its end saturated as the detector does. */
static uint64_t sat_last(uint64_t off, uint64_t len, uint32_t bs)
{
	uint64_t end = off > UINT64_MAX - len ? UINT64_MAX : off + len;

	return (end > off ? end - 1 : off) / bs;
}

static void check_no_wrap(const struct ra_window *w, uint32_t bs, uint64_t reader_last)
{
	CU_ASSERT(w->count >= 1);
	CU_ASSERT(w->first > reader_last);
	CU_ASSERT(w->count - 1 <= UINT64_MAX / bs - w->first);
}

static void test_huge_offsets(void)
{
	static const uint32_t sizes[] = { 65536, 1, 3, 4096 };
	struct ra_state ra;
	struct ra_window w;

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t bs = sizes[i];
		uint64_t start = UINT64_MAX - 40ULL * bs - 5;
		unsigned int n = 0;

		ra_reset(&ra);
		for (uint64_t k = 0; k <= 40; k++) {
			uint64_t off = start + k * bs;

			if (ra_on_read(&ra, off, bs, bs, 8, &w)) {
				check_no_wrap(&w, bs, sat_last(off, bs, bs));
				n++;
			}
		}
		/* reads that run into UINT64_MAX saturate and are no trouble */
		for (int k = 0; k < 4; k++)
			if (ra_on_read(&ra, UINT64_MAX - 10 + k, 4096, bs, 8, &w))
				check_no_wrap(&w, bs, sat_last(UINT64_MAX - 10 + k, 4096, bs));
		CU_ASSERT(n > 0);
	}
	/* a stride whose next read would pass UINT64_MAX predicts nothing there */
	ra_reset(&ra);
	for (int k = 0; k < 3; k++)
		if (ra_on_read(&ra, UINT64_MAX - (3 - k) * (1ULL << 62), 100, 4096, 64, &w))
			do
				check_no_wrap(&w, 4096, 0);
			while (ra_next(&ra, &w));
}

/* max_buckets = UINT32_MAX and a reader that overtakes every window. */
static void test_huge_count(void)
{
	struct ra_state ra = { 0 };
	struct ra_window w;
	uint64_t off = 0, asked_end = 0;
	uint32_t top = 0;

	for (int i = 0; i < 80; i++) {
		size_t len = (size_t)1 << 40;

		if (ra_on_read(&ra, off, len, 1, UINT32_MAX, &w)) {
			CU_ASSERT(w.first >= off + len);
			CU_ASSERT(w.first >= asked_end);
			CU_ASSERT(w.count <= UINT32_MAX);
			CU_ASSERT(w.count - 1 <= UINT64_MAX - w.first);
			asked_end = w.first + w.count;
			if (w.count > top)
				top = w.count;
		}
		off += len;
	}
	CU_ASSERT_EQUAL(top, UINT32_MAX);
	/* near the end of the offset space the window shrinks to what is left */
	ra_reset(&ra);
	off = UINT64_MAX - 10ULL * 4096;
	for (int i = 0; i < 10; i++, off += 4096)
		if (ra_on_read(&ra, off, 4096, 1, UINT32_MAX, &w))
			check_no_wrap(&w, 1, off + 4095);
}

/*
 * Mixed runs of sequential, strided and random reads with random sizes:
 * every window lies after the read that triggered it, within the maximum
 * and within the offset space, and never repeats a bucket of the same run.
 */
static void test_mixed_invariants(void)
{
	struct ra_state ra = { 0 };
	struct ra_window w;
	uint64_t x = 99, off = 0, run_last = 0;
	unsigned int windows = 0;

	for (int run = 0; run < 2000; run++) {
		int kind = (int)(lcg(&x) % 3), reads = 1 + (int)(lcg(&x) % 40);
		uint32_t bs = 512u << (lcg(&x) % 5), max = (uint32_t)(lcg(&x) % 70);
		uint64_t stride = bs * (2 + lcg(&x) % 5);
		size_t len = 1 + lcg(&x) % (2 * bs);

		off = lcg(&x) % (1ULL << 45);
		run_last = 0;
		for (int i = 0; i < reads; i++) {
			uint64_t cur = (off + len - 1) / bs;

			if (ra_on_read(&ra, off, len, bs, max, &w)) {
				do {
					CU_ASSERT(w.first > cur);
					CU_ASSERT(w.count >= 1 && w.count <= max);
					CU_ASSERT(i == 0 || w.first > run_last || run_last == 0);
					run_last = w.first + w.count - 1;
					windows++;
				} while (ra_next(&ra, &w));
			}
			off += kind == 0 ? len : kind == 1 ? stride : lcg(&x) % (1ULL << 30);
		}
	}
	CU_ASSERT(windows > 100);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("readahead", NULL, NULL);
	CU_add_test(s, "sequential grows to max, no bucket twice", test_sequential);
	CU_add_test(s, "sequential doubles one step at a time", test_sequential_doubling);
	CU_add_test(s, "sequential with small gaps and overlaps", test_sequential_gaps);
	CU_add_test(s, "strided asks only for what will be read", test_strided);
	CU_add_test(s, "dense stride is sequential", test_strided_dense);
	CU_add_test(s, "random does not prefetch", test_random);
	CU_add_test(s, "pattern change shrinks", test_pattern_change);
	CU_add_test(s, "reader jumping back", test_jump_back);
	CU_add_test(s, "reads reordered by the kernel stay sequential", test_reordered);
	CU_add_test(s, "max 0 and bucket size 0 disable", test_disabled);
	CU_add_test(s, "huge offsets do not overflow", test_huge_offsets);
	CU_add_test(s, "window never past a huge count", test_huge_count);
	CU_add_test(s, "mixed patterns keep the invariants", test_mixed_invariants);
	return cunit_run();
}
