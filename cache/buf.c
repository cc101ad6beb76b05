// SPDX-License-Identifier: MIT
/*
 * buf.c - the buffers: lock-free hits, fills, write-through updates,
 * truncation, and the clock that chooses what to evict.
 *
 * Eviction is a generalised CLOCK per shard, with two twists that make it
 * resist pollution:
 *  - a new buffer starts with usage 0 and only a later hit raises it (up to
 *    POOL_USAGE_MAX), so a stream that reads each bucket once never outranks
 *    data that is read again: the hand takes the stream's own buffers first;
 *  - a buffer of a file holding a quota is skipped altogether while the
 *    file has no more buffers than its quota, so pinned and memory-resident
 *    files keep their data whatever the rest of the pool does.
 * Stale buffers (old epoch, reused slot) are free for the taking.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "probes.h"
#include "pool_i.h"

#define OPTIMISTIC_TRIES 8

static bool buf_matches(const struct pool_buf *b, uint32_t file, uint32_t epoch, uint64_t bucket)
{
	return LOAD(&b->file) == file && LOAD(&b->epoch) == epoch && LOAD(&b->bucket) == bucket;
}

static void buf_touch(struct pool_buf *b)
{
	uint8_t u = LOAD(&b->usage);

	if (u < POOL_USAGE_MAX)
		STORE(&b->usage, u + 1);
}

/* Seqlock write side (I1): the descriptor and data may change until buf_end(). */
static uint32_t buf_begin(struct pool_buf *b)
{
	uint32_t seq = b->seq;

	STORE(&b->seq, seq + 1);
	POOL_FENCE(__ATOMIC_RELEASE);
	return seq + 2;
}

static void buf_end(struct pool_buf *b, uint32_t seq)
{
	STORE_REL(&b->seq, seq);
}

/* Shard lock held: the buffer holding the key, or POOL_NONE; -EUCLEAN on a bad chain
 * or a descriptor no writer could have made (len beyond the bucket: every user
 * of the result copies or zeroes up to len). */
static int lookup_locked(struct pool *pool, uint32_t s, uint32_t file, uint32_t epoch,
			 uint64_t bucket, uint32_t *out)
{
	uint32_t idx = *pool_chain_of(pool, file, bucket);

	for (uint32_t steps = 0; idx != POOL_NONE; steps++) {
		if (!pool_buf_in_shard(pool, idx, s) || steps >= pool->per_shard)
			return -EUCLEAN;
		if (pool->bufs[idx].state == POOL_BUF_VALID &&
		    buf_matches(&pool->bufs[idx], file, epoch, bucket)) {
			if (pool->bufs[idx].len > pool->bsize)
				return -EUCLEAN;
			break;
		}
		idx = pool->bufs[idx].next;
	}
	*out = idx;
	return 0;
}

static uint32_t lookup_or_repair(struct pool *pool, uint32_t s, uint32_t file, uint32_t epoch,
				 uint64_t bucket)
{
	uint32_t idx;

	if (lookup_locked(pool, s, file, epoch, bucket, &idx)) {
		pool_shard_repair(pool, s);
		if (lookup_locked(pool, s, file, epoch, bucket, &idx))
			idx = POOL_NONE;
	}
	return idx;
}

/* Shard lock held: take buffer @idx out of its chain. Returns -EUCLEAN if absent. */
static int chain_unlink(struct pool *pool, uint32_t s, uint32_t idx)
{
	struct pool_buf *b = &pool->bufs[idx];
	uint32_t *pp = pool_chain_of(pool, b->file, b->bucket);

	for (uint32_t steps = 0; *pp != POOL_NONE; steps++) {
		if (!pool_buf_in_shard(pool, *pp, s) || steps >= pool->per_shard)
			return -EUCLEAN;
		if (*pp == idx) {
			STORE_REL(pp, b->next);
			return 0;
		}
		pp = &pool->bufs[*pp].next;
	}
	return -EUCLEAN;
}

