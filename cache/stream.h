/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the read/write front of the cache for one open handle (an RMS
 * "stream"): local buffers, then the global pool, then the backend.
 *
 * The cache does no I/O of its own: stream_read() calls the caller's read
 * function for a whole bucket on a miss, puts the result in the pool (and in
 * a local buffer), and counts every step in the pool's statistics. Writes go
 * to the backend first (caller), then stream_write_done() makes the cache
 * coherent before the caller acknowledges them. A stream may be used by
 * several threads at once.
 */
#ifndef ACCELFS_CACHE_STREAM_H
#define ACCELFS_CACHE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool.h"

struct stream;

/* Read up to @len bytes at @off of the backing file; short only at its end. */
typedef ssize_t (*stream_read_fn)(void *arg, void *buf, size_t len, uint64_t off);

/*
 * stream_open - open the file @id in @pool with @nlocal local buffers
 * (0: none). @path and @quota as for pool_file_get(). Returns 0 or -errno.
 */
int stream_open(struct pool *pool, const struct pool_file_id *id, const char *path,
		uint32_t quota, unsigned int nlocal, struct stream **out);

void stream_close(struct stream *st);

/*
 * stream_read - read @len bytes at @off: local buffers, global pool, then
 * @fn(@arg, ...) for each missing bucket. Returns bytes read (short only at
 * end of file) or -errno from @fn when nothing could be read.
 */
ssize_t stream_read(struct stream *st, void *buf, size_t len, uint64_t off, stream_read_fn fn,
		    void *arg);

/*
 * stream_write_done - @len bytes of @data were written at @off to the
 * backend: update the cache and count the write. Call after the backend
 * write succeeded and before acknowledging it. Returns 0 or -errno.
 */
int stream_write_done(struct stream *st, uint64_t off, const void *data, size_t len);

/* The file is now @size bytes long (ftruncate, fallocate punch...). */
int stream_truncate(struct stream *st, uint64_t size);

/* The backing file changed behind our back: drop everything cached. */
int stream_invalidate(struct stream *st);

/* The pool handle, for statistics. */
struct pool_file *stream_file(struct stream *st);

#endif
