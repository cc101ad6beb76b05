/* SPDX-License-Identifier: MIT */
/*
 * pool.h - the global buffer pool: file data cached in POSIX shared memory
 * and shared by every accelfs process on the host that names the same pool
 * (RMS "global buffers").
 *
 * The pool caches fixed-size buckets of files identified by (st_dev, st_ino)
 * and a validator of (size, mtime, ctime). It never does backend I/O: the
 * caller reads a bucket from the backend and hands it to pool_buf_fill(), or
 * uses the stream front (stream.h), which does the local -> global -> backend
 * sequence with a read callback.
 *
 * Guarantees: hits take no lock (per-buffer seqlock); a process killed at any
 * moment, locks held or not, leaves the pool usable and correct for the
 * others; every index read from shared memory is bounds-checked; statistics
 * are always collected in the pool. See docs/cache.md for the design.
 *
 * All functions returning int or ssize_t return >= 0 on success and -errno
 * on failure. Handles are not shared between processes; a struct pool and its
 * files may be used by many threads at once.
 */
#ifndef ACCELFS_CACHE_POOL_H
#define ACCELFS_CACHE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool_layout.h"

struct pool;
struct pool_file;

#define POOL_DEFAULT_NAME "/accelfs-default"
#define POOL_DEFAULT_BUCKET (64U * 1024)
#define POOL_DEFAULT_SIZE (64ULL * 1024 * 1024)
#define POOL_MIN_BUCKET (4U * 1024)
#define POOL_MAX_BUCKET (4U * 1024 * 1024)

struct pool_config {
	const char *name;     /* shm name ("/x"); NULL means POOL_DEFAULT_NAME */
	uint32_t bucket_size; /* creation only; 0 means POOL_DEFAULT_BUCKET */
	uint32_t nbufs;	      /* creation only: buffer count; 0: use size */
	uint64_t size;	      /* creation only: data bytes; 0 and nbufs 0: default */
	uint32_t max_files;   /* creation only: file slots; 0: derived from size */
	uint32_t nshards;     /* creation only: power of two; 0: derived */
	mode_t mode;	      /* creation only: 0 means 0600 */
	bool no_create;	      /* attach only, -ENOENT if the pool does not exist */
	char *err;	      /* if set, receives a one-line reason on failure */
	size_t errlen;
};

/*
 * pool_open - attach to the pool cfg->name, creating it if it does not exist.
 * An existing pool keeps its own geometry (bucket size, count): creation
 * fields of @cfg are then ignored; pool_info() tells what was found.
 * Refuses (-EPROTO) a pool of another layout version, magic, byte order or
 * libc mutex size, and (-EUCLEAN) one whose geometry is inconsistent.
 * -ENOMEM / -ENOSPC when the pool exceeds physical memory / free space in
 * /dev/shm, -EINVAL for bad parameters; cfg->err explains.
 */
int pool_open(const struct pool_config *cfg, struct pool **out);

/*
 * Trust (docs/cache.md, "Trust"): pool_open() and pool_open_readonly() attach
 * only to a segment that passes pool_seg_trusted(); else -EPERM with one line
 * in cfg->err naming the segment, its owner and mode, and the fix. Creation
 * is O_CREAT|O_EXCL|O_NOFOLLOW with cfg->mode; attaching accepts no mode bit
 * beyond cfg->mode (0: 0600).
 *
 * pool_seg_trusted - may this process use segment @name, whose descriptor
 * it fstat()ed into @st, under pool mode @mode (0: 0600)? Yes for a regular
 * file owned by the effective uid, or, if @mode grants the group, whose group
 * is one of the process's, with no mode bit beyond @mode. Returns 0 or
 * -EPERM with the one-line reason in @why (if not NULL).
 */
struct stat;
int pool_seg_trusted(const char *name, const struct stat *st, mode_t mode, char *why, size_t len);

/*
 * pool_seg_open - shm_open(@name, @flags) without following a symlink or
 * blocking on a FIFO, then pool_seg_trusted(). Returns the descriptor
 * (O_CLOEXEC), -EPERM (untrusted, @why says why), or -errno.
 */
int pool_seg_open(const char *name, int flags, mode_t mode, char *why, size_t len);

/*
 * pool_seg_header - copy the header of the pool segment open at @fd (checked
 * by pool_seg_trusted()) into @h, and its file size into @size, without
 * attaching (seghdr.c). Whatever its layout version: the caller decides.
 * Returns 0, -EPROTO when it is no accelfs pool (too short, no magic, not a
 * regular file), or -errno.
 */