/* Shard lock held: is valid buffer @b reachable (I3)? Sets *fs to its file. */
static bool buf_reachable(struct pool *pool, const struct pool_buf *b, struct pool_fslot **fs)
{
	if (b->state != POOL_BUF_VALID || b->file >= pool->nfiles)
		return false;
	*fs = &pool->files[b->file];
	return pool_epoch_of(LOAD(&(*fs)->residency)) == b->epoch;
}

/* Shard lock held: free buffer @idx, wherever it is. */
void pool_buf_drop(struct pool *pool, uint32_t idx)
{
	struct pool_buf *b = &pool->bufs[idx];
	uint32_t s = idx / pool->per_shard, seq;
	struct pool_fslot *fs;
	bool damaged = b->state != POOL_BUF_FREE;

	if (b->state == POOL_BUF_VALID && b->file < pool->nfiles) {
		damaged = chain_unlink(pool, s, idx) != 0;
		if (buf_reachable(pool, b, &fs))
			pool_fslot_resident_add(fs, b->epoch, -1);
		if (pool_buf_flags(b) & POOL_BUF_F_DIRTY)
			pool_fslot_dirty_add(&pool->files[b->file], -1);
		if (pool_buf_flags(b) & POOL_BUF_F_PREFETCHED)
			pool_stats_count_fslot(pool, b->file, b->bucket, POOL_C_RA_WASTED, 1);
	}
	/* not DIRTY before seq goes odd: a repair after our death here keeps
	 * odd dirty buffers (shard.c keep_dirty), and this one is on its way out */
	STORE(&b->flags, 0);
	seq = buf_begin(b);
	b->state = POOL_BUF_FREE;
	STORE(&b->file, POOL_NONE);
	buf_end(b, seq);
	if (damaged)
		pool_shard_repair(pool, s); /* rebuild the chains without it (I3) */
}

/* Shard lock held: may the clock take @b now? Ages it if not. */
static bool clock_takes(struct pool *pool, uint32_t s, struct pool_buf *b)
{
	struct pool_fslot *fs;
	uint32_t reserve;
	uint8_t u;

	if (b->state == POOL_BUF_VALID && (pool_buf_flags(b) & POOL_BUF_F_DIRTY))
		return false; /* I8: newer than SOURCE, its owner writes it back first */
	if (!buf_reachable(pool, b, &fs))
		return true;
	reserve = LOAD(&fs->reserve);
	if (reserve && (uint32_t)LOAD(&fs->residency) <= reserve)
		return false; /* within its quota: not ours to take */
	u = LOAD(&b->usage);
	if (u) {
		STORE(&b->usage, u - 1);
		return false;
	}
	pool_stats_count_shard(pool, s, POOL_C_EVICTIONS, 1);
	ACCEL_PROBE2(cache_evict, fs->ino, b->bucket);
	return true;
}

/* Shard lock held: a free buffer of shard @s, evicting if needed; POOL_NONE if all pinned. */
static uint32_t clock_victim(struct pool *pool, uint32_t s)
{
	struct pool_shard *sh = &pool->shards[s];
	uint32_t hand = sh->hand % pool->per_shard;
	uint64_t sweep = (uint64_t)(POOL_USAGE_MAX + 2) * pool->per_shard;

	for (uint64_t step = 0; step < sweep; step++) {
		uint32_t idx = s * pool->per_shard + hand;

		hand = (hand + 1) % pool->per_shard;
		if (clock_takes(pool, s, &pool->bufs[idx])) {
			sh->hand = hand;
			pool_buf_drop(pool, idx);
			return idx;
		}
	}
	sh->hand = hand;
	return POOL_NONE;
}

