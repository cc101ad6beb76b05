// SPDX-License-Identifier: MIT
/*
 * ops_file.c - open files: open/create/release, data I/O through the
 * backend, fsync, fallocate and copy_file_range (lseek: ops_seek.c).
 *
 * Without lock forwarding, FLUSH is handled only with deferred write
 * (accel_flush), and a handle that
 * defers nothing opts out of it (FOPEN_NOFLUSH, handle_new; the kernel
 * ignores that under the writeback cache, where deferred_write=auto is off).
 * Without a flush handler the kernel stops sending FLUSH at close (one round
 * trip per close saved) but still writes a file's dirty pages through us
 * before close() returns. With locks=forward (the default, ops_lock.c) FLUSH
 * is always handled and never refused: it drops the closing process's
 * locks on SOURCE, so every close sends one.
 *
 * Kernel page cache policy (kernel_cache=auto): the kernel keeps its cached
 * pages across an open only if the backing file is exactly as we last saw
 * it (size, mtime, ctime). That is close-to-open consistency like NFS, and
 * it is what lets hot reads run at page-cache speed instead of a FUSE round
 * trip per block.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"
#include "kinval.h"
#include "lost_write.h"
#include "open_files.h"
#include "slow.h"
#include "thread_buf.h"
#include "times.h"
#include "tuning.h"
#include "uid_share.h"
#include "watch.h"
#include "wb_append.h"

static inline struct open_file *fh_of(struct fuse_file_info *fi)
{
	return (struct open_file *)(uintptr_t)fi->fh;
}

/* Decide the kernel cache flags for a new open of @n, whose state is @st. */
static void cache_policy(struct accelfs *fs, struct inode *n, const struct stat *st,
			 struct fuse_file_info *fi)
{
	/* O_DIRECT opens bypass the cache anyway; in writeback mode the kernel
	 * must see their writes to keep mtime and size right. */
	if (fs->opts.kernel_cache == KERNEL_CACHE_NEVER ||
	    ((fi->flags & O_DIRECT) && !fs->opts.writeback)) {
		fi->direct_io = 1;
		return;
	}
	if (fs->opts.kernel_cache == KERNEL_CACHE_ALWAYS) {
		fi->keep_cache = 1;
		return;
	}
	fi->keep_cache = stamp_equal(n, st);
	/* In writeback mode the kernel keeps its own size, and an open cannot
	 * tell it another. Data changed while no handle of the mount had the
	 * file open for writing was changed in SOURCE, behind a kernel that has not looked
	 * the name up since (no watcher reported it): mark it as the watcher
	 * would, so the next lookup retires the node (must_retire) although
	 * the stamp below now holds the new state. Only a writable handle of
	 * ours can have moved the data itself: a reader still open (or whose
	 * RELEASE the kernel has not sent yet) cannot. */
	if (fs->opts.writeback && S_ISREG(st->st_mode) && n->wopens == 0 &&
	    stamp_data_differs(n, st))
		__atomic_store_n(&n->changed_outside, true, __ATOMIC_RELAXED);
	stamp_set(n, st);
}

/*
 * Backing open flags for the kernel's: with writeback caching the kernel may
 * read a page of a write-only file it partially writes, and computes append
 * offsets itself, so the backing file is opened read-write without O_APPEND.
 * Deferred write needs to read what it patches: read-write too.
 */
static int backing_flags(struct accelfs *fs, int flags)
{
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW);
	/* deferred write reads a bucket before patching it (open_backing falls back) */
	if (fs->opts.deferred_write && fs->opts.cache && (flags & O_ACCMODE) == O_WRONLY)
		flags = (flags & ~O_ACCMODE) | O_RDWR;
	if (fs->opts.writeback && fs->opts.kernel_cache != KERNEL_CACHE_NEVER &&
	    !(flags & O_DIRECT)) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	/* Never O_DIRECT: libfuse's buffers are not aligned, and the deferred
	 * write-back and the buffer cache share this descriptor. What the
	 * application's O_DIRECT promises is kept in the write path instead
	 * (write_durable). */
	return (flags & ~O_DIRECT) | O_CLOEXEC;
}

