// SPDX-License-Identifier: MIT
/*
 * test_local.c - a handle's local buffers, and the stream front that does
 * local -> global -> backend: lookup order, exact bytes across bucket
 * boundaries and end of file, what each step counts, write coherence
 * between streams, and active streams.
 */
#include <errno.h>
#include <pthread.h>

#include "cache_test.h"
#include "local.h"
#include "stream.h"

#define BS 4096U

static void test_local_basics(void)
{
	struct pool_ticket t = { .epoch = 1, .wseq = 5 }, t2 = t;
	struct local *lc;
	uint8_t buf[BS];
	void *p;

	CU_ASSERT_FATAL(local_create(BS, 2, &lc) == 0);
	CU_ASSERT_EQUAL(local_read(lc, &t, 0, buf, 0, BS), -ENOENT);
	for (uint64_t b = 0; b < 3; b++) {
		p = local_prepare(lc);
		CU_ASSERT_FATAL(p != NULL);
		memset(p, (int)b + 1, BS);
		local_commit(lc, &t, b, b == 2 ? 100 : BS);
	}
	/* two buffers: bucket 0, the least recently used, made room for 2 */
	CU_ASSERT_EQUAL(local_read(lc, &t, 0, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(local_read(lc, &t, 1, buf, 10, 20), 20);
	CU_ASSERT_EQUAL(buf[0], 2);
	CU_ASSERT_EQUAL(local_read(lc, &t, 2, buf, 50, 100), 50);
	CU_ASSERT_EQUAL(buf[49], 3);
	/* the file changed: local buffers no longer count */
	t2.wseq++;
	CU_ASSERT_EQUAL(local_read(lc, &t2, 1, buf, 0, 10), -ENOENT);
	CU_ASSERT_EQUAL(local_invalidate(lc, UINT64_MAX), 1);
	CU_ASSERT_EQUAL(local_read(lc, &t, 2, buf, 0, 10), -ENOENT);
	local_destroy(lc);
}

/* A backing "file" in memory: generated content, and a count of reads. */
struct mem_file {
	uint8_t *data;
	size_t size;
	int reads;
};

static ssize_t mem_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct mem_file *mf = arg;

	__atomic_fetch_add(&mf->reads, 1, __ATOMIC_RELAXED);
	if (off >= mf->size)
		return 0;
	if (len > mf->size - off)
		len = mf->size - off;
	memcpy(buf, mf->data + off, len);
	return (ssize_t)len;
}

static struct mem_file *mem_new(size_t size)
{
	struct mem_file *mf = calloc(1, sizeof(*mf));

	mf->data = malloc(size);
	mf->size = size;
	for (size_t i = 0; i < size; i++)
		mf->data[i] = (uint8_t)(i * 7 + i / 4096);
	return mf;
}

static void mem_free(struct mem_file *mf)
{
	free(mf->data);
	free(mf);
}

static void test_stream_order_and_counts(void)
{
	const char *name = ct_name("stream");
	struct pool *pool = ct_open(name, BS, 64);
	size_t size = 5 * BS + 123;
	struct mem_file *mf = mem_new(size);
	struct pool_file_id id = ct_id(20, size);
	struct stream *s1, *s2;
	struct pool_stats_file fst;
	uint8_t *buf = malloc(8 * BS);

	CU_ASSERT_FATAL(pool && stream_open(pool, &id, "/m", 0, 2, &s1) == 0);
	CU_ASSERT_FATAL(stream_open(pool, &id, "/m", 0, 0, &s2) == 0);
	/* first read: misses everywhere; buckets 0, 1 and 2 from the backend in
	 * one read (a miss reads the request's next missing buckets with it) */
	CU_ASSERT_EQUAL(stream_read(s1, buf, 2 * BS, 1000, mem_read, mf), 2 * BS);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data + 1000, 2 * BS), 0);
	CU_ASSERT_EQUAL(mf->reads, 1);
	/* again: local hits only */
	CU_ASSERT_EQUAL(stream_read(s1, buf, 100, BS + 5, mem_read, mf), 100);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data + BS + 5, 100), 0);
	CU_ASSERT_EQUAL(mf->reads, 1);
	/* another stream: global hits, no backend read */
	CU_ASSERT_EQUAL(stream_read(s2, buf, 3 * BS, 0, mem_read, mf), 3 * BS);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data, 3 * BS), 0);
	CU_ASSERT_EQUAL(mf->reads, 1);
	/* to the end of file and past it */
	CU_ASSERT_EQUAL(stream_read(s2, buf, 8 * BS, 0, mem_read, mf), (ssize_t)size);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data, size), 0);
	CU_ASSERT_EQUAL(stream_read(s2, buf, 10, size, mem_read, mf), 0);
	CU_ASSERT_EQUAL(pool_stats_file(stream_file(s1), &fst), 0);
	CU_ASSERT_EQUAL(fst.opens, 2);
	CU_ASSERT_EQUAL(fst.c[POOL_C_LOCAL_ATTEMPTS], 4);
	CU_ASSERT_EQUAL(fst.c[POOL_C_LOCAL_HITS], 1);
	/* buckets 3, 4 and the last, short one in one read: it ends where the
	 * file does */
	CU_ASSERT_EQUAL(mf->reads, 2);
	CU_ASSERT_EQUAL(fst.c[POOL_C_BACKEND_READS], (uint64_t)mf->reads);
	CU_ASSERT_EQUAL(fst.c[POOL_C_BACKEND_READ_BYTES], 5 * BS + 123);
	/* the two misses' own buckets (0, 3) are filled as misses, the rest as
	 * read ahead: issued 4 (1, 2, 4, 5), every one then used */
	CU_ASSERT_EQUAL(fst.c[POOL_C_GBUF_READ_IOS], 2);
	CU_ASSERT_EQUAL(fst.c[POOL_C_RA_ISSUED], 4);
	CU_ASSERT_EQUAL(fst.c[POOL_C_RA_USED], 4);
	CU_ASSERT_EQUAL(fst.c[POOL_C_GLOBAL_HITS], 11); /* the read at EOF hit bucket 5 */
	CU_ASSERT_EQUAL(fst.c[POOL_C_LBUF_READ_IOS], 1);
	stream_close(s2);
	CU_ASSERT_EQUAL(pool_stats_file(stream_file(s1), &fst), 0);
	CU_ASSERT_EQUAL(fst.opens, 1);
	stream_close(s1);
	mem_free(mf);
	free(buf);
	pool_close(pool);
}

