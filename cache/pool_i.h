/* SPDX-License-Identifier: MIT */
/*
 * pool_i.h - internals shared by the pool's files: the process-local handle
 * (geometry copied out of shared memory once, after validation, so that no
 * bound ever comes from memory another process can scribble on), locking
 * with crash recovery, hashing and the seqlock copy helpers.
 *
 *   pool.c    create / attach / validate / detach, the trust check
 *   seghdr.c  a segment's header read without attaching (the tools)
 *   shard.c   shard and files locks, recovery, recount
 *   files.c   the file table: get / put / quota / invalidate
 *   buf.c     read / fill / write update / truncate, the clock
 *   dirty.c   deferred write: dirty buffers, flush, reaping (I8)
 *   stats.c   counters, slot snapshots (the one idgen seqlock reader)
 *   guard.c   SIGBUS from a truncated segment: detach instead of dying
 */
#ifndef ACCELFS_CACHE_POOL_I_H
#define ACCELFS_CACHE_POOL_I_H

#include <string.h>

#include "pool.h"

#define POOL_OWN_STRIPES 8
#define POOL_OWN_WORDS 32 /* >= POOL_C_POOL_MAX: 256 bytes a stripe */

struct pool {
	void *base;
	size_t size;
	bool readonly;
	bool created;
	/* Geometry, copied from the header after validation; trusted. */
	uint32_t bsize;
	uint32_t bshift;
	uint32_t nbufs;
	uint32_t nshards;
	uint32_t per_shard;
	uint32_t nchains; /* per shard */
	uint32_t nfiles;
	uint32_t nfchains;
	struct pool_header *hdr;
	struct pool_shard *shards;
	struct pool_fslot *files;
	uint32_t *fchains;
	uint32_t *chains;
	struct pool_buf *bufs;
	uint8_t *data;
	void *mrc; /* miss-ratio curve region (cache/mrc.h) */
	size_t mrc_size;
	/* Process-local state, never in shared memory. */
	int broken;		/* atomic: the mapping was replaced by zeros (guard.c) */
	uint8_t *suspect;	/* atomic, per shard + 1 (files_lock): a wait timed out */
	uint8_t *our_dirty;	/* atomic, per file slot: we deferred bytes not yet flushed */
	uint64_t lock_timeouts; /* atomic: waits given up by this process */
	bool seg_private;	/* the segment was ours, mode 0600, at attach (I9) */
	/* atomic: what this process added to each counter, one stripe per few
	 * threads so they do not fight over a line (pool_stats_own) */
	uint64_t own[POOL_OWN_STRIPES][POOL_OWN_WORDS];
};

struct pool_file {
	struct pool *pool;
	uint32_t slot;
	uint32_t idgen;
	bool exact;  /* set once after get: pool_dirty_defer never widens a dirty range
		      * over bytes not written (pool_file_set_exact) */
	bool append; /* set once after get: buffers made dirty are flagged
		      * POOL_BUF_F_APPEND (pool_file_set_append) */
};

/* The segment is gone from under us: nothing in it may be used (guard.c). */
static inline bool pool_is_broken(const struct pool *pool)
{
	return __atomic_load_n(&pool->broken, __ATOMIC_ACQUIRE) != 0;
}

/* Relaxed / acquire / release shorthands for fields of shared structures. */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/*
 * A descriptor's flags (POOL_BUF_F_*) are changed under the shard lock, but a
 * lock-free hit clears PREFETCHED and the reaper and the flush scan test DIRTY
 * without it: every access is atomic, and a change is an atomic or/and, so the
 * two sides never lose each other's bit.
 */
static inline uint8_t pool_buf_flags(const struct pool_buf *b)
{
	return LOAD(&b->flags);
}

static inline void pool_buf_flags_set(struct pool_buf *b, uint8_t f)
{
	__atomic_fetch_or(&b->flags, f, __ATOMIC_RELAXED);
}

/* Returns the flags before the change. */
static inline uint8_t pool_buf_flags_clear(struct pool_buf *b, uint8_t f)
{
	return __atomic_fetch_and(&b->flags, (uint8_t)~f, __ATOMIC_RELAXED);
}