/*
 * Open through procfs; a write-only file we may not read is opened as asked.
 * @nowait: O_NONBLOCK, so that a lease another process holds on the file
 * fails the open (EWOULDBLOCK, the break begun) instead of holding this
 * thread for the lease break time; cleared again once open (io_uring would
 * answer EAGAIN for reads of a non-blocking file) unless the caller asked.
 */
static int open_backing(struct accelfs *fs, int nfd, int kernel_flags, bool nowait)
{
	char path[PROC_FD_LEN];
	int flags = backing_flags(fs, kernel_flags) | (nowait ? O_NONBLOCK : 0);
	int fd = open(proc_fd_path(nfd, path), flags);

	if (fd < 0 && errno == EACCES && (kernel_flags & O_ACCMODE) == O_WRONLY &&
	    (flags & O_ACCMODE) == O_RDWR)
		fd = open(path, (flags & ~O_ACCMODE) | O_WRONLY);
	if (fd >= 0 && nowait && !(kernel_flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, (flags & ~O_NONBLOCK) & (O_APPEND | O_NOATIME | O_DIRECT));
	return fd;
}

/*
 * Take the state @of's own writes left in SOURCE as the one the kernel's
 * pages and the pool's buffers hold: the next open keeps them. Only a handle
 * that wrote since it was last settled, and only once its writes are done:
 * at its close (FLUSH, which the application's close waits for) and at its
 * RELEASE for what came after (an mmap's pages). Taken any later, the fstat
 * would take a change made in SOURCE after the close (another program, the
 * RELEASE still queued) for ours, and the kernel would keep the old size and
 * pages for good (a reader changes nothing: it never settles). Not for a
 * passthrough handle (it left nothing in the kernel cache: passthrough.c) nor
 * in shared mode, where pages read before another host's write may be among
 * them, so the next open compares with the state at this open. The pool's
 * buffers take the state at the release, when no other thread uses the
 * handle's stream (cache_io_settle).
 */
static void handle_settle(struct open_file *of)
{
	struct inode *n = of->inode;
	struct stat st;

	/* shared mode takes neither: no fstat, a round trip on a network SOURCE */
	if (!__atomic_exchange_n(&of->unsettled, false, __ATOMIC_ACQ_REL) || of->fs->shared ||
	    wb_append_stale(n) || fstat(of->fd, &st))
		return;
	pthread_mutex_lock(&n->lock);
	if (!of->direct_io && !of->passthrough)
		stamp_set(n, &st);
	of->settled = true; /* the pool's turn comes at the release (handle_free) */
	of->settled_st = st;
	pthread_mutex_unlock(&n->lock);
}

/*
 * Free @of, its deferred bytes, times and settled state first; returns the
 * kernel backing id to close now (its inode's last passthrough handle: for
 * passthrough_close) or 0.
 */
static int handle_free(struct open_file *of)
{
	struct inode *n = of->inode;
	struct pt_leftover left;
	struct stat st;
	bool settled;

	/* deferred bytes first: their write-back would move the mtime set next */
	if (__atomic_load_n(&of->deferred, __ATOMIC_RELAXED))
		wb_sync(of);
	times_apply(of); /* release, or the kernel never released it (unmount) */
	handle_settle(of);
	pthread_mutex_lock(&n->lock);
	settled = of->settled;
	st = of->settled_st;
	/* nothing is written back after the last close */
	if (__atomic_sub_fetch(&n->opens, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&n->times_pending, false, __ATOMIC_RELAXED);
	if ((of->flags & O_ACCMODE) != O_RDONLY)
		__atomic_sub_fetch(&n->wopens, 1, __ATOMIC_RELAXED);
	passthrough_release_locked(of, &left);
	pthread_mutex_unlock(&n->lock);
	open_files_remove(of);
	if (settled)
		cache_io_settle(of, &st);
	cache_io_close(of);
	wb_last_handle(n);
	lock_release_handle(of); /* before its descriptor: flock locks go with that */
	if (!of->fd_shared) {
		close(of->fd);
		uid_share_give(of->uid);
	}
	if (left.fd >= 0) { /* the inode's shared one, whose last user it was */
		close(left.fd);
		uid_share_give(left.uid);
	}
	free(of);
	return left.backing_id;
}

static bool same_ts(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/*
 * The tuning of @n, whose state is @st: the attributes as last read while
 * SOURCE still shows the ctime they were read under, else read from @fd now
 * and kept. @st is taken before the read, so an attribute set in between
 * leaves a memo older than the file's ctime, read again next time.
 */
static void tuning_memo(struct inode *n, int fd, const struct stat *st, bool created,
			struct tuning_values *t)
{
	bool hit;

	pthread_mutex_lock(&n->lock);
	hit = n->tuning_valid && same_ts(&n->tuning_ctime, &st->st_ctim);
	if (hit)
		*t = n->tuning;
	pthread_mutex_unlock(&n->lock);
	if (hit)
		return;
	if (created)
		tuning_none(t);
	else
		tuning_read_fd(fd, t);
	pthread_mutex_lock(&n->lock);
	n->tuning = *t;
	n->tuning_ctime = st->st_ctim;
	n->tuning_valid = true;
	pthread_mutex_unlock(&n->lock);
}

/*
 * The file's tuning, read when the pool or passthrough will use it (@read
 * says so; at most once per change of the file's ctime, tuning_memo), and
 * whether its opens should go passthrough. A file this open @created has no
 * attributes to read.
 */
static void file_tuning_read(const struct open_file *of, const struct stat *st, bool created,
			     struct tuning_values *t, bool *read, struct pt_choice *pt)
{
	*pt = (struct pt_choice){ NULL, false };
	*read = S_ISREG(st->st_mode) && (of->fs->pool || of->fs->passthrough);
	if (!*read)
		return;
	tuning_memo(of->inode, of->fd, st, created, t);
	passthrough_wanted(of->fs, of->inode, t, pt);
}

/*
 * Wrap backing descriptor @fd of inode @n, whose state is @st (NULL: fstat
 * it), as the open file of @fi for @req; @created: CREATE made the file.
 * Consumes @fd and the share the caller took (uid_share_take). Returns 0 or
 * -errno.
 */
static int handle_new(fuse_req_t req, struct inode *n, int fd, const struct stat *st, bool created,
		      struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct open_file *of = NULL;
	struct tuning_values t;
	struct stat buf;
	struct pt_choice pt;
	bool read;
	int swap;
	/* past shutdown's final sync nothing written would reach SOURCE */
	int ret = (fi->flags & O_ACCMODE) != O_RDONLY ? shutdown_refuse(fs, n, "an open") : 0;
	uid_t uid = fuse_req_ctx(req)->uid; /* its share taken by the caller */

	if (ret) {
		close(fd);
		uid_share_give(uid);
		return ret;
	}
	of = calloc(1, sizeof(*of));
	if (!of || (!st && fstat(fd, &buf))) {
		int err = of ? errno : ENOMEM;

		free(of);
		close(fd);
		uid_share_give(uid);
		return -err;
	}
	of->fs = fs;
	of->fd = fd;
	of->lock_fd = -1;
	of->uid = uid;
	of->lost_seen = __atomic_load_n(&n->lost_seq, __ATOMIC_ACQUIRE); /* errors after its open */
	of->inode = n;
	of->flags = fi->flags;
	st = st ? st : &buf;
	inode_note_mode(n, st);
	file_tuning_read(of, st, created, &t, &read, &pt);
	open_files_add(of);
	pthread_mutex_lock(&n->lock);
	if (!passthrough_open_locked(req, of, &pt, fi, &swap))
		cache_policy(fs, n, st, fi);
	/* Times kept for a previous open are stale once it is gone: a SETATTR
	 * that saw opens > 0 and kept its times after the last release cleared
	 * them would otherwise set them again after this open's write-back. */
	if (__atomic_fetch_add(&n->opens, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&n->times_pending, false, __ATOMIC_RELAXED);
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		__atomic_add_fetch(&n->wopens, 1, __ATOMIC_RELAXED);
	of->direct_io = fi->direct_io;
	pthread_mutex_unlock(&n->lock);
	/* A passthrough handle shares its inode's descriptor: its own goes,
	 * and with it the share of the user's that it took. */
	if (swap >= 0) {
		close(open_files_set_fd(of, swap));
		uid_share_give(uid);
	}
	cache_io_open(of, st, read ? &t : NULL);
	/* A handle that defers nothing has nothing to put on SOURCE at close:
	 * FOPEN_NOFLUSH spares that close its FLUSH round trip (readers, and
	 * every passthrough handle). The kernel ignores it under the writeback
	 * cache, where a close must send the file's dirty pages first. */
	fi->noflush = fs->opts.locks != LOCKS_FORWARD && (!of->defer || of->passthrough);
	fi->fh = (uintptr_t)of;
	return 0;
}

/*
 * The kernel resolved the name (and applied the caller's O_NOFOLLOW) before
 * sending OPEN; the node's magic link reaches exactly that object, opened
 * with the caller's credentials so the backing file system checks the
 * caller's access (and refuses O_NOATIME, O_TRUNC as it would locally).
 * Returns the descriptor or -errno (-EWOULDBLOCK with @nowait: see
 * open_backing).
 */
static int open_as_caller(fuse_req_t req, struct inode *n, int flags, bool nowait)
{
	struct accelfs *fs = fuse_req_userdata(req);
	/* pinned with the daemon's rights (a reopen by handle needs them) */
	int fd, nfd = inode_fd_get(n), ret = nfd < 0 ? nfd : creds_enter(req);

	if (ret) {
		inode_fd_put(n, nfd);
		return ret;
	}
	fd = open_backing(fs, nfd, flags, nowait);
	ret = fd < 0 ? -errno : fd;
	creds_leave();
	inode_fd_put(n, nfd);
	if (ret == -ESTALE) { /* the kernel looks the name up again: let the old file go */
		inode_mark_stale(fs, n);
		inode_fd_drop(n);
	}
	return ret;
}

/* The open's descriptor (or -errno) becomes @fi's handle, and the reply. */
static void open_finish(fuse_req_t req, struct inode *n, int fd, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int ret = fd < 0 ? fd : 0;

	/* the caller's truncation cleared the bits, unless it was root without CAP_FSETID */
	if (!ret && (fi->flags & O_TRUNC) && killpriv_open_asked(fs, fi))
		ret = killpriv_now(fs, 0, n, fd, true);
	if (!ret) {
		ret = handle_new(req, n, fd, NULL, false, fi); /* consumes fd and the share */
	} else {
		if (fd >= 0)
			close(fd);
		uid_share_give(fuse_req_ctx(req)->uid);
	}
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	/* the opener was interrupted and is gone: so is the handle, and the
	 * backing file if it was the inode's last passthrough one */
	if (fuse_reply_open(req, fi) == -ENOENT)
		passthrough_close(fs, handle_free(fh_of(fi)));
}

/* An open that waits for a lease break, in a thread of its own (slow.c). */
struct open_wait {
	struct slow_req slow; /* first */
	struct inode *n;      /* the kernel holds it until the reply */
	struct fuse_file_info fi;
};

static void open_wait_run(struct slow_req *s)
{
	struct open_wait *w = (struct open_wait *)s;
	int fd;

	do
		fd = open_as_caller(s->req, w->n, w->fi.flags, false);
	while (fd == -EINTR && !slow_interrupted(s));
	slow_end(s);
	open_finish(s->req, w->n, fd, &w->fi);
}

static void open_wait_done(struct slow_req *s)
{
	free(s);
}

static void accel_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);
	/* past the user's share of the daemon's descriptors: EMFILE */
	int fd = uid_share_take(fuse_req_ctx(req)->uid, EMFILE);
	struct open_wait *w;

	if (fd) {
		fuse_reply_err(req, -fd);
		return;
	}
	fd = open_as_caller(req, n, fi->flags, true);

	/* Another process's lease must be broken first: wait for that outside
	 * the workers, unless the caller itself asked not to wait. */
	if (fd == -EWOULDBLOCK && !(fi->flags & O_NONBLOCK)) {
		w = malloc(sizeof(*w));
		if (w) {
			*w = (struct open_wait){ .slow = { .req = req,
							   .run = open_wait_run,
							   .done = open_wait_done },
						 .n = n,
						 .fi = *fi };
			if (!slow_start(&w->slow))
				return;
			free(w);
		}
		fd = -EAGAIN; /* the user's share of waiting requests is taken */
	}
	open_finish(req, n, fd, fi);
}

/*
 * CREATE comes only after the kernel found no such name, but SOURCE may have
 * one by now: a symlink planted behind a cached negative entry (to root's
 * files), a FIFO (an open that would hang), a file another mount created.
 * Following or opening it here would do so with the daemon's resolution of
 * the name, not the kernel's. So the file is only ever *created* here
 * (O_CREAT|O_EXCL|O_NOFOLLOW, with the caller's credentials: the caller owns
 * it, or the set-group-ID directory's group does); a name that exists is
 * answered EEXIST if the caller asked O_EXCL, and otherwise ESTALE, on
 * which the kernel's VFS repeats its lookup (LOOKUP_REVAL) and opens what it
 * finds as it would on a local file system: follows the symlink with the
 * caller's rights, opens the FIFO itself, sends OPEN for a regular file.
 * Returns the descriptor or -errno.
 */
static int create_backing(fuse_req_t req, struct inode *p, const char *name, mode_t mode,
			  int kernel_flags)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int flags = backing_flags(fs, kernel_flags) | O_CREAT | O_EXCL | O_NOFOLLOW;
	int fd, pfd = inode_fd_get(p); /* with the daemon's rights: it may reopen by handle */
	int ret = pfd < 0 ? pfd : creds_enter(req);

	if (ret) {
		inode_fd_put(p, pfd);
		return ret;
	}
	fd = openat(pfd, name, flags, entry_mode(req, mode));
	ret = fd < 0 ? -errno : fd;
	creds_leave();
	inode_fd_put(p, pfd);
	if (ret == -EEXIST && !(kernel_flags & O_EXCL))
		ret = -ESTALE;
	return ret;
}

static void accel_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			 struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	uid_t uid = fuse_req_ctx(req)->uid;
	int fd, ret = uid_share_take(uid, EMFILE); /* past the user's share: nothing created */

	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	fd = create_backing(req, inode_get(fs, parent), name, mode, fi->flags);
	/* the entry of the file just made, not of whatever the name is now */
	ret = fd < 0 ? fd : entry_from_fd(fs, fd, &e);
	if (ret) {
		if (fd >= 0)
			close(fd);
		uid_share_give(uid);
		fuse_reply_err(req, -ret);
		return;
	}
	watch_entry(fs, inode_get(fs, parent), inode_get(fs, e.ino), &e);
	xattr_caps_created(fs, inode_get(fs, e.ino)); /* the kernel asks before the first write */
	ret = handle_new(req, inode_get(fs, e.ino), fd, &e.attr, true, fi);
	if (ret) {
		inode_unref(fs, inode_get(fs, e.ino), 1);
		fuse_reply_err(req, -ret);
		return;
	}
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		passthrough_close(fs, handle_free(fh_of(fi)));
}