static void test_stream_write(void)
{
	const char *name = ct_name("swrite");
	struct pool *pool = ct_open(name, BS, 64);
	struct mem_file *mf = mem_new(4 * BS);
	struct pool_file_id id = ct_id(21, 4 * BS);
	struct stream *s1, *s2;
	uint8_t buf[4 * BS], data[300];

	CU_ASSERT_FATAL(pool && stream_open(pool, &id, "/w", 0, 2, &s1) == 0);
	CU_ASSERT_FATAL(stream_open(pool, &id, "/w", 0, 2, &s2) == 0);
	CU_ASSERT_EQUAL(stream_read(s1, buf, 4 * BS, 0, mem_read, mf), 4 * BS);
	CU_ASSERT_EQUAL(stream_read(s2, buf, 4 * BS, 0, mem_read, mf), 4 * BS);
	/* s1 writes across a bucket boundary; both streams see it at once */
	memset(data, 0xab, sizeof(data));
	CU_ASSERT_EQUAL(stream_write_begin(s1, BS - 100, sizeof(data)), 0);
	memcpy(mf->data + BS - 100, data, sizeof(data));
	CU_ASSERT_EQUAL(stream_write_end(s1, BS - 100, sizeof(data)), 0);
	CU_ASSERT_EQUAL(stream_read(s2, buf, 4 * BS, 0, mem_read, mf), 4 * BS);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data, 4 * BS), 0);
	CU_ASSERT_EQUAL(stream_read(s1, buf, 4 * BS, 0, mem_read, mf), 4 * BS);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data, 4 * BS), 0);
	/* truncation, bracketed like a write */
	CU_ASSERT_EQUAL(stream_write_begin(s1, 0, 0), 0);
	mf->size = BS + 10;
	CU_ASSERT_EQUAL(stream_truncate(s1, mf->size), 0);
	CU_ASSERT_EQUAL(stream_write_end(s1, 0, 0), 0);
	CU_ASSERT_EQUAL(stream_read(s2, buf, 4 * BS, 0, mem_read, mf), BS + 10);
	CU_ASSERT_EQUAL(memcmp(buf, mf->data, BS + 10), 0);
	/* the backing file changed behind our back */
	mf->data[0] ^= 0xff;
	CU_ASSERT_EQUAL(stream_invalidate(s2), 0);
	CU_ASSERT_EQUAL(stream_read(s1, buf, 1, 0, mem_read, mf), 1);
	CU_ASSERT_EQUAL(buf[0], mf->data[0]);
	stream_close(s1);
	stream_close(s2);
	mem_free(mf);
	pool_close(pool);
}

struct reader_arg {
	struct stream *st;
	struct mem_file *mf;
	unsigned int seed;
	int bad;
};

static void *reader(void *p)
{
	struct reader_arg *ra = p;
	uint8_t *buf = malloc(3 * BS);

#if defined(__SANITIZE_THREAD__)
	const int iterations = 1000; /* byte-wise atomic copies are slow under TSan */
#else
	const int iterations = 20000;
#endif

	for (int i = 0; i < iterations; i++) {
		uint64_t off = (uint64_t)(rand_r(&ra->seed) % (int)ra->mf->size);
		size_t len = (size_t)(rand_r(&ra->seed) % (int)(3 * BS));
		size_t want = len < ra->mf->size - off ? len : ra->mf->size - off;

		if (i % 100 == 99)
			stream_invalidate(ra->st);
		if (stream_read(ra->st, buf, len, off, mem_read, ra->mf) != (ssize_t)want ||
		    memcmp(buf, ra->mf->data + off, want))
			ra->bad++;
	}
	free(buf);
	return NULL;
}

/* Threads share one stream (FUSE may read one handle from several threads). */
static void test_stream_threads(void)
{
	const char *name = ct_name("threads");
	struct pool *pool = ct_open(name, BS, 16);
	struct mem_file *mf = mem_new(40 * BS + 77);
	struct pool_file_id id = ct_id(22, mf->size);
	struct reader_arg ra[4];
	pthread_t th[4];
	struct stream *st;

	CU_ASSERT_FATAL(pool && stream_open(pool, &id, "/t", 0, 4, &st) == 0);
	for (int i = 0; i < 4; i++) {
		ra[i] = (struct reader_arg){ .st = st, .mf = mf, .seed = (unsigned int)i + 1 };
		CU_ASSERT_FATAL(pthread_create(&th[i], NULL, reader, &ra[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(ra[i].bad, 0);
	}
	stream_close(st);
	mem_free(mf);
	pool_close(pool);
}

int main(void)
{
	CU_pSuite s = ct_suite("local");

	if (!s)
		return 1;
	CU_add_test(s, "local buffers", test_local_basics);
	CU_add_test(s, "stream: local, global, backend", test_stream_order_and_counts);
	CU_add_test(s, "stream: writes, truncate, invalidate", test_stream_write);
	CU_add_test(s, "stream: threads share a stream", test_stream_threads);
	return ct_run();
}
