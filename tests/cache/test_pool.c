// SPDX-License-Identifier: MIT
/*
 * test_pool.c - the global pool's contract in one process (plus one fork):
 * hits and misses with exact bytes, coherence (tickets, validator change,
 * writes, truncation, invalidation), slot reuse, segment mode and limits,
 * refusal of foreign, old or corrupt pools without crashing, read-only
 * attachment for the monitor, metadata overhead, and two processes sharing
 * data through one pool, and the lock-free file lookup while slots move.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cache_test.h"
#include "pool_i.h"

#define BS 4096U

static void test_hit_miss_exact(void)
{
	const char *name = ct_name("hit");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(1, 10 * BS);
	struct pool_file *pf;
	uint8_t want[BS], got[BS];
	uint32_t v;

	CU_ASSERT_FATAL(pool != NULL);
	CU_ASSERT_FATAL(pool_file_get(pool, &id, "/data/a", 0, &pf) == 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 3, got, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 3, 7, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 3, got, 0, BS), BS);
	CU_ASSERT(ct_verify(got, BS, 1, 3, &v) && v == 7);
	/* a slice at an offset */
	ct_gen(want, BS, 1, 3, 7);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 3, got, 100, 1000), 1000);
	CU_ASSERT_EQUAL(memcmp(got, want + 100, 1000), 0);
	/* a short bucket at end of file: short reads, 0 past its end */
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 9, 7, 1500), 1);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 9, got, 1000, BS - 1000), 500);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 9, got, 2000, 10), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 4, got, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 3, got, BS, 1), -EINVAL);
	/* filling again is "already present" */
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 3, 7, BS), 1);
	pool_file_put(pf);
	pool_close(pool);
}

static void test_ticket_and_validator(void)
{
	const char *name = ct_name("ticket");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(2, 4 * BS);
	struct pool_file *pf, *pf2;
	struct pool_ticket t;
	uint8_t buf[BS];

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "b", 0, &pf) == 0);
	/* a write between ticket and fill makes the fill a no-op */
	CU_ASSERT_EQUAL(pool_file_ticket_get(pf, &t), 0);
	CU_ASSERT_EQUAL(pool_buf_write_begin(pf, 0, 10), 0);
	CU_ASSERT_EQUAL(pool_buf_write_end(pf), 0);
	ct_gen(buf, BS, 2, 0, 1);
	CU_ASSERT_EQUAL(pool_buf_fill(pf, &t, 0, buf, BS), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), -ENOENT);
	/* a ticket taken while a write is in flight is busy: refused */
	CU_ASSERT_EQUAL(pool_buf_write_begin(pf, 0, 10), 0);
	CU_ASSERT_EQUAL(pool_file_ticket_get(pf, &t), 0);
	CU_ASSERT(t.busy);
	CU_ASSERT_EQUAL(pool_buf_fill(pf, &t, 0, buf, BS), 0);
	CU_ASSERT_EQUAL(pool_buf_write_end(pf), 0);
	/* the same file reopened unchanged keeps its data; changed, loses it */
	CU_ASSERT_EQUAL(ct_fill(pf, 2, 1, 1, BS), 1);
	CU_ASSERT_EQUAL(pool_file_get(pool, &id, "b", 0, &pf2), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf2, 1, buf, 0, BS), BS);
	pool_file_put(pf2);
	id.mtime_ns++;
	CU_ASSERT_EQUAL(pool_file_get(pool, &id, "b", 0, &pf2), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf2, 1, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 1, buf, 0, BS), -ENOENT);
	pool_file_put(pf2);
	pool_file_put(pf);
	pool_close(pool);
}

