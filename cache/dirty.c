// SPDX-License-Identifier: MIT
/*
 * dirty.c - deferred write in the pool (RMS "deferred write", I8 of
 * pool_layout.h): small writes change the cached bucket in place and mark it
 * dirty, so every mount attached to the pool reads the new bytes at once,
 * and the owner daemon writes each dirty bucket back to SOURCE as one I/O
 * later (flush_interval, fsync, close, truncate, unmount).
 *
 * Nothing here does I/O: the caller reads a bucket's old content when asked
 * (pool_dirty_defer returns 0) and writes what pool_dirty_copy() hands it. A dirty
 * buffer is cleaned only if it did not change while its bytes were on their
 * way to SOURCE (seq unchanged), so no write is ever lost to a race with
 * the flusher.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool_i.h"

/*
 * Shard lock held: count buffer @idx of @pf, found under @epoch, as about to
 * become dirty (I8). False if it must not: an epoch bump is under way, or
 * one (or a slot reuse) happened since the buffer was looked up, so the
 * buffer is no longer the file's and its dirty bytes would be lost.
 */
static bool dirty_take(struct pool_file *pf, uint32_t idx, uint32_t epoch)
{
	struct pool_fslot *fs = pool_fslot(pf);

	if (pool_buf_flags(&pf->pool->bufs[idx]) & POOL_BUF_F_DIRTY)
		return true; /* counted already, and the count holds the epoch */
	if (!pool_fslot_dirty_take(fs))
		return false;
	if (pool_epoch_of(__atomic_load_n(&fs->residency, __ATOMIC_SEQ_CST)) != epoch ||
	    __atomic_load_n(&fs->idgen, __ATOMIC_SEQ_CST) != pf->idgen) {
		pool_fslot_dirty_add(fs, -1);
		return false;
	}
	return true;
}

/* Shard lock held: patch @len bytes at @boff into buffer @idx and make it dirty. */
static void patch(struct pool_file *pf, uint32_t idx, size_t boff, const void *data, size_t len,
		  uint32_t owner)
{
	struct pool *pool = pf->pool;
	struct pool_buf *b = &pool->bufs[idx];
	uint8_t *d = pool_buf_data(pool, idx);
	uint32_t seq = pool_buf_begin(b), blen = b->len;

	if (boff > blen)
		memset(d + blen, 0, boff - blen); /* a hole inside the bucket reads as zeros */
	pool_copy(d + boff, data, len);
	if (boff + len > blen)
		STORE(&b->len, (uint32_t)(boff + len));
	if (pool_buf_flags(b) & POOL_BUF_F_DIRTY) {
		if (boff < b->dirty_lo)
			b->dirty_lo = (uint32_t)boff;
		if (boff + len > b->dirty_hi)
			b->dirty_hi = (uint32_t)(boff + len);
	} else {			 /* counted by the caller (dirty_take) */
		STORE(&b->owner, owner); /* owner and dirty_ns: read by lock-free scans */
		b->dirty_lo = (uint32_t)boff;
		b->dirty_hi = (uint32_t)(boff + len);
		STORE(&b->dirty_ns, pool_now_ns());
		/* what the buffer's dirty bytes are: appends, or bytes at an offset */
		if (pf->append)
			pool_buf_flags_set(b, POOL_BUF_F_APPEND);
		else
			pool_buf_flags_clear(b, POOL_BUF_F_APPEND);
	}
	/* DIRTY first: the lock-free scans never see the buffer without it */
	pool_buf_flags_set(b, POOL_BUF_F_DIRTY);
	pool_buf_flags_clear(b, POOL_BUF_F_PREFETCHED);
	pool_buf_end(b, seq);
}

void pool_file_set_exact(struct pool_file *pf)
{
	pf->exact = true;
}

void pool_file_set_append(struct pool_file *pf)
{
	pf->append = true;
}

/* Shard lock held: would deferring [@boff, +@len) into @b widen its dirty range over a gap? */
static bool leaves_gap(const struct pool_file *pf, const struct pool_buf *b, size_t boff,
		       size_t len)
{
	return pf->exact && (pool_buf_flags(b) & POOL_BUF_F_DIRTY) &&
	       (boff > b->dirty_hi || boff + len < b->dirty_lo);
}

