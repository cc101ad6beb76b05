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
#include <sys/xattr.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"
#include "open_files.h"
#include "times.h"
#include "tuning.h"
#include "watch.h"

/* An extended attribute no SOURCE client caches (name_revalidate) */
#define REVALIDATE_XATTR TUNING_PREFIX "revalidate"

/*
 * The node's state. A file deleted in SOURCE (by another host, or behind a
 * node kept by handle) is still there for whoever holds it open, as on a
 * local file system: fstat(2) of an open file asks without its handle
 * (the kernel sends GETATTR_FH only from its read path), so an open
 * handle's descriptor answers where the node's own is stale.
 */
static int stat_inode(struct accelfs *fs, struct inode *n, struct stat *st)
{
	int fd = inode_fd_get(n);
	int ret =
	    INODE_FD_OR(fd, fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) ? -errno : 0;

	inode_fd_put(n, fd);
	if ((ret == -ESTALE || ret == -ENOENT) && __atomic_load_n(&n->opens, __ATOMIC_RELAXED))
		ret = open_files_fstat(fs, n, st, ret);
	return ret;
}

static void entry_fill_timeouts(struct accelfs *fs, struct fuse_entry_param *e)
{
	e->attr_timeout = opt_attr_timeout(fs);
	e->entry_timeout = opt_entry_timeout(fs);
}

/* @e names node @n, held for the kernel */
static void entry_set(struct accelfs *fs, struct fuse_entry_param *e, struct inode *n)
{
	e->ino = n->nodeid;
	e->generation = n->nodeid >> 32; /* kept in exported handles (node_ids.c) */
	entry_fill_timeouts(fs, e);
}

/* Take the node of O_PATH descriptor @fd, whose state is in @e->attr; consumes @fd. */
static int entry_ref(struct accelfs *fs, int fd, struct fuse_entry_param *e)
{
	struct inode *n;
	int err = 0;

	n = inode_ref(fs, fd, &e->attr, &err);
	if (!n)
		return -err;
	entry_set(fs, e, n);
	return 0;
}

static void stat_from_statx(const struct statx *x, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x->stx_dev_major, x->stx_dev_minor);
	st->st_ino = x->stx_ino;
	st->st_mode = x->stx_mode;
	st->st_nlink = x->stx_nlink;
	st->st_uid = x->stx_uid;
	st->st_gid = x->stx_gid;
	st->st_rdev = makedev(x->stx_rdev_major, x->stx_rdev_minor);
	st->st_size = (off_t)x->stx_size;
	st->st_blksize = x->stx_blksize;
	st->st_blocks = (blkcnt_t)x->stx_blocks;
	st->st_atim = (struct timespec){ x->stx_atime.tv_sec, x->stx_atime.tv_nsec };
	st->st_mtim = (struct timespec){ x->stx_mtime.tv_sec, x->stx_mtime.tv_nsec };
	st->st_ctim = (struct timespec){ x->stx_ctime.tv_sec, x->stx_ctime.tv_nsec };
}

/*
 * Makes SOURCE's client look @name in @pfd up at its server: the name led to
 * a file whose open just failed with ESTALE (another host replaced it,
 * write-temp-then-rename). statx, even with AT_STATX_FORCE_SYNC, and O_PATH
 * opens are answered from the client's caches (glusterfs's md-cache) with
 * that old file. A getxattr of an attribute no client caches goes to the
 * server, which answers ESTALE, and the VFS then walks the path again with
 * LOOKUP_REVAL, as for a program's own open on the bare mount. The answer
 * (ENODATA, mostly) is of no interest.
 */
static void name_revalidate(int pfd, const char *name)
{
	char path[PROC_FD_LEN + NAME_MAX + 2];

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", pfd, name);
	(void)!lgetxattr(path, REVALIDATE_XATTR, NULL, 0);
}

/*
 * What @name in @pfd is now. In shared mode the answer must come from
 * SOURCE, not from its client's caches: another host may have replaced the
 * name while the SOURCE client still maps it to the old object.
 * AT_STATX_FORCE_SYNC asks the client to ask the server (not where the
 * client answers it from its caches anyway: fs->lookup_forced, shared.c);
 * where that is not enough (the old object's open failed:
 * inode_take_stale), name_revalidate.
 * @how LOOKUP_LISTED: the name comes from a listing the daemon just read
 * from SOURCE, which brought the client the entries and their attributes
 * (READDIRPLUS, NFS's and GlusterFS's alike): the client's caches are as
 * new as the listing, and a forced stat would be one request more per
 * entry, one after the other in one worker (a hop into GlusterFS's client,
 * which answers it from md-cache; a round trip on NFS).
 */