#ifdef ACCEL_HAVE_TMPFILE
/*
 * open(O_TMPFILE) in a directory of the mount: an unnamed file made in
 * SOURCE's directory with the caller's credentials, where SOURCE's file
 * system supports it (else its EOPNOTSUPP, as locally). It may be given a
 * name later with linkat(2), which reaches LINK (link_fds in ops_entry.c).
 */
static void accel_tmpfile(fuse_req_t req, fuse_ino_t parent, mode_t mode, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *p = inode_get(fs, parent);
	struct fuse_entry_param e;
	uid_t uid = fuse_req_ctx(req)->uid;
	int fd, pfd, ret = uid_share_take(uid, EMFILE);

	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	pfd = inode_fd_get(p);
	ret = pfd < 0 ? pfd : creds_enter(req);
	if (!ret) {
		fd = openat(pfd, ".", backing_flags(fs, fi->flags & ~O_TMPFILE) | O_TMPFILE,
			    entry_mode(req, mode));
		ret = fd < 0 ? -errno : 0;
		creds_leave();
	}
	inode_fd_put(p, pfd);
	if (!ret) {
		ret = entry_from_fd(fs, fd, &e);
		if (ret)
			close(fd);
	}
	if (!ret) {
		ret = handle_new(req, inode_get(fs, e.ino), fd, &e.attr, true, fi);
		if (ret)
			inode_unref(fs, inode_get(fs, e.ino), 1);
	} else {
		uid_share_give(uid);
	}
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		passthrough_close(fs, handle_free(fh_of(fi)));
}
#endif