/* Shard lock held: make free buffer @idx hold the bucket and publish it. */
static void buf_install(struct pool *pool, uint32_t idx, struct pool_file *pf, uint32_t epoch,
			uint64_t bucket, const void *data, size_t len, uint8_t flags)
{
	struct pool_buf *b = &pool->bufs[idx];
	uint32_t *chain = pool_chain_of(pool, pf->slot, bucket);
	uint32_t seq = buf_begin(b);

	STORE(&b->file, pf->slot);
	STORE(&b->epoch, epoch);
	STORE(&b->bucket, bucket);
	STORE(&b->len, (uint32_t)len);
	STORE(&b->usage, 0);
	STORE(&b->flags, flags);
	b->state = POOL_BUF_VALID;
	pool_copy(pool_buf_data(pool, idx), data, len);
	buf_end(b, seq);
	STORE(&b->next, *chain);
	STORE_REL(chain, idx);
	pool_fslot_resident_add(pool_fslot(pf), epoch, +1);
}

static int file_check(struct pool_file *pf)
{
	if (pool_is_broken(pf->pool))
		return -EIO;
	if (LOAD_ACQ(&pool_fslot(pf)->idgen) == pf->idgen)
		return 0;
	return pool_is_broken(pf->pool) ? -EIO : -ESTALE; /* the load may have met SIGBUS */
}

/* Copy out of buffer @b if it still holds the key; -EAGAIN if it moved (I2). */
static ssize_t read_buf(struct pool *pool, uint32_t idx, uint32_t seq, void *buf, size_t off,
			size_t len)
{
	struct pool_buf *b = &pool->bufs[idx];
	uint32_t blen = LOAD(&b->len);
	size_t n = 0;

	if (blen > pool->bsize)
		return -EAGAIN;
	if (off < blen)
		n = len < blen - off ? len : blen - off;
	pool_copy(buf, pool_buf_data(pool, idx) + off, n);
	POOL_FENCE(__ATOMIC_ACQUIRE);
	if (LOAD(&b->seq) != seq)
		return -EAGAIN;
	buf_touch(b);
	if ((pool_buf_flags(b) & POOL_BUF_F_PREFETCHED) &&
	    (pool_buf_flags_clear(b, POOL_BUF_F_PREFETCHED) & POOL_BUF_F_PREFETCHED))
		pool_stats_count_fslot(pool, LOAD(&b->file), LOAD(&b->bucket), POOL_C_RA_USED, 1);
	return (ssize_t)n;
}

/* One lock-free lookup and copy: bytes, -ENOENT, or -EAGAIN to retry. */
static ssize_t read_optimistic(struct pool *pool, uint32_t s, uint32_t file, uint32_t epoch,
			       uint64_t bucket, void *buf, size_t off, size_t len)
{
	uint32_t idx = LOAD_ACQ(pool_chain_of(pool, file, bucket));

	for (uint32_t steps = 0; idx != POOL_NONE; steps++) {
		struct pool_buf *b;
		uint32_t seq, next;

		if (!pool_buf_in_shard(pool, idx, s) || steps >= pool->per_shard)
			return -EAGAIN;
		b = &pool->bufs[idx];
		seq = LOAD_ACQ(&b->seq);
		if (seq & 1)
			return -EAGAIN;
		if (buf_matches(b, file, epoch, bucket))
			return read_buf(pool, idx, seq, buf, off, len);
		next = LOAD(&b->next);
		POOL_FENCE(__ATOMIC_ACQUIRE);
		if (LOAD(&b->seq) != seq)
			return -EAGAIN;
		idx = next;
	}
	return -ENOENT;
}

/* The slow path: under the shard lock, which also recovers from a dead writer. */
static ssize_t read_locked(struct pool *pool, uint32_t s, uint32_t file, uint32_t epoch,
			   uint64_t bucket, void *buf, size_t off, size_t len)
{
	ssize_t ret = pool_shard_lock(pool, s);
	uint32_t idx;

	if (ret)
		return ret;
	idx = lookup_or_repair(pool, s, file, epoch, bucket);
	ret = -ENOENT;
	if (idx != POOL_NONE)
		ret = read_buf(pool, idx, pool->bufs[idx].seq, buf, off, len);
	if (ret == -EAGAIN) { /* a descriptor no writer could have made: damage */
		pool_shard_repair(pool, s);
		ret = -ENOENT;
	}
	pool_shard_unlock(pool, s);
	return ret;
}

