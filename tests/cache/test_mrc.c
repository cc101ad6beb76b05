// SPDX-License-Identifier: MIT
/*
 * test_mrc.c - the SHARDS miss-ratio-curve estimator (cache/mrc.c).
 *
 * Accuracy is checked against ground truth twice: an exact LRU stack-distance
 * simulation of the same trace, and the hit percent a real pool of that many
 * buffers gives when the trace is run through pool_buf_read()/pool_buf_fill(). Both
 * must be within 5 points at every size checked. The estimator is also fed
 * from several threads and processes at once, across generations, and from a
 * corrupted region mapped between guard pages (an out-of-bounds access would
 * fault).
 *
 * White-box: mrc.c is included so the corruption test knows where the lock
 * words are (they are trusted like the pool's; everything else is not).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "cache_test.h"
#include "clock.h"
#include "stream.h"
#include "../../cache/mrc.c"

#define RSIZE ((size_t)MRC_REGION_SIZE)
#define TOL 0.05       /* 5 points */
#define TOL_SMALL 0.20 /* below 1/20 of the working set (see check_curve) */

/* --- traces --------------------------------------------------------------- */

struct ref {
	uint32_t file;
	uint32_t bucket;
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct zipf {
	uint32_t m;
	double *cdf;
};

static void zipf_init(struct zipf *z, uint32_t m, double alpha)
{
	double sum = 0;

	z->m = m;
	z->cdf = malloc(m * sizeof(double));
	for (uint32_t i = 0; i < m; i++)
		z->cdf[i] = (sum += 1.0 / pow(i + 1, alpha));
	for (uint32_t i = 0; i < m; i++)
		z->cdf[i] /= sum;
}

static uint32_t zipf_draw(const struct zipf *z, uint64_t *s)
{
	double u = (double)(rng_next(s) >> 11) / (double)(1ULL << 53);
	uint32_t lo = 0, hi = z->m - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* scatter ranks over the file so hot buckets are not all adjacent */
	return (uint32_t)(((uint64_t)lo * 2654435761U) % z->m);
}

/* Exact LRU: hit fraction at @sizes for the references of @file (or all if
 * @file is UINT32_MAX), by stack distances counted with a Fenwick tree. */
static void exact_lru(const struct ref *t, size_t n, uint32_t file, const uint64_t *sizes,
		      int nsizes, double *hit)
{
	uint32_t *fen = calloc(n + 1, sizeof(uint32_t));
	int64_t *last = malloc(64 * 65536 * sizeof(int64_t));
	uint64_t *cnt = calloc(nsizes, sizeof(uint64_t));
	size_t m = 0, live = 0;

	for (size_t i = 0; i < 64 * 65536; i++)
		last[i] = -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)t[i].file * 65536 + t[i].bucket;

		if (file != UINT32_MAX && t[i].file != file)
			continue;
		if (last[k] >= 0) {
			uint64_t before = 0;

			for (size_t j = (size_t)last[k] + 1; j > 0; j -= j & -j)
				before += fen[j - 1];
			for (int s = 0; s < nsizes; s++)
				cnt[s] += live - before < sizes[s];
			for (size_t j = (size_t)last[k] + 1; j <= n; j += j & -j)
				fen[j - 1]--;
			live--;
		}
		last[k] = (int64_t)m;
		for (size_t j = m + 1; j <= n; j += j & -j)
			fen[j - 1]++;
		live++;
		m++;
	}
	for (int s = 0; s < nsizes; s++)
		hit[s] = m ? (double)cnt[s] / (double)m : 0;
	free(fen);
	free(last);
	free(cnt);
}

/* A region between two PROT_NONE pages: reading past either end faults. */
static void *region_new(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, RSIZE + 2 * (size_t)pg, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, (size_t)pg, PROT_NONE);
	mprotect(p + pg + RSIZE, (size_t)pg, PROT_NONE);
	return p + pg;
}

static void region_free(void *r)
{
	long pg = sysconf(_SC_PAGESIZE);

	munmap((uint8_t *)r - pg, RSIZE + 2 * (size_t)pg);
}