static void accel_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);

	(void)ino;
	/* deferred bytes, times and the state left: handle_free */
	passthrough_close(fs, handle_free(fh_of(fi)));
	fuse_reply_err(req, 0);
}

/*
 * The answer to a fsync through a descriptor its inode's passthrough
 * handles share (passthrough.c), whose fsync returned @ret. A write-back
 * error is reported once per open file (the kernel's errseq), but the
 * shared descriptor reports it once for all of them: so the handle that
 * got it keeps it for the others (a lost write, lost_write.c), which each
 * report it at their next fsync, once, as their own descriptors would have.
 */
static int fsync_shared_error(struct open_file *of, int ret)
{
	int kept;

	if (ret && ret != -EIO && ret != -ENOSPC && ret != -EDQUOT)
		return ret;
	kept = lost_write_check(of); /* another handle got it first */
	if (ret && !kept) {	     /* new: the others have not heard of it */
		lost_write_note(of, ret);
		lost_write_check(of);
	}
	return ret ? ret : kept;
}

/* fsync is never deferred, unless the file's owner asked for sync=relaxed. */
static void accel_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct open_file *of = fh_of(fi);
	int ret;

	(void)ino;
	if (of->relaxed) {
		ret = wb_fsync_relaxed(of);
		fuse_reply_err(req, -(ret ? ret : lost_write_check(of)));
		return;
	}
	ret = wb_fsync(of, datasync);
	wb_append_kernel(of); /* no page of the file is held during FSYNC */
	if (of->fd_shared)
		ret = fsync_shared_error(of, ret);
	else if (!ret)
		ret = lost_write_check(of);
	fuse_reply_err(req, -ret);
}

