/* SPDX-License-Identifier: MIT */
/*
 * shared.h - shared mode: a SOURCE that other hosts (or their kernels)
 * change as well, such as NFS, SMB, CephFS or any FUSE file system
 * (glusterfs, sshfs). See shared.c and docs/shared.md.
 */
#ifndef ACCELFS_FUSE_SHARED_H
#define ACCELFS_FUSE_SHARED_H

#include <stdbool.h>
#include <stddef.h>

struct accelfs;

/*
 * Is @path on a file system whose changes may come from elsewhere than this
 * kernel? Its type's name goes to @name (e.g. "nfs4", "fuse.glusterfs");
 * a path that cannot be looked at counts as remote ("unknown").
 */
bool shared_fs_remote(const char *path, char *name, size_t len);

/*
 * Before mounting: settle shared=auto for @fs's SOURCE and apply what the
 * mode asks of its other options' defaults (no watcher, no writeback
 * cache, timeouts and revalidation as the SOURCE's own clients get them).
 * Returns 0, or -1 with a one-line reason in @err (options that contradict
 * the mode).
 */
/* Worker threads in shared mode unless threads= is given (round trips, not CPU). */
#define SHARED_THREADS 16

int shared_setup(struct accelfs *fs, char *err, size_t len);

/* Settled by shared_setup(): does the mount run in shared mode? */
bool shared_mode(struct accelfs *fs);

/* At INIT: one log line on the mode, and what it changed. */
void shared_log(struct accelfs *fs);

#endif