static void replay(void *r, const struct ref *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mrc_access(r, RSIZE, t[i].file, 1, t[i].bucket);
}

/*
 * Compare file @file's curve (or the pool's) with exact LRU at @sizes: within
 * 5 points from 1/20 of the working set up. Below that a skewed trace's hits
 * come from its few hottest buckets, of which a low sampling rate holds only
 * a handful: the estimate is then only within 20 points (SHARDS shares this).
 */
static void check_curve(void *r, const struct ref *t, size_t n, uint32_t file,
			const uint64_t *sizes, int nsizes, const char *what)
{
	struct mrc_curve *c = malloc(sizeof(*c));
	double exact[16];
	int ret =
	    file == UINT32_MAX ? mrc_pool_curve(r, RSIZE, c) : mrc_file_curve(r, RSIZE, file, 1, c);

	CU_ASSERT_FATAL(ret == 0 && nsizes <= 16);
	exact_lru(t, n, file, sizes, nsizes, exact);
	for (int s = 0; s < nsizes; s++) {
		double est = mrc_curve_hit(c, sizes[s]);
		bool small = sizes[s] * 20 < c->working_set;

		printf("\n  %s: %6llu buffers: exact %5.1f %%, SHARDS %5.1f %% (R %.4f, ws %llu)%s",
		       what, (unsigned long long)sizes[s], 100 * exact[s], 100 * est, c->rate,
		       (unsigned long long)c->working_set, small ? " small" : "");
		CU_ASSERT(fabs(est - exact[s]) <= (small ? TOL_SMALL : TOL));
	}
	free(c);
}

static struct ref *trace_loop(uint32_t file, uint32_t nb, size_t n)
{
	struct ref *t = malloc(n * sizeof(*t));

	for (size_t i = 0; i < n; i++)
		t[i] = (struct ref){ file, (uint32_t)(i % nb) };
	return t;
}

static struct ref *trace_zipf(uint32_t file, uint32_t m, double alpha, size_t n, uint64_t seed)
{
	struct ref *t = malloc(n * sizeof(*t));
	struct zipf z;

	zipf_init(&z, m, alpha);
	for (size_t i = 0; i < n; i++)
		t[i] = (struct ref){ file, zipf_draw(&z, &seed) };
	free(z.cdf);
	return t;
}

/* --- tests ------------------------------------------------------------------ */

static void test_init(void)
{
	void *r = region_new();
	struct mrc_curve *c = malloc(sizeof(*c));

	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(mrc_init(r, RSIZE - 1), -EINVAL);
	CU_ASSERT_EQUAL(mrc_init((uint8_t *)r + 8, RSIZE), -EINVAL);
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), -EPROTO); /* never initialised */
	mrc_access(r, RSIZE, 1, 1, 1);			       /* ignored, no crash */
	CU_ASSERT_EQUAL(mrc_init(r, RSIZE), 0);
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), 0);
	CU_ASSERT_EQUAL(c->accesses, 0);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 1, 1, c), -ENOENT);
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE - 1, c), -EINVAL);
	for (uint64_t b = 0; b < 100; b++)
		mrc_access(r, RSIZE, 1, 1, b % 10);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 1, 1, c), 0);
	CU_ASSERT_EQUAL(c->accesses, 100);
	CU_ASSERT(c->npoints > 0 && c->buffers[0] == 1);
	CU_ASSERT_EQUAL(mrc_curve_hit(c, 0), 0);
	CU_ASSERT(mrc_curve_hit(c, 1000) > 0.85); /* 10 buckets, 100 references */
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), 0);
	CU_ASSERT_EQUAL(c->accesses, 100);
	CU_ASSERT_EQUAL(mrc_reset(r, RSIZE), 0);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 1, 1, c), -ENOENT);
	for (unsigned int b = 0; b < MRC_NBINS; b++) /* bins are contiguous and ordered */
		CU_ASSERT(bin_of(mrc_bin_lo(b)) == b && mrc_bin_lo(b + 1) > mrc_bin_lo(b));
	free(c);
	region_free(r);
}