static int stat_name(struct accelfs *fs, int pfd, const char *name, struct stat *st,
		     enum lookup_how how)
{
	struct statx x;
	unsigned int flags = AT_SYMLINK_NOFOLLOW;

	if (!fs->shared)
		return fstatat(pfd, name, st, AT_SYMLINK_NOFOLLOW);
	if (how != LOOKUP_LISTED && fs->lookup_forced)
		flags |= AT_STATX_FORCE_SYNC;
	if (statx(pfd, name, flags, STATX_BASIC_STATS, &x))
		return -1;
	stat_from_statx(&x, st);
	if (!inode_take_stale(fs, st))
		return 0;
	flags |= AT_STATX_FORCE_SYNC;
	name_revalidate(pfd, name);
	if (statx(pfd, name, flags, STATX_BASIC_STATS, &x))
		return -1;
	stat_from_statx(&x, st);
	return 0;
}

/*
 * LOOKUP of "." in @id: the kernel asks only when it decodes a handle
 * exported from the mount (open_by_handle_at, nfsd: fuse_get_dentry) whose
 * node it no longer holds, so @id may be one it forgot. The answer must
 * carry that very id, or the kernel refuses the handle (ESTALE): a ghost's
 * file takes its old id again (node_ids.c). Reached only by callers with
 * CAP_DAC_READ_SEARCH, who may open any handle on SOURCE anyway.
 */
static int lookup_self(struct accelfs *fs, fuse_ino_t id, struct fuse_entry_param *e)
{
	int fd = inode_open_id(fs, id), err;

	memset(e, 0, sizeof(*e));
	if (fd < 0)
		return fd;
	if (fstat(fd, &e->attr)) {
		err = errno;
		close(fd);
		return -err;
	}
	err = entry_ref(fs, fd, e);
	if (!err && e->ino != id) { /* a newer node stands for the file now */
		inode_unref(fs, inode_get(fs, e->ino), 1);
		err = -ENOENT;
	}
	return err;
}

/*
 * @name in @parent as a node for the kernel (adds a lookup). @how
 * LOOKUP_MADE: the caller just made the object (mkdir, mknod, symlink), so
 * no node can stand for it yet: the first fstatat, which finds a known node
 * without opening the name, would be one system call (a round trip on a
 * network SOURCE) for nothing. LOOKUP_LISTED: see stat_name.
 */
static int lookup_name(struct accelfs *fs, fuse_ino_t parent, const char *name,
		       struct fuse_entry_param *e, enum lookup_how how)
{
	struct inode *p;
	int fd, err, pfd;

	if (parent != FUSE_ROOT_ID && !strcmp(name, "."))
		return lookup_self(fs, parent, e);
	p = inode_get(fs, parent);
	memset(e, 0, sizeof(*e));
	/* ".." of the mount root is the root itself, never SOURCE's parent
	 * (the kernel asks for it only through NFS export's get_parent). */
	if (p == &fs->root && !strcmp(name, ".."))
		name = ".";
	pfd = inode_fd_get(p);
	/* A name whose object the kernel already has a node for (readdirplus of
	 * a listed tree, a LOOKUP after the entry expired) costs one fstatat;
	 * a missing name answers here too. Else the name is opened. */
	if (how == LOOKUP_MADE)
		goto open_name;
	if (pfd >= 0 && stat_name(fs, pfd, name, &e->attr, how)) {
		err = errno;
		inode_fd_put(p, pfd);
		return -err;
	}
	if (pfd >= 0) {
		struct inode *n = inode_ref_known(fs, &e->attr);

		if (n) {
			inode_fd_put(p, pfd);
			entry_set(fs, e, n);
			watch_entry(fs, p, n, e);
			return 0;
		}
	}
open_name:
	fd = INODE_FD_OR(pfd, openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0 && pfd >= 0 && errno == ESTALE) /* replaced meanwhile: again, as NFS does */
		fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	inode_fd_put(p, pfd);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
		err = errno;
		close(fd);
		return -err;
	}
	err = entry_ref(fs, fd, e);
	if (!err)
		watch_entry(fs, p, inode_get(fs, e->ino), e);
	return err;
}