static void test_write_coherence(void)
{
	const char *name = ct_name("write");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(3, 8 * BS);
	struct pool_file *pf;
	struct pool_stats_file fst;
	uint8_t buf[BS];

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "c", 0, &pf) == 0);
	for (int b = 0; b < 4; b++)
		CU_ASSERT_EQUAL(ct_fill(pf, 3, b, 1, BS), 1);
	/* a write over buckets 1..2 drops exactly those, before it is acknowledged */
	CU_ASSERT_EQUAL(pool_buf_write_begin(pf, BS + 10, BS), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 1, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 2, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 3, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_buf_write_end(pf), 0);
	/* after the write, new fills are accepted again */
	CU_ASSERT_EQUAL(ct_fill(pf, 3, 1, 2, BS), 1);
	CU_ASSERT_EQUAL(pool_stats_file(pf, &fst), 0);
	CU_ASSERT_EQUAL(fst.resident, 3);
	CU_ASSERT_EQUAL(fst.c[POOL_C_GBUF_WRITE_IOS], 2);
	CU_ASSERT_EQUAL(fst.c[POOL_C_GBUF_READ_IOS], 5);
	/* invalidation is wholesale and O(1) */
	CU_ASSERT_EQUAL(pool_file_invalidate(pf), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_stats_file(pf, &fst), 0);
	CU_ASSERT_EQUAL(fst.resident, 0);
	pool_file_put(pf);
	pool_close(pool);
}

static void test_truncate(void)
{
	const char *name = ct_name("trunc");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(4, 4 * BS);
	struct pool_file *pf;
	uint8_t buf[BS];

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "d", 0, &pf) == 0);
	for (int b = 0; b < 4; b++)
		CU_ASSERT_EQUAL(ct_fill(pf, 4, b, 1, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_truncate(pf, BS + 100), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 1, buf, 0, BS), 100); /* trimmed */
	CU_ASSERT_EQUAL(pool_buf_read(pf, 2, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 3, buf, 0, BS), -ENOENT);
	/* growing again: the short bucket no longer tells the truth */
	CU_ASSERT_EQUAL(pool_buf_truncate(pf, 3 * BS), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 1, buf, 0, BS), -ENOENT);
	CU_ASSERT_EQUAL(pool_buf_truncate(pf, 0), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), -ENOENT);
	pool_file_put(pf);
	pool_close(pool);
}

static void test_slot_reuse(void)
{
	char err[256];
	const char *name = ct_name("slots");
	struct pool_config cfg = { .name = name,
				   .bucket_size = BS,
				   .nbufs = 64,
				   .max_files = 2,
				   .err = err,
				   .errlen = sizeof(err) };
	struct pool_file_id a = ct_id(10, BS), b = ct_id(11, BS), c = ct_id(12, BS);
	struct pool_file *pa, *pb, *pc, *pd;
	struct pool *pool;
	uint8_t buf[BS];

	CU_ASSERT_FATAL(pool_open(&cfg, &pool) == 0);
	CU_ASSERT_FATAL(pool_file_get(pool, &a, "a", 0, &pa) == 0);
	CU_ASSERT_FATAL(pool_file_get(pool, &b, "b", 0, &pb) == 0);
	CU_ASSERT_EQUAL(ct_fill(pa, 10, 0, 1, BS), 1);
	CU_ASSERT_EQUAL(ct_fill(pb, 11, 0, 1, BS), 1);
	pool_file_put(pb);
	/* b is idle, a is open: c takes b's slot, and b's data is gone */
	CU_ASSERT_EQUAL(pool_file_get(pool, &c, "c", 0, &pc), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pa, 0, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_buf_read(pc, 0, buf, 0, BS), -ENOENT);
	/* all slots open: the least recently used is taken, its handle goes stale */
	CU_ASSERT_EQUAL(pool_file_get(pool, &b, "b", 0, &pd), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pa, 0, buf, 0, BS), -ESTALE);
	CU_ASSERT_EQUAL(ct_fill(pa, 10, 0, 1, BS), -ESTALE);
	pool_file_put(pa);
	pool_file_put(pc);
	pool_file_put(pd);
	pool_close(pool);
}

static mode_t shm_mode(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	return stat(path, &st) ? 0 : st.st_mode & 0777;
}