static void test_loop(void)
{
	static const uint64_t sizes[] = { 500, 1500, 2900, 3100, 6000 };
	size_t n = 3000 * 30;
	struct ref *t = trace_loop(0, 3000, n);
	void *r = region_new();

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	replay(r, t, n);
	check_curve(r, t, n, 0, sizes, 5, "loop 3000, file");
	check_curve(r, t, n, UINT32_MAX, sizes, 5, "loop 3000, pool");
	free(t);
	region_free(r);
}

static void test_zipf(void)
{
	static const uint64_t sizes[] = { 50, 200, 1000, 3000, 8000, 20000 };
	size_t n = 400000;
	struct ref *t = trace_zipf(0, 20000, 0.9, n, 12345);
	void *r = region_new();

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	replay(r, t, n);
	check_curve(r, t, n, 0, sizes, 6, "zipf 20000 a=0.9, file");
	check_curve(r, t, n, UINT32_MAX, sizes, 6, "zipf 20000 a=0.9, pool");
	free(t);
	region_free(r);
}

/* Three files interleaved: a loop, a Zipf and a scan that never re-reads. */
static void test_mix(void)
{
	static const uint64_t sizes[] = { 100, 400, 1000, 3000, 5000 };
	size_t n = 300000;
	struct ref *t = malloc(n * sizeof(*t));
	struct zipf z;
	uint64_t seed = 99;
	uint32_t loop = 0, scan = 0;
	void *r = region_new();

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	zipf_init(&z, 4000, 1.0);
	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng_next(&seed) % 10;

		if (x < 3)
			t[i] = (struct ref){ 7, loop++ % 800 };
		else if (x < 8)
			t[i] = (struct ref){ 9, zipf_draw(&z, &seed) };
		else
			t[i] = (struct ref){ 11, scan++ % 60000 };
	}
	free(z.cdf);
	replay(r, t, n);
	check_curve(r, t, n, 7, sizes, 5, "mix: loop 800");
	check_curve(r, t, n, 9, sizes, 5, "mix: zipf 4000");
	check_curve(r, t, n, 11, sizes, 5, "mix: scan");
	check_curve(r, t, n, UINT32_MAX, sizes, 5, "mix: pool");
	free(t);
	region_free(r);
}

/* --- the same traces through a real pool ----------------------------------- */

/* Hit fraction of @t run through a pool of @nbufs 4 KiB buffers. */
static double pool_hits(const struct ref *t, size_t n, uint32_t nbufs)
{
	struct pool *pool = ct_open(ct_name("mrc"), 4096, nbufs);
	struct pool_file *pf[64] = { 0 };
	struct pool_info info;
	size_t hits = 0;
	char buf[64];

	if (!pool)
		return -1;
	pool_info(pool, &info);
	for (size_t i = 0; i < n; i++) {
		uint32_t f = t[i].file;

		if (!pf[f]) {
			struct pool_file_id id = ct_id(1000 + f, 1ULL << 40);

			if (pool_file_get(pool, &id, "/mrc", 0, &pf[f]))
				return -1;
		}
		if (pool_buf_read(pf[f], t[i].bucket, buf, 0, sizeof(buf)) > 0)
			hits++;
		else
			ct_fill(pf[f], f, t[i].bucket, 0, 4096);
	}
	for (int f = 0; f < 64; f++)
		if (pf[f])
			pool_file_put(pf[f]);
	pool_close(pool);
	pool_unlink(ct_names[(ct_nnames - 1) % CT_MAX_POOLS]);
	return (double)hits / (double)n;
}

