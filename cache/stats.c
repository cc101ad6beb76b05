// SPDX-License-Identifier: MIT
/*
 * stats.c - statistics, always collected and kept in the pool itself.
 *
 * Like RMS's, they cost the I/O path only a relaxed atomic add per event,
 * into the file's slot and into the shard the bucket hashes to (spreading
 * pool-wide counters over shards keeps processes from fighting over one
 * cache line). Readers (monitor, tools) take no lock and may map the pool
 * read-only: per-shard counters are summed, file slots are copied under the
 * slot's idgen seqlock (I6) so a snapshot never mixes two files.
 */
#include <errno.h>

#include "pool_i.h"

static const char *const counter_names[POOL_C_POOL_MAX] = {
	[POOL_C_LOCAL_ATTEMPTS] = "local_attempts",
	[POOL_C_LOCAL_HITS] = "local_hits",
	[POOL_C_GLOBAL_ATTEMPTS] = "global_attempts",
	[POOL_C_GLOBAL_HITS] = "global_hits",
	[POOL_C_BACKEND_READS] = "backend_reads",
	[POOL_C_BACKEND_READ_BYTES] = "backend_read_bytes",
	[POOL_C_BACKEND_WRITES] = "backend_writes",
	[POOL_C_BACKEND_WRITE_BYTES] = "backend_write_bytes",
	[POOL_C_GBUF_READ_IOS] = "global_buf_read_ios",
	[POOL_C_GBUF_WRITE_IOS] = "global_buf_write_ios",
	[POOL_C_LBUF_READ_IOS] = "local_buf_read_ios",
	[POOL_C_LBUF_WRITE_IOS] = "local_buf_write_ios",
	[POOL_C_DEFERRED_WRITES] = "deferred_writes",
	[POOL_C_FLUSH_WRITES] = "flush_writes",
	[POOL_C_FLUSH_ERRORS] = "flush_errors",
	[POOL_C_RA_ISSUED] = "readahead_issued",
	[POOL_C_RA_USED] = "readahead_used",
	[POOL_C_RA_WASTED] = "readahead_wasted",
	[POOL_C_EVICTIONS] = "evictions",
	[POOL_C_FILL_DROPS] = "fill_drops",
	[POOL_C_RECOVERIES] = "recoveries",
	[POOL_C_INVALIDATIONS] = "invalidations",
	[POOL_C_DIRTY_LOST] = "dirty_lost",
	[POOL_C_DIRTY_RECOVERED] = "dirty_recovered",
	[POOL_C_LOCK_TIMEOUTS] = "lock_timeouts",
	[POOL_C_PT_OPENS] = "opens_passthrough",
	[POOL_C_PT_FALLBACKS] = "passthrough_fallbacks",
};

const char *pool_stats_counter_name(enum pool_counter c)
{
	return (unsigned int)c < POOL_C_POOL_MAX ? counter_names[c] : "?";
}

_Static_assert(POOL_C_POOL_MAX <= POOL_OWN_WORDS, "a stripe of pool->own holds every counter");

/* This thread's stripe of pool->own: threads take them in turn. */
static unsigned int own_stripe(void)
{
	static unsigned int next;	/* atomic: process-wide by nature */
	static __thread unsigned int s; /* 1 + the stripe, 0: none yet */

	if (!s)
		s = 1 + __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % POOL_OWN_STRIPES;
	return s - 1;
}

void pool_stats_count_shard(struct pool *pool, uint32_t s, enum pool_counter c, uint64_t n)
{
	ADD(&pool->shards[s].c[c], n);
	ADD(&pool->own[own_stripe()][c], n);
}

void pool_stats_own(struct pool *pool, uint64_t c[POOL_C_POOL_MAX])
{
	memset(c, 0, POOL_C_POOL_MAX * sizeof(*c));
	for (int s = 0; s < POOL_OWN_STRIPES; s++)
		for (int i = 0; i < POOL_C_POOL_MAX; i++)
			c[i] += LOAD(&pool->own[s][i]);
}

void pool_stats_count_pool(struct pool *pool, enum pool_counter c, uint64_t n)
{
	static __thread uint32_t spread; /* threads of a daemon start on different shards */

	if ((unsigned int)c >= POOL_C_POOL_MAX || pool->readonly || pool_is_broken(pool))
		return;
	if (!spread)
		spread = (uint32_t)(uintptr_t)&spread >> 12 | 1;
	pool_stats_count_shard(pool, spread % pool->nshards, c, n);
}

