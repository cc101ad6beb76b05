/* SPDX-License-Identifier: MIT */
/*
 * thread_buf.h - per-thread work buffers, reused from request to request.
 *
 * A request that needs a large scratch buffer (a FUSE reply, a batch of
 * deferred bytes on their way to SOURCE, one bucket read before it is
 * patched) takes its thread's buffer for that use instead of allocating one:
 * glibc serves blocks of 128 KiB and more with mmap, and each munmap in a
 * multi-threaded daemon is a TLB shoot-down on every core. One buffer per
 * (thread, use); a use never nests within itself on one thread, so no lock.
 * Freed when the thread exits.
 */
#ifndef ACCELFS_CACHE_THREAD_BUF_H
#define ACCELFS_CACHE_THREAD_BUF_H

#include <stddef.h>

enum thread_buf_use {
	THREAD_BUF_REPLY,  /* fuse/: a reply's data (read, readdir, xattr) */
	THREAD_BUF_FLUSH,  /* stream_flush_below's batch */
	THREAD_BUF_BUCKET, /* stream.c: one bucket read from SOURCE */
	THREAD_BUF_USES
};

/*
 * thread_buf_get - the calling thread's buffer for @use, at least @size
 * bytes, page-aligned (fit for O_DIRECT). Valid until the next call for the
 * same use on this thread, or the thread's exit. NULL when out of memory.
 */
void *thread_buf_get(enum thread_buf_use use, size_t size);

#define THREAD_BUF_REPLY_MIN (1U << 20)

/* The thread's reply buffer, 1 MiB at least: not regrown for each size. */
static inline void *thread_buf_reply(size_t size)
{
	return thread_buf_get(THREAD_BUF_REPLY,
			      size < THREAD_BUF_REPLY_MIN ? THREAD_BUF_REPLY_MIN : size);
}

#endif