int entry_from_fd(struct accelfs *fs, int fd, struct fuse_entry_param *e)
{
	char path[PROC_FD_LEN];
	int pfd;

	memset(e, 0, sizeof(*e));
	if (fstat(fd, &e->attr))
		return -errno;
	/* The open object itself (a magic link), not its name: nothing to race with. */
	pfd = open(proc_fd_path(fd, path), O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	return entry_ref(fs, pfd, e);
}

int entry_lookup(struct accelfs *fs, fuse_ino_t parent, const char *name,
		 struct fuse_entry_param *e, enum lookup_how how)
{
	return lookup_name(fs, parent, name, e, how);
}

/* The entry of @name, just made (mkdir, mknod, symlink: see lookup_name), or the error. */
static void reply_made_entry(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	int ret = lookup_name(fs, parent, name, &e, LOOKUP_MADE);

	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_entry(req, &e);
}

static void accel_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	int ret = entry_lookup(fs, parent, name, &e, LOOKUP_ASK);

	if (ret == -ENOENT && fs->opts.negative_timeout > 0) {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->opts.negative_timeout; /* ino 0: cached "no such name" */
		fuse_reply_entry(req, &e);
	} else if (ret) {
		fuse_reply_err(req, -ret);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void accel_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct accelfs *fs = fuse_req_userdata(req);

	inode_unref(fs, inode_get(fs, ino), nlookup);
	fuse_reply_none(req);
}

static void accel_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct accelfs *fs = fuse_req_userdata(req);
	size_t i;

	for (i = 0; i < count; i++)
		inode_unref(fs, inode_get(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void accel_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = fi ? ((struct open_file *)(uintptr_t)fi->fh)->inode : inode_get(fs, ino);
	struct stat st;
	int ret;

	if (fi)
		ret = fstat(((struct open_file *)(uintptr_t)fi->fh)->fd, &st) ? -errno : 0;
	else
		ret = stat_inode(fs, n, &st);
	if (!ret) {
		wb_fix_attr(fs, &st);
		inode_note_mode(n, &st);
	}
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, watch_attr_timeout(fs, n));
}

static int set_mode(struct inode *n, int fd, mode_t mode)
{
	char path[PROC_FD_LEN];
	int ret;

	if (fd >= 0)
		return fchmod(fd, mode) ? -errno : 0;
	if (S_ISLNK(n->type))
		return -EOPNOTSUPP; /* procfs would reach the link's target (as fchmodat2 says) */
	fd = inode_fd_get(n);
	ret = INODE_FD_OR(fd, chmod(proc_fd_path(fd, path), mode)) ? -errno : 0;
	inode_fd_put(n, fd);
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
static int set_size(struct accelfs *fs, struct inode *n, struct open_file *of, off_t size)
{
	int ret;

	if (!of) {
		ret = cache_io_truncate_inode(fs, n, size, truncate_path);
		/* SOURCE's mtime moved (times_apply sets kept times again) */
		times_source_moved(n);
		return ret;
	}
	ret = cache_io_write_begin(of, 0, 0);
	if (ret)
		return ret;
	ret = ftruncate(of->fd, size) ? -errno : 0;
	if (!ret)
		cache_io_truncated(of, (uint64_t)size);
	cache_io_write_end(of, 0, ret);
	return ret;
}

/* Through the node's pinned descriptor @nfd: itself, or its magic link. */
static int set_times_node(struct inode *n, int nfd, const struct timespec tv[2])
{
	char path[PROC_FD_LEN];

	if (!utimensat(nfd, "", tv, AT_EMPTY_PATH))
		return 0;
	if (errno != EINVAL && errno != ENOENT && errno != EBADF)
		return -errno;
	if (S_ISLNK(n->type))
		return -EPERM; /* no way to reach the link itself through procfs */
	return utimensat(AT_FDCWD, proc_fd_path(nfd, path), tv, 0) ? -errno : 0;
}

static int set_times_now(struct inode *n, int fd, const struct timespec tv[2])
{
	int nfd, ret;

	if (fd >= 0)
		return futimens(fd, tv) ? -errno : 0;
	nfd = inode_fd_get(n);
	ret = nfd < 0 ? nfd : set_times_node(n, nfd, tv);
	inode_fd_put(n, nfd);
	return ret;
}

/* Is some time explicit, and every explicit one within a second of the clock's now? */
static bool times_near_now(const struct timespec tv[2])
{
	struct timespec now;
	int given = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_nsec == UTIME_OMIT || tv[i].tv_nsec == UTIME_NOW)
			continue;
		if (tv[i].tv_sec < now.tv_sec - 1 || tv[i].tv_sec > now.tv_sec + 1)
			return false;
		given++;
	}
	return given > 0;
}