static void test_mode_and_survival(void)
{
	const char *name = ct_name("mode"), *name2 = ct_name("mode2");
	struct pool_config cfg = { .name = name2, .bucket_size = BS, .nbufs = 16, .mode = 0640 };
	struct pool_file_id id = ct_id(5, BS);
	struct pool *pool = ct_open(name, BS, 16), *p2;
	struct pool_file *pf;
	struct pool_info info;
	uint8_t buf[BS];

	CU_ASSERT_FATAL(pool != NULL);
	CU_ASSERT_EQUAL(shm_mode(name), 0600);
	CU_ASSERT_FATAL(pool_open(&cfg, &p2) == 0);
	CU_ASSERT_EQUAL(shm_mode(name2), 0640);
	pool_close(p2);
	/* the pool outlives its users: detach, attach again, data still there */
	CU_ASSERT_FATAL(pool_file_get(pool, &id, "e", 0, &pf) == 0);
	CU_ASSERT_EQUAL(ct_fill(pf, 5, 0, 1, BS), 1);
	pool_file_put(pf);
	pool_close(pool);
	pool = ct_open(name, 65536, 1000); /* creation parameters of an existing pool are ignored */
	CU_ASSERT_FATAL(pool != NULL);
	pool_info(pool, &info);
	CU_ASSERT(!info.created && info.bucket_size == BS && info.nbufs == 16);
	CU_ASSERT_FATAL(pool_file_get(pool, &id, "e", 0, &pf) == 0);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), BS);
	pool_file_put(pf);
	pool_close(pool);
	CU_ASSERT_EQUAL(pool_unlink(name), 0);
	CU_ASSERT_EQUAL(shm_mode(name), 0);
	CU_ASSERT_EQUAL(pool_unlink(name), -ENOENT);
}

static void test_limits(void)
{
	char err[256];
	const char *name = ct_name("big");
	struct pool_config cfg = { .name = name,
				   .bucket_size = 4U << 20,
				   .size = 1ULL << 42,
				   .err = err,
				   .errlen = sizeof(err) };
	struct pool *pool;
	int ret = pool_open(&cfg, &pool);

	CU_ASSERT(ret == -ENOMEM || ret == -ENOSPC);
	CU_ASSERT(strstr(err, "physical memory") || strstr(err, "/dev/shm"));
	printf("\n    oversize pool refused: %s\n", err);
	CU_ASSERT_EQUAL(shm_mode(name), 0); /* nothing left behind */
	cfg.size = 0;
	cfg.nbufs = 4;
	cfg.bucket_size = 3000;
	CU_ASSERT_EQUAL(pool_open(&cfg, &pool), -EINVAL);
	CU_ASSERT(strstr(err, "power of two") != NULL);
	cfg.bucket_size = 8U << 20;
	CU_ASSERT_EQUAL(pool_open(&cfg, &pool), -EINVAL);
	cfg.bucket_size = BS;
	cfg.name = "no-slash";
	CU_ASSERT_EQUAL(pool_open(&cfg, &pool), -EINVAL);
	cfg.name = name;
	cfg.no_create = true;
	CU_ASSERT_EQUAL(pool_open(&cfg, &pool), -ENOENT);
}

/* Map pool @name writable behind the library's back, to damage it. */
static struct pool_header *raw_map(const char *name, size_t *size)
{
	int fd = shm_open(name, O_RDWR, 0);
	struct stat st;
	void *p;

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	*size = (size_t)st.st_size;
	return p == MAP_FAILED ? NULL : p;
}

static uint64_t header_sum(const struct pool_header *h)
{
	const uint8_t *b = (const uint8_t *)h;
	uint64_t s = 0xcbf29ce484222325ULL;

	for (size_t i = offsetof(struct pool_header, version);
	     i < offsetof(struct pool_header, geometry_sum); i++)
		s = (s ^ b[i]) * 0x100000001b3ULL;
	return s;
}

static int reattach(const char *name, char *err, size_t errlen)
{
	struct pool *pool;
	int ret = pool_open_readonly(name, &pool, err, errlen);

	if (!ret)
		pool_close(pool);
	return ret;
}

