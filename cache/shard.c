// SPDX-License-Identifier: MIT
/*
 * shard.c - the pool's locks and what happens when their owner dies.
 *
 * Every lock is a robust, process-shared mutex. When a process dies holding
 * one, the kernel hands the next locker EOWNERDEAD; that locker repairs the
 * structure the lock protects (see the recovery paragraph of pool_layout.h),
 * marks the mutex consistent and carries on. Repair depends only on what is
 * in shared memory, never on what the dead process meant to do, so it is
 * correct wherever the death happened and may itself be interrupted.
 *
 * A lock whose holder is alive but stopped (SIGSTOP, a frozen cgroup) never
 * returns EOWNERDEAD: every wait is bounded, by shmlock.h's one timeout policy
 * (a lock that timed out is "suspect" in this process, so later attempts wait
 * only SHM_LOCK_SUSPECT_NS until it is seen free again). A wait given up returns
 * -ETIMEDOUT and counts lock_timeouts; the caller carries on without the
 * pool (reads from SOURCE) or makes the file's buffers unreachable without
 * the lock (an epoch bump, I4).
 */
#include <errno.h>
#include <stdlib.h>

#include "pool_i.h"
#include "shmlock.h"

static __thread bool in_recount;

/*
 * Shard lock held, @b's writer died mid-change (seq odd): keep it if it holds
 * deferred bytes (I8), which were acknowledged and exist nowhere else. Its
 * writer changed only what it had not acknowledged yet: the bytes of a write
 * under way (patch(), whose range may now hold old, new or mixed bytes, as a
 * local file system's may after a crash), a length or dirty range trimmed or
 * grown for a truncation, or the DIRTY flag cleared after a write-back. Its
 * key, epoch and owner are as they were (never changed on a dirty buffer).
 */
static bool keep_dirty(struct pool_buf *b)
{
	if (b->state != POOL_BUF_VALID || !(pool_buf_flags(b) & POOL_BUF_F_DIRTY))
		return false;
	if (b->dirty_hi > b->len)
		b->dirty_hi = b->len;
	if (b->dirty_lo > b->dirty_hi)
		b->dirty_lo = b->dirty_hi;
	return true;
}

/*
 * Rebuild the chains of shard @s from its descriptors (I3). A descriptor
 * with odd seq was being changed when its writer died: its data cannot be
 * trusted, so it is freed, unless it is dirty (keep_dirty). So is one whose
 * key is out of range.
 */
static void shard_rebuild(struct pool *pool, uint32_t s)
{
	uint32_t first = s * pool->per_shard;

	for (uint32_t i = first; i < first + pool->per_shard; i++) {
		struct pool_buf *b = &pool->bufs[i];
		uint32_t seq = LOAD(&b->seq);
		bool bad = b->file >= pool->nfiles || b->len > pool->bsize;

		if (bad || ((seq & 1) && !keep_dirty(b))) {
			b->state = POOL_BUF_FREE;
			STORE(&b->file, POOL_NONE);
		}
		if (bad || (seq & 1))
			STORE_REL(&b->seq, (seq | 1) + 1); /* even, and changed */
		STORE(&b->next, POOL_NONE);
	}
	for (uint32_t c = 0; c < pool->nchains; c++)
		STORE(&pool->chains[(uint64_t)s * pool->nchains + c], POOL_NONE);
	for (uint32_t i = first; i < first + pool->per_shard; i++) {
		struct pool_buf *b = &pool->bufs[i];
		uint32_t *chain;

		if (b->state != POOL_BUF_VALID)
			continue;
		chain = pool_chain_of(pool, b->file, b->bucket);
		STORE(&b->next, LOAD(chain));
		STORE_REL(chain, i);
	}
	pool->shards[s].hand %= pool->per_shard;
}

/* Under the shard lock: chains found corrupt while walking them. */
void pool_shard_repair(struct pool *pool, uint32_t s)
{
	shard_rebuild(pool, s);
	STORE(&pool->hdr->recount_pending, 1);
}

/*
 * Take @m, lock @which of the pool (a shard, or nshards for files_lock),
 * within the bound. Returns as shm_mutex_lock(); a timeout is counted.
 */
static int lock_bounded(struct pool *pool, pthread_mutex_t *m, uint32_t which)
{
	int ret;

	if (pool_is_broken(pool))
		return EIO;
	ret = shm_mutex_lock(m, &pool->suspect[which]);
	if (ret == ETIMEDOUT) {
		ADD(&pool->lock_timeouts, 1);
		if (!pool->readonly)
			ADD(&pool->shards[which % pool->nshards].c[POOL_C_LOCK_TIMEOUTS], 1);
	}
	return ret;
}