ssize_t pool_buf_read(struct pool_file *pf, uint64_t bucket, void *buf, size_t off, size_t len)
{
	struct pool *pool = pf->pool;
	uint32_t s = pool_shard_of(pool, pf->slot, bucket);
	uint32_t epoch;
	ssize_t ret = file_check(pf);

	if (ret)
		return ret;
	if (off >= pool->bsize)
		return -EINVAL;
	if (len > pool->bsize - off)
		len = pool->bsize - off;
	epoch = pool_epoch_of(LOAD_ACQ(&pool_fslot(pf)->residency));
	pool_stats_count(pf, bucket, POOL_C_GLOBAL_ATTEMPTS, 1);
	ret = -EAGAIN;
	for (int i = 0; i < OPTIMISTIC_TRIES && ret == -EAGAIN; i++) {
		if (i)
			sched_yield();
		ret = read_optimistic(pool, s, pf->slot, epoch, bucket, buf, off, len);
	}
	if (ret == -EAGAIN)
		ret = read_locked(pool, s, pf->slot, epoch, bucket, buf, off, len);
	if (pool_is_broken(pool))
		return -EIO; /* the copy may hold the zeros that replaced the segment */
	if (ret >= 0)
		pool_stats_count(pf, bucket, POOL_C_GLOBAL_HITS, 1);
	return ret;
}

int pool_buf_fill(struct pool_file *pf, const struct pool_ticket *t, uint64_t bucket,
		  const void *data, size_t len)
{
	return pool_buf_fill_flags(pf, t, bucket, data, len, false);
}

int pool_buf_fill_flags(struct pool_file *pf, const struct pool_ticket *t, uint64_t bucket,
			const void *data, size_t len, bool prefetch)
{
	struct pool *pool = pf->pool;
	uint32_t s = pool_shard_of(pool, pf->slot, bucket), idx;
	int ret = file_check(pf);

	if (ret)
		return ret;
	if (len > pool->bsize || (!data && len))
		return -EINVAL;
	if (t->busy)
		return 0; /* I5: not worth a lock (and a stuck one's wait) to refuse */
	ret = pool_shard_lock(pool, s);
	if (ret)
		return ret;
	if (t->busy || LOAD(&pool_fslot(pf)->wseq) != t->wseq ||
	    pool_epoch_of(LOAD(&pool_fslot(pf)->residency)) != t->epoch) {
		idx = POOL_NONE; /* I5: something changed the file since the ticket */
	} else {
		idx = lookup_or_repair(pool, s, pf->slot, t->epoch, bucket);
		ret = idx != POOL_NONE;
		if (idx == POOL_NONE)
			idx = clock_victim(pool, s);
		if (!ret && idx != POOL_NONE)
			buf_install(pool, idx, pf, t->epoch, bucket, data, len,
				    prefetch ? POOL_BUF_F_PREFETCHED : 0);
	}
	pool_shard_unlock(pool, s);
	if (idx == POOL_NONE) {
		pool_stats_count(pf, bucket, POOL_C_FILL_DROPS, 1);
		return 0;
	}
	if (!ret)
		pool_stats_count(pf, bucket, prefetch ? POOL_C_RA_ISSUED : POOL_C_GBUF_READ_IOS, 1);
	return 1;
}

uint64_t pool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Is a write of the file in flight (I5)? A lease far in the future is a clock jump. */
bool pool_buf_write_busy(struct pool_fslot *fs)
{
	uint64_t lease, now;

	if (!__atomic_load_n(&fs->wactive, __ATOMIC_SEQ_CST))
		return false;
	lease = LOAD(&fs->wlease);
	now = pool_now_ns();
	return now < lease && lease - now <= POOL_WRITE_LEASE_NS;
}

