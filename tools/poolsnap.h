/* SPDX-License-Identifier: MIT */
/*
 * poolsnap.h - a consistent-enough picture of a global buffer pool for the
 * statistics tools (`accel stat`, `accel monitor`): geometry, pool-wide
 * counters and every file slot in use, taken without a lock through the
 * pool's read-only API, so looking never slows the daemons that use it.
 *
 * Counters are relaxed atomics read one by one (pool_layout.h, I7): two
 * counters of one snapshot may be a few events apart, never torn.
 */
#ifndef ACCELFS_TOOLS_POOLSNAP_H
#define ACCELFS_TOOLS_POOLSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "mountres.h"
#include "pool.h"

struct poolsnap {
	double t;	     /* util_now() when taken */
	int64_t realtime_ns; /* CLOCK_REALTIME when taken */
	struct pool_info info;
	struct pool_stats st;
	struct pool_stats_file *files; /* slot order */
	size_t nfiles;
	size_t cap;
};

/*
 * poolsnap_open - attach read-only to pool @name (NULL: the default pool;
 * commands choose it with poolseg_choose()). On failure writes one line for
 * the user to @msg (poolseg_missing()'s "pool x: no such pool (pools: ...)",
 * "pool /x: permission denied ...",
 * or pool_open_readonly()'s reason) and returns -errno: -EINVAL for a name
 * that cannot be a pool, -ENOENT, -EACCES, -EPROTO, -EUCLEAN, ...
 */
int poolsnap_open(const char *name, struct pool **out, char *msg, size_t len);

/* Fill @s (zeroed the first time) with the pool's state now. 0 or -ENOMEM. */
int poolsnap_take(struct pool *pool, struct poolsnap *s);

void poolsnap_free(struct poolsnap *s);

/* The snapshot of file (@dev, @ino), or NULL if it has no slot in the pool. */
const struct pool_stats_file *poolsnap_find(const struct poolsnap *s, uint64_t dev, uint64_t ino);

/*
 * poolsnap_file_id - the (dev, ino) the pool knows @path by: that of its
 * backing file when @path is inside an accelfs mount, else its own; @r
 * receives mountres_resolve()'s result (the mount, for poolseg_choose()).
 * Returns 0 or -errno from the resolver or stat().
 */
int poolsnap_file_id(const char *path, struct mountres *r, uint64_t *dev, uint64_t *ino);

/*
 * poolsnap_target - what `accel stat`, `monitor` and `report` look at: the
 * identity of --file @file (NULL: none) into @dev and @ino, and the pool
 * poolseg_choose() picks for --pool @pool_arg and that file's mount. Returns
 * 0, or -errno with one line in @msg: -EINVAL for a bad pool name (a usage
 * error), -ENOMEDIUM for a mount without a pool, the file's error else.
 */
int poolsnap_target(const char *pool_arg, const char *file, char name[POOL_NAME_LEN], uint64_t *dev,
		    uint64_t *ino, char *msg, size_t len);

#endif