static void check_pool(const struct ref *t, size_t n, const uint64_t *sizes, int nsizes,
		       const char *what)
{
	struct mrc_curve *c = malloc(sizeof(*c));
	void *r = region_new();

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	replay(r, t, n);
	CU_ASSERT_FATAL(mrc_pool_curve(r, RSIZE, c) == 0);
	for (int s = 0; s < nsizes; s++) {
		double real = pool_hits(t, n, (uint32_t)sizes[s]), est = mrc_curve_hit(c, sizes[s]);

		printf("\n  %s: pool of %5llu buffers: measured %5.1f %%, SHARDS %5.1f %%", what,
		       (unsigned long long)sizes[s], 100 * real, 100 * est);
		CU_ASSERT(real >= 0 && fabs(est - real) <= TOL);
	}
	free(c);
	region_free(r);
}

static void test_real_pool(void)
{
	static const uint64_t lsizes[] = { 512, 1024, 2048 };
	static const uint64_t zsizes[] = { 256, 1024, 4096 };
	size_t n = 200000;
	struct ref *t = trace_loop(0, 1500, n);

	check_pool(t, n, lsizes, 3, "loop 1500");
	free(t);
	t = trace_zipf(0, 16000, 0.9, n, 777);
	check_pool(t, n, zsizes, 3, "zipf 16000 a=0.9");
	free(t);
}

/* The pool's own estimator, fed by the stream front as the daemon reads: its
 * curve at the pool's size against the hit percent that pool measured. */
static ssize_t zero_read(void *arg, void *buf, size_t len, uint64_t off)
{
	(void)off;
	(*(size_t *)arg)++;
	memset(buf, 0, len);
	return (ssize_t)len;
}

static void check_own_region(const struct ref *t, size_t n, const uint64_t *sizes, int nsizes,
			     const char *what)
{
	struct mrc_curve *c = malloc(sizeof(*c));

	for (int s = 0; s < nsizes; s++) {
		const char *name = ct_name("mrcown");
		struct pool *pool = ct_open(name, 4096, (uint32_t)sizes[s]);
		struct pool_file_id id = ct_id(77, 1ULL << 32);
		struct stream *st = NULL;
		size_t misses = 0, rsize = 0;
		void *region;
		char buf[64];
		double real;

		CU_ASSERT_FATAL(pool && stream_open(pool, &id, "/own", 0, 0, &st) == 0);
		for (size_t i = 0; i < n; i++)
			stream_read(st, buf, sizeof(buf), (uint64_t)t[i].bucket * 4096, zero_read,
				    &misses);
		region = pool_stats_mrc_region(pool, &rsize);
		CU_ASSERT_FATAL(region != NULL);
		CU_ASSERT_FATAL(mrc_pool_curve(region, rsize, c) == 0);
		CU_ASSERT_EQUAL(c->accesses, n);
		real = 1 - (double)misses / (double)n;
		printf("\n  %s: pool of %5llu buffers: measured %5.1f %%, its own curve %5.1f %%",
		       what, (unsigned long long)sizes[s], 100 * real,
		       100 * mrc_curve_hit(c, sizes[s]));
		CU_ASSERT(fabs(mrc_curve_hit(c, sizes[s]) - real) <= TOL);
		stream_close(st);
		pool_close(pool);
		pool_unlink(name); /* the next size gets a pool of its own */
	}
	free(c);
}

static void test_own_region(void)
{
	static const uint64_t lsizes[] = { 1024, 2048 };
	static const uint64_t zsizes[] = { 256, 1024, 4096 };
	size_t n = 200000;
	struct ref *t = trace_loop(0, 1500, n);

	check_own_region(t, n, lsizes, 2, "loop 1500");
	free(t);
	t = trace_zipf(0, 16000, 0.9, n, 777);
	check_own_region(t, n, zsizes, 3, "zipf 16000 a=0.9");
	free(t);
}

/* --- concurrency, generations, corruption ----------------------------------- */

struct worker {
	void *r;
	uint64_t seed;
	size_t n;
	const struct zipf *z;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (size_t i = 0; i < w->n; i++)
		mrc_access(w->r, RSIZE, 5, 3, zipf_draw(w->z, &w->seed));
	return NULL;
}

/* Threads that meet a new generation of a file at the same moment: one takes
 * (and clears) the instance while the others already count into it; no access
 * may be lost in the clear. */
struct racer {
	void *r;
	uint32_t gen;
	pthread_barrier_t *go;
};

