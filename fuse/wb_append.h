/* SPDX-License-Identifier: MIT */
/*
 * wb_append.h - deferred appends (wb_append.c): small writes of a handle
 * opened O_APPEND that the kernel does not place itself (no writeback cache:
 * shared mode, writeback=off), gathered in the pool and written to SOURCE
 * with O_APPEND, so that another host's appends in between are never
 * overwritten. Everything here runs under the inode's wb_lock.
 */
#ifndef ACCELFS_FUSE_WB_APPEND_H
#define ACCELFS_FUSE_WB_APPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "accelfs_i.h"

/* How long the flusher leaves a region ending at a page's end while it grows. */
#define WB_APPEND_HOLD_NS (50 * 1000000ULL)

/* Can appends be deferred with buckets of @bsize (two in one flush write)? */
bool wb_append_usable(uint64_t bsize);
/*
 * A write of @size bytes at @off through @of is about to be deferred:
 * returns 1 if it may join the file's append region as it stands, 0 if
 * the region (or, for an appender, the file's other deferred bytes) must
 * go to SOURCE first, -1 if it must not be deferred at all (an append
 * that crosses a bucket's end).
 */
int wb_append_admit(struct open_file *of, uint64_t off, size_t size, uint64_t bsize);
/* The write at @off of @end - @off bytes was deferred (after admit). */
void wb_append_deferred(struct open_file *of, uint64_t off, uint64_t end);
/* Has the file an append region? */
bool wb_append_pending(const struct inode *n);
/* Should the region go to SOURCE now (it reached its second bucket)? */
bool wb_append_full(const struct inode *n, uint64_t bsize);
/* Should a timed flush leave it (it may be half of a write in flight)? */
bool wb_append_hold(const struct inode *n);
/* Is the run of @len bytes at @off the file's whole append region? */
bool wb_append_is_region(const struct inode *n, uint64_t off, size_t len);
/* Write the region (@buf, @len), deferred by @owner, to SOURCE at its end;
 * @len or -errno (what went before the error is no longer in the region). */
ssize_t wb_append_flush(struct open_file *of, const void *buf, size_t len, uint32_t owner);
/* After a flush of the region (and the backend fsync, if one follows):
 * did it land where this host placed it? Else wb_append_moved(). */
void wb_append_verify(struct open_file *of);
/* A flush found another writer's bytes where ours were: drop what this
 * host holds of the file (the pool's copies now; the kernel's pages at
 * the next wb_append_kernel, where no request holds them). */
void wb_append_moved(struct open_file *of);
/* Not under wb_lock, where no page of the file is held: the kernel's pages
 * and attributes dropped if a flush found the file moved. */
void wb_append_kernel(struct open_file *of);
/* Has a flush found the file moved since the kernel last dropped it? */
bool wb_append_stale(const struct inode *n);
/* The file's last handle went: its append descriptor too. */
void wb_append_close(struct inode *n);

/* writeback.c: the daemon's own descriptor for @of's file, opened with
 * @flags through the handle's magic link; -1 with errno. */
int wb_own_open(struct open_file *of, int flags);

#endif