/*
 * close(2) of a handle: deferred bytes reach SOURCE now (close-to-open), and
 * a failure of any earlier flush is the close's error. Registered only with
 * deferred_write on or auto, locks=forward or in shared mode, since it costs
 * every close a round trip; where none of them needs it (INIT settled
 * deferred_write=auto as off: ops.c), the first close answers ENOSYS, and
 * the kernel sends no FLUSH again.
 */
/*
 * Shared mode: the close reaches SOURCE's client as a close would (its
 * flush: glusterfs's write-behind, NFS's close-to-open write-back), before
 * the program's close returns and before its locks go, as on the bare
 * mount; our descriptor stays open until RELEASE, so a close of a
 * duplicate makes the flush (as libfuse's passthrough_ll does).
 */
static int flush_source(struct open_file *of)
{
	int fd, ret;

	if (!of->fs->shared || (of->flags & O_ACCMODE) == O_RDONLY)
		return 0;
	fd = dup(of->fd);
	ret = fd < 0 || close(fd) ? -errno : 0;
	/* a shared descriptor's flush reports a write-back error once, for all */
	return of->fd_shared ? fsync_shared_error(of, ret) : ret;
}

static void accel_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct open_file *of = fh_of(fi);
	int ret = wb_close(of);

	(void)ino;
	wb_append_kernel(of); /* before the state is settled as ours */
	if (!ret && (of->flags & O_ACCMODE) != O_RDONLY)
		ret = lost_write_check(of); /* a writer's close reports a lost write, as NFS's */
	times_apply(of);		    /* before close returns, not at the async release */
	if (!ret)
		ret = flush_source(of);
	if (!ret)
		handle_settle(of);
	lock_flush(of, fi->lock_owner); /* POSIX: a close drops its process's locks */
	if (!ret && !__atomic_load_n(&fs->opts.deferred_write, __ATOMIC_RELAXED) &&
	    fs->opts.locks != LOCKS_FORWARD && !fs->shared)
		ret = -ENOSYS;
	fuse_reply_err(req, -ret);
}

