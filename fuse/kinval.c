// SPDX-License-Identifier: MIT
/*
 * kinval.c - reply only after the kernel dropped its pages of a range.
 *
 * Two answers depend on what the kernel's page cache holds: SEEK_DATA and
 * SEEK_HOLE under the writeback cache (dirty pages SOURCE has not seen),
 * and a direct write the kernel does not follow with an invalidation of
 * its own (asynchronous O_DIRECT on a cached file: a buffered read that
 * raced the write may have left the old bytes in the page cache). An
 * inode invalidation (FUSE_NOTIFY_INVAL_INODE) writes back the range's
 * dirty pages (launder) and drops them all, before it returns.
 *
 * Deadlock: the invalidation waits for pages locked by reads and for the
 * write-back of dirty ones, which are FUSE requests that workers serve.
 * So it is never sent from a worker (libfuse's doc: not in the execution
 * path of a related request): the request is finished in a thread of its
 * own (slow.c, bounded per user), holding no lock of the daemon, and only
 * its reply waits for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kinval.h"

static void kinval_run(struct slow_req *s)
{
	struct kinval *k = (struct kinval *)s;
	struct accelfs *fs = fuse_req_userdata(s->req);
	int ret = fuse_lowlevel_notify_inval_inode(fs->se, k->ino, k->off, k->len);

	/* -ENOENT: the kernel holds no such inode, hence no page of it */
	k->err = ret == -ENOENT ? 0 : ret;
	if (k->err)
		log_msg(LOG_WARNING, "node %llu: cannot drop the kernel's pages: %s",
			(unsigned long long)k->ino, strerror(-ret));
	slow_end(s);
	k->then(k);
}

static void kinval_done(struct slow_req *s)
{
	free(s);
}

int kinval_start(struct kinval *k)
{
	/* the notification itself must not come from the ring thread either:
	 * the reads it waits for may be queued on that very ring */
	if (!transport_foreign_replies(fuse_req_userdata(k->slow.req)))
		return -EOPNOTSUPP;
	k->slow.run = kinval_run;
	k->slow.done = kinval_done;
	return slow_start(&k->slow);
}