static void *racer_run(void *arg)
{
	struct racer *x = arg;

	pthread_barrier_wait(x->go);
	for (uint64_t i = 0; i < 200; i++)
		mrc_access(x->r, RSIZE, 7, x->gen, i);
	return NULL;
}

static void test_take_race(void)
{
	struct mrc_curve *c = malloc(sizeof(*c));
	void *r = region_new();
	pthread_barrier_t go;
	int lost = 0;

	CU_ASSERT_FATAL(c && r && mrc_init(r, RSIZE) == 0);
	for (uint32_t gen = 1; gen <= 300; gen++) {
		pthread_t th[4];
		struct racer x = { r, gen, &go };

		pthread_barrier_init(&go, NULL, 4);
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, racer_run, &x);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&go);
		CU_ASSERT_FATAL(mrc_file_curve(r, RSIZE, 7, gen, c) == 0);
		lost += c->accesses != 800;
	}
	printf("\n  300 new generations met by 4 threads at once: %d lost accesses", lost);
	CU_ASSERT_EQUAL(lost, 0);
	region_free(r);
	free(c);
}

/* 2 processes x 3 threads draw from one Zipf: the merged curve must be the
 * curve of one such trace of the same total length. */
static void test_concurrent(void)
{
	static const uint64_t sizes[] = { 100, 1000, 4000 };
	size_t per = 50000, n = 6 * per;
	struct ref *t = trace_zipf(5, 8000, 0.8, n, 4242);
	struct mrc_curve *c = malloc(sizeof(*c));
	struct zipf z;
	double exact[3];
	void *r = region_new();
	pid_t pid;
	int st;

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	zipf_init(&z, 8000, 0.8);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	{
		pthread_t th[3];
		struct worker w[3];

		for (int i = 0; i < 3; i++) {
			w[i] =
			    (struct worker){ r, 1000 + (uint64_t)i * 7 + (pid ? 0 : 100), per, &z };
			pthread_create(&th[i], NULL, worker_run, &w[i]);
		}
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		if (pid == 0)
			_exit(0);
	}
	CU_ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CU_ASSERT_FATAL(mrc_file_curve(r, RSIZE, 5, 3, c) == 0);
	CU_ASSERT_EQUAL(c->accesses, n);
	CU_ASSERT(fabs(c->total - (double)n) / (double)n < 0.15);
	exact_lru(t, n, 5, sizes, 3, exact);
	for (int s = 0; s < 3; s++) {
		printf("\n  merged: %llu buffers: exact %.1f %%, SHARDS %.1f %%",
		       (unsigned long long)sizes[s], 100 * exact[s],
		       100 * mrc_curve_hit(c, sizes[s]));
		CU_ASSERT(fabs(mrc_curve_hit(c, sizes[s]) - exact[s]) <= TOL);
	}
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), 0);
	CU_ASSERT_EQUAL(c->accesses, n);
	free(z.cdf);
	free(t);
	free(c);
	region_free(r);
}

static void test_generation(void)
{
	struct mrc_curve *c = malloc(sizeof(*c));
	void *r = region_new();

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	for (uint64_t i = 0; i < 5000; i++)
		mrc_access(r, RSIZE, 3, 2, i % 100);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 3, 2, c), 0);
	CU_ASSERT_EQUAL(c->accesses, 5000);
	CU_ASSERT(mrc_curve_hit(c, 200) > 0.9);
	CU_ASSERT(c->working_set > 50 && c->working_set < 200);
	for (uint64_t i = 0; i < 300; i++) /* the file changed: new generation, a scan */
		mrc_access(r, RSIZE, 3, 4, i);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 3, 2, c), -ENOENT);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 3, 4, c), 0);
	CU_ASSERT_EQUAL(c->accesses, 300);
	CU_ASSERT_EQUAL(mrc_slot_curve(r, RSIZE, 3, c), 0);
	CU_ASSERT_EQUAL(c->file_gen, 4);
	CU_ASSERT_EQUAL(mrc_slot_curve(r, RSIZE, 4, c), -ENOENT);
	CU_ASSERT(mrc_curve_hit(c, 1000) < 0.01);
	/* more files than curves: the others still count in the pool curve */
	for (uint32_t f = 100; f < 100 + 2 * MRC_FILES; f++)
		for (uint64_t i = 0; i < 10; i++)
			mrc_access(r, RSIZE, f, 1, i);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 3, 4, c), 0); /* not idle long enough to lose */
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), 0);
	CU_ASSERT_EQUAL(c->accesses, 5000 + 300 + 2 * MRC_FILES * 10);
	free(c);
	region_free(r);
}