/*
 * Did @fi's request come through the kernel's page cache (a buffered read or
 * write of a cached handle, or the write-back of pages)? Then the kernel may
 * hold pages of the file from now on: noted before the request touches the
 * data (see write_direct_reply).
 */
static void kernel_pages_note(struct fuse_file_info *fi)
{
	struct open_file *of = fh_of(fi);

	/* stored only if clear (no shared line written per read): a clearing
	 * invalidation still drops this request's pages, which the kernel
	 * put in the page cache, locked, before it sent the request */
	if ((fi->writepage || !((fi->flags & O_DIRECT) || of->direct_io)) &&
	    !__atomic_load_n(&of->inode->kernel_pages, __ATOMIC_SEQ_CST))
		__atomic_store_n(&of->inode->kernel_pages, true, __ATOMIC_SEQ_CST);
}

static void accel_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	void *buf = thread_buf_reply(size);
	ssize_t n;

	(void)ino;
	kernel_pages_note(fi);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = cache_io_read(fh_of(fi), buf, size, off);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	/* what the next opens are decided on (passthrough.c); only where the
	 * kernel passes files through (set at INIT, before any READ) */
	if (fh_of(fi)->fs->passthrough) {
		__atomic_add_fetch(&fh_of(fi)->use_reads, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&fh_of(fi)->use_bytes, (uint64_t)n, __ATOMIC_RELAXED);
	}
	fuse_reply_buf(req, buf, n);
}

