// SPDX-License-Identifier: MIT
/*
 * ops_seek.c - lseek: SEEK_DATA and SEEK_HOLE answered by SOURCE.
 *
 * (SEEK_SET, SEEK_CUR and SEEK_END the kernel answers itself.) SOURCE's
 * file system knows where the file's holes are, through the caller's own
 * backing descriptor, once it has every byte written through the mount:
 *   - the daemon's deferred bytes (writeback.c) are written back first;
 *   - under the writeback cache, the kernel's dirty pages: the kernel sends
 *     FUSE_LSEEK without writing them back (fs/fuse/file.c, fuse_lseek),
 *     so SOURCE would call a hole what a process wrote and did not sync,
 *     and cp, which skips holes, would copy zeros. While a writable handle
 *     of the file is open (only then can the kernel hold dirty pages: each
 *     close and release writes them back first), the kernel's pages from
 *     the offset on are written back and dropped (kinval.c) before SOURCE
 *     is asked. Past EOF the answer is SOURCE's: ENXIO, as on ext4.
 * With kernel passthrough the kernel writes SOURCE itself, and still sends
 * FUSE_LSEEK here: answered the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "kinval.h"

struct seek_wait {
	struct kinval k;      /* first */
	struct open_file *of; /* the kernel holds the file until our reply */
	off_t off;
	int whence;
};

/* SOURCE's answer once our deferred bytes are there: the offset or -errno. */
static off_t seek_source(struct open_file *of, off_t off, int whence)
{
	off_t res = wb_flush_now(of);

	if (res)
		return res;
	res = lseek(of->fd, off, whence);
	return res < 0 ? -errno : res;
}

static void seek_reply(fuse_req_t req, off_t res)
{
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_lseek(req, res);
}

static void seek_then(struct kinval *k)
{
	struct seek_wait *w = (struct seek_wait *)k;

	seek_reply(k->slow.req, k->err ? k->err : seek_source(w->of, w->off, w->whence));
}

/* May the kernel hold pages of @of's file that SOURCE has not seen? */
static bool kernel_dirty_possible(const struct open_file *of)
{
	return __atomic_load_n(&of->fs->opts.writeback, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&of->inode->wopens, __ATOMIC_RELAXED) > 0;
}

static void accel_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
			struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct seek_wait *w;
	int ret;

	if (off < 0 || !kernel_dirty_possible(of)) {
		seek_reply(req, seek_source(of, off, whence));
		return;
	}
	w = malloc(sizeof(*w));
	if (!w) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	*w = (struct seek_wait){
		.k = { .slow = { .req = req }, .ino = ino, .off = off, .then = seek_then },
		.of = of,
		.off = off,
		.whence = whence,
	};
	ret = kinval_start(&w->k);
	if (ret)
		free(w);
	if (ret == -EOPNOTSUPP) {
		/* Over FUSE's io_uring: the kernel answers this and every later
		 * SEEK_DATA/SEEK_HOLE of the mount itself (data up to its EOF),
		 * which never calls a hole what a process wrote. */
		log_msg(LOG_NOTICE, "SEEK_DATA/SEEK_HOLE answered by the kernel from now on "
				    "(all data): its dirty pages cannot be written back first "
				    "over FUSE's io_uring");
		fuse_reply_err(req, ENOSYS);
	} else if (ret) { /* the user's share of waiting requests is taken */
		fuse_reply_err(req, EAGAIN);
	}
}

void ops_seek_fill(struct fuse_lowlevel_ops *ops)
{
	ops->lseek = accel_lseek;
}
