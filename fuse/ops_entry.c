// SPDX-License-Identifier: MIT
/*
 * ops_entry.c - names and attributes: lookup/forget, getattr/setattr,
 * creating, linking, renaming and removing names, statfs and access.
 *
 * Every operation works on descriptors relative to the parent's O_PATH fd.
 * Each handler ends in exactly one fuse_reply_*.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "accelfs_i.h"

static int stat_inode(struct inode *n, struct stat *st)
{
	int fd = inode_fd_get(n);
	int ret =
	    INODE_FD_OR(fd, fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) ? -errno : 0;

	inode_fd_put(n, fd);
	return ret;
}

void entry_fill_timeouts(struct fuse_entry_param *e)
{
	e->attr_timeout = accelfs.opts.attr_timeout;
	e->entry_timeout = accelfs.opts.entry_timeout;
}

int entry_lookup(fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	struct inode *p = inode_get(parent), *n;
	int fd, err = 0, pfd = inode_fd_get(p);

	memset(e, 0, sizeof(*e));
	fd = INODE_FD_OR(pfd, openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	inode_fd_put(p, pfd);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
		err = errno;
		close(fd);
		return -err;
	}
	n = inode_ref(fd, &e->attr, &err);
	if (!n)
		return -err;
	e->ino = n == &accelfs.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
	entry_fill_timeouts(e);
	return 0;
}

static void reply_entry_or_err(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int ret = entry_lookup(parent, name, &e);

	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_entry(req, &e);
}

static void accel_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int ret = entry_lookup(parent, name, &e);

	if (ret == -ENOENT && accelfs.opts.negative_timeout > 0) {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = accelfs.opts.negative_timeout; /* ino 0: cached "no such name" */
		fuse_reply_entry(req, &e);
	} else if (ret) {
		fuse_reply_err(req, -ret);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void accel_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_unref(inode_get(ino), nlookup);
	fuse_reply_none(req);
}

static void accel_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		inode_unref(inode_get(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void accel_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int ret;

	if (fi)
		ret = fstat(((struct open_file *)(uintptr_t)fi->fh)->fd, &st) ? -errno : 0;
	else
		ret = stat_inode(inode_get(ino), &st);
	if (!ret)
		wb_fix_attr(&st);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, accelfs.opts.attr_timeout);
}

static int set_mode(struct inode *n, int fd, mode_t mode)
{
	char path[PROC_FD_LEN];
	int nfd, ret;

	if (fd >= 0)
		return fchmod(fd, mode) ? -errno : 0;
	nfd = inode_fd_get(n);
	ret = INODE_FD_OR(nfd, chmod(proc_fd_path(nfd, path), mode)) ? -errno : 0;
	inode_fd_put(n, nfd);
	return ret;
}

static int truncate_path(struct inode *n, off_t size)
{
	char path[PROC_FD_LEN];
	int fd = inode_fd_get(n);
	int ret = INODE_FD_OR(fd, truncate(proc_fd_path(fd, path), size)) ? -errno : 0;

	inode_fd_put(n, fd);
	return ret;
}

/* A size change keeps the buffer cache coherent around the backend truncate. */
static int set_size(struct inode *n, struct open_file *of, off_t size)
{
	int ret;

	if (!of)
		return cache_io_truncate_inode(n, size, truncate_path);
	ret = cache_io_write_begin(of, 0, 0);
	if (ret)
		return ret;
	ret = ftruncate(of->fd, size) ? -errno : 0;
	if (!ret)
		cache_io_truncated(of, (uint64_t)size);
	cache_io_write_end(of, 0, ret);
	return ret;
}

static int set_times(struct inode *n, int fd, const struct stat *attr, int valid)
{
	struct timespec tv[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
	char path[PROC_FD_LEN];
	int ret;

	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (fd >= 0)
		return futimens(fd, tv) ? -errno : 0;
	fd = inode_fd_get(n);
	if (fd < 0)
		return fd;
	ret = utimensat(fd, "", tv, AT_EMPTY_PATH) ? -errno : 0;
	if (ret == -EINVAL || ret == -ENOENT || ret == -EBADF)
		ret = S_ISLNK(n->type) ? -EPERM /* no way to reach the link itself through procfs */
		      : utimensat(AT_FDCWD, proc_fd_path(fd, path), tv, 0) ? -errno
									   : 0;
	inode_fd_put(n, fd);
	return ret;
}

static int do_setattr(struct inode *n, struct open_file *of, const struct stat *attr, int valid)
{
	int fd = of ? of->fd : -1;
	int ret = 0;

	if (valid & FUSE_SET_ATTR_MODE)
		ret = set_mode(n, fd, attr->st_mode);
	if (!ret && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
		int nfd = inode_fd_get(n);

		if (INODE_FD_OR(nfd,
				fchownat(nfd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)))
			ret = -errno;
		inode_fd_put(n, nfd);
	}
	if (!ret && (valid & FUSE_SET_ATTR_SIZE))
		ret = set_size(n, of, attr->st_size);
	if (!ret && (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
			      FUSE_SET_ATTR_MTIME_NOW)))
		ret = set_times(n, fd, attr, valid);
	return ret;
}