int pool_dirty_defer(struct pool_file *pf, uint64_t bucket, size_t boff, const void *data,
		     size_t len, const void *base, size_t baselen, uint64_t wseq, uint32_t owner)
{
	struct pool *pool = pf->pool;
	struct pool_fslot *fs = pool_fslot(pf);
	uint32_t s = pool_shard_of(pool, pf->slot, bucket), idx, epoch;
	bool whole = boff == 0 && len == pool->bsize;
	int err, ret = pool_buf_file_check(pf);

	if (ret)
		return ret;
	if (boff >= pool->bsize || len > pool->bsize - boff || !len || baselen > pool->bsize)
		return -EINVAL;
	if ((err = pool_shard_lock(pool, s)))
		return err;
	epoch = pool_epoch_of(__atomic_load_n(&fs->residency, __ATOMIC_SEQ_CST));
	idx = pool_buf_lookup(pool, s, pf->slot, epoch, bucket);
	if (idx != POOL_NONE && !whole && !(pool_buf_flags(&pool->bufs[idx]) & POOL_BUF_F_DIRTY) &&
	    pool->bufs[idx].len < boff) {
		/*
		 * A clean copy that ends before the write starts shows an end of
		 * file that a write past it (here or in another mount) may have
		 * moved: patching would make the gap zeros. Read it anew. One
		 * that reaches the write (an append at its end, a record
		 * rewritten) is patched: re-reading it would cost a backend read
		 * per record to a program that fsyncs each one it appends.
		 */
		pool_buf_drop(pool, idx);
		idx = POOL_NONE;
	}
	if (idx != POOL_NONE && leaves_gap(pf, &pool->bufs[idx], boff, len)) {
		ret = -EXDEV; /* exact: write it through (after the dirty range) */
	} else if (idx != POOL_NONE && !dirty_take(pf, idx, epoch)) {
		ret = -EAGAIN; /* the file's buffers are being dropped: write through */
	} else if (idx != POOL_NONE) {
		ret = (pool_buf_flags(&pool->bufs[idx]) & POOL_BUF_F_DIRTY) &&
			      pool->bufs[idx].owner != owner
			  ? 2
			  : 1;
		patch(pf, idx, boff, data, len, owner);
	} else if (!base && !whole) {
		ret = 0; /* the caller reads the bucket's current bytes and comes back */
	} else if (base && __atomic_load_n(&fs->wseq, __ATOMIC_SEQ_CST) != wseq) {
		ret = -EAGAIN; /* another write moved the file since @base was read */
	} else if ((idx = pool_buf_victim(pool, s)) == POOL_NONE) {
		ret = -ENOSPC; /* the shard is all dirty or pinned: write through */
	} else {
		pool_buf_install(pool, idx, pf, epoch, bucket, base ? base : data,
				 base ? baselen : 0, 0);
		if (dirty_take(pf, idx, epoch)) {
			patch(pf, idx, boff, data, len, owner);
			ret = 1;
		} else {
			pool_buf_drop(pool, idx);
			ret = -EAGAIN;
		}
	}
	pool_shard_unlock(pool, s);
	if (ret == 1 || ret == 2) /* ours to write back: a lost pool must be reported */
		__atomic_store_n(&pool->our_dirty[pf->slot], 1, __ATOMIC_RELAXED);
	return ret;
}