int pool_seg_header(int fd, struct pool_header *h, uint64_t *size);

/* Attach read-only (monitor, tools): stats and iteration only. Trusts a
 * segment of ours or of a group of ours with mode within 0660. */
int pool_open_readonly(const char *name, struct pool **out, char *err, size_t errlen);

/*
 * pool_guard_sigbus - survive a truncated segment: install (once per process)
 * a SIGBUS handler that, for a fault inside @pool's mapping, replaces the
 * whole mapping with zeros, marks the pool broken and lets the faulting
 * access go on; any other SIGBUS keeps its default action. Every thread that
 * touches the pool must leave SIGBUS unblocked. Returns 0 or -errno.
 */
int pool_guard_sigbus(struct pool *pool);

/*
 * pool_guard_broken - the segment went away under this process (SIGBUS caught):
 * every pool function fails with -EIO from now on, and no byte read from the
 * pool since the break is ever returned (pool_buf_read re-checks after its copy).
 * Deferred bytes that were in the pool are lost; stream_flush() says so.
 */
bool pool_guard_broken(const struct pool *pool);

/* Lock waits this process gave up (SHM_LOCK_WAIT_NS), for rate-limited logging. */
uint64_t pool_guard_lock_timeouts(const struct pool *pool);

/* Detach. The pool stays (it is sized once and kept) until pool_unlink(). */
void pool_close(struct pool *pool);

/* Remove the named segment; attached processes keep their mapping. */
int pool_unlink(const char *name);

struct pool_info {
	uint32_t bucket_size;
	uint32_t nbufs;
	uint32_t nshards;
	uint32_t nfiles;
	uint32_t files_used;
	uint32_t reserved;   /* buffers reserved by quotas */
	uint64_t total_size; /* segment bytes */
	uint64_t data_size;  /* nbufs * bucket_size */
	uint64_t meta_size;  /* total_size - data_size */
	uint64_t mrc_size;   /* of which the miss-ratio curve region (fixed, ~1 MiB) */
	bool created;	     /* this pool_open() created the segment */
	bool readonly;
};
void pool_info(const struct pool *pool, struct pool_info *info);

/* The identity of a backing file, from fstat() at open. */
struct pool_file_id {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
	/* Its file handle (name_to_handle_at), or fh_bytes 0: kept in the slot
	 * so a dead owner's deferred bytes can be written back to this very
	 * file (I9); a handle over POOL_FH_MAX bytes is not kept. */
	uint32_t fh_type;
	uint32_t fh_bytes;
	const unsigned char *fh;
};

/* The validator pool_file_get() derives from size, mtime and ctime. */
uint64_t pool_file_validator(const struct pool_file_id *id);

/*
 * pool_file_get - open a handle on the file @id (one "active stream").
 * Finds the file's slot or takes one (reusing the least recently used idle
 * slot when the table is full). If the slot's validator differs from @id's,
 * all its buffers are dropped first. @path (may be NULL) is kept, truncated
 * to its tail, for display. @quota: buffers of this file never evicted by
 * other files (0 none, POOL_QUOTA_ALL the whole file); it can only raise an
 * existing quota and is clamped so quotas never reserve more than 7/8 of the
 * pool. Returns 0 or -ENOSPC (every slot busy), -EROFS (read-only pool).
 */
int pool_file_get(struct pool *pool, const struct pool_file_id *id, const char *path,
		  uint32_t quota, struct pool_file **out);

/* Close a handle from pool_file_get(). Cached data stays. */
void pool_file_put(struct pool_file *pf);

/* A second handle on the same file (read-ahead in flight outlives the stream's). */
int pool_file_dup(struct pool_file *pf, struct pool_file **out);

/* Is the bucket cached now? Lock-free, may be wrong by a moment; counts nothing. */
bool pool_buf_has(struct pool_file *pf, uint64_t bucket);

/* Set the quota (buffers) exactly, lowering included. Returns granted quota. */
int pool_file_set_quota(struct pool_file *pf, uint32_t quota);

/*
 * Coherence ticket: take one before reading a bucket from the backend and
 * pass it to pool_buf_fill(); a write, truncate or invalidation in between makes
 * the fill a no-op, so stale data is never inserted. @busy: a write of the
 * file was in flight when it was taken; what the backend returns now must
 * not be cached anywhere (pool_buf_fill() refuses it; local buffers must too).
 */
struct pool_ticket {
	uint32_t epoch;
	bool busy;
	uint64_t wseq;
};
int pool_file_ticket_get(struct pool_file *pf, struct pool_ticket *t);

