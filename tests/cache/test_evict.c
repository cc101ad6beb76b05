// SPDX-License-Identifier: MIT
/*
 * test_evict.c - eviction: a file pinned by a quota, or made memory resident,
 * keeps >= 95 % hits while another stream reads a cold file four times the
 * pool's size through it; an unpinned hot set survives the same scan; quotas
 * are clamped and hold under pressure.
 */
#include <errno.h>

#include "cache_test.h"

#define BS 4096U
#define NBUFS 256U

/* Read bucket @b of @pf as a daemon would: hit, or fill (backend) and count. */
static bool read_or_fill(struct pool_file *pf, uint32_t file, uint64_t b, uint8_t *buf)
{
	uint32_t v;

	if (pool_buf_read(pf, b, buf, 0, BS) == BS)
		return ct_verify(buf, BS, file, b, &v);
	ct_fill(pf, file, b, 1, BS);
	return false;
}

/*
 * Warm @hot_n buckets of the hot file, then stream 4 x NBUFS cold buckets,
 * re-reading one hot bucket every @every cold ones. Returns the hot hit %.
 */
static double pollution_run(const char *tag, uint32_t quota, uint32_t hot_n, int every)
{
	const char *name = ct_name(tag);
	struct pool *pool = ct_open(name, BS, NBUFS);
	struct pool_file_id hot_id = ct_id(100, (uint64_t)hot_n * BS);
	struct pool_file_id cold_id = ct_id(101, 4ULL * NBUFS * BS);
	struct pool_file *hot, *cold;
	uint8_t buf[BS];
	int hits = 0, reads = 0;

	CU_ASSERT_FATAL(pool != NULL);
	CU_ASSERT_FATAL(pool_file_get(pool, &hot_id, "hot", quota, &hot) == 0);
	CU_ASSERT_FATAL(pool_file_get(pool, &cold_id, "cold", 0, &cold) == 0);
	for (uint32_t b = 0; b < hot_n; b++)
		read_or_fill(hot, 100, b, buf);
	for (uint32_t b = 0; b < 4 * NBUFS; b++) {
		read_or_fill(cold, 101, b, buf);
		if (b % (uint32_t)every == 0) {
			hits += read_or_fill(hot, 100, (b / (uint32_t)every) % hot_n, buf);
			reads++;
		}
	}
	pool_file_put(hot);
	pool_file_put(cold);
	pool_close(pool);
	pool_unlink(name);
	printf("\n    %s: hot file %u buckets, quota %d: %d/%d hits (%.1f %%)", tag, hot_n,
	       quota == POOL_QUOTA_ALL ? -1 : (int)quota, hits, reads, 100.0 * hits / reads);
	return 100.0 * hits / reads;
}

/*
 * Each hot bucket is re-read only once per 8 x 64 = 512 cold buckets (2 pool
 * sizes): aging alone cannot keep it (the control run shows it), the quota does.
 */
static void test_pinned_quota(void)
{
	CU_ASSERT(pollution_run("pin", 64, 64, 8) >= 95.0);
	CU_ASSERT(pollution_run("nopin", 0, 64, 8) < 50.0);
}

static void test_memory_resident(void)
{
	CU_ASSERT(pollution_run("all", POOL_QUOTA_ALL, 96, 1) >= 95.0);
}

/* No quota: second-chance aging alone keeps a re-read set above a one-pass scan. */
static void test_unpinned_hot_set(void)
{
	CU_ASSERT(pollution_run("clock", 0, 32, 2) >= 90.0);
}

static void test_quota_clamp_and_full_shard(void)
{
	const char *name = ct_name("clamp");
	char err[128];
	struct pool_config cfg = { .name = name,
				   .bucket_size = BS,
				   .nbufs = 64,
				   .nshards = 1,
				   .err = err,
				   .errlen = sizeof(err) };
	struct pool_file_id a = ct_id(110, 64 * BS), b = ct_id(111, 64 * BS);
	struct pool_file *pa, *pb;
	struct pool_info info;
	struct pool *pool;
	uint8_t buf[BS];
	int filled = 0;

	CU_ASSERT_FATAL(pool_open(&cfg, &pool) == 0);
	CU_ASSERT_FATAL(pool_file_get(pool, &a, "a", 1000, &pa) == 0);
	pool_info(pool, &info);
	CU_ASSERT_EQUAL(info.reserved, 56); /* 7/8 of 64 */
	CU_ASSERT_FATAL(pool_file_get(pool, &b, "b", 10, &pb) == 0);
	pool_info(pool, &info);
	CU_ASSERT_EQUAL(info.reserved, 56); /* nothing left for b */
	CU_ASSERT_EQUAL(pool_file_set_quota(pa, 60), 56);
	CU_ASSERT_EQUAL(pool_file_set_quota(pa, 16), 16);
	CU_ASSERT_EQUAL(pool_file_set_quota(pb, 10), 10);
	CU_ASSERT_EQUAL(pool_file_set_quota(pa, 64), 46);
	/* a fills its 46 and beyond, up to the whole pool */
	for (int i = 0; i < 64; i++)
		filled += ct_fill(pa, 110, i, 1, BS);
	CU_ASSERT_EQUAL(filled, 64);
	/* b may take a's buffers beyond a's quota only */
	filled = 0;
	for (int i = 0; i < 64; i++)
		filled += ct_fill(pb, 111, i, 1, BS);
	CU_ASSERT_EQUAL(filled, 64);
	filled = 0;
	for (int i = 0; i < 64; i++)
		filled += pool_buf_read(pa, i, buf, 0, BS) == BS;
	CU_ASSERT_EQUAL(filled, 46);
	/* b unpinned, a pinned at 56: b recycles its own buffers, never a's 56 */
	CU_ASSERT_EQUAL(pool_file_set_quota(pb, 0), 0);
	CU_ASSERT_EQUAL(pool_file_set_quota(pa, 56), 56);
	for (int i = 0; i < 64; i++)
		ct_fill(pa, 110, i, 1, BS);
	filled = 0;
	for (int i = 0; i < 200; i++)
		filled += ct_fill(pb, 111, 100 + i, 1, BS);
	CU_ASSERT_EQUAL(filled, 200);
	filled = 0;
	for (int i = 0; i < 64; i++)
		filled += pool_buf_read(pa, i, buf, 0, BS) == BS;
	CU_ASSERT_EQUAL(filled, 56);
	pool_file_put(pa);
	pool_file_put(pb);
	pool_close(pool);
}

int main(void)
{
	CU_pSuite s = ct_suite("evict");

	if (!s)
		return 1;
	CU_add_test(s, "pinned file survives a 4x pool scan", test_pinned_quota);
	CU_add_test(s, "memory-resident file survives a 4x pool scan", test_memory_resident);
	CU_add_test(s, "unpinned hot set survives a 4x pool scan", test_unpinned_hot_set);
	CU_add_test(s, "quota clamping, quotas hold under pressure",
		    test_quota_clamp_and_full_shard);
	return ct_run();
}