/*
 * Under the writeback cache the kernel sends "now" as explicit times
 * (utimensat(NULL), UTIME_NOW, touch): those only the owner may set, so a
 * writer who is not the owner got EPERM where a local file system lets her.
 * The kernel has checked her right to set "now" (write permission) before
 * sending them; explicit times at the clock's now that SOURCE refuses are
 * set again as UTIME_NOW, with her credentials, which SOURCE checks the same
 * way. pjdfstest utimensat/06.t, xfstests generic/087.
 */
static int set_times_checked(struct accelfs *fs, struct inode *n, int fd, struct timespec tv[2])
{
	int ret = set_times_now(n, fd, tv);

	if (ret != -EPERM || !fs->opts.writeback || !times_near_now(tv))
		return ret;
	for (int i = 0; i < 2; i++)
		if (tv[i].tv_nsec != UTIME_OMIT)
			tv[i].tv_nsec = UTIME_NOW;
	return set_times_now(n, fd, tv);
}

/*
 * Times set on an open regular file (GNU tar: write, futimens, close) must
 * survive what is written back after them: its deferred bytes go to SOURCE
 * first, and the times (as SOURCE recorded them, for UTIME_NOW) are kept to
 * be set again after any later write-back until the last close (times_apply
 * in ops_file.c), since the kernel's writeback cache may still send WRITEs.
 * Returns 1 with SOURCE's attributes after the change in @st (an open
 * file's, taken to keep its times), 0, or -errno.
 */
static int set_times(struct accelfs *fs, struct inode *n, int fd, const struct stat *attr,
		     int valid, struct stat *st)
{
	struct timespec tv[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
	/* a hint, without inode->lock: an open racing this SETATTR has written nothing yet */
	bool open_file = S_ISREG(n->type) && __atomic_load_n(&n->opens, __ATOMIC_RELAXED);
	uint64_t gen;
	int ret;

	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (!open_file)
		return set_times_checked(fs, n, fd,
					 tv); /* deferred bytes went first: accel_setattr */
	/* inode->lock from setting to keeping: a release's times_apply (async
	 * after close) must not land in between and set the older kept times
	 * over these (ops_meta "NULL means now" after a futimens and a close) */
	pthread_mutex_lock(&n->lock);
	gen = times_source_gen(n);
	ret = set_times_checked(fs, n, fd, tv);
	/* opens again under the lock: a last release since the hint cleared
	 * what is kept, and nothing is written back after it (handle_new drops
	 * what a racing keep leaves anyway). A passthrough inode's handles are
	 * all passthrough (passthrough.c): no write-back of ours follows, and
	 * the kernel's own writes after this must move the mtime as on a local
	 * file system, so nothing is kept either. */
	if (!ret && n->opens && !n->pt_opens && !stat_inode(fs, n, st)) {
		if (tv[0].tv_nsec != UTIME_OMIT)
			tv[0] = st->st_atim;
		if (tv[1].tv_nsec != UTIME_OMIT)
			tv[1] = st->st_mtim;
		times_keep_locked(n, tv);
		/* SOURCE has them: the close sets them again only after a write */
		times_set_on_source_locked(n, gen);
		ret = 1;
	}
	pthread_mutex_unlock(&n->lock);
	return ret;
}

#define SET_ATTR_TIMES                                                         \
	(FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW | \
	 FUSE_SET_ATTR_MTIME_NOW)

/* Returns 1 with the attributes after the change in @st (set_times), 0 or -errno. */
static int do_setattr(struct accelfs *fs, struct inode *n, struct open_file *of,
		      const struct stat *attr, int valid, struct stat *st)
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
		ret = set_size(fs, n, of, attr->st_size);
	if (!ret && (valid & SET_ATTR_TIMES))
		ret = set_times(fs, n, fd, attr, valid, st);
	return ret;
}