/* Write every memory segment of @bufv with one batch; other kinds via libfuse. */
static ssize_t write_bufvec(int fd, struct fuse_bufvec *in, off_t off)
{
	struct iovec iov[16];
	size_t i, cnt = in->count - in->idx;

	if (cnt <= 16 && in->off == 0) {
		for (i = 0; i < cnt; i++) {
			const struct fuse_buf *b = &in->buf[in->idx + i];

			if (b->flags & FUSE_BUF_IS_FD)
				goto generic;
			iov[i].iov_base = b->mem;
			iov[i].iov_len = b->size;
		}
		return cnt == 1 ? backend_pwrite(fd, iov[0].iov_base, iov[0].iov_len, off)
				: backend_pwritev(fd, iov, (int)cnt, off);
	}
generic:;
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));

	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = fd;
	out.buf[0].pos = off;
	return fuse_buf_copy(&out, in, 0);
}

/*
 * An application's O_DIRECT write (never deferred, see wb_open) is on
 * SOURCE's device before it is acknowledged, as on a local file system; the
 * backing descriptor itself is buffered (backing_flags). Returns @n or -errno.
 */
static ssize_t write_durable(struct open_file *of, off_t off, ssize_t n)
{
	unsigned int how =
	    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;

	if (n <= 0 || !(of->flags & O_DIRECT))
		return n;
	return sync_file_range(of->fd, off, n, how) ? -errno : n;
}

struct write_wait {
	struct kinval k; /* first */
	size_t n;
};

static void write_then(struct kinval *k)
{
	fuse_reply_write(k->slow.req, ((struct write_wait *)k)->n);
}

/*
 * A direct write (O_DIRECT, or through a handle opened FOPEN_DIRECT_IO) to a
 * file that other handles read through the kernel's page cache: completed
 * asynchronously (AIO, io_uring), the kernel does not drop the range's
 * pages after the write as it does for a synchronous one on a cached
 * handle, and a buffered read racing the write may have filled them with
 * the old bytes (xfstests generic/451; seen through both kinds of handle).
 * So the reply waits until the kernel has dropped them (kinval.c); the
 * daemon's own buffers of the range were dropped by the write
 * (cache_io_write_begin).
 *
 * Only where a request through the page cache was served since the last
 * such invalidation (kernel_pages, set before that request read or wrote
 * SOURCE, taken here after this write reached it: one of the two sees the
 * other), and then of the whole file, after which the kernel holds none of
 * its pages: a file only ever written and read directly (a database) pays
 * nothing. Not with kernel_cache=never: no handle reads through the page
 * cache, which serves shared mappings only, and the kernel drops those
 * pages around every write. Returns 0: the reply is on its way; else the
 * caller replies (with no thread to spare, without the invalidation:
 * slow.c logged the refusal).
 */