static bool is_lock(size_t off)
{
	size_t f0 = MRC_OFF_FILES, fs = file_geom.size;

	if (off >= 64 && off < 128) /* dir_lock */
		return true;
	if (off >= MRC_OFF_POOL && off < MRC_OFF_POOL + 64)
		return true;
	return off >= f0 && off < f0 + MRC_FILES * fs && (off - f0) % fs < 64;
}

static void exercise(void *r, uint64_t seed)
{
	struct mrc_curve *c = malloc(sizeof(*c));

	for (int i = 0; i < 20000; i++) {
		uint64_t x = rng_next(&seed);

		mrc_access(r, RSIZE, (uint32_t)(x % 40), (uint32_t)(x >> 60), (x >> 8) % 3000);
	}
	for (uint32_t f = 0; f < 40; f++)
		for (uint32_t g = 0; g < 16; g++)
			if (mrc_file_curve(r, RSIZE, f, g, c) == 0)
				CU_ASSERT(mrc_curve_hit(c, 100) >= 0 && mrc_curve_hit(c, 100) <= 1);
	if (mrc_pool_curve(r, RSIZE, c) == 0)
		CU_ASSERT(mrc_curve_hit(c, 1 << 20) >= 0 && mrc_curve_hit(c, 1 << 20) <= 1);
	free(c);
}

/* Garbage anywhere but in the lock words: no fault, no hang, curves in 0..1,
 * and the estimator goes on working (a corrupt curve is reset). */
static void test_corrupt(void)
{
	uint64_t seed = 0x1234567;
	uint8_t *r = region_new();
	struct mrc_curve *c = malloc(sizeof(*c));

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	for (int round = 0; round < 40; round++) {
		exercise(r, seed + (uint64_t)round);
		for (int k = 0; k < 2000; k++) {
			size_t off = (rng_next(&seed) % (RSIZE / 4)) * 4;
			uint32_t v = (uint32_t)rng_next(&seed);

			if (off < 64 || is_lock(off))
				continue; /* the identity is checked; locks are trusted */
			memcpy(r + off, &v, 4);
		}
	}
	/* targeted: every scalar of the pool curve at its worst */
	{
		struct view v = view_of(r, true, 0);

		v.in->used = UINT32_MAX;
		exercise(r, 1);
		v.in->free_head = v.g->smax;
		v.in->clock = UINT32_MAX;
		exercise(r, 2);
		memset(v.heads, 0x7f, v.g->nheads * 4);
		memset(v.tmap, 0x7f, v.g->window * 4);
		exercise(r, 3);
		STORE(&v.in->thresh, 0);
		exercise(r, 4);
		memset(((struct mrc_header *)r)->hint, 0x55, sizeof(uint32_t) * MRC_HINTS);
		exercise(r, 5);
	}
	CU_ASSERT_EQUAL(mrc_reset(r, RSIZE), 0); /* still usable */
	for (int i = 0; i < 1000; i++)
		mrc_access(r, RSIZE, 1, 1, (uint64_t)i % 50);
	CU_ASSERT_EQUAL(mrc_file_curve(r, RSIZE, 1, 1, c), 0);
	CU_ASSERT(mrc_curve_hit(c, 100) > 0.9);
	((struct mrc_header *)r)->version = 99; /* another layout: refused, not read */
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), -EPROTO);
	mrc_access(r, RSIZE, 1, 1, 1);
	free(c);
	region_free(r);
}