/*
 * A write or truncate by someone without CAP_FSETID makes the kernel clear
 * the file's set-ID bits (file_remove_privs: a forced mode change, checked
 * by the kernel with default_permissions, which a root daemon with
 * allow_other always has). With the caller's credentials the backing file
 * system would refuse it to anyone but the owner, so a change that only
 * removes set-ID bits is made with the daemon's rights, first; the rest of
 * the request then runs as the caller. Returns 0 or -errno.
 */
static int kill_setid_as_daemon(fuse_req_t req, struct inode *n, struct open_file *of,
				const struct stat *attr, int *valid)
{
	struct accelfs *fs = fuse_req_userdata(req);
	mode_t removed, added, old, new = attr->st_mode & 07777;
	struct stat st;
	int ret;

	if (!(*valid & FUSE_SET_ATTR_MODE) || !fs->opts.default_permissions ||
	    !creds_unprivileged(req))
		return 0;
	ret = of ? (fstat(of->fd, &st) ? -errno : 0) : stat_inode(fs, n, &st);
	if (ret)
		return ret;
	old = st.st_mode & 07777;
	removed = old & ~new;
	added = new & ~old;
	if (added || !removed || (removed & ~(mode_t)(S_ISUID | S_ISGID)) ||
	    st.st_uid == fuse_req_ctx(req)->uid)
		return 0; /* a chmod of the caller's own: the caller's rights do it */
	ret = set_mode(n, of ? of->fd : -1, attr->st_mode);
	if (!ret)
		*valid &= ~FUSE_SET_ATTR_MODE;
	return ret;
}

/*
 * The parts of a SETATTR that need the daemon's rights come first: set-ID
 * bits and capabilities a truncation or write removes (killpriv.c,
 * kill_setid_as_daemon). The rest runs with the caller's credentials, except
 * the times that come with a size change: with the writeback cache they are
 * the kernel's own clock for a truncation it allowed the caller (write
 * access), which the backing file system would refuse a non-owner as if it
 * were utimensat with explicit times. Returns 1 with the attributes after
 * the change in @st (set_times), 0 or -errno.
 */
static int setattr_as_caller(fuse_req_t req, struct inode *n, struct open_file *of,
			     const struct stat *attr, int valid, struct stat *st)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int times = (valid & FUSE_SET_ATTR_SIZE) ? valid & SET_ATTR_TIMES : 0;
	int ret = 0;

	if (killpriv_setattr_asked(fs, valid) && (valid & FUSE_SET_ATTR_SIZE))
		ret = killpriv_now(fs, 0, n, of ? of->fd : -1, true);
	if (!ret)
		ret = kill_setid_as_daemon(req, n, of, attr, &valid);
	/* times set on an open file: its deferred bytes go to SOURCE first, or
	 * their write-back would move the mtime after it was set (tar) */
	if (!ret && (valid & SET_ATTR_TIMES) && S_ISREG(n->type) &&
	    __atomic_load_n(&n->opens, __ATOMIC_RELAXED))
		wb_flush_file(fs, n);
	if (!ret)
		ret = creds_enter(req);
	if (!ret) {
		ret = do_setattr(fs, n, of, attr, valid & ~times, st);
		creds_leave();
	}
	if (ret >= 0 && times)
		ret = set_times(fs, n, of ? of->fd : -1, attr, times, st);
	return ret;
}

/*
 * The kernel (writeback cache) writes a file's times back on its own, with
 * no handle once the file is closed: a SETATTR of mtime (and ctime) only.
 * When that comes for a file that no longer exists in SOURCE (deleted, then
 * its descriptor reaped, inode.c), there is nothing left to update; the
 * error would reach no caller but the next syncfs(2) of the mount, which
 * would then fail ESTALE (seen after cp -a, rm -rf, sync -f). Answered as
 * done, with the times given and no links, cached for no time. A user's
 * utimensat() of only mtime through a name that is stale the same way gets
 * the same answer instead of the ENOENT the kernel's retry would give.
 */
