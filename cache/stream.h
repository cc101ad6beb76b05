/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the read/write front of the cache for one open handle (an RMS
 * "stream"): local buffers, then the global pool, then the backend.
 *
 * The cache does no I/O of its own: stream_read() calls the caller's read
 * function for a whole bucket on a miss, puts the result in the pool (and in
 * a local buffer), and counts every step in the pool's statistics. Writes go
 * around the caller's backend write between stream_write_begin() and
 * stream_write_end(), which keep the cache coherent. A stream may be used by
 * several threads at once.
 */
#ifndef ACCELFS_CACHE_STREAM_H
#define ACCELFS_CACHE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "disk.h"
#include "pool.h"

struct stream;

/* Read up to @len bytes at @off of the backing file; short only at its end. */
typedef ssize_t (*stream_read_fn)(void *arg, void *buf, size_t len, uint64_t off);

/*
 * stream_open - open the file @id in @pool with @nlocal local buffers
 * (0: none). @path and @quota as for pool_file_get(). Returns 0 or -errno.
 */
int stream_open(struct pool *pool, const struct pool_file_id *id, const char *path, uint32_t quota,
		unsigned int nlocal, struct stream **out);

void stream_close(struct stream *st);

/*
 * stream_read - read @len bytes at @off: local buffers, global pool, then
 * @fn(@arg, ...) for each missing bucket. Returns bytes read (short only at
 * end of file) or -errno from @fn when nothing could be read.
 */
ssize_t stream_read(struct stream *st, void *buf, size_t len, uint64_t off, stream_read_fn fn,
		    void *arg);

/*
 * A write: stream_write_begin() before the backend write, stream_write_end()
 * after it with its result (bytes or -errno), before acknowledging it. See
 * pool_buf_write_begin(). Return 0 or -errno. When the pool has no slot for the
 * file (all taken by files with dirty buffers) the write is not bracketed
 * and still returns 0: running out of slots never fails a write. The caller
 * serialises a stream's brackets (accelfs: the file's wb_lock).
 */
int stream_write_begin(struct stream *st, uint64_t off, size_t len);
int stream_write_end(struct stream *st, uint64_t off, ssize_t res);

/*
 * The file is now @size bytes long (ftruncate). Call it after the backend
 * truncate, inside stream_write_begin(st, 0, 0) ... stream_write_end().
 */
int stream_truncate(struct stream *st, uint64_t size);

/* After this stream's own writes: @id is the file's state now (pool_file_revalidate). */
int stream_revalidate(struct stream *st, const struct pool_file_id *id);

/* The backing file changed behind our back: drop everything cached. */
int stream_invalidate(struct stream *st);
/*
 * stream_set_exact - deferred writes of @st reach the backend as written,
 * byte for byte: a write that is not next to (or over) a bucket's dirty
 * bytes is written through instead of widening them (pool_file_set_exact).
 */
void stream_set_exact(struct stream *st);

/*
 * stream_set_append - deferred writes of @st are appends: a recoverer writes
 * them at the backend's end if their owner dies (pool_file_set_append).
 */
void stream_set_append(struct stream *st);

/* Write @len bytes at @off of the backing file; short only on error. */
typedef ssize_t (*stream_write_fn)(void *arg, const void *buf, size_t len, uint64_t off);

/*
 * stream_write_defer - deferred write (pool_layout.h I8): put the bytes into
 * dirty pool buffers owned by @owner instead of writing them to SOURCE.
 * Buckets not cached are first read with @fn (read-modify-write). Returns
 * @len; or -EAGAIN when the pool cannot take them (the caller flushes and
 * writes through; bytes already deferred are then written twice, harmlessly);
 * or -errno from @fn. *@foreign is set when some bytes landed in a bucket
 * another daemon owns: the caller also writes them through.
 */
ssize_t stream_write_defer(struct stream *st, const void *buf, size_t len, uint64_t off,
			   stream_read_fn fn, void *arg, uint32_t owner, bool *foreign);

/* Bytes one flush batch carries at most: a run of dirty buckets that fits
 * goes to SOURCE in one write whoever calls (fuse/wb_append.c needs it). */
#define STREAM_FLUSH_BYTES (1U << 20)

/*
 * stream_flush - write @owner's dirty buckets of the file that became dirty
 * before @before_ns (CLOCK_REALTIME; UINT64_MAX: all) to SOURCE with @fn,
 * adjacent buckets merged into one write. Returns 0, or the first -errno
 * (the failed buckets stay dirty and are written again next time).
 */
int stream_flush(struct stream *st, uint32_t owner, uint64_t before_ns, stream_write_fn fn,
		 void *arg);

/* The file grew to @size: the bucket holding @off, cached short, is stale
 * (pool_dirty_bucket_grown). */
int stream_grown(struct stream *st, uint64_t off, uint64_t size);

/* A run of buckets worth reading ahead. */
struct stream_ra {
	uint64_t first;
	uint32_t count;
};

/*
 * stream_readahead - after a read of @len bytes at @off of a file @size
 * bytes long, the runs of buckets to prefetch now (adaptive: cache/readahead.h
 * grows the window up to @max_bytes while the pattern holds), without the
 * buckets the pool already has. Returns how many runs were put in @out.
 */
int stream_readahead(struct stream *st, uint64_t off, size_t len, uint64_t max_bytes, uint64_t size,
		     struct stream_ra *out, int max);

/*
 * stream_prefetched - the read of a run came back: put its @len bytes from
 * bucket @first on into the pool as prefetched buckets under ticket @t
 * (taken before the read, so a write in between refuses them). Any thread;
 * @pf from pool_file_dup(). Returns the buckets filled.
 */
int stream_prefetched(struct pool_file *pf, const struct pool_ticket *t, uint64_t first,
		      const void *data, size_t len, uint32_t bsize);

/* stream_flush() of the buckets below @limit only (a writer that filled them). */
int stream_flush_below(struct stream *st, uint32_t owner, uint64_t before_ns, uint64_t limit,
		       stream_write_fn fn, void *arg);

/* Dirty buckets of the file in the pool (any owner). */
uint32_t stream_dirty(struct stream *st);

/*
 * The disk tier (disk.h) below the pool: stream_set_disk() gives the stream
 * one. Its misses then look there before the backend, and what the backend
 * returns is kept there, under the file's state at open (or at
 * stream_revalidate). Only while that state is provably SOURCE's: from the
 * moment any write, truncate or invalidation of the file moves the pool
 * slot's wseq (I5, every mount of the host), the stream neither reads nor
 * keeps entries until stream_revalidate() gives it the new state. A write
 * of this stream also removes the old state's entries of the buckets it
 * changed.
 */
void stream_set_disk(struct stream *st, struct disk_tier *d);

/* A stream's tier and the state its entries are named by, while usable. */
struct stream_disk {
	struct disk_tier *d;
	struct disk_key key;
	uint64_t wseq; /* the pool slot's wseq when that state was known true */
};

/* Is the disk tier usable for the stream now? Then @out says how. */
bool stream_disk_get(struct stream *st, struct stream_disk *out);

/*
 * stream_disk_keep - keep @len bytes read from the backend at bucket
 * @first on in the tier, if ticket @t (taken before that read) is still
 * current and of @sd's state. Only whole buckets, and a short one only
 * where the file ends as the state's size says. Any thread.
 */
void stream_disk_keep(const struct stream_disk *sd, struct pool_file *pf,
		      const struct pool_ticket *t, uint64_t first, const void *data, size_t len,
		      uint32_t bsize);

/* The pool handle, for statistics. */
struct pool_file *stream_file(struct stream *st);

#endif
