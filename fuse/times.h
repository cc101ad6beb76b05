/* SPDX-License-Identifier: MIT */
/*
 * times.h - times set on an open regular file (times.c).
 *
 * A program's futimens on an open file (GNU tar: write, futimens, close),
 * and under the writeback cache the kernel's own mtime (a SETATTR of mtime
 * on the handle at every fsync and write-back), must survive what is
 * written back after them: they are kept on the node (inode->times,
 * times_pending) and set again at close and release, once after each
 * write-back (times_on_source, times_gen).
 */
#ifndef ACCELFS_FUSE_TIMES_H
#define ACCELFS_FUSE_TIMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "accelfs_i.h"

/* Keep @tv (UTIME_OMIT: not set) as the open file's times to set again; inode->lock held. */
void times_keep_locked(struct inode *n, const struct timespec tv[2]);
/* Is this SETATTR on @of the kernel's mtime write-back (writeback cache)? */
bool times_kernel_flush(const struct open_file *of, int valid);
/* Serve that SETATTR: keep the kernel's mtime, the reply's attributes into
 * @st from a statx that asks for no times; 0 or -errno. */
int times_deferred(struct open_file *of, const struct stat *attr, int valid, struct stat *st);
/* At close and release: set the kept times again if a write-back moved them. */
void times_apply(struct open_file *of);
/* SOURCE's copy of @n was written (its mtime moved): kept times go again. */
static inline void times_source_moved(struct inode *n)
{
	__atomic_add_fetch(&n->source_writes, 1, __ATOMIC_SEQ_CST);
}
/* The write count to pass to times_set_on_source, read before setting times. */
static inline uint64_t times_source_gen(struct inode *n)
{
	return __atomic_load_n(&n->source_writes, __ATOMIC_SEQ_CST);
}
/* SOURCE got the kept times when its write count was @gen; inode->lock held. */
void times_set_on_source_locked(struct inode *n, uint64_t gen);
/* A program's write that reached us as it was made (no writeback cache, or
 * O_DIRECT) set the mtime itself: times kept before it are not set again. */
void times_written(struct open_file *of);

#endif