static int write_direct_reply(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, size_t n)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *node = fh_of(fi)->inode;
	struct write_wait *w;

	if (fi->writepage || fs->opts.kernel_cache == KERNEL_CACHE_NEVER ||
	    !((fi->flags & O_DIRECT) || fh_of(fi)->direct_io) ||
	    !__atomic_exchange_n(&node->kernel_pages, false, __ATOMIC_SEQ_CST))
		return -EINVAL;
	w = malloc(sizeof(*w));
	if (w) {
		*w = (struct write_wait){
			.k = { .slow = { .req = req }, .ino = ino, .then = write_then }, .n = n
		};
		if (!kinval_start(&w->k))
			return 0;
		free(w);
	}
	/* not dropped: the next direct write tries again */
	__atomic_store_n(&node->kernel_pages, true, __ATOMIC_SEQ_CST);
	return -EAGAIN;
}

static void accel_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
			    struct fuse_file_info *fi)
{
	struct open_file *of = fh_of(fi);
	/* past shutdown's final sync: refused, not acknowledged and dropped */
	ssize_t n = shutdown_refuse(of->fs, of->inode, "a write");

	kernel_pages_note(fi);
	if (n == 0) {
		killpriv_on_write(req, ino, fi, of); /* set-ID bits and capabilities: killpriv.c */
		n = wb_write(of, in, off);
	}
	if (n != -EAGAIN)
		goto reply;
	n = cache_io_write_begin(of, (uint64_t)off, fuse_buf_size(in));
	if (n == 0) {
		uid_t prev = creds_write_as(of->uid);

		n = write_bufvec(of->fd, in, off);
		creds_write_done(prev);
		cache_io_write_end(of, (uint64_t)off, n);
	}
	n = write_durable(of, off, n);
	if (n < 0 && fi->writepage)
		lost_write_note(of, (int)n);
reply:
	if (n > 0)
		times_written(of);
	if (n > 0 && !write_direct_reply(req, ino, fi, (size_t)n))
		return;
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, n);
}

static void accel_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			    struct fuse_file_info *fi)
{
	struct open_file *of = fh_of(fi);
	/* collapse and insert move everything after @off */
	uint64_t span = (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE))
			    ? UINT64_MAX - (uint64_t)off
			    : (uint64_t)len;
	int ret;

	(void)ino;
	ret = cache_io_write_begin(of, (uint64_t)off, span);
	if (!ret) {
		uid_t prev = creds_write_as(of->uid);

		ret = backend_fallocate(of->fd, mode, off, len);
		creds_write_done(prev);
		cache_io_write_end(of, (uint64_t)off, ret);
	}
	fuse_reply_err(req, -ret);
}

static void accel_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
				  struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
				  struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct open_file *out = fh_of(fi_out);
	uint64_t start = (uint64_t)off_out;
	/* SOURCE copies what it has: the input's deferred bytes go there first */
	ssize_t n = wb_flush_now(fh_of(fi_in));

	(void)ino_in;
	(void)ino_out;
	if (n == 0)
		n = cache_io_write_begin(out, start, len);
	if (n == 0) {
		uid_t prev = creds_write_as(out->uid);

		n = copy_file_range(fh_of(fi_in)->fd, &off_in, out->fd, &off_out, len,
				    (unsigned int)flags);
		if (n < 0)
			n = -errno;
		creds_write_done(prev);
		cache_io_write_end(out, start, n);
	}
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, n);
}

void ops_file_release_all(struct accelfs *fs)
{
	struct open_file *of;

	while ((of = open_files_first(fs)))
		handle_free(of);
}

void ops_file_fill(struct accelfs *fs, struct fuse_lowlevel_ops *ops)
{
	ops->open = accel_open;
	ops->create = accel_create;
#ifdef ACCEL_HAVE_TMPFILE
	ops->tmpfile = accel_tmpfile;
#endif
	ops->release = accel_release;
	ops->fsync = accel_fsync;
	ops->read = accel_read;
	ops->write_buf = accel_write_buf;
	ops->fallocate = accel_fallocate;
	ops->copy_file_range = accel_copy_file_range;
	if ((fs->opts.deferred_write && fs->opts.cache) || fs->opts.locks == LOCKS_FORWARD ||
	    fs->shared)
		ops->flush = accel_flush;
}