static void test_refuse_bad_header(void)
{
	const char *name = ct_name("hdr");
	struct pool *pool = ct_open(name, BS, 32);
	struct pool_header *h, saved;
	char err[256];
	size_t size;

	CU_ASSERT_FATAL(pool != NULL);
	pool_close(pool);
	h = raw_map(name, &size);
	CU_ASSERT_FATAL(h != NULL);
	saved = *h;
	h->version = POOL_LAYOUT_VERSION + 1;
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), -EPROTO);
	CU_ASSERT(strstr(err, "version") != NULL);
	*h = saved;
	h->magic ^= 1;
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), -EPROTO);
	*h = saved;
	h->nbufs = 1U << 30; /* a huge count: checksum catches it */
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), -EUCLEAN);
	CU_ASSERT(strstr(err, "corrupt") != NULL);
	h->geometry_sum = header_sum(h); /* even with a matching checksum: geometry */
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), -EUCLEAN);
	*h = saved;
	h->off_data += 4096;
	h->geometry_sum = header_sum(h);
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), -EUCLEAN);
	*h = saved;
	h->mutex_size = 24;
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), -EPROTO);
	*h = saved;
	CU_ASSERT_EQUAL(reattach(name, err, sizeof(err)), 0);
	munmap(h, size);
}

/* Garbage in chains and descriptors: no crash, no wrong bytes, pool repairs itself. */
static void test_bounds_corrupt_index(void)
{
	const char *name = ct_name("idx");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(6, 64 * BS);
	struct pool_header *h;
	struct pool_file *pf;
	uint8_t buf[BS];
	uint32_t *chains, v;
	struct pool_buf *bufs;
	size_t size;
	int hits = 0;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "f", 0, &pf) == 0);
	for (int b = 0; b < 32; b++)
		CU_ASSERT_EQUAL(ct_fill(pf, 6, b, 1, BS), 1);
	h = raw_map(name, &size);
	CU_ASSERT_FATAL(h != NULL);
	chains = (uint32_t *)((uint8_t *)h + h->off_chains);
	bufs = (struct pool_buf *)((uint8_t *)h + h->off_bufs);
	for (uint32_t i = 0; i < h->nshards * h->chains_per_shard; i += 3)
		chains[i] = 0xdead0000 + i;
	for (uint32_t i = 0; i < h->nbufs; i += 2)
		bufs[i].next = i; /* cycles */
	bufs[1].file = 0x7fffffff;
	bufs[3].len = 1U << 30;
	for (int b = 0; b < 32; b++) {
		ssize_t n = pool_buf_read(pf, b, buf, 0, BS);

		CU_ASSERT(n == -ENOENT || (n == BS && ct_verify(buf, BS, 6, b, &v)));
		hits += n == BS;
	}
	/* writes and fills walk chains under the lock and repair them */
	for (int b = 0; b < 64; b++)
		CU_ASSERT(ct_fill(pf, 6, b, 1, BS) >= 0);
	CU_ASSERT_EQUAL(pool_shard_recount(pool), 0);
	for (int b = 0; b < 64; b++) {
		ssize_t n = pool_buf_read(pf, b, buf, 0, BS);

		CU_ASSERT(n == -ENOENT || (n == BS && ct_verify(buf, BS, 6, b, &v)));
	}
	printf("\n    %d of 32 buckets still found through damaged chains\n", hits);
	munmap(h, size);
	pool_file_put(pf);
	pool_close(pool);
}

static int count_file(const struct pool_stats_file *st, void *arg)
{
	int *n = arg;

	if (strcmp(st->path, "/very/long/path") == 0 || strstr(st->path, "tail-of-name"))
		(*n)++;
	return 0;
}