void pool_stats_count(struct pool_file *pf, uint64_t bucket, enum pool_counter c, uint64_t n)
{
	struct pool *pool = pf->pool;

	if ((unsigned int)c >= POOL_C_POOL_MAX || pool->readonly || pool_is_broken(pool) ||
	    LOAD(&pool_fslot(pf)->idgen) != pf->idgen)
		return; /* a reused slot's counters belong to its new file */
	if (c == POOL_C_LOCK_TIMEOUTS)
		ADD(&pool->lock_timeouts, n); /* the daemon's log looks here */
	if (c < POOL_C_FILE_MAX)
		ADD(&pool_fslot(pf)->c[c], n);
	pool_stats_count_shard(pool, pool_shard_of(pool, pf->slot, bucket), c, n);
}

void pool_stats_count_fslot(struct pool *pool, uint32_t slot, uint64_t bucket, enum pool_counter c,
			    uint64_t n)
{
	if ((unsigned int)c >= POOL_C_POOL_MAX || pool->readonly || slot >= pool->nfiles ||
	    pool_is_broken(pool))
		return;
	if (c < POOL_C_FILE_MAX)
		ADD(&pool->files[slot].c[c], n);
	pool_stats_count_shard(pool, pool_shard_of(pool, slot, bucket), c, n);
}

/* Copy slot @f into @st; false if it is free or changed identity meanwhile. */
static bool snapshot(struct pool *pool, uint32_t f, struct pool_stats_file *st)
{
	const struct pool_fslot *fs = &pool->files[f];
	uint32_t gen = LOAD_ACQ(&fs->idgen);

	if ((gen & 1) || LOAD(&fs->state) != POOL_FSLOT_USED)
		return false;
	st->slot = f;
	st->dev = LOAD(&fs->dev);
	st->ino = LOAD(&fs->ino);
	st->opens = LOAD(&fs->opens);
	st->quota = LOAD(&fs->quota);
	st->reserve = LOAD(&fs->reserve);
	st->resident = (uint32_t)LOAD(&fs->residency);
	st->ndirty = pool_fslot_ndirty(fs);
	st->flags = LOAD(&fs->flags);
	for (int c = 0; c < POOL_C_FILE_MAX; c++)
		st->c[c] = LOAD(&fs->c[c]);
	pool_copy(st->path, fs->path, sizeof(st->path));
	st->path[sizeof(st->path) - 1] = '\0';
	POOL_FENCE(__ATOMIC_ACQUIRE);
	return LOAD(&fs->idgen) == gen;
}

int pool_stats_file(struct pool_file *pf, struct pool_stats_file *st)
{
	for (int tries = 0; tries < 100; tries++) {
		if (pool_is_broken(pf->pool))
			return -EIO;
		if (LOAD_ACQ(&pool_fslot(pf)->idgen) != pf->idgen)
			return -ESTALE;
		if (snapshot(pf->pool, pf->slot, st))
			return 0;
	}
	return -EAGAIN;
}

int pool_stats_file_iter(struct pool *pool, int (*fn)(const struct pool_stats_file *st, void *arg),
			 void *arg)
{
	struct pool_stats_file st;
	int ret;

	if (pool_is_broken(pool))
		return -EIO;
	for (uint32_t f = 0; f < pool->nfiles; f++) {
		bool ok = false;

		for (int tries = 0; tries < 100 && !ok; tries++)
			ok = snapshot(pool, f, &st);
		if (ok && (ret = fn(&st, arg)) != 0)
			return ret;
	}
	return 0;
}

int pool_stats_get(struct pool *pool, struct pool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (pool_is_broken(pool))
		return -EIO;
	for (uint32_t s = 0; s < pool->nshards; s++)
		for (int c = 0; c < POOL_C_POOL_MAX; c++)
			st->c[c] += LOAD(&pool->shards[s].c[c]);
	for (uint32_t f = 0; f < pool->nfiles; f++) {
		const struct pool_fslot *fs = &pool->files[f];

		if (LOAD(&fs->state) != POOL_FSLOT_USED)
			continue;
		st->opens += LOAD(&fs->opens);
		st->resident += (uint32_t)LOAD(&fs->residency);
	}
	return 0;
}

void *pool_stats_mrc_region(struct pool *pool, size_t *size)
{
	*size = pool->mrc_size;
	return pool->mrc_size && !pool_is_broken(pool) ? pool->mrc : NULL;
}

void pool_stats_fslot(const struct pool_file *pf, uint32_t *slot, uint32_t *gen)
{
	*slot = pf->slot;
	*gen = pf->idgen;
}