static int cmp_dirty(const void *a, const void *b)
{
	const struct pool_dirty *x = a, *y = b;

	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* Is dirty buffer @b one that the flush of @owner, up to @before_ns, wants? */
static bool flush_wants(const struct pool_buf *b, uint32_t owner, uint64_t before_ns)
{
	return LOAD(&b->owner) == owner && LOAD(&b->dirty_ns) <= before_ns;
}

/*
 * The file's buckets below its deferred end, looked up one by one under
 * their shard locks: @seen counts the dirty buffers met, whoever owns them.
 */
static int list_by_bucket(struct pool_file *pf, uint32_t owner, uint64_t before_ns, uint32_t epoch,
			  uint64_t nb, struct pool_dirty *out, int max, uint32_t *seen)
{
	struct pool *pool = pf->pool;
	int n = 0, err;

	for (uint64_t bucket = 0; bucket < nb; bucket++) {
		uint32_t s = pool_shard_of(pool, pf->slot, bucket), idx;

		if ((err = pool_shard_lock(pool, s)))
			return err;
		idx = pool_buf_lookup(pool, s, pf->slot, epoch, bucket);
		if (idx != POOL_NONE && (pool_buf_flags(&pool->bufs[idx]) & POOL_BUF_F_DIRTY)) {
			(*seen)++;
			if (n < max && flush_wants(&pool->bufs[idx], owner, before_ns))
				out[n++] = (struct pool_dirty){ .bucket = bucket };
		}
		pool_shard_unlock(pool, s);
	}
	return n;
}

/*
 * Dirty buffers lie below the file's deferred end (fslot.dsize), so when
 * that range is small against the pool its buckets are looked up instead
 * of reading every descriptor: a close or fsync of a small file costs
 * O(its buckets), not O(pool) (populate with an fsync per record: 3.4x
 * slower on a 4 GiB pool than on 64 MiB before). The lookup is trusted
 * only if it met every dirty buffer the slot counts; if not (an end moved
 * by another mount meanwhile), the scan decides.
 */
int pool_dirty_list(struct pool_file *pf, uint32_t owner, uint64_t before_ns,
		    struct pool_dirty *out, int max)
{
	struct pool *pool = pf->pool;
	struct pool_fslot *fs = pool_fslot(pf);
	uint32_t epoch, ndirty;
	uint64_t end, nb;
	int n = 0, err = pool_buf_file_check(pf);

	if (err)
		return err;
	ndirty = pool_fslot_ndirty(fs);
	if (!ndirty) {
		__atomic_store_n(&pool->our_dirty[pf->slot], 0, __ATOMIC_RELAXED);
		return 0;
	}
	epoch = pool_epoch_of(LOAD_ACQ(&fs->residency));
	end = LOAD_ACQ(&fs->dsize);
	nb = (end + pool->bsize - 1) >> pool->bshift;
	if (end && nb <= pool->nbufs / 32) {
		uint32_t seen = 0;

		n = list_by_bucket(pf, owner, before_ns, epoch, nb, out, max, &seen);
		if (n < 0 || seen >= ndirty)
			return n;
		n = 0;
	}
	/* A racy scan: each candidate is checked again under its shard lock. */
	for (uint32_t i = 0; i < pool->nbufs && n < max; i++) {
		const struct pool_buf *b = &pool->bufs[i];

		if (!(pool_buf_flags(b) & POOL_BUF_F_DIRTY) || LOAD(&b->file) != pf->slot ||
		    LOAD(&b->epoch) != epoch || !flush_wants(b, owner, before_ns))
			continue;
		out[n++] = (struct pool_dirty){ .bucket = LOAD(&b->bucket) };
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_dirty);
	return n;
}

/* Shard lock held: the dirty buffer of @pf for @bucket owned by @owner, or POOL_NONE. */
static uint32_t find_dirty(struct pool_file *pf, uint32_t s, uint64_t bucket, uint32_t owner)
{
	struct pool *pool = pf->pool;
	uint32_t epoch = pool_epoch_of(LOAD_ACQ(&pool_fslot(pf)->residency));
	uint32_t idx = pool_buf_lookup(pool, s, pf->slot, epoch, bucket);

	if (idx == POOL_NONE || !(pool_buf_flags(&pool->bufs[idx]) & POOL_BUF_F_DIRTY) ||
	    pool->bufs[idx].owner != owner)
		return POOL_NONE;
	return idx;
}

ssize_t pool_dirty_copy(struct pool_file *pf, struct pool_dirty *d, uint32_t owner, void *buf)
{
	struct pool *pool = pf->pool;
	uint32_t s = pool_shard_of(pool, pf->slot, d->bucket), idx;
	ssize_t ret = 0;
	int err = pool_buf_file_check(pf);

	if (err)
		return err;
	if ((err = pool_shard_lock(pool, s)))
		return err;
	idx = find_dirty(pf, s, d->bucket, owner);
	if (idx != POOL_NONE) {
		struct pool_buf *b = &pool->bufs[idx];
		uint32_t hi = b->dirty_hi < b->len ? b->dirty_hi : b->len;
		uint32_t lo = b->dirty_lo < hi ? b->dirty_lo : hi;

		d->lo = lo;
		d->hi = hi;
		d->seq = b->seq;
		d->append = (pool_buf_flags(b) & POOL_BUF_F_APPEND) != 0;
		memcpy((uint8_t *)buf + lo, pool_buf_data(pool, idx) + lo, hi - lo);
		ret = hi - lo;
		if (!ret) { /* truncated away: nothing left to write */
			uint32_t seq = pool_buf_begin(b);

			pool_buf_flags_clear(b, POOL_BUF_F_DIRTY);
			pool_fslot_dirty_add(pool_fslot(pf), -1);
			pool_buf_end(b, seq);
		}
	}
	pool_shard_unlock(pool, s);
	if (pool_is_broken(pool))
		return -EIO; /* the copy may hold the zeros that replaced the segment */
	return ret;
}

int pool_dirty_clean(struct pool_file *pf, const struct pool_dirty *d, uint32_t owner)
{
	struct pool *pool = pf->pool;
	uint32_t s = pool_shard_of(pool, pf->slot, d->bucket), idx;
	int ret = 0, err = pool_buf_file_check(pf);

	if (err)
		return err;
	if ((err = pool_shard_lock(pool, s)))
		return err;
	idx = find_dirty(pf, s, d->bucket, owner);
	if (idx != POOL_NONE && pool->bufs[idx].seq == d->seq) {
		struct pool_buf *b = &pool->bufs[idx];
		uint32_t seq = pool_buf_begin(b);

		pool_buf_flags_clear(b, POOL_BUF_F_DIRTY);
		pool_fslot_dirty_add(pool_fslot(pf), -1);
		pool_buf_end(b, seq);
		ret = 1;
	}
	pool_shard_unlock(pool, s);
	return ret;
}

int pool_dirty_sent(struct pool_file *pf, uint64_t lo, uint64_t upto, uint32_t owner)
{
	struct pool *pool = pf->pool;
	int n = 0, err = pool_buf_file_check(pf);

	if (err)
		return err;
	for (uint64_t b = lo >> pool->bshift; upto > lo && b <= (upto - 1) >> pool->bshift; b++) {
		uint32_t s = pool_shard_of(pool, pf->slot, b), idx;
		uint64_t in = upto - (b << pool->bshift);
		uint32_t cut = in >= pool->bsize ? pool->bsize : (uint32_t)in;

		if ((err = pool_shard_lock(pool, s)))
			return err;
		idx = find_dirty(pf, s, b, owner);
		if (idx != POOL_NONE) {
			struct pool_buf *bf = &pool->bufs[idx];
			uint32_t seq = pool_buf_begin(bf);

			if (cut >= bf->dirty_hi) { /* all of it went */
				pool_buf_flags_clear(bf, POOL_BUF_F_DIRTY);
				pool_fslot_dirty_add(pool_fslot(pf), -1);
				n++;
			} else if (cut > bf->dirty_lo) {
				bf->dirty_lo = cut;
			}
			pool_buf_end(bf, seq);
		}
		pool_shard_unlock(pool, s);
	}
	return n;
}

uint32_t pool_dirty_count(struct pool_file *pf)
{
	return pool_buf_file_check(pf) ? 0 : pool_fslot_ndirty(pool_fslot(pf));
}

/* Drop the dirty buffers of dead owners: of slot @only, or of every slot if POOL_NONE. */
int pool_dirty_reap_slot(struct pool *pool, uint32_t only)
{
	uint32_t me = (uint32_t)getpid(), last_dead = 0, last_live = me;
	int reaped = 0, err;

	if (pool->readonly)
		return -EROFS;
	if (pool_is_broken(pool))
		return -EIO;
	for (uint32_t i = 0; i < pool->nbufs; i++) {
		struct pool_buf *b = &pool->bufs[i];
		uint32_t owner = LOAD(&b->owner), s = i / pool->per_shard;

		if (!(pool_buf_flags(b) & POOL_BUF_F_DIRTY) || owner == last_live ||
		    (only != POOL_NONE && LOAD(&b->file) != only))
			continue;
		if (owner != last_dead && !pool_pid_gone(owner)) {
			last_live = owner;
			continue;
		}
		last_dead = owner;
		if ((err = pool_shard_lock(pool, s)))
			return err;
		if (b->state == POOL_BUF_VALID && (pool_buf_flags(b) & POOL_BUF_F_DIRTY) &&
		    b->owner == owner && (only == POOL_NONE || b->file == only)) {
			uint32_t file = b->file;
			uint64_t bucket = b->bucket;

			pool_buf_drop(pool, i);
			pool_stats_count_fslot(pool, file, bucket, POOL_C_DIRTY_LOST, 1);
			if (file < pool->nfiles && !pool_fslot_ndirty(&pool->files[file]))
				STORE(&pool->files[file].dsize, 0); /* SOURCE's size again */
			reaped++;
		}
		pool_shard_unlock(pool, s);
	}
	return reaped;
}

int pool_dirty_reap(struct pool *pool)
{
	return pool_dirty_reap_slot(pool, POOL_NONE);
}

void pool_dirty_end_set(struct pool_file *pf, uint64_t end, int64_t mtime_ns)
{
	struct pool_fslot *fs = pool_fslot(pf);
	uint64_t cur;

	if (pool_buf_file_check(pf))
		return;
	STORE(&fs->dmtime_ns, mtime_ns);
	cur = LOAD(&fs->dsize);
	while (end > cur && !__atomic_compare_exchange_n(&fs->dsize, &cur, end, false,
							 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

void pool_dirty_end_clamp(struct pool_file *pf, uint64_t size)
{
	struct pool_fslot *fs = pool_fslot(pf);
	uint64_t cur;

	if (pool_buf_file_check(pf))
		return;
	if (!pool_fslot_ndirty(fs))
		size = 0; /* nothing deferred any more: SOURCE's size is the truth */
	cur = LOAD(&fs->dsize);
	while (cur > size && !__atomic_compare_exchange_n(&fs->dsize, &cur, size, false,
							  __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

bool pool_dirty_end_peek(struct pool *pool, uint64_t dev, uint64_t ino, uint64_t *end,
			 int64_t *mtime_ns)
{
	uint32_t f = pool_files_peek(pool, dev, ino);
	const struct pool_fslot *fs;
	uint32_t gen;

	if (pool_is_broken(pool) || f == POOL_NONE)
		return false;
	fs = &pool->files[f];
	gen = LOAD_ACQ(&fs->idgen);
	*end = LOAD_ACQ(&fs->dsize);
	*mtime_ns = LOAD(&fs->dmtime_ns);
	POOL_FENCE(__ATOMIC_ACQUIRE);
	/* the slot must still be that file (I6) */
	/* an end left behind by a flush that emptied the file's dirty buffers is not one */
	return !(gen & 1) && LOAD(&fs->idgen) == gen && LOAD(&fs->dev) == dev &&
	       LOAD(&fs->ino) == ino && *end && pool_fslot_ndirty(fs);
}

int pool_dirty_discard(struct pool_file *pf, uint32_t owner)
{
	struct pool *pool = pf->pool;
	struct pool_dirty d;
	int n = 0, err;

	while (pool_dirty_list(pf, owner, UINT64_MAX, &d, 1) == 1) {
		uint32_t s = pool_shard_of(pool, pf->slot, d.bucket), idx;

		if ((err = pool_shard_lock(pool, s)))
			return err;
		idx = find_dirty(pf, s, d.bucket, owner);
		if (idx != POOL_NONE) {
			pool_buf_drop(pool, idx);
			pool_stats_count(pf, d.bucket, POOL_C_DIRTY_LOST, 1);
			n++;
		}
		pool_shard_unlock(pool, s);
		if (idx == POOL_NONE)
			break;
	}
	pool_dirty_end_clamp(pf, UINT64_MAX);
	return n;
}

int pool_dirty_bucket_grown(struct pool_file *pf, uint64_t bucket, size_t len)
{
	struct pool *pool = pf->pool;
	uint32_t s = pool_shard_of(pool, pf->slot, bucket), idx, epoch;
	int ret = pool_buf_file_check(pf);

	if (ret)
		return ret;
	if (len > pool->bsize)
		len = pool->bsize;
	if ((ret = pool_shard_lock(pool, s)))
		return ret == -EIO ? ret : pool_fslot_bump_clean(pool_fslot(pf)) ?: 1;
	epoch = pool_epoch_of(LOAD_ACQ(&pool_fslot(pf)->residency));
	idx = pool_buf_lookup(pool, s, pf->slot, epoch, bucket);
	if (idx != POOL_NONE && pool->bufs[idx].len < len) {
		struct pool_buf *b = &pool->bufs[idx];

		if (pool_buf_flags(b) & POOL_BUF_F_DIRTY) { /* SOURCE has a hole there: zeros */
			uint32_t seq = pool_buf_begin(b);

			memset(pool_buf_data(pool, idx) + b->len, 0, len - b->len);
			STORE(&b->len, (uint32_t)len);
			pool_buf_end(b, seq);
		} else {
			pool_buf_drop(pool, idx); /* SOURCE has more: read it again */
		}
		ret = 1;
	}
	pool_shard_unlock(pool, s);
	return ret;
}

void pool_dirty_mark(struct pool_file *pf, uint32_t flag)
{
	if (!pool_buf_file_check(pf))
		__atomic_fetch_or(&pool_fslot(pf)->flags, flag, __ATOMIC_RELAXED);
}

bool pool_dirty_lost(struct pool_file *pf, bool clear)
{
	uint8_t *mine = &pf->pool->our_dirty[pf->slot];

	if (!pool_is_broken(pf->pool))
		return false;
	return clear ? __atomic_exchange_n(mine, 0, __ATOMIC_RELAXED)
		     : __atomic_load_n(mine, __ATOMIC_RELAXED);
}