static inline uint64_t pool_hash(uint32_t file, uint64_t bucket)
{
	uint64_t h = (bucket ^ ((uint64_t)file << 40)) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

static inline uint32_t pool_shard_of(const struct pool *pool, uint32_t file, uint64_t bucket)
{
	return (uint32_t)(pool_hash(file, bucket) & (pool->nshards - 1));
}

static inline uint32_t *pool_chain_of(struct pool *pool, uint32_t file, uint64_t bucket)
{
	uint64_t h = pool_hash(file, bucket);
	uint32_t s = (uint32_t)(h & (pool->nshards - 1));
	uint32_t c = (uint32_t)((h >> 20) & (pool->nchains - 1));

	return &pool->chains[(uint64_t)s * pool->nchains + c];
}

/* Is @idx a buffer of shard @s? Everything read from a chain goes through here. */
static inline bool pool_buf_in_shard(const struct pool *pool, uint32_t idx, uint32_t s)
{
	return idx < pool->nbufs && idx / pool->per_shard == s;
}

static inline uint8_t *pool_buf_data(struct pool *pool, uint32_t idx)
{
	return pool->data + ((uint64_t)idx << pool->bshift);
}

static inline uint32_t pool_epoch_of(uint64_t residency)
{
	return (uint32_t)(residency >> 32);
}

/*
 * Copies into and out of buffers that lock-free readers may be copying at the
 * same moment. The seqlock makes the result safe to use; ThreadSanitizer
 * cannot know that, so under it the copy is done with relaxed atomics, a word
 * at a time where source and destination are aligned alike. (Not acquire and
 * release: TSan keeps a synchronisation object for every address such an
 * access touches, and a daemon copying megabytes grew past 24 GB.) The seq
 * loads and stores around the copy carry the ordering TSan checks.
 */
#if defined(__SANITIZE_THREAD__)
static inline void pool_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t i = 0;

	if ((((uintptr_t)d ^ (uintptr_t)s) & 7) == 0) {
		for (; i < n && ((uintptr_t)(s + i) & 7); i++)
			__atomic_store_n(&d[i], __atomic_load_n(&s[i], __ATOMIC_RELAXED),
					 __ATOMIC_RELAXED);
		for (; i + 8 <= n; i += 8)
			__atomic_store_n(
			    (uint64_t *)(d + i),
			    __atomic_load_n((const uint64_t *)(s + i), __ATOMIC_RELAXED),
			    __ATOMIC_RELAXED);
	}
	for (; i < n; i++)
		__atomic_store_n(&d[i], __atomic_load_n(&s[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
#define POOL_FENCE(order) ((void)0)
#else
static inline void pool_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}
#define POOL_FENCE(order) __atomic_thread_fence(order)
#endif

/* shard.c: locks return 0, -ETIMEDOUT (bounded wait given up, counted), -EIO
 * (pool broken) or -ENOTRECOVERABLE */
int pool_shard_lock(struct pool *pool, uint32_t s);
void pool_shard_repair(struct pool *pool, uint32_t s);
void pool_shard_unlock(struct pool *pool, uint32_t s);
int pool_files_lock(struct pool *pool);
void pool_files_unlock(struct pool *pool);

/* files.c */
struct pool_fslot *pool_fslot(struct pool_file *pf);
void pool_fslot_resident_add(struct pool_fslot *fs, uint32_t epoch, int delta);
int pool_fslot_bump_clean(struct pool_fslot *fs);
bool pool_fslot_dirty_take(struct pool_fslot *fs);
void pool_files_repair(struct pool *pool);
bool pool_buf_write_busy(struct pool_fslot *fs);
void pool_fslot_dirty_add(struct pool_fslot *fs, int delta);
bool pool_pid_gone(uint32_t pid);
/* Drop slot @only's dirty buffers whose owner died, every slot's if
 * POOL_NONE (files_lock may be held: shard locks come after it). */
int pool_dirty_reap_slot(struct pool *pool, uint32_t only);

/* I8: the slot's dirty buffers (the low half of fslot.dirty). */
static inline uint32_t pool_fslot_ndirty(const struct pool_fslot *fs)
{
	return (uint32_t)__atomic_load_n(&fs->dirty, __ATOMIC_SEQ_CST);
}
uint32_t pool_files_peek(struct pool *pool, uint64_t dev, uint64_t ino);

/* buf.c: the pieces dirty.c builds deferred write from */
void pool_buf_drop(struct pool *pool, uint32_t idx);
uint32_t pool_buf_begin(struct pool_buf *b);
void pool_buf_end(struct pool_buf *b, uint32_t seq);
uint32_t pool_buf_lookup(struct pool *pool, uint32_t s, uint32_t file, uint32_t epoch,
			 uint64_t bucket);
uint32_t pool_buf_victim(struct pool *pool, uint32_t s);
void pool_buf_install(struct pool *pool, uint32_t idx, struct pool_file *pf, uint32_t epoch,
		      uint64_t bucket, const void *data, size_t len, uint8_t flags);
int pool_buf_file_check(struct pool_file *pf);
uint64_t pool_now_ns(void);

/* guard.c */
void pool_guard_forget(struct pool *pool);

/* stats.c */
void pool_stats_count_shard(struct pool *pool, uint32_t s, enum pool_counter c, uint64_t n);
/* A file counter by slot (and the pool's), for code that holds no handle. */
void pool_stats_count_fslot(struct pool *pool, uint32_t slot, uint64_t bucket, enum pool_counter c,
			    uint64_t n);

#endif