static bool times_flush_gone(struct inode *n, const struct open_file *of, const struct stat *attr,
			     int valid, struct stat *st)
{
	if (of || !S_ISREG(n->type) || !(valid & FUSE_SET_ATTR_MTIME) ||
	    (valid & ~(FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_CTIME)))
		return false;
	*st = (struct stat){ .st_ino = n->ino,
			     .st_mode = n->type,
			     .st_nlink = 0,
			     .st_mtim = attr->st_mtim,
			     .st_ctim =
				 (valid & FUSE_SET_ATTR_CTIME) ? attr->st_ctim : attr->st_mtim };
	pthread_mutex_lock(&n->lock);
	st->st_size = n->stamp_valid ? n->stamp_size : 0;
	pthread_mutex_unlock(&n->lock);
	return true;
}

static void accel_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			  struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);
	struct open_file *of = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	struct stat st;
	int ret;

	if (times_kernel_flush(of, valid)) {
		ret = times_deferred(of, attr, valid, &st);
		if (ret)
			fuse_reply_err(req, -ret);
		else
			fuse_reply_attr(req, &st, watch_attr_timeout(fs, n));
		return;
	}
	ret = setattr_as_caller(req, n, of, attr, valid, &st);
	if (!ret)
		ret = stat_inode(fs, n, &st);
	else if (ret == 1)
		ret = 0;
	if (!ret) { /* the kernel now knows this state (see inode.c, must_retire) */
		inode_note_mode(n, &st);
		pthread_mutex_lock(&n->lock);
		stamp_set(n, &st);
		pthread_mutex_unlock(&n->lock);
	}
	if (ret == -ESTALE && times_flush_gone(n, of, attr, valid, &st)) {
		fuse_reply_attr(req, &st, 0);
		return;
	}
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, watch_attr_timeout(fs, n));
}

static void accel_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct accelfs *fs = fuse_req_userdata(req);
	char buf[PATH_MAX + 1];
	int fd = inode_fd_get(inode_get(fs, ino));
	ssize_t len = INODE_FD_OR(fd, readlinkat(fd, "", buf, sizeof(buf)));

	inode_fd_put(inode_get(fs, ino), fd);
	if (len < 0)
		fuse_reply_err(req, errno);
	else if (len == sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[len] = '\0';
		fuse_reply_readlink(req, buf);
	}
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
	struct accelfs *fs = fuse_req_userdata(req);
	mode_t um;

	if (!fs->dont_mask)
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

/*
 * mknod/mkdir/symlink: made with the caller's credentials, so the backing
 * file system gives the new object the caller's owner and group (or the
 * set-group-ID directory's group) and refuses what it would refuse the
 * caller (devices without CAP_MKNOD). The entry is then looked up without
 * following anything.
 */
enum create_kind { CREATE_NODE, CREATE_DIR, CREATE_SYMLINK };

static void create_as_caller(fuse_req_t req, fuse_ino_t parent, const char *name,
			     enum create_kind kind, mode_t mode, dev_t rdev, const char *link)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int pfd = inode_fd_get(inode_get(fs, parent));
	int ret = pfd < 0 ? pfd : creds_enter(req);

	if (!ret) {
		if (kind == CREATE_NODE)
			ret = mknodat(pfd, name, entry_mode(req, mode), rdev);
		else if (kind == CREATE_DIR)
			ret = mkdirat(pfd, name, entry_mode(req, mode));
		else
			ret = symlinkat(link, pfd, name);
		ret = ret ? -errno : 0;
		creds_leave();
	}
	inode_fd_put(inode_get(fs, parent), pfd);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		reply_made_entry(req, parent, name);
}

static void accel_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			dev_t rdev)
{
	create_as_caller(req, parent, name, CREATE_NODE, mode, rdev, NULL);
}

static void accel_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	create_as_caller(req, parent, name, CREATE_DIR, mode, 0, NULL);
}

static void accel_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	create_as_caller(req, parent, name, CREATE_SYMLINK, 0, 0, link);
}

/*
 * The node's own descriptor names the object, never a path: AT_EMPTY_PATH
 * (CAP_DAC_READ_SEARCH, which the caller's credentials usually lack), else
 * the /proc/self/fd magic link, which AT_SYMLINK_FOLLOW resolves to the
 * object itself, not through any name (not for a symlink node: that would
 * follow the link). protected_hardlinks then applies to the caller.
 */