/*
 * pool_file_ticket_current - is @t, taken before a read of the backend,
 * still the file's state (not busy then, no write active now, nothing
 * moved wseq or the epoch since)? Then what that read returned is what the
 * backend holds for the state the ticket's holder knew. Lock-free.
 */
bool pool_file_ticket_current(struct pool_file *pf, const struct pool_ticket *t);

/*
 * pool_buf_read - copy @len bytes at @off of bucket @bucket into @buf if cached.
 * Returns bytes copied (less than @len, even 0, only where the file ends in
 * this bucket), -ENOENT on a miss, -ESTALE if the handle's slot was reused
 * (get a new handle). Counts a global attempt and, on success, a hit.
 */
ssize_t pool_buf_read(struct pool_file *pf, uint64_t bucket, void *buf, size_t off, size_t len);

/*
 * pool_buf_fill - insert bucket @bucket with @len bytes (< bucket size only at end
 * of file) read from the backend under ticket @t. Returns 1 if inserted or
 * already present, 0 if dropped (stale ticket, or every buffer of its shard
 * reserved by quotas, or a busy ticket), -EINVAL, -ESTALE.
 */
int pool_buf_fill(struct pool_file *pf, const struct pool_ticket *t, uint64_t bucket,
		  const void *data, size_t len);

/*
 * Writes come in two halves around the backend write:
 *   pool_buf_write_begin() before the backend write: drops the cached buckets the
 *   @len bytes at @off overlap, and refuses fills of the file until
 *   pool_buf_write_end() (or, if the writer dies, until a 5 s lease lapses);
 *   pool_buf_write_end() after the backend write, whether it succeeded or not,
 *   and before acknowledging it.
 * Writes are thus write-invalidate: RMS global buffers do not speed writes
 * either, and this way no interleaving of concurrent writes, fills and a
 * writer's death can leave the cache holding bytes the backend does not.
 */
int pool_buf_write_begin(struct pool_file *pf, uint64_t off, uint64_t len);
int pool_buf_write_end(struct pool_file *pf);

/*
 * pool_file_revalidate - record @id as the file's state without dropping its
 * buffers: for a writer whose every write went through the write_begin/end
 * bracket, so the buffers already match what it changed. Call it when the
 * writer closes, so the next open does not take its own writes for a change
 * made behind the cache's back. Returns 0, -ESTALE.
 */
int pool_file_revalidate(struct pool_file *pf, const struct pool_file_id *id);

/* Drop every cached bucket of the file (O(1)). */
int pool_file_invalidate(struct pool_file *pf);

/*
 * The file is now @size bytes long: drop or trim the buckets that changed.
 * Bracket the backend truncate with pool_buf_write_begin(pf, 0, 0) and
 * pool_buf_write_end(pf), and call this before pool_buf_write_end(). O(pool size).
 */
int pool_buf_truncate(struct pool_file *pf, uint64_t size);

/*
 * pool_buf_fill_flags - pool_buf_fill() for read-ahead: @prefetch marks the buffer so
 * that its first read counts as readahead_used, and its eviction unread as
 * readahead_wasted.
 */
int pool_buf_fill_flags(struct pool_file *pf, const struct pool_ticket *t, uint64_t bucket,
			const void *data, size_t len, bool prefetch);

/*
 * pool_buf_write_begin_mode - pool_buf_write_begin() that, with @keep, leaves the
 * buffers in place for the caller to update with pool_dirty_defer().
 */
int pool_buf_write_begin_mode(struct pool_file *pf, uint64_t off, uint64_t len, bool keep);

/*
 * Deferred write (I8 in pool_layout.h). Between pool_buf_write_begin_mode(keep)
 * and pool_buf_write_end():
 *
 * pool_dirty_defer - put @len bytes at @boff of bucket @bucket into the pool as
 * dirty bytes owned by @owner (a pid). If the bucket is not cached and the
 * write does not cover it, returns 0: read its current content (@baselen
 * bytes, short at end of file) into @base, take @wseq from pool_file_ticket_get()
 * before that read, and call again. Returns 1 when deferred, 2 when the bytes
 * went into a bucket another owner will write back (the caller should write
 * them through as well), -EXDEV (pool_file_set_exact) when they do not touch
 * the bucket's dirty range, -EAGAIN when another write moved the file since
 * @wseq (read @base again), -ENOSPC when no buffer can be had (write through),
 * or -errno.
 */
