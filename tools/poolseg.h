/* SPDX-License-Identifier: MIT */
/*
 * poolseg.h - a pool as a shared-memory segment, for the admin commands
 * (`accel pool`, `accel show`): its default name, its header read without
 * attaching (so a pool that pool_open() refuses can still be listed), the
 * processes that have it mapped, and which pool a command works on.
 *
 * Everything here only reads: the header through cache/'s pool_seg_header(),
 * the mappers from /proc; nothing takes a pool lock. What is inside a pool is
 * read through pool_open_readonly() and cache/'s readers (tools/poolsnap.c).
 */
#ifndef ACCELFS_TOOLS_POOLSEG_H
#define ACCELFS_TOOLS_POOLSEG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool_layout.h"

/*
 * The pool a daemon of this user uses when no pool= is given (as
 * fuse/main.c): POOL_DEFAULT_NAME for root, POOL_DEFAULT_NAME-<uid> else.
 */
void poolseg_default_name(char *buf, size_t len);

/*
 * poolseg_trust - may this process read segment @name (pool_seg_trusted with
 * mode 0660)? Returns 0, -EPERM with the one-line reason in @why, or -errno.
 */
int poolseg_trust(const char *name, char *why, size_t len);

/*
 * poolseg_header - read the header of segment @name into @h and its size into
 * @size. Returns 0, -ENOENT, -EACCES, -EPERM (untrusted: not read), or
 * -EPROTO when the segment is too short or its magic is not an accelfs pool's.
 */
int poolseg_header(const char *name, struct pool_header *h, uint64_t *size);

/*
 * poolseg_users - the processes other than this one that map segment @name,
 * from /proc/PID/maps; up to @max pids into @pids. Returns how many there are
 * (may exceed @max), or -errno if the segment cannot be stat()ed. Processes
 * whose maps we may not read are not seen (run as root to see all).
 */
int poolseg_users(const char *name, pid_t *pids, size_t max);

/*
 * poolseg_choose - the pool a command works on, the same in every command:
 * @arg (--pool) in any spelling pool_name_parse() takes; else, for a path in
 * accelfs mount @mountpoint (NULL or "": none), the pool its daemon uses;
 * else poolseg_default_name(). Writes "/name" to @name. Returns 0, or -EINVAL
 * (a bad @arg) or -ENOMEDIUM (the mount uses no pool) with one line in @why.
 */
int poolseg_choose(const char *arg, const char *mountpoint, char name[POOL_NAME_LEN], char *why,
		   size_t len);

/*
 * poolseg_missing - the line for pool @name ("/nmae") that does not exist:
 * "pool nmae: no such pool (pools: accelfs-default, accelfs-demo)", naming
 * the pools this process may read. Tools never create a pool (a mount does),
 * so a misspelt name must say so rather than start an empty one.
 */
void poolseg_missing(const char *name, char *msg, size_t len);

#endif
