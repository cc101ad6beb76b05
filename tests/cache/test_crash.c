// SPDX-License-Identifier: MIT
/*
 * test_crash.c - processes die with SIGKILL, holding locks or not, and the
 * pool stays correct and usable for the others:
 *  - a process dies holding a shard lock in the middle of writing a buffer;
 *  - a process dies holding the files lock in the middle of claiming a slot;
 *  - several processes hammer the pool (reads that verify every byte and the
 *    version, fills, writes, invalidations, opens) while victims are forked
 *    and SIGKILLed again and again; afterwards every cached bucket is exact
 *    and current, residency counts are exact, and everything still works.
 * Buckets hold ct_gen(file, bucket, version); the "backend" is a version
 * table in shared memory.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "cache_test.h"
#include "pool_i.h"

#define BS 4096U
#define NFILES 4
#define NBUCKETS 48
#define NBUFS 128
#define WORKERS 3
#define HAMMER_SECONDS 8

/* Shared between all processes of the hammer test. */
struct shared {
	uint32_t backend[NFILES][NBUCKETS]; /* current version on "disk" */
	uint32_t acked[NFILES][NBUCKETS];   /* highest version whose write was acknowledged */
	uint64_t torn, stale, future, ops, hits, kills, stop;
};

static struct shared *sh;
static const char *pool_name;

static void test_dead_shard_lock_holder(void)
{
	const char *name = ct_name("deadshard");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id id = ct_id(1, 64 * BS);
	struct pool_file *pf;
	struct pool_stats st;
	uint8_t buf[BS];
	uint32_t s, victim = POOL_NONE, v;
	int status, hits = 0;
	pid_t pid;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "x", 0, &pf) == 0);
	for (int b = 0; b < 16; b++)
		CU_ASSERT_EQUAL(ct_fill(pf, 1, b, 1, BS), 1);
	s = pool_shard_of(pool, pf->slot, 5);
	pid = fork();
	if (pid == 0) {
		pool_shard_lock(pool, s);
		for (uint32_t i = 0; i < pool->nbufs; i++)
			if (pool->bufs[i].file == pf->slot && pool->bufs[i].bucket == 5)
				victim = i;
		pool->bufs[victim].seq++; /* as if killed in mid-copy */
		memset(pool_buf_data(pool, victim), 0, 100);
		raise(SIGKILL);
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0 && waitpid(pid, &status, 0) == pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* the half-written bucket is gone, not served */
	CU_ASSERT_EQUAL(pool_buf_read(pf, 5, buf, 0, BS), -ENOENT);
	for (int b = 0; b < 16; b++)
		hits += pool_buf_read(pf, b, buf, 0, BS) == BS && ct_verify(buf, BS, 1, b, &v);
	CU_ASSERT_EQUAL(hits, 15);
	CU_ASSERT_EQUAL(ct_fill(pf, 1, 5, 1, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_read(pf, 5, buf, 0, BS), BS);
	CU_ASSERT_EQUAL(pool_stats_get(pool, &st), 0);
	CU_ASSERT(st.c[POOL_C_RECOVERIES] >= 1);
	CU_ASSERT_EQUAL(st.resident, 16);
	pool_file_put(pf);
	pool_close(pool);
}

static void test_dead_files_lock_holder(void)
{
	const char *name = ct_name("deadfiles");
	struct pool *pool = ct_open(name, BS, 64);
	struct pool_file_id a = ct_id(2, BS), b = ct_id(3, BS);
	struct pool_file *pa, *pb;
	struct pool_info info;
	uint8_t buf[BS];
	int status;
	pid_t pid;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &a, "a", 4, &pa) == 0);
	CU_ASSERT_EQUAL(ct_fill(pa, 2, 0, 1, BS), 1);
	pid = fork();
	if (pid == 0) {
		pool_files_lock(pool);
		pool->files[pa->slot].idgen |= 1; /* as if killed while reusing a's slot */
		pool->files[pa->slot].ino = 12345;
		raise(SIGKILL);
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0 && waitpid(pid, &status, 0) == pid);
	CU_ASSERT(WIFSIGNALED(status));
	/* the next opener repairs: the half-claimed slot is freed, its data dropped */
	CU_ASSERT_EQUAL(pool_file_get(pool, &b, "b", 0, &pb), 0);
	CU_ASSERT_EQUAL(pool_buf_read(pa, 0, buf, 0, BS), -ESTALE);
	pool_info(pool, &info);
	CU_ASSERT_EQUAL(info.files_used, 1);
	CU_ASSERT_EQUAL(info.reserved, 0);
	CU_ASSERT_EQUAL(ct_fill(pb, 3, 0, 1, BS), 1);
	CU_ASSERT_EQUAL(pool_buf_read(pb, 0, buf, 0, BS), BS);
	pool_file_put(pa);
	pool_file_put(pb);
	pool_close(pool);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A read as a daemon does it: hit and verify, or fill from the "backend". */