int pool_dirty_defer(struct pool_file *pf, uint64_t bucket, size_t boff, const void *data,
		     size_t len, const void *base, size_t baselen, uint64_t wseq, uint32_t owner);

/*
 * pool_file_set_exact - this handle's deferred bytes are written back exactly
 * as written: pool_dirty_defer() returns -EXDEV, and defers nothing, for a
 * write that would leave bytes it did not write between it and the
 * bucket's dirty range (write it through instead). For a SOURCE other
 * hosts write too, where the bucket's copy of those bytes may be stale.
 */
void pool_file_set_exact(struct pool_file *pf);

/*
 * pool_file_set_append - this handle's deferred bytes are appends: the
 * buffers it makes dirty are flagged POOL_BUF_F_APPEND, so that a recoverer
 * (I9) writes them at SOURCE's end, where their owner would have, not at
 * the offsets this host believed. The caller keeps such a handle's dirty
 * buffers apart from offset writes (fuse/wb_append.c).
 */
void pool_file_set_append(struct pool_file *pf);

/* One dirty bucket on its way to SOURCE. */
struct pool_dirty {
	uint64_t bucket;
	uint32_t lo, hi; /* the bytes to write: [lo, hi) of the bucket */
	uint32_t seq;	 /* the buffer's seq when they were copied */
	bool append;	 /* POOL_BUF_F_APPEND: they go at SOURCE's end, in bucket order */
};

/* Up to @max dirty buckets of @pf owned by @owner, dirty since before @before_ns
 * (CLOCK_REALTIME), sorted by bucket. Returns how many, or -errno. */
int pool_dirty_list(struct pool_file *pf, uint32_t owner, uint64_t before_ns,
		    struct pool_dirty *out, int max);

/* Copy the dirty bytes of @d->bucket to the same offsets of @buf (a bucket);
 * sets lo, hi, seq. Returns the byte count, 0 if no longer dirty, or -errno. */
ssize_t pool_dirty_copy(struct pool_file *pf, struct pool_dirty *d, uint32_t owner, void *buf);

/* After the copied bytes reached SOURCE: clean the buffer unless it changed
 * since the copy. Returns 1 if cleaned, 0 if still dirty, or -errno. */
int pool_dirty_clean(struct pool_file *pf, const struct pool_dirty *d, uint32_t owner);

/*
 * Bytes [@lo, @upto) of the file, deferred by @owner, reached SOURCE by
 * another way than a flush of whole buffers (a write that failed after part
 * of them went): they are no longer dirty, so no flush or recoverer writes
 * them again. Returns buffers cleaned, or -errno.
 */
int pool_dirty_sent(struct pool_file *pf, uint64_t lo, uint64_t upto, uint32_t owner);

/*
 * Where deferred data ends and when it was last written, published in the
 * file's slot so stat in every mount shows it: _set raises the end (max);
 * _clamp lowers it to @size (truncate), or to 0 once nothing is dirty;
 * _peek reads it lock-free by (dev, ino), true if there is deferred data.
 */
void pool_dirty_end_set(struct pool_file *pf, uint64_t end, int64_t mtime_ns);
void pool_dirty_end_clamp(struct pool_file *pf, uint64_t size);
bool pool_dirty_end_peek(struct pool *pool, uint64_t dev, uint64_t ino, uint64_t *end,
			 int64_t *mtime_ns);

/* Give up @owner's dirty buffers of the file (their flush failed and was
 * reported; nobody is left to retry): dropped and counted as dirty_lost. */
int pool_dirty_discard(struct pool_file *pf, uint32_t owner);

/*
 * The file is now at least @len bytes into @bucket, which may be cached
 * shorter (the end of file was there): a clean copy is dropped, a dirty one
 * grows with zeros (SOURCE has a hole between). Returns 1 if it acted.
 */
int pool_dirty_bucket_grown(struct pool_file *pf, uint64_t bucket, size_t len);

/* Mark the file for display (POOL_FILE_F_RELAXED); cleared when the slot is reused. */
void pool_dirty_mark(struct pool_file *pf, uint32_t flag);

/* Dirty buffers of the file (any owner). */
uint32_t pool_dirty_count(struct pool_file *pf);

/*
 * After the pool broke (pool_guard_broken): did this process have deferred bytes of
 * the file in it, not flushed yet? They are lost; @clear: report them once.
 */
bool pool_dirty_lost(struct pool_file *pf, bool clear);

/* Drop dirty buffers whose owner process is gone (counted as dirty_lost). */
int pool_dirty_reap(struct pool *pool);