static void test_readonly_and_stats(void)
{
	const char *name = ct_name("ro");
	struct pool *pool = ct_open(name, BS, 32), *ro;
	struct pool_file_id id = ct_id(7, BS), id2 = ct_id(8, BS);
	struct pool_file *pf, *pf2, *x;
	struct pool_stats st;
	char longpath[300], err[128];
	uint8_t buf[BS];
	int n = 0;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "/very/long/path", 0, &pf) == 0);
	memset(longpath, 'x', sizeof(longpath));
	strcpy(longpath + sizeof(longpath) - 20, "/tail-of-name");
	CU_ASSERT_FATAL(pool_file_get(pool, &id2, longpath, 0, &pf2) == 0);
	CU_ASSERT_EQUAL(ct_fill(pf, 7, 0, 1, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 0, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 1, buf, 0, BS), -ENOENT);
	CU_ASSERT_FATAL(pool_open_readonly(name, &ro, err, sizeof(err)) == 0);
	CU_ASSERT_EQUAL(pool_stats_file_iter(ro, count_file, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(pool_stats_get(ro, &st), 0);
	CU_ASSERT_EQUAL(st.opens, 2);
	CU_ASSERT_EQUAL(st.resident, 1);
	CU_ASSERT_EQUAL(st.c[POOL_C_GLOBAL_ATTEMPTS], 2);
	CU_ASSERT_EQUAL(st.c[POOL_C_GLOBAL_HITS], 1);
	CU_ASSERT_EQUAL(st.c[POOL_C_GBUF_READ_IOS], 1);
	CU_ASSERT_EQUAL(pool_file_get(ro, &id, "x", 0, &x), -EROFS);
	CU_ASSERT_STRING_EQUAL(pool_stats_counter_name(POOL_C_LOCAL_HITS), "local_hits");
	pool_close(ro);
	pool_file_put(pf);
	pool_file_put(pf2);
	pool_close(pool);
}

static void test_overhead(void)
{
	static const struct {
		uint32_t bsize;
		uint64_t size;
	} g[] = { { 4096, 16ULL << 20 },
		  { 4096, 256ULL << 20 },
		  { 65536, 64ULL << 20 },
		  { 1U << 20, 256ULL << 20 },
		  { 4U << 20, 1ULL << 30 } };

	printf("\n");
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		const char *name = ct_name("ovh");
		struct pool_config cfg = { .name = name,
					   .bucket_size = g[i].bsize,
					   .size = g[i].size };
		struct pool_info info;
		struct pool *pool;

		CU_ASSERT_FATAL(pool_open(&cfg, &pool) == 0);
		pool_info(pool, &info);
		printf("    bucket %7u, %5llu MiB: %u buffers, %u shards, %u file slots, "
		       "metadata %llu bytes = %.3f %%\n",
		       info.bucket_size, (unsigned long long)(info.data_size >> 20), info.nbufs,
		       info.nshards, info.nfiles, (unsigned long long)info.meta_size,
		       100.0 * (double)info.meta_size / (double)info.data_size);
		/* descriptors (64 B per bucket) and tables: at most 3 %; the curve's region is a
		 * fixed ~1 MiB */
		CU_ASSERT((info.meta_size - info.mrc_size) * 33 <= info.data_size);
		CU_ASSERT(info.mrc_size <= (2U << 20));
		pool_close(pool);
		pool_unlink(name);
	}
}

/* A child fills, the parent (another process) hits every bucket with zero fills. */
static void test_two_processes(void)
{
	const char *name = ct_name("fork");
	struct pool_file_id id = ct_id(9, 32 * BS);
	struct pool_stats_file fst;
	struct pool_file *pf;
	struct pool *pool;
	uint8_t buf[BS];
	uint32_t v;
	int status, ok = 0;
	pid_t pid = fork();

	if (pid == 0) {
		pool = ct_open(name, BS, 64);
		if (!pool || pool_file_get(pool, &id, "shared", 0, &pf))
			_exit(1);
		for (int b = 0; b < 32; b++)
			if (ct_fill(pf, 9, b, 3, BS) != 1)
				_exit(2);
		pool_file_put(pf);
		pool_close(pool);
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
	CU_ASSERT_FATAL(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pool = ct_open(name, BS, 64);
	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "shared", 0, &pf) == 0);
	CU_ASSERT_EQUAL(pool_stats_file(pf, &fst), 0);
	CU_ASSERT_EQUAL(fst.c[POOL_C_GBUF_READ_IOS], 32); /* the child's fills */
	for (int b = 0; b < 32; b++)
		ok += pool_buf_read(pf, b, buf, 0, BS) == BS && ct_verify(buf, BS, 9, b, &v) &&
		      v == 3;
	CU_ASSERT_EQUAL(ok, 32);
	CU_ASSERT_EQUAL(pool_stats_file(pf, &fst), 0);
	CU_ASSERT_EQUAL(fst.c[POOL_C_GBUF_READ_IOS], 32); /* and none by us */
	CU_ASSERT_EQUAL(fst.c[POOL_C_GLOBAL_HITS], 32);
	pool_file_put(pf);
	pool_close(pool);
}