/*
 * A bucket to drop is behind a lock we could not get (error @err): make every
 * buffer of the file unreachable instead, which needs no shard lock (I4).
 * Refused while the file has dirty buffers (I8): then the caller must not
 * change SOURCE, or other readers would keep the old bytes.
 */
static int drop_all(struct pool_file *pf, int err)
{
	if (err == -EIO || pool_fslot_bump_clean(pool_fslot(pf)))
		return err;
	pool_stats_count(pf, 0, POOL_C_INVALIDATIONS, 1);
	return 0;
}

int pool_buf_write_begin(struct pool_file *pf, uint64_t off, uint64_t len)
{
	return pool_buf_write_begin_mode(pf, off, len, false);
}

/*
 * @keep: the caller updates the buffers in place (deferred write, I8) instead
 * of having them dropped. Dirty buffers are never dropped here: a write that
 * goes around them must have flushed them first (its own) or patch them.
 */
int pool_buf_write_begin_mode(struct pool_file *pf, uint64_t off, uint64_t len, bool keep)
{
	struct pool *pool = pf->pool;
	struct pool_fslot *fs = pool_fslot(pf);
	uint64_t first = off >> pool->bshift, last = len ? (off + len - 1) >> pool->bshift : first;
	uint32_t epoch;
	int ret = file_check(pf);

	if (ret)
		return ret;
	__atomic_fetch_add(&fs->wactive, 1, __ATOMIC_SEQ_CST);
	STORE(&fs->wlease, pool_now_ns() + POOL_WRITE_LEASE_NS);
	__atomic_fetch_add(&fs->wseq, 1, __ATOMIC_SEQ_CST);
	epoch = pool_epoch_of(__atomic_load_n(&fs->residency, __ATOMIC_SEQ_CST));
	for (uint64_t b = first; len && !keep && b <= last; b++) {
		uint32_t s = pool_shard_of(pool, pf->slot, b), idx;

		if ((ret = pool_shard_lock(pool, s)))
			return drop_all(pf, ret);
		idx = lookup_or_repair(pool, s, pf->slot, epoch, b);
		if (idx != POOL_NONE && !(pool_buf_flags(&pool->bufs[idx]) & POOL_BUF_F_DIRTY)) {
			pool_buf_drop(pool, idx);
			pool_stats_count(pf, b, POOL_C_GBUF_WRITE_IOS, 1);
		}
		pool_shard_unlock(pool, s);
	}
	return 0;
}