/*
 * Recovery of dead owners' deferred bytes (I9 in pool_layout.h,
 * cache/recover.c). What happened to one file, for the caller to log.
 */
struct pool_recover_note {
	uint64_t dev, ino;
	char path[POOL_PATH_LEN]; /* the slot's tail of the path */
	uint32_t recovered;	  /* buffers written back to SOURCE */
	uint32_t lost;		  /* buffers dropped */
	const char *why;	  /* why they were dropped (static string), or NULL */
	int err;		  /* the errno behind @why, or 0 */
};
typedef void pool_recover_fn(void *arg, const struct pool_recover_note *note);

/*
 * pool_recover_all - write every dirty buffer whose owner process is gone back
 * to its file when the file is provably the one it was, else drop it; call
 * @fn (may be NULL) once per file that had any, outside every pool lock.
 * Does I/O (pwrite, fdatasync): not for a latency-critical path. Safe
 * against concurrent recoverers (each buffer is claimed under its shard
 * lock). Returns the buffers recovered, or -errno (-EROFS read-only pool).
 */
int pool_recover_all(struct pool *pool, pool_recover_fn *fn, void *arg);

/* As pool_recover_all(), for file slot @slot only (see pool_file_get()). */
int pool_recover_slot(struct pool *pool, uint32_t slot, pool_recover_fn *fn, void *arg);

/*
 * pool_recover_file - before opening @id with pool_file_get(): if its slot
 * holds dirty buffers and its validator no longer matches @id (the open
 * would otherwise take SOURCE's change for the dead owner's), recover them
 * as pool_recover_slot() does. Lock-free hints first, so an ordinary open
 * costs one hash lookup. Call it with the process's own credentials.
 */
int pool_recover_file(struct pool *pool, const struct pool_file_id *id, pool_recover_fn *fn,
		      void *arg);

/* The miss-ratio curve region (cache/mrc.h), or NULL; read-only attaches too. */
void *pool_stats_mrc_region(struct pool *pool, size_t *size);

/* The file's slot and identity generation, for per-file state kept elsewhere. */
void pool_stats_fslot(const struct pool_file *pf, uint32_t *slot, uint32_t *gen);

/* Add @n to counter @c of the file and of the pool (for callers' own I/O). */
void pool_stats_count(struct pool_file *pf, uint64_t bucket, enum pool_counter c, uint64_t n);

/* Add @n to pool-wide counter @c (events of no file, such as passthrough opens). */
void pool_stats_count_pool(struct pool *pool, enum pool_counter c, uint64_t n);

/* Recompute residency counts after crash recovery; normally automatic. */
int pool_shard_recount(struct pool *pool);

/* Snapshot of a file's statistics, for the monitor and the tools: one file's
 * identity and numbers, copied under the slot's idgen seqlock (stats.c). */
struct pool_stats_file {
	uint64_t dev, ino;
	uint32_t slot;
	uint32_t opens;	   /* active streams */
	uint32_t quota;	   /* asked, POOL_QUOTA_ALL */
	uint32_t reserve;  /* granted: what the quota reserves after clamping */
	uint32_t resident; /* buffers currently cached */
	uint32_t ndirty;   /* dirty buffers (deferred write) */
	uint32_t flags;	   /* POOL_FILE_F_* */
	uint64_t c[POOL_C_FILE_MAX];
	char path[POOL_PATH_LEN];
};

/* Pool-wide counters (summed over shards) and active streams. */
struct pool_stats {
	uint64_t c[POOL_C_POOL_MAX];
	uint64_t opens;
	uint64_t resident;
};

int pool_stats_get(struct pool *pool, struct pool_stats *st);
/*
 * pool_stats_own - what this process added to each pool counter through
 * @pool since it attached (its share of pool_stats_get()'s sums: the hits,
 * misses and write-back one daemon caused) into @c[POOL_C_POOL_MAX].
 */
void pool_stats_own(struct pool *pool, uint64_t c[POOL_C_POOL_MAX]);
int pool_stats_file(struct pool_file *pf, struct pool_stats_file *st);

/*
 * pool_stats_file_iter - call @fn for each file slot in use, in slot order, with a
 * consistent snapshot; stops early and returns @fn's value if non-zero.
 * Lock-free, so usable on a read-only pool while daemons run.
 */
int pool_stats_file_iter(struct pool *pool, int (*fn)(const struct pool_stats_file *st, void *arg),
			 void *arg);

/* Display name of a counter ("local_hits", ...). */
const char *pool_stats_counter_name(enum pool_counter c);

uint32_t pool_bucket_size(const struct pool *pool);

#endif
