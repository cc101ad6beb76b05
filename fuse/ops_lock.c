// SPDX-License-Identifier: MIT
/*
 * ops_lock.c - fcntl (POSIX), OFD and flock locks taken on SOURCE
 * (-o locks=forward, the default), so that they exclude other hosts that
 * share SOURCE and programs that lock SOURCE directly, as the kernel's own
 * client of SOURCE would.
 *
 * The daemon is one process, and a POSIX lock belongs to a process: taken
 * with F_SETLK on any of our descriptors, every lock would be the daemon's
 * and none would exclude another. So, as virtiofsd does, each lock owner
 * the kernel names (a process for POSIX locks, an open file for OFD locks)
 * gets a descriptor of its own on the file, opened for locking only, and
 * its locks are OFD locks on that descriptor: they conflict with every
 * other descriptor's, here, on other hosts, and with local processes'
 * POSIX locks. An owner's locks go when it closes the file (FLUSH carries
 * the owner: lock_flush) or when the open file it locked through is
 * released (OFD owners: lock_release_handle); closing the owner's
 * descriptor drops them all at once. flock locks belong to an open file:
 * they are taken on the handle's own backing descriptor, and go with it; a
 * kernel passthrough handle, which shares its inode's descriptor with the
 * inode's other passthrough handles (passthrough.c), gets a descriptor of
 * its own for them at its first flock (flock_fd), kept until its release.
 * Each lock owner's and flock's descriptor counts in the user's share of
 * the daemon's descriptors (uid_share.c): past it the lock fails with
 * ENOLCK, as when the kernel's lock table is full.
 *
 * A request that must wait (F_SETLKW, flock without LOCK_NB) never holds one
 * of the workers that serve every user: it is tried without waiting, and
 * if that fails it waits in a thread of its own (slow.c), which replies
 * when the lock is granted or the caller is interrupted (FUSE INTERRUPT: a
 * signal, or the caller killed). Waits are bounded per user and in all
 * (SLOW_PER_UID, SLOW_MAX); past that the request fails with ENOLCK, as the
 * kernel's own lock table answers when it is full.
 *
 * Lock-based coherence, as NFS clients do it: in shared mode, taking a lock
 * drops the file's cached pages and pool buffers (another host may have
 * written under the lock it held before), and releasing one first writes
 * back what was deferred under it.
 *
 * Lock: the mount's owner table lock (fs->owners.lock: the table, each
 * owner's refs), a leaf, never held across a system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "open_files.h"
#include "shared.h"
#include "slow.h"
#include "uid_share.h"

/* One lock owner's descriptor on one file. */
struct lock_owner {
	struct lock_owner *next;     /* its set's lock: hash chain */
	struct lock_owners *set;     /* the mount's table it is in; immutable */
	struct inode *inode;	     /* holds no reference: a handle of the file is open */
	uint64_t owner;		     /* the kernel's lock owner id */
	const struct open_file *via; /* the handle it was made through (OFD owners) */
	int fd;			     /* the owner's locks are this descriptor's OFD locks */
	uid_t uid;		     /* whose share of the daemon's descriptors fd takes */
	unsigned int refs;	     /* set's lock: the table's one while linked, waiters' */
	bool linked;		     /* set's lock: in the table */
	pid_t pid;		     /* atomic: the process that asked for its last lock */
};

/* A request waiting for its lock in a thread of its own (slow.c). */
struct lock_wait {
	struct slow_req slow;  /* first */
	struct open_file *of;  /* the handle it came through (pinned by the caller's syscall) */
	struct lock_owner *lo; /* fcntl: the owner (a reference); NULL: flock */
	struct flock fl;       /* fcntl: the lock asked for */
	int op;		       /* flock: LOCK_SH or LOCK_EX */
};

static inline struct open_file *fh_of(struct fuse_file_info *fi)
{
	return (struct open_file *)(uintptr_t)fi->fh;
}