static int link_fds(struct inode *n, int fd, int npfd, const char *newname)
{
	char path[PROC_FD_LEN];

	if (!linkat(fd, "", npfd, newname, AT_EMPTY_PATH))
		return 0;
	if ((errno != ENOENT && errno != EPERM) || S_ISLNK(n->type))
		return -errno;
	if (linkat(AT_FDCWD, proc_fd_path(fd, path), npfd, newname, AT_SYMLINK_FOLLOW))
		return -errno;
	return 0;
}

static int link_node(struct inode *n, struct inode *np, const char *newname)
{
	int fd = inode_fd_get(n), npfd = inode_fd_get(np);
	int ret = fd < 0 ? fd : npfd < 0 ? npfd : link_fds(n, fd, npfd, newname);

	inode_fd_put(np, npfd);
	inode_fd_put(n, fd);
	return ret;
}

static void accel_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int ret = creds_enter(req);

	if (!ret) {
		ret = link_node(inode_get(fs, ino), inode_get(fs, newparent), newname);
		creds_leave();
	}
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	/* deferred bytes past SOURCE's end count, as in getattr: the LINK of an
	 * O_TMPFILE file whose writes wait in the pool told the kernel size 0
	 * (only here: a peek of the pool per LOOKUP would be one more reader
	 * racing the SIGBUS guard's remap, cache/guard.c) */
	struct fuse_entry_param e;

	ret = lookup_name(fs, newparent, newname, &e, LOOKUP_ASK);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	wb_fix_attr(fs, &e.attr);
	fuse_reply_entry(req, &e);
}

static void accel_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *p = inode_get(fs, parent);
	int pfd = inode_fd_get(p), ret = pfd < 0 ? pfd : creds_enter(req);

	if (!ret) {
		ret = unlinkat(pfd, name, 0) ? -errno : 0;
		creds_leave();
	}
	inode_fd_put(p, pfd);
	fuse_reply_err(req, -ret);
}

static void accel_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *p = inode_get(fs, parent);
	int pfd = inode_fd_get(p), ret = pfd < 0 ? pfd : creds_enter(req);

	if (!ret) {
		ret = unlinkat(pfd, name, AT_REMOVEDIR) ? -errno : 0;
		creds_leave();
	}
	inode_fd_put(p, pfd);
	fuse_reply_err(req, -ret);
}

static void accel_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
			 const char *newname, unsigned int flags)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *p = inode_get(fs, parent), *np = inode_get(fs, newparent);
	int pfd = inode_fd_get(p), npfd = inode_fd_get(np);
	int ret = pfd < 0 ? pfd : npfd < 0 ? npfd : creds_enter(req);

	if (!ret) {
		ret = renameat2(pfd, name, npfd, newname, flags) ? -errno : 0;
		creds_leave();
	}
	inode_fd_put(np, npfd);
	inode_fd_put(p, pfd);
	fuse_reply_err(req, -ret);
}

static void accel_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct statvfs sv;
	int fd = inode_fd_get(inode_get(fs, ino));
	int err = INODE_FD_OR(fd, fstatvfs(fd, &sv)) ? errno : 0;

	inode_fd_put(inode_get(fs, ino), fd);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &sv);
}

/*
 * Asked only without default_permissions. faccessat() without AT_EACCESS
 * checks the real uid (root: the daemon's), overriding the thread's fsuid;
 * with AT_EACCESS it checks the thread's credentials as they are, which
 * creds_enter() made the caller's.
 */
static void accel_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct accelfs *fs = fuse_req_userdata(req);
	char path[PROC_FD_LEN];
	struct inode *n = inode_get(fs, ino);
	int ret, fd;

	if (S_ISLNK(n->type)) {
		fuse_reply_err(req, 0);
		return;
	}
	fd = inode_fd_get(n);
	ret = fd < 0 ? fd : creds_enter(req);
	if (!ret) {
		ret = faccessat(AT_FDCWD, proc_fd_path(fd, path), mask, AT_EACCESS) ? -errno : 0;
		creds_leave();
	}
	inode_fd_put(n, fd);
	fuse_reply_err(req, -ret);
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
