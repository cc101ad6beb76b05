/* SPDX-License-Identifier: MIT */
/*
 * readahead.h - per-handle access-pattern detector for adaptive read-ahead.
 *
 * The record programs accelfs serves read one small record per call; the
 * backend should instead see few large reads issued ahead of the reader
 * (RMS multiblock count plus read-ahead). This module only decides *what* to
 * prefetch, in buckets of the cache; the caller issues the I/O, clips windows
 * at end of file and counts issued/used/wasted.
 *
 * Guarantees:
 * - no allocation and no globals: struct ra_state lives in the caller's
 *   handle, zero-initialised (or ra_reset()) means "nothing seen yet";
 * - thread-compatible: one state is used under the caller's lock;
 * - within one detected pattern no bucket is ever asked for twice, and
 *   every window lies ahead of the read that triggered it;
 * - arithmetic saturates: offsets near UINT64_MAX and max_buckets up to
 *   UINT32_MAX never wrap, and a window never passes the last bucket that
 *   a 64-bit offset can name.
 */
#ifndef ACCELFS_CACHE_READAHEAD_H
#define ACCELFS_CACHE_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Buckets to prefetch: first, first + 1, ..., first + count - 1 (count >= 1). */
struct ra_window {
	uint64_t first;
	uint32_t count;
};

/*
 * The detector's memory of one handle. Private: the fields are here only so
 * callers can embed it; read them for nothing but debugging.
 */
struct ra_state {
	uint64_t prev_off;    /* start of the previous read (bytes) */
	uint64_t prev_end;    /* end of the previous read, exclusive, saturated */
	uint64_t stride;      /* bytes between the last two read starts (0: none) */
	uint64_t last_req;    /* last bucket requested (or being read) in this pattern */
	uint64_t trigger;     /* sequential: bucket, strided: offset; reaching it issues more */
	uint64_t next;	      /* strided: first predicted read (offset) not yet handed out */
	uint64_t pend_off;    /* strided: next predicted read ra_next() hands out */
	uint64_t pend_len;    /* strided: length of each predicted read */
	uint32_t pend_left;   /* strided: windows ra_next() may still hand out */
	uint32_t size;	      /* current window in buckets; 0: not prefetching yet */
	uint32_t bucket_size; /* of the last call: a change restarts detection */
	uint8_t mode;	      /* RA_MODE_* in readahead.c */
	uint8_t seen;	      /* prev_off/prev_end are valid */
};

/*
 * ra_on_read - account one read of @len bytes at @off (bytes) on the handle.
 * @bucket_size: the cache's bucket size in bytes (0 disables);
 * @max_buckets: the largest window, in buckets (0 disables read-ahead and
 *        forgets any pattern).
 * Returns true and fills @out when a prefetch should be issued now. Windows
 * may reach past end of file and may name buckets already cached: the
 * caller clips the first and skips the second. For
 * strided access one decision may cover several predicted reads: after a
 * true return, call ra_next() until it returns false to get the others.
 * A read of length 0 changes nothing and returns false.
 */
bool ra_on_read(struct ra_state *ra, uint64_t off, size_t len, uint32_t bucket_size,
		uint32_t max_buckets, struct ra_window *out);

/*
 * ra_next - the next window of the decision ra_on_read() just returned true
 * for (strided access: one window per predicted read). Returns false when
 * there is none. Windows not collected before the next ra_on_read() are
 * forgotten (never issued, never asked for again in that pattern).
 */
bool ra_next(struct ra_state *ra, struct ra_window *out);

/* Forget every pattern, as if the handle had just been opened. */
void ra_reset(struct ra_state *ra);

#endif