/*
 * With the writeback cache the kernel owns a file's mtime and sends it with
 * a SETATTR of mtime (and ctime) on the open handle at every fsync and
 * write-back -- one extra backend metadata update per fsync'ed record, and
 * the stat in the reply makes the next write take a fine-grained timestamp
 * (multigrain timestamps), so ext4 journals the inode at every fsync. Only
 * that request has this shape (a utimensat by a program carries no handle),
 * so the time is kept on the handle and set once, at release; the reply
 * takes the other attributes from a statx that does not ask for times.
 */
static bool kernel_times_flush(const struct open_file *of, int valid)
{
	return of && S_ISREG(of->inode->type) &&
	       (valid & ~FUSE_SET_ATTR_CTIME) == FUSE_SET_ATTR_MTIME;
}

static int times_deferred(struct open_file *of, const struct stat *attr, int valid, struct stat *st)
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
	wb_fix_attr(st);
	pthread_mutex_lock(&of->inode->lock);
	of->pending_mtime = attr->st_mtim;
	of->mtime_pending = true;
	pthread_mutex_unlock(&of->inode->lock);
	return 0;
}

static void accel_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			  struct fuse_file_info *fi)
{
	struct inode *n = inode_get(ino);
	struct open_file *of = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	struct stat st;
	int ret;

	if (kernel_times_flush(of, valid)) {
		ret = times_deferred(of, attr, valid, &st);
		if (ret)
			fuse_reply_err(req, -ret);
		else
			fuse_reply_attr(req, &st, accelfs.opts.attr_timeout);
		return;
	}
	ret = do_setattr(n, of, attr, valid);

	if (!ret)
		ret = stat_inode(n, &st);
	if (!ret) { /* the kernel now knows this state (see inode.c, must_retire) */
		pthread_mutex_lock(&n->lock);
		stamp_set(n, &st);
		pthread_mutex_unlock(&n->lock);
	}
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, accelfs.opts.attr_timeout);
}

static void accel_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	int fd = inode_fd_get(inode_get(ino));
	ssize_t len = INODE_FD_OR(fd, readlinkat(fd, "", buf, sizeof(buf)));

	inode_fd_put(inode_get(ino), fd);

	if (len < 0)
		fuse_reply_err(req, errno);
	else if (len == sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[len] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

void entry_chown_new(fuse_req_t req, struct inode *parent, const char *name)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t gid = ctx->gid;
	struct stat pst;
	int pfd;

	if (!accelfs.chown_new || (ctx->uid == 0 && ctx->gid == 0))
		return;
	pfd = inode_fd_get(parent);
	if (pfd < 0)
		return;
	if (!fstatat(pfd, "", &pst, AT_EMPTY_PATH) && (pst.st_mode & S_ISGID))
		gid = (gid_t)-1; /* set-group-ID directory: the file system chose the group */
	/* Best effort, as a kernel file system would create it already owned. */
	(void)!fchownat(pfd, name, ctx->uid, gid, AT_SYMLINK_NOFOLLOW);
	inode_fd_put(parent, pfd);
}

/*
 * With FUSE_DONT_MASK the kernel leaves the caller's umask to us, so that a
 * parent's default ACL can take its place as on a local file system. The
 * backing file system makes exactly that choice if the creating thread has
 * the caller's umask, so each worker gets a private fs_struct
 * (unshare(CLONE_FS)) and sets its own umask per request. Where unshare is
 * refused, the umask is applied to the mode (default ACLs then also get it).
 */
static __thread int thread_umask = -1; /* -1: not set up, -2: unshare refused */

mode_t entry_mode(fuse_req_t req, mode_t mode)
{
	mode_t um;

	if (!accelfs.dont_mask)
		return mode; /* the kernel already applied the umask */
	um = fuse_req_ctx(req)->umask;
	if (thread_umask == -1)
		thread_umask = unshare(CLONE_FS) ? -2 : 0; /* main() set umask 0 */
	if (thread_umask == -2)
		return mode & ~um;
	if ((mode_t)thread_umask != um) {
		umask(um);
		thread_umask = (int)um;
	}
	return mode;
}

