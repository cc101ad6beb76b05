// SPDX-License-Identifier: MIT
/*
 * test_fiemap.c - extent arithmetic: merging physically contiguous kernel
 * extents, data runs and holes, unwritten extents, the fragmentation score,
 * and the ideal count where the file system limits contiguity (fslimit.h).
 */

#include "cunit_main.h"
#include "fiemap.h"

static void push(struct fiemap_map *m, uint64_t lo, uint64_t ph, uint64_t len, uint32_t flags)
{
	struct fiemap_x x = { lo, ph, len, flags };

	CU_ASSERT_EQUAL_FATAL(fiemap_push(m, &x), 0);
}

static void test_empty(void)
{
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;

	fiemap_stats(&m, 0, 0, &st);
	CU_ASSERT(st.extents == 0 && st.data_runs == 0 && st.holes == 0 && st.score == 0);
	fiemap_stats(&m, 8192, 0, &st); /* entirely sparse */
	CU_ASSERT(st.holes == 1 && st.hole_bytes == 8192 && st.score == 0);
}

static void test_contiguous_split(void)
{
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;

	/* ext4 splits at 128 MiB although the blocks continue: one extent */
	push(&m, 0, 1 << 20, 128 << 20, 0);
	push(&m, 128 << 20, (1 << 20) + (128 << 20), 64 << 20, FIEMAP_X_UNWRITTEN);
	fiemap_stats(&m, 192 << 20, 0, &st);
	CU_ASSERT_EQUAL(st.kernel_extents, 2);
	CU_ASSERT_EQUAL(st.extents, 1);
	CU_ASSERT_EQUAL(st.data_runs, 1);
	CU_ASSERT_EQUAL(st.unwritten, 1);
	CU_ASSERT_EQUAL(st.score, 0);
	fiemap_free(&m);
}

static void test_fragmented(void)
{
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;
	uint64_t i;

	for (i = 0; i < 10; i++) /* 10 pieces scattered backwards on disk */
		push(&m, i * 4096, (100 - i) * 65536, 4096, 0);
	fiemap_stats(&m, 10 * 4096, 0, &st);
	CU_ASSERT_EQUAL(st.extents, 10);
	CU_ASSERT_EQUAL(st.data_runs, 1);
	CU_ASSERT_DOUBLE_EQUAL(st.score, 90.0, 0.001);
	CU_ASSERT_EQUAL(st.holes, 0);
	fiemap_free(&m);
}

static void test_holes(void)
{
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;

	/* hole, data, hole, data (physically adjacent across the hole), hole to EOF */
	push(&m, 4096, 40960, 4096, 0);
	push(&m, 12288, 45056, 4096, 0);
	fiemap_stats(&m, 32768, 0, &st);
	CU_ASSERT_EQUAL(st.holes, 3);
	CU_ASSERT_EQUAL(st.hole_bytes, 4096 + 4096 + 16384);
	CU_ASSERT_EQUAL(st.data_runs, 2);
	CU_ASSERT_EQUAL(st.extents, 2); /* logical gap: never merged */
	CU_ASSERT_EQUAL(st.score, 0);
	fiemap_free(&m);
}

static void test_prealloc_beyond_eof(void)
{
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;

	push(&m, 0, 4096, 8192, 0);
	push(&m, 8192, 409600, 8192, FIEMAP_X_UNWRITTEN); /* KEEP_SIZE preallocation, elsewhere */
	fiemap_stats(&m, 8192, 0, &st);
	CU_ASSERT_EQUAL(st.mapped, 16384);
	CU_ASSERT_EQUAL(st.holes, 0);
	CU_ASSERT_EQUAL(st.extents, 2);
	CU_ASSERT_EQUAL(st.data_runs, 1);
	CU_ASSERT_DOUBLE_EQUAL(st.score, 50.0, 0.001);
	fiemap_free(&m);
}

static void test_nophys(void)
{
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;

	push(&m, 0, 0, 4096, FIEMAP_X_NOPHYS);
	push(&m, 4096, 4096, 4096, FIEMAP_X_NOPHYS);
	fiemap_stats(&m, 8192, 0, &st);
	CU_ASSERT_EQUAL(st.extents, 2); /* no physical address: cannot claim contiguity */
	fiemap_free(&m);
}

/* ext4 with 128 MiB block groups: a 260 MiB run needs 3 extents at best. */
static void test_ideal_unit(void)
{
	const uint64_t mib = 1 << 20, unit = 128 * mib;
	struct fiemap_map m = { 0 };
	struct fiemap_stats st;

	push(&m, 0, 1000 * mib, 100 * mib, 0);
	push(&m, 100 * mib, 2000 * mib, 160 * mib, 0); /* 260 MiB of data, 2 extents */
	push(&m, 300 * mib, 3000 * mib, 4 * mib, 0);   /* after a hole: a second run */
	fiemap_stats(&m, 304 * mib, unit, &st);
	CU_ASSERT_EQUAL(st.data_runs, 2);
	CU_ASSERT_EQUAL(st.extents, 3);
	CU_ASSERT_EQUAL(st.ideal, 4); /* ceil(260 / 128) + 1 */
	CU_ASSERT_EQUAL(st.score, 0); /* better than the file system promises */
	fiemap_stats(&m, 304 * mib, 0, &st);
	CU_ASSERT_EQUAL(st.ideal, 2); /* no limit known: one per data run */
	CU_ASSERT_DOUBLE_EQUAL(st.score, 100.0 / 3, 0.001);
	fiemap_stats(&m, 304 * mib, 256 * mib, &st);
	CU_ASSERT_EQUAL(st.ideal, 3);
	CU_ASSERT_EQUAL(st.score, 0);
	fiemap_stats(&m, 304 * mib, 4 * mib, &st); /* a run of exactly one unit: 1 */
	CU_ASSERT_EQUAL(st.ideal, 65 + 1);
	fiemap_free(&m);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("fiemap", NULL, NULL);
	CU_add_test(s, "empty and sparse", test_empty);
	CU_add_test(s, "128 MiB split merged", test_contiguous_split);
	CU_add_test(s, "fragmented score", test_fragmented);
	CU_add_test(s, "holes", test_holes);
	CU_add_test(s, "preallocation beyond EOF", test_prealloc_beyond_eof);
	CU_add_test(s, "no physical address", test_nophys);
	CU_add_test(s, "ideal with the file system's unit", test_ideal_unit);
	return cunit_run();
}