static unsigned int owner_hash(const struct inode *n, uint64_t owner)
{
	uint64_t h = ((uintptr_t)n >> 4) ^ owner * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(h >> 32) % LOCK_OWNER_BUCKETS;
}

/* @t's lock held: the owner's entry, or NULL. */
static struct lock_owner *owner_lookup(struct lock_owners *t, const struct inode *n, uint64_t owner)
{
	struct lock_owner *lo = t->buckets[owner_hash(n, owner)];

	while (lo && (lo->inode != n || lo->owner != owner))
		lo = lo->next;
	return lo;
}

static void owner_put(struct lock_owner *lo)
{
	bool last;

	pthread_mutex_lock(&lo->set->lock);
	last = --lo->refs == 0;
	pthread_mutex_unlock(&lo->set->lock);
	if (last) {
		close(lo->fd); /* drops every lock the owner still has */
		uid_share_give(lo->uid);
		free(lo);
	}
}

/* Its set's lock held: take @lo out of the table (its table reference goes to the caller). */
static void owner_unlink(struct lock_owner *lo)
{
	struct lock_owner **p = &lo->set->buckets[owner_hash(lo->inode, lo->owner)];

	while (*p != lo)
		p = &(*p)->next;
	*p = lo->next;
	lo->linked = false;
	__atomic_sub_fetch(&lo->set->count, 1, __ATOMIC_RELAXED);
}

/* The owner's entry with a reference for the caller, or NULL. */
static struct lock_owner *owner_find(struct lock_owners *t, const struct inode *n, uint64_t owner)
{
	struct lock_owner *lo;