static void op_read(struct pool_file *pf, uint32_t f, uint32_t b, uint8_t *buf)
{
	uint32_t acked = __atomic_load_n(&sh->acked[f][b], __ATOMIC_SEQ_CST), v;
	struct pool_ticket t;
	ssize_t n = pool_buf_read(pf, b, buf, 0, BS);

	if (n == BS) {
		__atomic_fetch_add(&sh->hits, 1, __ATOMIC_RELAXED);
		if (!ct_verify(buf, BS, f, b, &v))
			__atomic_fetch_add(&sh->torn, 1, __ATOMIC_RELAXED);
		else if (v < acked)
			__atomic_fetch_add(&sh->stale, 1, __ATOMIC_RELAXED);
		else if (v > __atomic_load_n(&sh->backend[f][b], __ATOMIC_SEQ_CST))
			__atomic_fetch_add(&sh->future, 1, __ATOMIC_RELAXED);
		return;
	}
	if (n != -ENOENT || pool_file_ticket_get(pf, &t))
		return;
	v = __atomic_load_n(&sh->backend[f][b], __ATOMIC_SEQ_CST);
	ct_gen(buf, BS, f, b, v);
	pool_buf_fill(pf, &t, b, buf, BS);
}

static void op_write(struct pool_file *pf, uint32_t f, uint32_t b)
{
	uint32_t v, old;

	if (pool_buf_write_begin(pf, (uint64_t)b * BS, BS))
		return;
	v = __atomic_add_fetch(&sh->backend[f][b], 1, __ATOMIC_SEQ_CST);
	pool_buf_write_end(pf);
	old = __atomic_load_n(&sh->acked[f][b], __ATOMIC_SEQ_CST);
	while (old < v && !__atomic_compare_exchange_n(&sh->acked[f][b], &old, v, false,
						       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/* The body of workers and victims: random operations until told to stop. */
static void hammer(uint64_t seed, bool victim)
{
	struct pool *pool = ct_open(pool_name, BS, NBUFS);
	struct pool_file *pf[NFILES];
	uint8_t buf[BS];
	uint64_t x = seed | 1;

	if (!pool)
		_exit(3);
	for (uint32_t f = 0; f < NFILES; f++) {
		struct pool_file_id id = ct_id(f, NBUCKETS * BS);

		if (pool_file_get(pool, &id, "hammer", f == 0 ? 16 : 0, &pf[f]))
			_exit(4);
	}
	while (victim || !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		uint64_t r = rnd(&x);
		uint32_t f = (uint32_t)(r % NFILES), b = (uint32_t)((r >> 8) % NBUCKETS);
		uint32_t what = (uint32_t)((r >> 20) % 1000);

		if (what < 850) {
			op_read(pf[f], f, b, buf);
		} else if (what < (victim ? 864 : 990)) {
			op_write(pf[f], f,
				 b); /* victims rarely: a death mid-write blocks fills 5 s */
		} else if (what < 995) {
			pool_file_invalidate(pf[f]);
		} else {
			struct pool_file_id id = ct_id(f, NBUCKETS * BS);

			pool_file_put(pf[f]);
			if (pool_file_get(pool, &id, "hammer", f == 0 ? 16 : 0, &pf[f]))
				_exit(5);
		}
		__atomic_fetch_add(&sh->ops, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* After the storm: wait out leases of writers that died mid-write. */
static void wait_not_busy(struct pool_file *pf)
{
	struct pool_ticket t;

	for (int i = 0; i < 700; i++) {
		if (pool_file_ticket_get(pf, &t) || !t.busy)
			return;
		usleep(10000);
	}
}

static void verify_after(struct pool *pool)
{
	struct pool_file *pf[NFILES];
	struct pool_stats st;
	uint8_t buf[BS];
	uint32_t v;
	uint64_t present = 0;
	int bad = 0, refill = 0;

	for (uint32_t f = 0; f < NFILES; f++) {
		struct pool_file_id id = ct_id(f, NBUCKETS * BS);

		CU_ASSERT_FATAL(pool_file_get(pool, &id, "hammer", 0, &pf[f]) == 0);
	}
	for (uint32_t f = 0; f < NFILES; f++) {
		for (uint32_t b = 0; b < NBUCKETS; b++) {
			ssize_t n = pool_buf_read(pf[f], b, buf, 0, BS);

			if (n == -ENOENT)
				continue;
			present++;
			bad += n != BS || !ct_verify(buf, BS, f, b, &v) || v != sh->backend[f][b];
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(pool_shard_recount(pool), 0);
	CU_ASSERT_EQUAL(pool_stats_get(pool, &st), 0);
	CU_ASSERT_EQUAL(st.resident, present);
	printf("\n    %llu ops, %llu hits, %llu kills (torn %llu, stale %llu, future %llu), %llu "
	       "recoveries, "
	       "%llu buckets cached at the end",
	       (unsigned long long)sh->ops, (unsigned long long)sh->hits,
	       (unsigned long long)sh->kills, (unsigned long long)sh->torn,
	       (unsigned long long)sh->stale, (unsigned long long)sh->future,
	       (unsigned long long)st.c[POOL_C_RECOVERIES], (unsigned long long)present);
	/* fully usable: fill file 1 completely (the pool holds it) and read it all back */
	wait_not_busy(pf[1]);
	CU_ASSERT_EQUAL(pool_file_set_quota(pf[1], NBUCKETS), NBUCKETS);
	for (uint32_t b = 0; b < NBUCKETS; b++) {
		ct_fill(pf[1], 1, b, sh->backend[1][b], BS);
		refill += pool_buf_read(pf[1], b, buf, 0, BS) == BS &&
			  ct_verify(buf, BS, 1, b, &v) && v == sh->backend[1][b];
	}
	CU_ASSERT_EQUAL(refill, NBUCKETS);
	for (uint32_t f = 0; f < NFILES; f++)
		pool_file_put(pf[f]);
}

static void test_sigkill_storm(void)
{
	struct pool *pool;
	pid_t workers[WORKERS];
	struct timespec t0, now;
	uint64_t x = (uint64_t)getpid() * 2654435761ULL;
	int status;

	pool_name = ct_name("storm");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(sh != MAP_FAILED);
	pool = ct_open(pool_name, BS, NBUFS);
	CU_ASSERT_FATAL(pool != NULL);
	for (int i = 0; i < WORKERS; i++) {
		workers[i] = fork();
		if (workers[i] == 0)
			hammer((uint64_t)i * 7919 + 17, false);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pid_t victim = fork();

		if (victim == 0)
			hammer(rnd(&x), true);
		usleep((useconds_t)(rnd(&x) % 3000));
		kill(victim, SIGKILL);
		waitpid(victim, &status, 0);
		sh->kills++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < HAMMER_SECONDS);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < WORKERS; i++) {
		CU_ASSERT(waitpid(workers[i], &status, 0) == workers[i]);
		CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CU_ASSERT_EQUAL(sh->torn, 0);
	CU_ASSERT_EQUAL(sh->stale, 0);
	CU_ASSERT_EQUAL(sh->future, 0);
	verify_after(pool);
	pool_close(pool);
	munmap(sh, sizeof(*sh));
}

int main(void)
{
	CU_pSuite s = ct_suite("crash");

	if (!s)
		return 1;
	CU_add_test(s, "dies holding a shard lock mid-write", test_dead_shard_lock_holder);
	CU_add_test(s, "dies holding the files lock mid-claim", test_dead_files_lock_holder);
	CU_add_test(s, "SIGKILL storm", test_sigkill_storm);
	return ct_run();
}
