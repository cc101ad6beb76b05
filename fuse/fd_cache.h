/* SPDX-License-Identifier: MIT */
/*
 * fd_cache.h - the inode table's descriptor cache (fd_cache.c): which
 * nodes keep their O_PATH descriptor open, which are kept by file handle
 * and reopened on demand (as virtiofsd's --inode-file-handles), and the
 * reaper that closes idle and deleted ones. The contract between inode.c
 * (the table) and fd_cache.c; the rest of fuse/ uses inode_fd_get/put/drop
 * (accelfs_i.h).
 *
 * Locks: cache_lock (the clock ring and its count), then a node's fd_lock
 * by trylock only; mounts_lock (the handle mounts); reaper_lock.
 */
#ifndef ACCELFS_FUSE_FD_CACHE_H
#define ACCELFS_FUSE_FD_CACHE_H

#include <fcntl.h>
#include <stdbool.h>

#include "accelfs_i.h"

struct fh_buf {
	struct file_handle h;
	unsigned char bytes[MAX_HANDLE_SZ];
};

/* At @fs's table init: the cache's size from RLIMIT_NOFILE, and whether
 * SOURCE's handles work (tried on its root, whose handle goes to the
 * table's index). */
void fd_cache_init(struct accelfs *fs);
/* At table destroy: the reaper stopped, the handle mounts closed. */
void fd_cache_destroy(void);

/* Put @n's freshly opened descriptor (set by the caller) on the ring. */
void fd_cache_insert(struct inode *n);
/* Take @n off the ring (it is being freed); its descriptor is the caller's. */
void fd_cache_remove(struct inode *n);
/* A lookup found @n with @fd in hand: keep it if @n's was closed, else close @fd. */
void fd_cache_adopt(struct inode *n, int fd);
/* Is @n's descriptor open now (then marked used)? Without handles it always is. */
bool fd_cache_is_open(struct inode *n);

/* @fd's handle into @fh, and the descriptor to reopen it with; false: keep @fd instead. */
bool fd_cache_handle_of(int fd, mode_t type, struct fh_buf *fh, int *mount_fd);
/* Same file? The handle carries the generation, so a reused inode number differs. */
bool fd_cache_handle_equal(const struct file_handle *a, const struct file_handle *b);

#endif
