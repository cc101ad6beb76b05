// SPDX-License-Identifier: MIT
/*
 * files.c - the pool's file table: which backing file each slot caches, its
 * quota, epoch and coherence sequence, and the handles open on it.
 *
 * A slot is keyed by (st_dev, st_ino) and outlives its handles, so data
 * cached through one open (or one daemon) serves the next. When the table is
 * full the least recently used slot is reused, preferring slots nobody has
 * open and nobody pinned. Reuse and invalidation are O(1): bumping the slot's
 * epoch makes all its buffers unreachable (I4) and the clock recycles them.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "pool_i.h"
#include "shmlock.h"

struct pool_fslot *pool_fslot(struct pool_file *pf)
{
	return &pf->pool->files[pf->slot];
}

uint64_t pool_file_validator(const struct pool_file_id *id)
{
	uint64_t v[3] = { id->size, (uint64_t)id->mtime_ns, (uint64_t)id->ctime_ns };
	uint64_t h = 0xcbf29ce484222325ULL;
	const uint8_t *b = (const uint8_t *)v;

	for (size_t i = 0; i < sizeof(v); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Add @delta to the reachable-buffer count of epoch @epoch, if still current (I4). */
void pool_fslot_resident_add(struct pool_fslot *fs, uint32_t epoch, int delta)
{
	uint64_t old = LOAD(&fs->residency), new;

	do {
		if (pool_epoch_of(old) != epoch || (delta < 0 && (uint32_t)old == 0))
			return;
		new = old + (uint64_t)(int64_t)delta;
	} while (!__atomic_compare_exchange_n(&fs->residency, &old, new, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* Is process @pid gone? (A pid reused since only delays the reaping.) */
bool pool_pid_gone(uint32_t pid)
{
	return pid == 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
}

/* I8: one dirty buffer more or fewer; the bumper half is left alone. */
void pool_fslot_dirty_add(struct pool_fslot *fs, int delta)
{
	uint64_t old = LOAD(&fs->dirty), new;

	do {
		uint32_t n = (uint32_t)old;

		if (delta < 0 && n == 0)
			return;
		new = (old & ~0xffffffffULL) | (uint32_t)(n + (uint32_t)delta);
	} while (!__atomic_compare_exchange_n(&fs->dirty, &old, new, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
}

/*
 * I8: count a buffer about to become dirty, unless an epoch bump is under
 * way (the caller then writes through). The caller checks afterwards that
 * the epoch and idgen it found the buffer under did not move meanwhile.
 */
bool pool_fslot_dirty_take(struct pool_fslot *fs)
{
	uint64_t old = LOAD(&fs->dirty);

	do {
		if (old >> 32) {
			/* A bumper that died holding the word: finish its bump. */
			if (pool_pid_gone((uint32_t)(old >> 32)))
				pool_fslot_bump_clean(fs);
			return false;
		}
	} while (!__atomic_compare_exchange_n(&fs->dirty, &old, old + 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	return true;
}

/* Make every cached bucket of the slot stale: wseq first (I5), then epoch (I4). */
static void pool_fslot_bump_epoch(struct pool_fslot *fs)
{
	uint64_t old, new;

	__atomic_fetch_add(&fs->wseq, 1, __ATOMIC_SEQ_CST);
	old = LOAD(&fs->residency);
	do
		new = (uint64_t)(pool_epoch_of(old) + 1) << 32;
	while (!__atomic_compare_exchange_n(&fs->residency, &old, new, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED));
}

/*
 * I8: bump the epoch unless the slot has dirty buffers (-EBUSY). The dirty
 * word is claimed from "no dirty buffer, nobody bumping" to our pid first,
 * so no buffer can become dirty under the old epoch while we bump. Another
 * bump under way is waited for (its epoch may predate what we must drop),
 * or finished for it if its process is gone, for at most SHM_LOCK_WAIT_NS
 * (a bumper that is stopped is alive): -ETIMEDOUT after that.
 */
int pool_fslot_bump_clean(struct pool_fslot *fs)
{
	uint64_t me = (uint64_t)(uint32_t)getpid() << 32;
	uint64_t until = 0;

	for (;;) {
		uint64_t old = 0;

		if (__atomic_compare_exchange_n(&fs->dirty, &old, me, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			break;
		if ((uint32_t)old)
			return -EBUSY;
		if (pool_pid_gone((uint32_t)(old >> 32)) &&
		    __atomic_compare_exchange_n(&fs->dirty, &old, me, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			break;
		if (!until)
			until = mono_ns() + (uint64_t)SHM_LOCK_WAIT_NS;
		else if (mono_ns() > until)
			return -ETIMEDOUT;
		sched_yield();
	}
	pool_fslot_bump_epoch(fs);
	__atomic_store_n(&fs->dirty, 0, __ATOMIC_SEQ_CST);
	return 0;
}

static uint32_t *fchain_of(struct pool *pool, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ULL) ^ (dev * 0xc2b2ae3d27d4eb4fULL);

	return &pool->fchains[(h ^ (h >> 31)) & (pool->nfchains - 1)];
}

/* files_lock held: the slot of (dev, ino), or POOL_NONE. -EUCLEAN if a chain is bad. */
static int find_slot(struct pool *pool, uint64_t dev, uint64_t ino, uint32_t *slot)
{
	uint32_t f = *fchain_of(pool, dev, ino);

	for (uint32_t steps = 0; f != POOL_NONE; steps++) {
		if (f >= pool->nfiles || steps >= pool->nfiles)
			return -EUCLEAN;
		if (pool->files[f].state == POOL_FSLOT_USED && pool->files[f].dev == dev &&
		    pool->files[f].ino == ino)
			break;
		f = pool->files[f].fnext;
	}
	*slot = f;
	return 0;
}

/*
 * files_lock held: file chains are about to change (fchain_seq odd), or are
 * consistent again (even). A holder that died with it odd leaves it odd until
 * pool_files_repair, whose own end makes it even; readers only retry meanwhile.
 */
static void fchains_begin(struct pool *pool)
{
	STORE(&pool->hdr->fchain_seq, pool->hdr->fchain_seq | 1);
	POOL_FENCE(__ATOMIC_RELEASE); /* the chain stores stay after it */
}

static void fchains_end(struct pool *pool)
{
	STORE_REL(&pool->hdr->fchain_seq, (pool->hdr->fchain_seq | 1) + 1);
}

/* Lock-free: where (dev, ino)'s chain leads to it, or POOL_NONE. */
static uint32_t fchain_walk(struct pool *pool, uint64_t dev, uint64_t ino)
{
	uint32_t f = LOAD_ACQ(fchain_of(pool, dev, ino));

	for (uint32_t steps = 0; f != POOL_NONE; steps++) {
		if (f >= pool->nfiles || steps >= pool->nfiles)
			return POOL_NONE;
		if (LOAD(&pool->files[f].dev) == dev && LOAD(&pool->files[f].ino) == ino)
			return f;
		f = LOAD(&pool->files[f].fnext);
	}
	return POOL_NONE;
}

/*
 * The slot that was (dev, ino) a moment ago, or POOL_NONE; the caller
 * checks idgen after. Lock-free first: a hit needs no check (the slot says
 * who it is), a miss counts only if no chain changed during the walk (a
 * walker standing on a slot that moved to another chain falls off this
 * one). After FCHAIN_TRIES walks that chain changes kept spoiling, the
 * answer is found under files_lock, as a shard's reader does (I1); a
 * holder stopped mid-change bounds that wait, and then it is "not found".
 */
#define FCHAIN_TRIES 8

uint32_t pool_files_peek(struct pool *pool, uint64_t dev, uint64_t ino)
{
	uint32_t f;

	for (int i = 0; i < FCHAIN_TRIES; i++) {
		uint32_t seq = LOAD_ACQ(&pool->hdr->fchain_seq);

		if (seq & 1)
			continue;
		f = fchain_walk(pool, dev, ino);
		if (f != POOL_NONE)
			return f;
		POOL_FENCE(__ATOMIC_ACQUIRE); /* the walk's loads before the check */
		if (LOAD(&pool->hdr->fchain_seq) == seq)
			return POOL_NONE;
	}
	if (pool->readonly || pool_files_lock(pool))
		return POOL_NONE;
	if (find_slot(pool, dev, ino, &f))
		f = POOL_NONE;
	pool_files_unlock(pool);
	return f;
}

static void fchain_unlink(struct pool *pool, uint32_t slot)
{
	struct pool_fslot *fs = &pool->files[slot];
	uint32_t *pp = fchain_of(pool, fs->dev, fs->ino);

	for (uint32_t steps = 0; *pp != POOL_NONE && *pp < pool->nfiles && steps < pool->nfiles;
	     steps++) {
		if (*pp == slot) {
			STORE_REL(pp, fs->fnext); /* pool_files_peek reads chains lock-free */
			return;
		}
		pp = &pool->files[*pp].fnext;
	}
}

/*
 * files_lock held, after a holder died or a chain was found corrupt: finish
 * or undo half-done identity changes (I6), rebuild the chains, recompute the
 * totals. Uses nothing but the slots themselves.
 */
void pool_files_repair(struct pool *pool)
{
	struct pool_header *h = pool->hdr;

	fchains_begin(pool);
	for (uint32_t c = 0; c < pool->nfchains; c++)
		STORE(&pool->fchains[c], POOL_NONE); /* atomic: pool_files_peek may be walking */
	/* pool_info() reads these two lock-free */
	STORE(&h->reserved, 0);
	STORE(&h->files_used, 0);
	for (uint32_t f = 0; f < pool->nfiles; f++) {
		struct pool_fslot *fs = &pool->files[f];
		uint32_t *chain;

		if (LOAD(&fs->idgen) & 1) {
			STORE(&fs->state, POOL_FSLOT_FREE);
			pool_fslot_bump_epoch(fs);
			STORE_REL(&fs->idgen, fs->idgen + 1);
		}
		if (fs->state != POOL_FSLOT_USED) {
			STORE(&fs->state, POOL_FSLOT_FREE);
			continue;
		}
		if (fs->reserve > pool->nbufs - pool->nbufs / 8)
			STORE(&fs->reserve, 0);
		STORE(&h->reserved, h->reserved + fs->reserve);
		STORE(&h->files_used, h->files_used + 1);
		chain = fchain_of(pool, fs->dev, fs->ino);
		STORE(&fs->fnext, *chain);
		STORE_REL(chain, f);
	}
	fchains_end(pool);
	if (h->reserved > pool->nbufs - pool->nbufs / 8)
		for (uint32_t f = 0; f < pool->nfiles; f++)
			STORE(&pool->files[f].reserve, 0);
}

/* files_lock held: a free slot, else the least recently used idle one. */
static uint32_t pick_slot(struct pool *pool)
{
	uint32_t best = POOL_NONE, rank, best_rank = 4;
	uint64_t best_use = UINT64_MAX;

	for (uint32_t i = 0; i < pool->nfiles; i++) {
		uint32_t f = (pool->hdr->file_hint + i) % pool->nfiles;
		const struct pool_fslot *fs = &pool->files[f];

		if (fs->state != POOL_FSLOT_USED) {
			pool->hdr->file_hint = f + 1;
			return f;
		}
		if (pool_fslot_ndirty(fs))
			continue; /* I8: holds bytes SOURCE does not have */
		/* 0: closed, unpinned; 1: closed, pinned; 2: open (leaked by a dead process?) */
		rank = fs->opens ? 2 : fs->reserve ? 1 : 0;
		if (rank < best_rank || (rank == best_rank && fs->last_use < best_use)) {
			best = f;
			best_rank = rank;
			best_use = fs->last_use;
		}
	}
	return best;
}

static void set_path(struct pool_fslot *fs, const char *path)
{
	size_t n = path ? strlen(path) : 0;

	/* pool_copy: the monitor may be reading it (under the idgen seqlock). */
	if (n < POOL_PATH_LEN) {
		pool_copy(fs->path, path ? path : "", n + 1);
		return;
	}
	/* Keep the tail: it names the file. */
	pool_copy(fs->path, "...", 3);
	pool_copy(fs->path + 3, path + n - (POOL_PATH_LEN - 4), POOL_PATH_LEN - 4);
	STORE(&fs->path[POOL_PATH_LEN - 1], '\0');
}

/* files_lock held: record @id's file handle (I9), or none if it has none that fits. */
static void set_handle(struct pool_fslot *fs, const struct pool_file_id *id)
{
	bool keep = id->fh && id->fh_bytes && id->fh_bytes <= POOL_FH_MAX;

	fs->fh_bytes = 0;
	if (!keep)
		return;
	fs->fh_type = id->fh_type;
	memcpy(fs->fh, id->fh, id->fh_bytes);
	fs->fh_bytes = id->fh_bytes;
}

/*
 * files_lock held: is @id the file the slot's handle names? 1 yes, 0 no (a
 * reused inode number: another generation), -1 unknown (a handle missing).
 */
static int handle_match(const struct pool_fslot *fs, const struct pool_file_id *id)
{
	uint32_t n = fs->fh_bytes;

	if (!n || n > POOL_FH_MAX || !id->fh || !id->fh_bytes || id->fh_bytes > POOL_FH_MAX)
		return -1;
	return n == id->fh_bytes && fs->fh_type == id->fh_type && !memcmp(fs->fh, id->fh, n);
}

/*
 * files_lock held: give slot @f to the file @id (I6: idgen odd meanwhile).
 * False if the slot got a dirty buffer since it was picked (I8: a handle of
 * its old file deferred a write): the caller leaves it be.
 */
static bool claim_slot(struct pool *pool, uint32_t f, const struct pool_file_id *id,
		       const char *path)
{
	struct pool_fslot *fs = &pool->files[f];
	uint32_t *chain;

	/* seq_cst: a deferral that took its count before this store fails the
	 * bump below; one after it sees idgen move and gives its count back */
	__atomic_store_n(&fs->idgen, fs->idgen | 1, __ATOMIC_SEQ_CST);
	POOL_FENCE(__ATOMIC_RELEASE); /* the identity stores below stay after it (I6) */
	if (fs->state != POOL_FSLOT_USED) {
		pool_fslot_bump_epoch(fs); /* nobody's: no count to keep */
		__atomic_store_n(&fs->dirty, 0, __ATOMIC_SEQ_CST);
	} else if (pool_fslot_bump_clean(fs)) {
		STORE_REL(&fs->idgen, fs->idgen & ~1U); /* nothing changed: same generation */
		return false;
	}
	fchains_begin(pool); /* until the slot is on its new chain */
	if (fs->state == POOL_FSLOT_USED) {
		fchain_unlink(pool, f);
		STORE(&pool->hdr->reserved, pool->hdr->reserved - fs->reserve);
		STORE(&pool->hdr->files_used, pool->hdr->files_used - 1);
	}
	STORE(&fs->dev, id->dev);
	STORE(&fs->ino, id->ino);
	STORE(&fs->validator, pool_file_validator(id)); /* pool_recover_file reads it lock-free */
	STORE(&fs->opens, 0);
	STORE(&fs->quota, 0);
	STORE(&fs->flags, 0);
	STORE(&fs->dsize, 0);
	STORE(&fs->reserve, 0);
	for (int c = 0; c < POOL_C_FILE_MAX; c++)
		STORE(&fs->c[c], 0);
	STORE(&fs->wactive, 0);
	set_handle(fs, id);
	set_path(fs, path);
	STORE(&fs->state, POOL_FSLOT_USED);
	STORE(&pool->hdr->files_used, pool->hdr->files_used + 1);
	chain = fchain_of(pool, id->dev, id->ino);
	STORE(&fs->fnext, *chain);
	STORE_REL(chain, f); /* after the slot's identity: pool_files_peek reads it lock-free */
	fchains_end(pool);
	STORE_REL(&fs->idgen, fs->idgen + 1);
	return true;
}

/* Buffers @quota asks to reserve for a file of @size bytes. */
static uint32_t quota_want(const struct pool *pool, uint32_t quota, uint64_t size)
{
	uint64_t want = quota;

	if (quota == POOL_QUOTA_ALL)
		want = (size + pool->bsize - 1) >> pool->bshift;
	return want > pool->nbufs ? pool->nbufs : (uint32_t)want;
}

/* files_lock held: set slot @f's quota, clamped so 1/8 of the pool stays unreserved. */
static uint32_t apply_quota(struct pool *pool, uint32_t f, uint32_t quota, uint64_t size)
{
	struct pool_fslot *fs = &pool->files[f];
	uint32_t cap = pool->nbufs - pool->nbufs / 8;
	uint32_t others = pool->hdr->reserved - fs->reserve;
	uint32_t want = quota_want(pool, quota, size);

	if (others >= cap)
		want = 0;
	else if (want > cap - others)
		want = cap - others;
	STORE(&fs->quota, quota);
	STORE(&fs->reserve, want);
	STORE(&pool->hdr->reserved, others + want);
	return want;
}

/*
 * files_lock held: slot @f is (dev, ino) of @id; drop its buffers if the file
 * changed or is another one with the same inode number (its handle differs).
 */
static int revalidate_locked(struct pool *pool, uint32_t f, const struct pool_file_id *id)
{
	struct pool_fslot *fs = &pool->files[f];
	int same = handle_match(fs, id), ret;

	if (same == 1 && fs->validator == pool_file_validator(id))
		return 0;
	if (same == -1 && fs->validator == pool_file_validator(id)) {
		set_handle(fs, id);
		return 0;
	}
	/* The backing file changed, unless the change is dirty data that is not
	 * on SOURCE yet (I8): those buffers are newer than SOURCE. A dead
	 * daemon's are kept only for the very file they were written to (same
	 * handle, I9: recovered later); another one, or one we cannot tell,
	 * may have the dead file's inode number and must not see them. */
	ret = pool_fslot_bump_clean(fs);
	if (ret == -EBUSY && same != 1 && pool_dirty_reap_slot(pool, f) > 0)
		ret = pool_fslot_bump_clean(fs);
	if (ret && ret != -EBUSY)
		return ret; /* the old buffers are still reachable: do not use them */
	STORE(&fs->validator, pool_file_validator(id));
	if (same != 1)
		set_handle(fs, id);
	return 0;
}

/* files_lock held: find or claim the slot for @id, and open it. */
static int get_locked(struct pool *pool, const struct pool_file_id *id, const char *path,
		      uint32_t quota, uint32_t *slot)
{
	uint32_t f;
	int ret = find_slot(pool, id->dev, id->ino, &f);

	if (ret == -EUCLEAN) {
		pool_files_repair(pool);
		ret = find_slot(pool, id->dev, id->ino, &f);
	}
	if (ret)
		return ret;
	if (f == POOL_NONE) {
		f = pick_slot(pool);
		if (f == POOL_NONE || !claim_slot(pool, f, id, path))
			return -ENOSPC;
	} else {
		ret = revalidate_locked(pool, f, id);
		if (ret)
			return ret;
	}
	if (quota && quota_want(pool, quota, id->size) > pool->files[f].reserve)
		apply_quota(pool, f, quota, id->size);
	STORE(&pool->files[f].opens, pool->files[f].opens + 1);
	pool->files[f].last_use = ++pool->hdr->tick;
	*slot = f;
	return 0;
}

int pool_file_get(struct pool *pool, const struct pool_file_id *id, const char *path,
		  uint32_t quota, struct pool_file **out)
{
	struct pool_file *pf;
	int ret;

	if (pool->readonly)
		return -EROFS;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	ret = pool_files_lock(pool);
	if (!ret) {
		ret = get_locked(pool, id, path, quota, &pf->slot);
		pf->idgen = pool->files[pf->slot < pool->nfiles ? pf->slot : 0].idgen;
		pool_files_unlock(pool);
	}
	if (ret) {
		free(pf);
		return ret;
	}
	pf->pool = pool;
	*out = pf;
	return 0;
}

void pool_file_put(struct pool_file *pf)
{
	struct pool *pool;
	struct pool_fslot *fs;

	if (!pf)
		return;
	pool = pf->pool;
	fs = pool_fslot(pf);
	if (!pool_files_lock(pool)) {
		if (fs->idgen == pf->idgen && fs->opens > 0) {
			STORE(&fs->opens, fs->opens - 1);
			fs->last_use = ++pool->hdr->tick;
		}
		pool_files_unlock(pool);
	}
	free(pf);
}

int pool_file_set_quota(struct pool_file *pf, uint32_t quota)
{
	struct pool *pool = pf->pool;
	struct pool_fslot *fs = pool_fslot(pf);
	int ret = pool_files_lock(pool);

	if (ret)
		return ret;
	if (fs->idgen != pf->idgen)
		ret = -ESTALE;
	else
		ret = (int)apply_quota(
		    pool, pf->slot, quota,
		    quota == POOL_QUOTA_ALL ? (uint64_t)pool->nbufs << pool->bshift : 0);
	pool_files_unlock(pool);
	return ret;
}

int pool_file_revalidate(struct pool_file *pf, const struct pool_file_id *id)
{
	struct pool *pool = pf->pool;
	struct pool_fslot *fs = pool_fslot(pf);
	int ret = pool_files_lock(pool);

	if (ret)
		return ret;
	if (fs->idgen != pf->idgen)
		ret = -ESTALE;
	else
		STORE(&fs->validator, pool_file_validator(id));
	pool_files_unlock(pool);
	return ret;
}

int pool_file_invalidate(struct pool_file *pf)
{
	struct pool_fslot *fs = pool_fslot(pf);
	uint64_t resident;
	int ret;

	if (pool_is_broken(pf->pool))
		return -EIO;
	resident = LOAD(&fs->residency);
	if (LOAD_ACQ(&fs->idgen) != pf->idgen)
		return -ESTALE;
	ret = pool_fslot_bump_clean(fs);
	if (ret)
		return ret; /* -EBUSY (I8: flush first) or -ETIMEDOUT */
	pool_stats_count(pf, 0, POOL_C_INVALIDATIONS, (uint32_t)resident);
	return 0;
}

int pool_file_ticket_get(struct pool_file *pf, struct pool_ticket *t)
{
	struct pool_fslot *fs = pool_fslot(pf);

	if (pool_is_broken(pf->pool))
		return -EIO;
	if (LOAD_ACQ(&fs->idgen) != pf->idgen)
		return -ESTALE;
	/* Epoch before wseq: a bump in between leaves an old epoch, which is harmless. */
	t->epoch = pool_epoch_of(__atomic_load_n(&fs->residency, __ATOMIC_SEQ_CST));
	t->wseq = __atomic_load_n(&fs->wseq, __ATOMIC_SEQ_CST);
	t->busy = pool_buf_write_busy(fs);
	return 0;
}

bool pool_file_ticket_current(struct pool_file *pf, const struct pool_ticket *t)
{
	struct pool_fslot *fs = pool_fslot(pf);

	if (t->busy || pool_is_broken(pf->pool) || LOAD_ACQ(&fs->idgen) != pf->idgen)
		return false;
	/* I5 in reverse order of pool_file_ticket_get: wseq first, then epoch */
	return __atomic_load_n(&fs->wseq, __ATOMIC_SEQ_CST) == t->wseq &&
	       pool_epoch_of(__atomic_load_n(&fs->residency, __ATOMIC_SEQ_CST)) == t->epoch &&
	       !pool_buf_write_busy(fs);
}

int pool_file_dup(struct pool_file *pf, struct pool_file **out)
{
	struct pool *pool = pf->pool;
	struct pool_file *dup = calloc(1, sizeof(*dup));
	int ret;

	if (!dup)
		return -ENOMEM;
	ret = pool_files_lock(pool);
	if (!ret) {
		struct pool_fslot *fs = pool_fslot(pf);

		if (fs->idgen != pf->idgen) {
			ret = -ESTALE;
		} else {
			STORE(&fs->opens, fs->opens + 1);
			*dup = *pf;
		}
		pool_files_unlock(pool);
	}
	if (ret) {
		free(dup);
		return ret;
	}
	*out = dup;
	return 0;
}
