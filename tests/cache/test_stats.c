// SPDX-License-Identifier: MIT
/*
 * test_stats.c - cache/stats.c, the one lock-free reader of file slots that
 * the monitor and the tools (`accel show`, `accel stat`) use: a snapshot
 * never mixes two identities of a slot, however fast a writer moves it on
 * (I6), and carries the granted quota (reserve) with the rest. The tools
 * once read slots themselves with a weaker seqlock (the "before" idgen taken
 * from inside the copy), which could pair one file's identity with another's
 * granted quota. Each process also knows its own share of the counters.
 */
#include <errno.h>
#include <pthread.h>

#include "cache_test.h"
#include "pool_i.h"

#define BS 4096U
#define ROUNDS 20000

/* The two identities the writer alternates a slot between; reserve and path follow ino. */
static const struct {
	uint64_t ino;
	uint32_t reserve;
	const char *path;
} idents[2] = { { 100, 3, "/one" }, { 200, 17, "/two-is-longer" } };

struct mover {
	struct pool_fslot *fs;
	bool stop; /* atomic */
	uint64_t moves;
};

/* The I6 write side, as files.c's claim_slot: idgen odd, identity, idgen even. */
static void move_to(struct pool_fslot *fs, int k)
{
	uint32_t gen = LOAD(&fs->idgen);

	__atomic_store_n(&fs->idgen, gen | 1, __ATOMIC_SEQ_CST);
	POOL_FENCE(__ATOMIC_RELEASE);
	STORE(&fs->ino, idents[k].ino);
	STORE(&fs->reserve, idents[k].reserve);
	pool_copy(fs->path, idents[k].path, strlen(idents[k].path) + 1);
	STORE_REL(&fs->idgen, (gen | 1) + 1);
}

static void *mover_main(void *arg)
{
	struct mover *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_RELAXED)) {
		move_to(m->fs, (int)(m->moves & 1));
		m->moves++;
	}
	return NULL;
}

struct seen {
	uint64_t snaps, mixed;
};

static int check_snap(const struct pool_stats_file *st, void *arg)
{
	struct seen *s = arg;
	int k = st->ino == idents[1].ino;

	s->snaps++;
	if ((st->ino != idents[0].ino && st->ino != idents[1].ino) ||
	    st->reserve != idents[k].reserve || strcmp(st->path, idents[k].path))
		s->mixed++;
	return 0;
}

/* A writer moves a slot between two identities while a read-only attach iterates. */
static void test_snapshot_never_mixed(void)
{
	const char *name = ct_name("snap");
	struct pool *pool = ct_open(name, BS, 32), *ro;
	struct pool_file_id id = ct_id(100, BS);
	struct mover m = { 0 };
	struct seen s = { 0 };
	struct pool_file *pf;
	pthread_t t;
	char err[128];

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "/one", 0, &pf) == 0);
	CU_ASSERT_FATAL(pool_open_readonly(name, &ro, err, sizeof(err)) == 0);
	m.fs = pool_fslot(pf);
	move_to(m.fs, 0);
	CU_ASSERT_FATAL(pthread_create(&t, NULL, mover_main, &m) == 0);
	for (int i = 0; i < ROUNDS && !s.mixed; i++)
		CU_ASSERT_EQUAL(pool_stats_file_iter(ro, check_snap, &s), 0);
	__atomic_store_n(&m.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("\n    %llu snapshots, %llu mixed, %llu moves ", (unsigned long long)s.snaps,
	       (unsigned long long)s.mixed, (unsigned long long)m.moves);
	CU_ASSERT_EQUAL(s.mixed, 0);
	CU_ASSERT(s.snaps > 0);
	pool_close(ro);
	pool_file_put(pf); /* stale now (idgen moved): only freed */
	pool_close(pool);
}

/* The granted quota is in the snapshot, clamped as pool_file_set_quota grants it. */
static void test_snapshot_reserve(void)
{
	const char *name = ct_name("resv");
	struct pool *pool = ct_open(name, BS, 32);
	struct pool_file_id id = ct_id(7, BS);
	struct pool_stats_file st;
	struct pool_file *pf;
	int granted;

	CU_ASSERT_FATAL(pool && pool_file_get(pool, &id, "/f", 0, &pf) == 0);
	granted = pool_file_set_quota(pf, 8);
	CU_ASSERT_EQUAL(granted, 8);
	CU_ASSERT_EQUAL_FATAL(pool_stats_file(pf, &st), 0);
	CU_ASSERT_EQUAL(st.quota, 8);
	CU_ASSERT_EQUAL(st.reserve, 8);
	granted = pool_file_set_quota(pf, POOL_QUOTA_ALL);
	CU_ASSERT_EQUAL_FATAL(pool_stats_file(pf, &st), 0);
	CU_ASSERT_EQUAL(st.quota, POOL_QUOTA_ALL);
	CU_ASSERT(granted > 0 && st.reserve == (uint32_t)granted && st.reserve < 32);
	pool_file_put(pf);
	pool_close(pool);
}

struct adder {
	struct pool_file *pf;
	unsigned int n;
};

static void *adder_main(void *arg)
{
	struct adder *a = arg;

	for (unsigned int i = 0; i < a->n; i++) {
		pool_stats_count(a->pf, i, POOL_C_LOCAL_HITS, 1);
		pool_stats_count(a->pf, i, POOL_C_BACKEND_READ_BYTES, BS);
	}
	return NULL;
}

/*
 * What a process adds through its handle is its own (pool_stats_own, the
 * per-mount share `accel stat --mount` shows): the sum of every thread's
 * adds, while a second attach of the same pool that added nothing owns 0
 * of the pool's counters.
 */
static void test_own(void)
{
	const char *name = ct_name("own");
	struct pool *pool = ct_open(name, BS, 32), *other = ct_open(name, BS, 32);
	struct pool_file_id id = ct_id(9, BS);
	struct adder a = { .n = 5000 };
	uint64_t mine[POOL_C_POOL_MAX], theirs[POOL_C_POOL_MAX];
	struct pool_stats all;
	pthread_t t[4];

	CU_ASSERT_FATAL(pool && other && pool_file_get(pool, &id, "/own", 0, &a.pf) == 0);
	pool_stats_own(pool, mine);
	for (int i = 0; i < 4; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, adder_main, &a) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pool_stats_count_pool(pool, POOL_C_PT_OPENS, 2);
	pool_stats_own(pool, mine);
	pool_stats_own(other, theirs);
	CU_ASSERT_EQUAL(mine[POOL_C_LOCAL_HITS], 4 * a.n);
	CU_ASSERT_EQUAL(mine[POOL_C_BACKEND_READ_BYTES], 4ULL * a.n * BS);
	CU_ASSERT_EQUAL(mine[POOL_C_PT_OPENS], 2);
	CU_ASSERT_EQUAL(pool_stats_get(other, &all), 0);
	CU_ASSERT_EQUAL(all.c[POOL_C_LOCAL_HITS], 4 * a.n);
	for (int c = 0; c < POOL_C_POOL_MAX; c++)
		CU_ASSERT_EQUAL(theirs[c], 0);
	pool_file_put(a.pf);
	pool_close(other);
	pool_close(pool);
}

int main(void)
{
	CU_pSuite s = ct_suite("cache stats");

	if (!s)
		return 2;
	CU_add_test(s, "snapshots never mix two identities of a slot", test_snapshot_never_mixed);
	CU_add_test(s, "the granted quota is in the snapshot", test_snapshot_reserve);
	CU_add_test(s, "a process's own share of the counters", test_own);
	return ct_run();
}