int pool_buf_write_end(struct pool_file *pf)
{
	struct pool_fslot *fs = pool_fslot(pf);
	uint32_t old = LOAD(&fs->wactive);

	if (file_check(pf))
		return -ESTALE; /* the slot was reused: its counts are not ours */
	__atomic_fetch_add(&fs->wseq, 1, __ATOMIC_SEQ_CST);
	while (old && !__atomic_compare_exchange_n(&fs->wactive, &old, old - 1, false,
						   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	return 0;
}

/* Shard lock held: trim or drop buffer @idx of a file now @size bytes long. */
static void truncate_buf(struct pool *pool, uint32_t idx, uint64_t size)
{
	struct pool_buf *b = &pool->bufs[idx];
	uint64_t start = b->bucket << pool->bshift;
	uint32_t seq;

	if (start < size && (pool_buf_flags(b) & POOL_BUF_F_DIRTY) && start + b->len < size) {
		/* I8: dirty bytes are not on SOURCE; the file grew past them with zeros */
		uint32_t len = size - start < pool->bsize ? (uint32_t)(size - start) : pool->bsize;

		seq = buf_begin(b);
		memset(pool_buf_data(pool, idx) + b->len, 0, len - b->len);
		STORE(&b->len, len);
		buf_end(b, seq);
	} else if (start >= size || (b->len < pool->bsize && start + b->len < size)) {
		pool_buf_drop(pool, idx); /* gone, or grown past what we hold */
		ADD(&pool->shards[idx / pool->per_shard].c[POOL_C_INVALIDATIONS], 1);
	} else if (start + b->len > size) {
		seq = buf_begin(b);
		STORE(&b->len, (uint32_t)(size - start));
		if (b->dirty_hi > b->len)
			b->dirty_hi = b->len;
		if (b->dirty_lo > b->dirty_hi)
			b->dirty_lo = b->dirty_hi;
		buf_end(b, seq);
	}
}

/* Shard lock held: truncate_buf(), unless the descriptor is damaged (len). */
static void truncate_or_drop(struct pool *pool, uint32_t idx, uint64_t size)
{
	if (pool->bufs[idx].len > pool->bsize)
		pool_buf_drop(pool, idx);
	else
		truncate_buf(pool, idx, size);
}

int pool_buf_truncate(struct pool_file *pf, uint64_t size)
{
	struct pool *pool = pf->pool;
	struct pool_fslot *fs = pool_fslot(pf);
	uint32_t epoch;
	int ret = file_check(pf);

	if (ret)
		return ret;
	if (size == 0 && (ret = pool_file_invalidate(pf)) != -EBUSY)
		return ret; /* O(1), unless dirty buffers must stay (I8) */
	__atomic_fetch_add(&fs->wseq, 1, __ATOMIC_SEQ_CST);
	epoch = pool_epoch_of(__atomic_load_n(&fs->residency, __ATOMIC_SEQ_CST));
	for (uint32_t s = 0; s < pool->nshards; s++) {
		uint32_t first = s * pool->per_shard;

		if ((ret = pool_shard_lock(pool, s)))
			return drop_all(pf, ret);
		for (uint32_t i = first; i < first + pool->per_shard; i++)
			if (pool->bufs[i].state == POOL_BUF_VALID &&
			    pool->bufs[i].file == pf->slot && pool->bufs[i].epoch == epoch)
				truncate_or_drop(pool, i, size);
		pool_shard_unlock(pool, s);
	}
	pool_dirty_end_clamp(pf, size);
	return 0;
}

/* For dirty.c: the buffer primitives above, under the names pool_i.h gives them. */
uint32_t pool_buf_begin(struct pool_buf *b)
{
	return buf_begin(b);
}

void pool_buf_end(struct pool_buf *b, uint32_t seq)
{
	buf_end(b, seq);
}

uint32_t pool_buf_lookup(struct pool *pool, uint32_t s, uint32_t file, uint32_t epoch,
			 uint64_t bucket)
{
	return lookup_or_repair(pool, s, file, epoch, bucket);
}

uint32_t pool_buf_victim(struct pool *pool, uint32_t s)
{
	return clock_victim(pool, s);
}

void pool_buf_install(struct pool *pool, uint32_t idx, struct pool_file *pf, uint32_t epoch,
		      uint64_t bucket, const void *data, size_t len, uint8_t flags)
{
	buf_install(pool, idx, pf, epoch, bucket, data, len, flags);
}

int pool_buf_file_check(struct pool_file *pf)
{
	return file_check(pf);
}

bool pool_buf_has(struct pool_file *pf, uint64_t bucket)
{
	struct pool *pool = pf->pool;
	uint32_t s = pool_shard_of(pool, pf->slot, bucket);
	uint32_t epoch, idx;

	if (pool_is_broken(pool))
		return false;
	epoch = pool_epoch_of(LOAD_ACQ(&pool_fslot(pf)->residency));
	idx = LOAD_ACQ(pool_chain_of(pool, pf->slot, bucket));
	/* a racy walk: a wrong answer costs one needless or one missing prefetch */
	for (uint32_t steps = 0; idx != POOL_NONE && steps < pool->per_shard; steps++) {
		if (!pool_buf_in_shard(pool, idx, s))
			return false;
		if (buf_matches(&pool->bufs[idx], pf->slot, epoch, bucket))
			return true;
		idx = LOAD(&pool->bufs[idx].next);
	}
	return false;
}