static int shard_lock_raw(struct pool *pool, uint32_t s)
{
	pthread_mutex_t *m = &pool->shards[s].lock.m;
	int ret = lock_bounded(pool, m, s);

	if (ret == EOWNERDEAD) {
		pool_shard_repair(pool, s);
		ADD(&pool->shards[s].c[POOL_C_RECOVERIES], 1);
		pthread_mutex_consistent(m);
		ret = 0;
	}
	return -ret;
}

/* Lock shard @s; returns 0, -ETIMEDOUT, -EIO (broken) or -ENOTRECOVERABLE. */
int pool_shard_lock(struct pool *pool, uint32_t s)
{
	return shard_lock_raw(pool, s);
}

void pool_shard_unlock(struct pool *pool, uint32_t s)
{
	pthread_mutex_unlock(&pool->shards[s].lock.m);
	if (LOAD(&pool->hdr->recount_pending) && !in_recount)
		pool_shard_recount(pool);
}

int pool_files_lock(struct pool *pool)
{
	pthread_mutex_t *m = &pool->hdr->files_lock.m;
	int ret = lock_bounded(pool, m, pool->nshards);

	if (ret == EOWNERDEAD) {
		pool_files_repair(pool);
		ADD(&pool->shards[0].c[POOL_C_RECOVERIES], 1);
		pthread_mutex_consistent(m);
		ret = 0;
	}
	return -ret;
}

void pool_files_unlock(struct pool *pool)
{
	pthread_mutex_unlock(&pool->hdr->files_lock.m);
}

/* Count, per file slot, the reachable buffers; all shard locks held. */
static void recount_locked(struct pool *pool, uint32_t *epoch, uint32_t *count)
{
	for (uint32_t f = 0; f < pool->nfiles; f++)
		epoch[f] = pool_epoch_of(LOAD(&pool->files[f].residency));
	/* only bumpers (no shard lock) may touch the dirty words meanwhile */
	for (uint32_t f = 0; f < pool->nfiles; f++)
		__atomic_and_fetch(&pool->files[f].dirty, ~0xffffffffULL, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < pool->nbufs; i++) {
		const struct pool_buf *b = &pool->bufs[i];

		if (b->state == POOL_BUF_VALID && b->file < pool->nfiles &&
		    b->epoch == epoch[b->file])
			count[b->file]++;
		if (b->state == POOL_BUF_VALID && b->file < pool->nfiles &&
		    (pool_buf_flags(b) & POOL_BUF_F_DIRTY))
			__atomic_add_fetch(&pool->files[b->file].dirty, 1, __ATOMIC_SEQ_CST);
	}
	for (uint32_t f = 0; f < pool->nfiles; f++) {
		uint64_t *r = &pool->files[f].residency;
		uint64_t old = LOAD(r);

		/* An epoch bumped meanwhile reset the count to 0, which is right. */
		while (pool_epoch_of(old) == epoch[f] &&
		       !__atomic_compare_exchange_n(r, &old, ((uint64_t)epoch[f] << 32) | count[f],
						    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

/*
 * pool_shard_recount - make every file's residency count exact again, after a
 * recovery left them approximate. Takes every shard lock in order, so fills
 * and evictions (the only count changers) are excluded. Returns 0, or -ENOMEM
 * (the recount stays pending).
 */
int pool_shard_recount(struct pool *pool)
{
	uint32_t *epoch, *count, locked;
	int ret = 0;

	if (pool->readonly)
		return -EROFS;
	if (pool_is_broken(pool))
		return -EIO;
	epoch = calloc(pool->nfiles, sizeof(*epoch));
	count = calloc(pool->nfiles, sizeof(*count));
	if (!epoch || !count) {
		ret = -ENOMEM;
		goto out;
	}
	in_recount = true;
	for (locked = 0; locked < pool->nshards && !ret; locked++)
		ret = shard_lock_raw(pool, locked);
	if (ret)
		locked--; /* the one that failed is not held */
	else if (__atomic_exchange_n(&pool->hdr->recount_pending, 0, __ATOMIC_ACQ_REL))
		recount_locked(pool, epoch, count);
	while (locked-- > 0)
		pthread_mutex_unlock(&pool->shards[locked].lock.m);
	in_recount = false;
out:
	free(epoch);
	free(count);
	return ret;
}