	if (!__atomic_load_n(&t->count, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&t->lock);
	lo = owner_lookup(t, n, owner);
	if (lo)
		lo->refs++;
	pthread_mutex_unlock(&t->lock);
	return lo;
}

/*
 * A descriptor of the handle's file for locking only: read-write, so one
 * owner can hold read and write locks on it (the kernel checked the
 * caller's own descriptor's access mode for each lock before asking);
 * with the daemon's rights, as the write-back descriptor. O_NONBLOCK: a
 * lease on the file fails the open instead of holding this worker for the
 * lease break time.
 */
static int owner_open(const struct open_file *of)
{
	char proc[PROC_FD_LEN];
	int fd = open(proc_fd_path(of->fd, proc), O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno != EWOULDBLOCK)
		fd = open(proc, (of->flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The owner's entry (made on its first lock) with a reference, or NULL and *@err. */
static struct lock_owner *owner_get(struct open_file *of, uint64_t owner, int *err)
{
	struct lock_owners *t = &of->fs->owners;
	struct lock_owner *lo = owner_find(t, of->inode, owner), *other;
	int fd;

	if (lo)
		return lo;
	*err = uid_share_take(of->uid, ENOLCK);
	if (*err)
		return NULL;
	fd = owner_open(of);
	lo = fd >= 0 ? calloc(1, sizeof(*lo)) : NULL;
	if (!lo) {
		uid_share_give(of->uid);
		*err = fd < 0 ? fd : -ENOMEM;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*lo = (struct lock_owner){ .set = t,
				   .inode = of->inode,
				   .owner = owner,
				   .via = of,
				   .fd = fd,
				   .uid = of->uid,
				   .refs = 2,
				   .linked = true };
	pthread_mutex_lock(&t->lock);
	other = owner_lookup(t, of->inode, owner); /* another thread of the owner won */
	if (other) {
		other->refs++;
	} else {
		unsigned int h = owner_hash(of->inode, owner);

		lo->next = t->buckets[h];
		t->buckets[h] = lo;
		__atomic_add_fetch(&t->count, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->lock);
	__atomic_store_n(&of->locked, true, __ATOMIC_RELAXED);
	if (other) {
		close(fd);
		uid_share_give(of->uid);
		free(lo);
	}
	return other ? other : lo;
}

static void mark_changed(struct open_file *of, void *arg)
{
	if (of->inode == arg)
		__atomic_store_n(&of->changed, true, __ATOMIC_RELEASE);
}

/*
 * A lock was granted: in shared mode, what this host cached of the file may
 * predate writes another host made under the lock it held before. Drop the
 * kernel's pages and attributes (not under the writeback cache, whose dirty
 * pages the kernel would first write back through a worker this request may
 * be waiting for) and have every handle drop its buffers at its next read.
 */
static void lock_granted(struct accelfs *fs, struct inode *n, fuse_ino_t ino)
{
	if (!shared_mode(fs))
		return;
	/* (not single-threaded: a read of the file waiting in the kernel for
	 * its reply would hold the page the invalidation waits for) */
	if (!fs->opts.writeback && !fs->opts.single_thread && fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	open_files_foreach(fs, mark_changed, n);
}

/* Before a lock is released: what was deferred under it reaches SOURCE first. */
static void lock_releasing(struct accelfs *fs, struct inode *n)
{
	wb_flush_file(fs, n);
}

#define HOLDERS_MAX 32

/*
 * The process holding @found, the conflict F_OFD_GETLK reported for @ask
 * (an OFD lock has no pid): the owner of the file, other than @self, that
 * does not see that conflict from its own descriptor. 0 if none of ours
 * (another host's, or a program's on SOURCE without a pid).
 */
static pid_t holder_pid(struct lock_owners *t, const struct inode *n, const struct lock_owner *self,
			const struct flock *ask, const struct flock *found)
{
	struct lock_owner *c[HOLDERS_MAX];
	unsigned int k = 0;
	pid_t pid = 0;

	pthread_mutex_lock(&t->lock);
	for (unsigned int i = 0; i < LOCK_OWNER_BUCKETS && k < HOLDERS_MAX; i++)
		for (struct lock_owner *lo = t->buckets[i]; lo && k < HOLDERS_MAX; lo = lo->next)
			if (lo->inode == n && lo != self) {
				lo->refs++;
				c[k++] = lo;
			}
	pthread_mutex_unlock(&t->lock);
	for (unsigned int i = 0; i < k; i++) {
		struct flock q = *ask;

		q.l_pid = 0;
		if (!pid && !fcntl(c[i]->fd, F_OFD_GETLK, &q) &&
		    (q.l_type == F_UNLCK || q.l_start != found->l_start || q.l_len != found->l_len))
			pid = __atomic_load_n(&c[i]->pid, __ATOMIC_RELAXED);
		owner_put(c[i]);
	}
	return pid;
}

static void accel_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			struct flock *lock)
{
	struct open_file *of = fh_of(fi);
	struct lock_owner *lo = owner_find(&of->fs->owners, of->inode, fi->lock_owner);
	struct flock fl = *lock;

	(void)ino;
	fl.l_pid = 0;
	/* the owner's own locks never conflict with it: ask through its descriptor */
	if (fcntl(lo ? lo->fd : of->fd, F_OFD_GETLK, &fl)) {
		int err = errno;

		if (lo)
			owner_put(lo);
		fuse_reply_err(req, err);
		return;
	}
	/* an OFD lock has no process: ours are taken for one */
	if (fl.l_type != F_UNLCK && fl.l_pid < 0)
		fl.l_pid = holder_pid(&of->fs->owners, of->inode, lo, lock, &fl);
	if (lo)
		owner_put(lo);
	fuse_reply_lock(req, &fl);
}

/* The lock is free or ours now: 0, or -errno (-EAGAIN: held by another owner). */
static int try_fcntl(struct lock_owner *lo, struct flock *fl)
{
	fl->l_pid = 0;
	if (!fcntl(lo->fd, F_OFD_SETLK, fl))
		return 0;
	return errno == EACCES ? -EAGAIN : -errno;
}

/* The descriptor @of's flock locks are on, or -1: none yet (flock_fd). */
static int flock_fd_known(struct open_file *of)
{
	return of->fd_shared ? __atomic_load_n(&of->lock_fd, __ATOMIC_ACQUIRE) : of->fd;
}

/*
 * The descriptor @of's flock locks are on: an open file description of its
 * own, as flock locks are per open file. A handle sharing its inode's
 * passthrough descriptor gets one now (the first time): opened with the
 * handle's access mode (where flock is emulated with byte-range locks, as
 * on NFS, an exclusive lock needs a writable one, as locally) and the
 * daemon's rights, like the owners' (owner_open), counted in the user's
 * share. Returns it or -errno.
 */
static int flock_fd(struct open_file *of)
{
	char proc[PROC_FD_LEN];
	int fd = flock_fd_known(of), none = -1, ret;

	if (fd >= 0)
		return fd;
	ret = uid_share_take(of->uid, ENOLCK);
	if (ret)
		return ret;
	fd = open(proc_fd_path(of->fd, proc), (of->flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) { /* (a lease in the way would read as a lock held: no wait for it) */
		ret = errno == EWOULDBLOCK ? -ENOLCK : -errno;
		uid_share_give(of->uid);
		return ret;
	}
	if (__atomic_compare_exchange_n(&of->lock_fd, &none, fd, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return fd;
	close(fd); /* another request of the handle made one first */
	uid_share_give(of->uid);
	return none;
}

static int try_flock(struct open_file *of, int op)
{
	int fd = flock_fd(of);

	if (fd < 0)
		return fd;
	if (!flock(fd, op | LOCK_NB))
		return 0;
	return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

static void wait_start(fuse_req_t req, struct open_file *of, struct lock_owner *lo,
		       const struct flock *fl, int op);

static void accel_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			struct flock *lock, int sleep)
{
	struct open_file *of = fh_of(fi);
	struct lock_owner *lo;
	struct flock fl = *lock;
	int ret = 0;

	if (fl.l_type == F_UNLCK) {
		lo = owner_find(&of->fs->owners, of->inode, fi->lock_owner);
		if (lo) {
			lock_releasing(of->fs, of->inode);
			ret = try_fcntl(lo, &fl);
			owner_put(lo);
		}
		fuse_reply_err(req, -ret);
		return;
	}
	lo = owner_get(of, fi->lock_owner, &ret);
	if (lo) {
		__atomic_store_n(&lo->pid, fuse_req_ctx(req)->pid, __ATOMIC_RELAXED);
		ret = try_fcntl(lo, &fl);
	}
	if (ret == -EAGAIN && sleep && lo) {
		wait_start(req, of, lo, &fl, 0); /* takes lo's reference */
		return;
	}
	if (lo)
		owner_put(lo);
	if (!ret)
		lock_granted(of->fs, of->inode, ino);
	fuse_reply_err(req, -ret);
}

static void accel_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	struct open_file *of = fh_of(fi);
	int ret;

	if (op & LOCK_UN) {
		int fd = flock_fd_known(of); /* none: no lock to drop */

		lock_releasing(of->fs, of->inode);
		ret = fd >= 0 && flock(fd, LOCK_UN) ? -errno : 0;
		fuse_reply_err(req, -ret);
		return;
	}
	ret = try_flock(of, op & (LOCK_SH | LOCK_EX));
	if (ret == -EAGAIN && !(op & LOCK_NB)) {
		wait_start(req, of, NULL, NULL, op & (LOCK_SH | LOCK_EX));
		return;
	}
	if (!ret)
		lock_granted(of->fs, of->inode, ino);
	fuse_reply_err(req, -ret);
}

/* ---- waiting without a worker ---- */

/* Wait for the lock; 0, -EINTR (interrupted) or -errno. */
static int wait_for_lock(struct lock_wait *w)
{
	for (;;) {
		int r;

		if (slow_interrupted(&w->slow))
			return -EINTR;
		r = w->lo ? fcntl(w->lo->fd, F_OFD_SETLKW, &w->fl)
			  : flock(flock_fd_known(w->of), w->op);
		if (!r)
			return 0;
		if (errno != EINTR)
			return errno == EACCES ? -EAGAIN : -errno;
	}
}

/* Give back a lock whose requester is gone (its reply found no request). */
static void wait_undo(struct lock_wait *w)
{
	if (w->lo) {
		struct flock un = w->fl;

		un.l_type = F_UNLCK;
		fcntl(w->lo->fd, F_OFD_SETLK, &un);
	} else {
		flock(flock_fd_known(w->of), LOCK_UN);
	}
}

static void wait_run(struct slow_req *s)
{
	struct lock_wait *w = (struct lock_wait *)s;
	int ret = wait_for_lock(w);

	slow_end(s);
	if (!ret)
		lock_granted(w->of->fs, w->of->inode, w->of->inode->nodeid);
	if (fuse_reply_err(s->req, -ret) == -ENOENT && !ret)
		wait_undo(w);
}

static void wait_done(struct slow_req *s)
{
	struct lock_wait *w = (struct lock_wait *)s;

	if (w->lo)
		owner_put(w->lo);
	free(w);
}

/* Hand @req to a thread of its own; takes @lo's reference. */
static void wait_start(fuse_req_t req, struct open_file *of, struct lock_owner *lo,
		       const struct flock *fl, int op)
{
	struct lock_wait *w = calloc(1, sizeof(*w));
	int ret = -ENOMEM;

	if (w) {
		*w = (struct lock_wait){ .slow = { .req = req, .run = wait_run, .done = wait_done },
					 .of = of,
					 .lo = lo,
					 .op = op };
		if (fl)
			w->fl = *fl;
		ret = slow_start(&w->slow);
		if (!ret)
			return;
		free(w);
	}
	if (lo)
		owner_put(lo);
	fuse_reply_err(req, ret == -EAGAIN ? ENOLCK : -ret);
}

/* ---- the owner's close ---- */

void lock_flush(struct open_file *of, uint64_t owner)
{
	struct lock_owners *t = &of->fs->owners;
	struct lock_owner *lo;

	if (!__atomic_load_n(&t->count, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&t->lock);
	lo = owner_lookup(t, of->inode, owner);
	if (lo)
		owner_unlink(lo);
	pthread_mutex_unlock(&t->lock);
	if (!lo)
		return;
	lock_releasing(of->fs, of->inode);
	owner_put(lo); /* the table's reference: the last one closes the descriptor */
}

void lock_release_handle(struct open_file *of)
{
	struct lock_owners *t = &of->fs->owners;
	struct lock_owner *gone = NULL, *lo, **p;
	int fd = __atomic_exchange_n(&of->lock_fd, -1, __ATOMIC_ACQ_REL);

	if (fd >= 0) { /* its flock locks go with it */
		close(fd);
		uid_share_give(of->uid);
	}
	if (!__atomic_load_n(&of->locked, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&t->lock);
	for (unsigned int i = 0; i < LOCK_OWNER_BUCKETS; i++)
		for (p = &t->buckets[i]; (lo = *p);) {
			if (lo->via != of) {
				p = &lo->next;
				continue;
			}
			owner_unlink(lo);
			lo->next = gone;
			gone = lo;
		}
	pthread_mutex_unlock(&t->lock);
	while ((lo = gone)) {
		gone = lo->next;
		owner_put(lo);
	}
}

void ops_lock_fill(struct accelfs *fs, struct fuse_lowlevel_ops *ops)
{
	if (fs->opts.locks != LOCKS_FORWARD)
		return;
	ops->getlk = accel_getlk;
	ops->setlk = accel_setlk;
	ops->flock = accel_flock;
}