/* A daemon killed while holding a curve's lock: the next sampler resets that
 * curve and goes on. */
static void test_owner_dead(void)
{
	struct mrc_curve *c = malloc(sizeof(*c));
	void *r = region_new();
	struct view v;
	pid_t pid;
	int st;

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	for (uint64_t i = 0; i < 1000; i++)
		mrc_access(r, RSIZE, 2, 1, i % 64);
	v = view_of(r, true, 0);
	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(&v.in->lock.m);
		_exit(0);
	}
	CU_ASSERT(waitpid(pid, &st, 0) == pid);
	for (uint64_t i = 0; i < 1000; i++)
		mrc_access(r, RSIZE, 2, 1, i % 64);
	CU_ASSERT_EQUAL(mrc_pool_curve(r, RSIZE, c), 0);
	CU_ASSERT(c->sampled > 0 && c->sampled < 1000); /* reset once, then sampled again */
	CU_ASSERT(mrc_curve_hit(c, 64) > 0.8);
	free(c);
	region_free(r);
}

/* Sampled accesses from bucket *@b on until one times out: its duration in
 * seconds, or -1 if none did within @tries. */
static double time_a_timeout(void *r, uint64_t *b, int tries)
{
	for (int i = 0; i < tries; i++) {
		uint64_t t0 = mono_ns();

		if (mrc_access(r, RSIZE, 2, 1, (*b)++) == -ETIMEDOUT)
			return (double)(mono_ns() - t0) / 1e9;
	}
	return -1;
}

/* A curve's lock held by a stopped process: shmlock.h's one policy, as for
 * the pool's locks. The first wait lasts SHM_LOCK_WAIT_NS, the next ones
 * SHM_LOCK_SUSPECT_NS (10 ms: not a mere try), until the lock is had again. */
static void test_stopped_holder(void)
{
	void *r = region_new();
	struct view v;
	uint64_t b = 0;
	double first, next;
	pid_t pid;
	int st;

	CU_ASSERT_FATAL(r && mrc_init(r, RSIZE) == 0);
	v = view_of(r, true, 0);
	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(&v.in->lock.m);
		raise(SIGSTOP);
		pthread_mutex_unlock(&v.in->lock.m);
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st));
	first = time_a_timeout(r, &b, 100000);
	next = time_a_timeout(r, &b, 100000);
	printf("\n  first wait %.3f s, then %.4f s ", first, next);
	CU_ASSERT(first >= 1.5 && first < 3.5);
	CU_ASSERT(next >= 0.008 && next < 0.5);
	kill(pid, SIGCONT);
	CU_ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CU_ASSERT(time_a_timeout(r, &b, 10000) < 0); /* free again: no more timeouts */
	region_free(r);
}

#if defined(__SANITIZE_THREAD__)
static const bool under_tsan = true;
#else
static const bool under_tsan = false;
#endif

int main(void)
{
	CU_pSuite s = ct_suite("mrc");

	if (!s)
		return 1;
	CU_add_test(s, "init, sizes, queries", test_init);
	/* One thread doing arithmetic: nothing for ThreadSanitizer to check, and
	 * two of its minutes (scripts/test's TSan pass runs the rest). */
	if (!under_tsan) {
		CU_add_test(s, "accuracy: loop", test_loop);
		CU_add_test(s, "accuracy: zipf", test_zipf);
		CU_add_test(s, "accuracy: three files", test_mix);
		CU_add_test(s, "accuracy: against a real pool", test_real_pool);
		CU_add_test(s, "accuracy: the pool's own curve (stream front)", test_own_region);
	}
	CU_add_test(s, "threads and processes merge", test_concurrent);
	CU_add_test(s, "a new generation met by several threads", test_take_race);
	CU_add_test(s, "generations and the file table", test_generation);
	CU_add_test(s, "corrupted region", test_corrupt);
	CU_add_test(s, "lock owner died", test_owner_dead);
	CU_add_test(s, "lock holder stopped: bounded waits, then short ones", test_stopped_holder);
	return ct_run();
}
