// SPDX-License-Identifier: MIT
/*
 * times.c - times set on an open file (times.h): kept on the node and set
 * again after what a write-back moved, the kernel's own mtime under the
 * writeback cache included.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "accelfs_i.h"
#include "times.h"

void times_keep_locked(struct inode *n, const struct timespec tv[2])
{
	if (!n->times_pending)
		n->times[0].tv_nsec = n->times[1].tv_nsec = UTIME_OMIT;
	for (int i = 0; i < 2; i++)
		if (tv[i].tv_nsec != UTIME_OMIT)
			n->times[i] = tv[i];
	__atomic_store_n(&n->times_pending, true, __ATOMIC_RELAXED);
	n->times_on_source = false;
}

/* The same, taking inode->lock. */
static void times_keep(struct inode *n, const struct timespec tv[2])
{
	pthread_mutex_lock(&n->lock);
	times_keep_locked(n, tv);
	pthread_mutex_unlock(&n->lock);
}

/*
 * With the writeback cache the kernel owns a file's mtime and sends it with
 * a SETATTR of mtime (and ctime) on the open handle at every fsync and
 * write-back -- one extra backend metadata update per fsync'ed record, and
 * the stat in the reply makes the next write take a fine-grained timestamp
 * (multigrain timestamps), so ext4 journals the inode at every fsync. Only
 * that request has this shape (a utimensat by path carries no handle; a
 * futimens of the mtime alone looks the same, and is served the same way),
 * so the time is kept on the node and set at close and release (times_keep);
 * the reply takes the other attributes from a statx that does not ask for
 * times.
 */
bool times_kernel_flush(const struct open_file *of, int valid)
{
	return of && S_ISREG(of->inode->type) &&
	       (valid & ~FUSE_SET_ATTR_CTIME) == FUSE_SET_ATTR_MTIME;
}

int times_deferred(struct open_file *of, const struct stat *attr, int valid, struct stat *st)
{
	struct statx sx;

	if (statx(of->fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS & ~(STATX_MTIME | STATX_CTIME), &sx))
		return -errno;
	*st = (struct stat){
		.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
		.st_ino = sx.stx_ino,
		.st_mode = sx.stx_mode,
		.st_nlink = sx.stx_nlink,
		.st_uid = sx.stx_uid,
		.st_gid = sx.stx_gid,
		.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor),
		.st_size = (off_t)sx.stx_size,
		.st_blksize = (blksize_t)sx.stx_blksize,
		.st_blocks = (blkcnt_t)sx.stx_blocks,
		.st_atim = { .tv_sec = sx.stx_atime.tv_sec, .tv_nsec = sx.stx_atime.tv_nsec },
		.st_mtim = attr->st_mtim,
		.st_ctim = (valid & FUSE_SET_ATTR_CTIME) ? attr->st_ctim : attr->st_mtim,
	};
	wb_fix_attr(of->fs, st);
	/* the kernel's mtime now; an explicit atime kept earlier stays */
	times_keep(of->inode, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, attr->st_mtim });
	return 0;
}

/*
 * Times set on the open file (explicitly, or the kernel's mtime: see
 * set_times in ops_entry.c and times_kernel_flush) are set again after what
 * this close or release wrote back, which moved SOURCE's mtime.
 */
void times_apply(struct open_file *of)
{
	struct inode *n = of->inode;

	if (!__atomic_load_n(&n->times_pending, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&n->lock);
	if (n->times_pending && !(n->times_on_source && n->times_gen == times_source_gen(n))) {
		uint64_t gen = times_source_gen(n);

		if (futimens(of->fd, n->times))
			log_msg(LOG_WARNING, "inode %llu: cannot set times: %s",
				(unsigned long long)n->ino, strerror(errno));
		else
			times_set_on_source_locked(n, gen);
	}
	pthread_mutex_unlock(&n->lock);
}

/* A write that ends after @gen was read counts after it: the times go again. */
void times_set_on_source_locked(struct inode *n, uint64_t gen)
{
	n->times_on_source = true;
	n->times_gen = gen;
}

/*
 * An application's write that reaches us as it is made (no writeback cache,
 * or O_DIRECT) sets the mtime itself, as on a local file system: times set
 * before it are not set again.
 */
void times_written(struct open_file *of)
{
	struct inode *n = of->inode;

	if ((of->fs->opts.writeback && !(of->flags & O_DIRECT)) ||
	    !__atomic_load_n(&n->times_pending, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&n->lock);
	__atomic_store_n(&n->times_pending, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&n->lock);
}
