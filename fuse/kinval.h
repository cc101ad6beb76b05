/* SPDX-License-Identifier: MIT */
/*
 * kinval.h - a reply that must wait until the kernel has dropped (and first
 * written back) its cached pages of a range of a file (kinval.c).
 */
#ifndef ACCELFS_FUSE_KINVAL_H
#define ACCELFS_FUSE_KINVAL_H

#include "slow.h"

/*
 * Embedded first in the caller's malloc'ed state. @then replies to
 * slow.req once the kernel holds no page of @ino in [@off, @off + @len)
 * (@len 0: to the end of the file) that it had when the request came,
 * clean or dirty: dirty ones were written back through us first.
 */
struct kinval {
	struct slow_req slow; /* first */
	fuse_ino_t ino;
	off_t off, len;
	int err; /* set for @then: the invalidation's -errno, or 0 */
	void (*then)(struct kinval *k);
};

/*
 * Run @k (slow.req, ino, off, len, then set) in a thread of its own; the
 * state is freed after @then. Returns 0, or -errno: nothing ran, and the
 * caller replies and frees (-EOPNOTSUPP: over FUSE's io_uring transport,
 * where no other thread may reply; see transport_foreign_replies).
 */
int kinval_start(struct kinval *k);

#endif