struct churn {
	struct pool *pool;
	bool stop;
	uint64_t rounds;
};

/* Opens and closes files 1000..1006 in turn: with 4 slots, one held, each open takes a slot. */
static void *churner(void *arg)
{
	struct churn *c = arg;

	for (uint64_t i = 0; !__atomic_load_n(&c->stop, __ATOMIC_RELAXED); i++) {
		struct pool_file_id id = ct_id(1000 + i % 7, BS);
		struct pool_file *pf;

		if (pool_file_get(c->pool, &id, "churn", 0, &pf) == 0)
			pool_file_put(pf);
		__atomic_store_n(&c->rounds, i + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * pool_files_peek (stat's question "does this file have deferred bytes?")
 * walks the file chains without files_lock while other files' slots move
 * from chain to chain. A file that stays open keeps its slot, so every peek
 * must find it: a walker standing on a slot that moved away used to fall
 * off its chain and answer "not in the pool" (and the chain stores were
 * plain, a data race for TSan, as were those of the header's counts).
 */
static void test_peek_while_slots_move(void)
{
	char err[256];
	const char *name = ct_name("peek");
	struct pool_config cfg = { .name = name,
				   .bucket_size = BS,
				   .nbufs = 64,
				   .max_files = 4,
				   .err = err,
				   .errlen = sizeof(err) };
	struct pool_file_id x = ct_id(999, BS);
	struct churn c = { 0 };
	struct pool_file *px;
	uint32_t slot, gen;
	uint64_t misses = 0, peeks = 0, bad_info = 0;
	struct pool_info info;
	pthread_t t;

	CU_ASSERT_FATAL(pool_open(&cfg, &c.pool) == 0);
	CU_ASSERT_FATAL(pool_file_get(c.pool, &x, "x", 0, &px) == 0);
	pool_stats_fslot(px, &slot, &gen);
	CU_ASSERT_FATAL(pthread_create(&t, NULL, churner, &c) == 0);
	/* 1,000,000 peeks, and on until the churner has moved slots 100,000 times; bounded */
	for (; peeks < 1000000 ||
	       (__atomic_load_n(&c.rounds, __ATOMIC_RELAXED) < 100000 && peeks < 200000000);
	     peeks++) {
		misses += pool_files_peek(c.pool, x.dev, x.ino) != slot;
		if (peeks % 64 == 0) { /* the header's counts are read without the lock too */
			pool_info(c.pool, &info);
			bad_info += info.files_used < 1 || info.files_used > info.nfiles;
		}
	}
	__atomic_store_n(&c.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("\n    %lu peeks, %lu misses, %lu opens elsewhere ", (unsigned long)peeks,
	       (unsigned long)misses, (unsigned long)c.rounds);
	CU_ASSERT_EQUAL(misses, 0);
	CU_ASSERT_EQUAL(bad_info, 0);
	CU_ASSERT(c.rounds >= 100000);
	pool_file_put(px);
	pool_close(c.pool);
}

int main(void)
{
	CU_pSuite s = ct_suite("pool");

	if (!s)
		return 1;
	CU_add_test(s, "hit, miss, exact bytes", test_hit_miss_exact);
	CU_add_test(s, "tickets and validator change", test_ticket_and_validator);
	CU_add_test(s, "write coherence and invalidation", test_write_coherence);
	CU_add_test(s, "truncation", test_truncate);
	CU_add_test(s, "file slot reuse", test_slot_reuse);
	CU_add_test(s, "mode 0600, survives detach, unlink", test_mode_and_survival);
	CU_add_test(s, "size limits and bad parameters", test_limits);
	CU_add_test(s, "refuses bad headers", test_refuse_bad_header);
	CU_add_test(s, "bounds checks on a corrupt index", test_bounds_corrupt_index);
	CU_add_test(s, "read-only attach, statistics", test_readonly_and_stats);
	CU_add_test(s, "metadata overhead <= 2 %", test_overhead);
	CU_add_test(s, "two processes share data", test_two_processes);
	CU_add_test(s, "file lookup without the lock while slots move", test_peek_while_slots_move);
	return ct_run();
}