/* Shared tail of mknod/mkdir/symlink: fix ownership, then reply with the entry. */
static void reply_created(fuse_req_t req, fuse_ino_t parent, const char *name, int res)
{
	if (res) {
		fuse_reply_err(req, errno);
		return;
	}
	entry_chown_new(req, inode_get(parent), name);
	reply_entry_or_err(req, parent, name);
}

static void accel_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			dev_t rdev)
{
	struct inode *p = inode_get(parent);
	int pfd = inode_fd_get(p);
	int res = INODE_FD_OR(pfd, mknodat(pfd, name, entry_mode(req, mode), rdev));

	inode_fd_put(p, pfd);
	reply_created(req, parent, name, res);
}

static void accel_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct inode *p = inode_get(parent);
	int pfd = inode_fd_get(p);
	int res = INODE_FD_OR(pfd, mkdirat(pfd, name, entry_mode(req, mode)));

	inode_fd_put(p, pfd);
	reply_created(req, parent, name, res);
}

static void accel_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct inode *p = inode_get(parent);
	int pfd = inode_fd_get(p);
	int res = INODE_FD_OR(pfd, symlinkat(link, pfd, name));

	inode_fd_put(p, pfd);
	reply_created(req, parent, name, res);
}

static void accel_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct inode *n = inode_get(ino), *np = inode_get(newparent);
	char path[PROC_FD_LEN];
	int res, fd = inode_fd_get(n), npfd = inode_fd_get(np);

	res = INODE_FD_OR(fd, INODE_FD_OR(npfd, linkat(fd, "", npfd, newname, AT_EMPTY_PATH)));
	if (res && (errno == ENOENT || errno == EPERM) && !S_ISLNK(n->type) && fd >= 0 && npfd >= 0)
		res = linkat(AT_FDCWD, proc_fd_path(fd, path), npfd, newname, AT_SYMLINK_FOLLOW);
	inode_fd_put(n, fd);
	inode_fd_put(np, npfd);
	if (res) {
		fuse_reply_err(req, errno);
		return;
	}
	reply_entry_or_err(req, newparent, newname);
}

static void accel_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct inode *p = inode_get(parent);
	int pfd = inode_fd_get(p);
	int err = INODE_FD_OR(pfd, unlinkat(pfd, name, 0)) ? errno : 0;

	inode_fd_put(p, pfd);
	fuse_reply_err(req, err);
}

static void accel_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct inode *p = inode_get(parent);
	int pfd = inode_fd_get(p);
	int err = INODE_FD_OR(pfd, unlinkat(pfd, name, AT_REMOVEDIR)) ? errno : 0;

	inode_fd_put(p, pfd);
	fuse_reply_err(req, err);
}

static void accel_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
			 const char *newname, unsigned int flags)
{
	struct inode *p = inode_get(parent), *np = inode_get(newparent);
	int pfd = inode_fd_get(p), npfd = inode_fd_get(np);
	int res = INODE_FD_OR(pfd, INODE_FD_OR(npfd, renameat2(pfd, name, npfd, newname, flags)));

	inode_fd_put(p, pfd);
	inode_fd_put(np, npfd);
	fuse_reply_err(req, res ? errno : 0);
}

static void accel_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	int fd = inode_fd_get(inode_get(ino));
	int err = INODE_FD_OR(fd, fstatvfs(fd, &sv)) ? errno : 0;

	inode_fd_put(inode_get(ino), fd);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &sv);
}

static void accel_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	char path[PROC_FD_LEN];
	struct inode *n = inode_get(ino);
	int fd, err;

	if (S_ISLNK(n->type)) {
		fuse_reply_err(req, 0);
		return;
	}
	fd = inode_fd_get(n);
	err = INODE_FD_OR(fd, faccessat(AT_FDCWD, proc_fd_path(fd, path), mask, AT_EACCESS)) ? errno
											     : 0;
	inode_fd_put(n, fd);
	fuse_reply_err(req, err);
}

void ops_entry_fill(struct fuse_lowlevel_ops *ops)
{
	ops->lookup = accel_lookup;
	ops->forget = accel_forget;
	ops->forget_multi = accel_forget_multi;
	ops->getattr = accel_getattr;
	ops->setattr = accel_setattr;
	ops->readlink = accel_readlink;
	ops->mknod = accel_mknod;
	ops->mkdir = accel_mkdir;
	ops->symlink = accel_symlink;
	ops->link = accel_link;
	ops->unlink = accel_unlink;
	ops->rmdir = accel_rmdir;
	ops->rename = accel_rename;
	ops->statfs = accel_statfs;
	ops->access = accel_access;
}
