// SPDX-License-Identifier: MIT
/*
 * passthrough.c - per-file kernel passthrough (-o passthrough=, the file's
 * user.accelfs.passthrough; libfuse >= 3.16, Linux >= 6.9 with
 * CONFIG_FUSE_PASSTHROUGH): an open whose file needs nothing from the daemon
 * gets its backing file registered with the kernel, which then reads,
 * writes and maps SOURCE itself; READ and WRITE never reach us.
 *
 * The kernel's rules, and how they are kept:
 * - FUSE_PASSTHROUGH and the writeback cache exclude each other for the
 *   whole connection (fs/fuse/inode.c). passthrough=auto asks for it only on
 *   mounts without the writeback cache and with the kernel page cache
 *   (kernel_cache=never asks for every access to reach the daemon);
 *   passthrough=always turns the writeback cache off.
 * - An inode is either in passthrough mode or in cached mode, never both
 *   (fs/fuse/iomode.c: a conflicting open fails with EIO), and all its
 *   passthrough opens share one backing file. So the first open of an inode
 *   decides for the inode, under inode->lock, and later opens follow while
 *   any handle is open: pt_opens and pt_backing_id count and name them.
 * - Registering a backing file needs CAP_SYS_ADMIN. When the kernel refuses
 *   (EPERM, a SOURCE it cannot stack on, ...) the open is served by the
 *   daemon as before, counted as a fallback, and no later open tries again:
 *   one log line, not one per open (as libfuse's passthrough_hp does).
 *
 * Descriptors: the kernel holds the backing file, so a passthrough handle
 * keeps no daemon descriptor of its own (issue 27). What still reaches the
 * daemon for it (fsync, fallocate, setattr through the handle, lseek,
 * copy_file_range, locks) uses a descriptor the inode's passthrough handles
 * of the same user and access mode share (struct pt_share): an O_RDONLY one
 * for readers, an O_RDWR one for writers. Each is the first such handle's
 * own (share_fd), opened with that user's credentials, with O_APPEND and
 * O_NONBLOCK cleared, and goes with the last handle using it, counted
 * meanwhile in that user's share (uid_share.c); a later handle's own
 * descriptor is closed once the handle is set up (handle_new) and its share
 * given back. So no user's requests go through a descriptor another user
 * opened (on a network SOURCE the descriptor's credentials may be what the
 * server checks), a reader never makes the daemon hold the file open for
 * writing (an executable's execve would fail with ETXTBSY; a read lease
 * would be broken), and a user's 200 opens of one file cost 2 descriptors,
 * counted to her alone. What a handle's access mode forbids (a
 * read-only handle's fallocate, EBADF, and ftruncate, EINVAL; copy_file_range
 * into an O_APPEND file, EBADF) the kernel refuses on its own file before
 * sending anything. A handle opened O_SYNC, O_DSYNC or O_NOATIME keeps its
 * own descriptor (fallocate and copy_file_range honour those flags), as
 * does a writer whose own descriptor is write-only (open_backing's
 * fallback) while no read-write one is shared. Per-open-file state stays
 * per open: flock locks go on a descriptor the handle gets at its first
 * flock (ops_lock.c, flock_fd), and a write-back error a shared
 * descriptor's fsync reports once is kept for the other handles (ops_file.c,
 * fsync_shared_error), as each one's own descriptor would have reported it.
 *
 * Rights: every open still opens its own backing descriptor with the
 * caller's credentials (ops_file.c) before anything is registered, so the
 * caller's access is checked as before. The kernel opens the shared backing
 * file for each passthrough open with the credentials of the registration,
 * and does the file's I/O with them; they are the daemon's minus
 * CAP_FSETID, so a write through the kernel clears set-ID bits (and file
 * capabilities) as an unprivileged writer's would on a local file system,
 * and, with an fsuid that is not root's, without the blocks a file system
 * keeps back for root (caps.h, creds_write_as): the backing file is one
 * for all the inode's opens, whoever opened first, so even root's writes
 * through it stay out of that reserve.
 *
 * The rule of passthrough=auto is tuning_passthrough_need() (cache/tuning.c),
 * shared with accel show, and, for a file that needs the daemon only for
 * what the mount does to writes (deferred_write, sync=relaxed: the default),
 * its observed use: a read-only open goes passthrough when the last handle
 * the daemon served read the file in bulk (tuning_use_bulk: 1 MiB or more in
 * requests of 64 KiB or more on average, nothing written), where the
 * daemon's buffers add nothing to SOURCE's own page cache and each request
 * only costs time. Not on a shared mount nor for a file the disk tier keeps
 * (their caches are worth the requests there), nor while the pool holds
 * deferred bytes of the file, this mount's or another's (SOURCE lacks
 * them), nor while the daemon serves another open of it (one mode per
 * inode). The verdict holds while nothing writes the file: a write through
 * the daemon, or a writable open that joined the passed-through readers,
 * clears it; and one such open in PT_LOOK_AGAIN (then fewer, below) is
 * served by the daemon again, whose handle then decides anew (random reads
 * end it).
 *
 * The files in passthrough mode now, with the reason, are listed for accel
 * stat (passthrough_files_write; fs->pt_files, a leaf lock taken under
 * inode->lock when an inode enters or leaves the mode).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "caps.h"
#include "creds.h"
#include "probes.h"
#include "tuning.h"

/* Of the opens passed through by use, the daemon serves one in PT_LOOK_AGAIN,
 * then one in twice as many each time it confirms the verdict, up to one in
 * PT_LOOK_MAX: each such open is a read through the daemon with the kernel's
 * pages gone (a passthrough open drops them), a cost paid less often the
 * longer the pattern holds. */
#define PT_LOOK_AGAIN 16
#define PT_LOOK_MAX 1024

/* Why an inode went passthrough (its first passthrough open's reason). */
#define PT_WHY_MOUNT "passthrough=always"
#define PT_WHY_ATTR "attribute always"
#define PT_WHY_AUTO "auto: needs nothing of the daemon"
#define PT_WHY_USE "auto: bulk sequential reads"
#define PT_WHY_JOIN "joins the file's passthrough handles" /* probe only: one mode per inode */

/* A file in passthrough mode, on its mount's list (fs->pt_files). */
struct pt_file {
	struct pt_file *prev, *next;
	const char *why; /* PT_WHY_* */
	char path[];	 /* SOURCE's path of it when it entered the mode */
};

#ifdef ACCEL_HAVE_PASSTHROUGH
#define PASSTHROUGH_FSUID 65534 /* nobody: the registration's, never root's */

/* Process-wide by nature: what makes the kernel refuse (the daemon's
 * capabilities, the kernel itself) is the process's; one connection. */
static bool refused; /* atomic: the kernel refused a backing file; no more tries */

/* The initial user namespace maps every uid to itself, from 0. */
static bool in_init_userns(void)
{
	char line[128];
	unsigned long a, b, n;
	FILE *f = fopen("/proc/self/uid_map", "re");
	bool init = false;

	if (f && fgets(line, sizeof(line), f) && sscanf(line, "%lu %lu %lu", &a, &b, &n) == 3)
		init = a == 0 && b == 0 && n == 4294967295UL;
	if (f)
		fclose(f);
	return init;
}

/* CAP_SYS_ADMIN where the kernel checks it: in the initial user namespace. */
static bool has_sys_admin(void)
{
	struct __user_cap_data_struct d[2];

	return !caps_get(d) &&
	       (d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) &&
	       in_init_userns();
}

/*
 * Register @fd as a backing file with this thread's credentials minus
 * CAP_FSETID and CAP_SYS_RESOURCE, with fsuid PASSTHROUGH_FSUID (see the
 * top). Returns the backing id (> 0) or 0.
 */
static int backing_open(fuse_req_t req, int fd)
{
	/* Between requests a worker holds the daemon's own credentials, which
	 * never change after start (caps.h): read once per thread (a capget
	 * per open saved). */
	static __thread struct __user_cap_data_struct saved[2];
	static __thread bool known;
	struct __user_cap_data_struct d[2];
	uid_t prev;
	int id;

	if (!known && caps_get(saved))
		return 0;
	known = true;
	memcpy(d, saved, sizeof(d));
	d[CAP_TO_INDEX(CAP_FSETID)].effective &= ~CAP_TO_MASK(CAP_FSETID);
	d[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective &= ~CAP_TO_MASK(CAP_SYS_RESOURCE);
	if (caps_set(d))
		return 0;
	prev = creds_write_as(PASSTHROUGH_FSUID);
	id = fuse_passthrough_open(req, fd);
	creds_write_done(prev);
	if (caps_set(saved))
		log_msg(LOG_ERR, "passthrough: cannot restore capabilities: %s", strerror(errno));
	return id > 0 ? id : 0;
}
#endif

void passthrough_init(struct accelfs *fs, struct fuse_conn_info *conn, bool writeback_cache)
{
	enum passthrough_mode m = fs->opts.passthrough;

	fs->passthrough = false;
#ifdef ACCEL_HAVE_PASSTHROUGH
	/* kernel_cache=never asks for every access to reach the daemon */
	if (m == PASSTHROUGH_NEVER ||
	    (m == PASSTHROUGH_AUTO &&
	     (writeback_cache || fs->opts.kernel_cache == KERNEL_CACHE_NEVER)))
		return;
	if (!(conn->capable & FUSE_CAP_PASSTHROUGH)) {
		if (m == PASSTHROUGH_ALWAYS)
			log_msg(LOG_WARNING, "passthrough=always: the kernel does not offer "
					     "passthrough (CONFIG_FUSE_PASSTHROUGH): every open is "
					     "served by the daemon");
		return;
	}
	conn->want |= FUSE_CAP_PASSTHROUGH;
	fs->passthrough = true;
	if (!has_sys_admin())
		log_msg(LOG_WARNING, "passthrough: the daemon lacks CAP_SYS_ADMIN, which the "
				     "kernel requires: every open will be served by the daemon");
#else
	(void)conn;
	(void)writeback_cache;
	(void)m;
#endif
}

/* The mount's defaults the auto rule weighs (cache/tuning.h). */
static void mount_defaults(struct accelfs *fs, struct tuning_mount *m)
{
	m->deferred_write = fs->opts.deferred_write && fs->pool;
	m->sync_relaxed = fs->opts.sync_relaxed;
}

void passthrough_wanted(struct accelfs *fs, const struct inode *n, const struct tuning_values *t,
			struct pt_choice *c)
{
	struct tuning_mount m;

	*c = (struct pt_choice){ NULL, false };
	if (!fs->passthrough || !S_ISREG(n->type) || t->passthrough == TUNING_PT_NEVER)
		return;
	if (t->passthrough == TUNING_PT_ALWAYS) {
		c->why = PT_WHY_ATTR;
		return;
	}
	if (fs->opts.passthrough == PASSTHROUGH_ALWAYS) {
		c->why = PT_WHY_MOUNT;
		return;
	}
	mount_defaults(fs, &m);
	if (!tuning_passthrough_need(t, &m)) {
		c->why = PT_WHY_AUTO;
		return;
	}
	/* what the mount does to writes is no reason to serve a reader */
	c->by_use =
	    !tuning_passthrough_need(t, NULL) && !fs->shared && !(fs->disk && t->disk_cache != 0);
}

/*
 * Under n->lock, for a file whose rule left it to its observed use (see the
 * top): does this open go passthrough on the verdict of earlier handles?
 */
static bool by_use(struct open_file *of, const struct pt_choice *c)
{
	struct inode *n = of->inode;
	uint64_t end;
	int64_t mt;

	if (!c->by_use || !n->pt_bulk || n->opens || (of->flags & O_ACCMODE) != O_RDONLY)
		return false;
	if (of->fs->pool && pool_dirty_end_peek(of->fs->pool, n->dev, n->ino, &end, &mt))
		return false; /* deferred bytes SOURCE has not got yet */
	if (++n->pt_bulk_opens >= (n->pt_bulk_every ? n->pt_bulk_every : PT_LOOK_AGAIN)) {
		n->pt_bulk_opens = 0;
		return false; /* the daemon serves this one: does the pattern hold? */
	}
	return true;
}

#ifdef ACCEL_HAVE_PASSTHROUGH
/* Under n->lock, its first passthrough open @of: list the file with @why. */
static void list_add(struct open_file *of, const char *why)
{
	struct pt_files *l = &of->fs->pt_files;
	char proc[PROC_FD_LEN], path[PATH_MAX];
	ssize_t len = readlink(proc_fd_path(of->fd, proc), path, sizeof(path) - 1);
	struct pt_file *e;

	if (len < 0)
		len = 0;
	e = malloc(sizeof(*e) + (size_t)len + 1);
	if (!e)
		return; /* unlisted: accel stat's count says one less */
	e->why = why;
	memcpy(e->path, path, (size_t)len);
	e->path[len] = '\0';
	pthread_mutex_lock(&l->lock);
	e->prev = NULL;
	e->next = l->head;
	if (l->head)
		l->head->prev = e;
	l->head = e;
	l->count++;
	__atomic_store_n(&l->gen, l->gen + 1, __ATOMIC_RELAXED); /* read without the lock */
	pthread_mutex_unlock(&l->lock);
	of->inode->pt_file = e;
}
#endif

/* Under n->lock, its last passthrough handle gone: off the list. */
static void list_remove(struct accelfs *fs, struct inode *n)
{
	struct pt_files *l = &fs->pt_files;
	struct pt_file *e = n->pt_file;

	if (!e)
		return;
	pthread_mutex_lock(&l->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	l->count--;
	__atomic_store_n(&l->gen, l->gen + 1, __ATOMIC_RELAXED); /* read without the lock */
	pthread_mutex_unlock(&l->lock);
	n->pt_file = NULL;
	free(e);
}

/* @s with its tab, newline and backslash bytes as \ooo (as /proc/mounts does). */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\t' || *s == '\n' || *s == '\\')
			fprintf(f, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

unsigned int passthrough_files_write(struct accelfs *fs, FILE *f)
{
	struct pt_files *l = &fs->pt_files;
	unsigned int n;

	pthread_mutex_lock(&l->lock);
	for (const struct pt_file *e = l->head; e; e = e->next) {
		fprintf(f, "%s\t", e->why);
		put_escaped(f, e->path);
		fputc('\n', f);
	}
	n = l->count;
	pthread_mutex_unlock(&l->lock);
	return n;
}

#ifdef ACCEL_HAVE_PASSTHROUGH
/* Under n->lock: the inode's backing id, registering @fd for a first open. */
static int backing_of(fuse_req_t req, struct inode *n, int fd)
{
	if (n->pt_backing_id > 0)
		return n->pt_backing_id;
	if (__atomic_load_n(&refused, __ATOMIC_RELAXED))
		return 0;
	n->pt_backing_id = backing_open(req, fd);
	if (!n->pt_backing_id && !__atomic_exchange_n(&refused, true, __ATOMIC_RELAXED))
		log_msg(LOG_WARNING, "passthrough: the kernel refused a backing file (see "
				     "above): opens are served by the daemon from now on");
	return n->pt_backing_id;
}
#endif

#ifdef ACCEL_HAVE_PASSTHROUGH
/* A handle opened with one of these keeps its own descriptor: the daemon's
 * own calls through it (fallocate, copy_file_range) honour them. O_SYNC
 * includes O_DSYNC. */
#define PT_OWN_FLAGS (O_DSYNC | O_NOATIME)
#endif

/* A descriptor of an inode that its passthrough handles of one user and
 * access mode share (see the top); on the inode's list, under its lock. */
struct pt_share {
	struct pt_share *next;
	uid_t uid;	    /* the user whose handles use it, and whose share it takes */
	bool writes;	    /* O_RDWR, the writers'; else O_RDONLY, the readers' */
	int fd;		    /* the first such handle's own */
	unsigned int users; /* handles using it */
};

#ifdef ACCEL_HAVE_PASSTHROUGH
/*
 * Under n->lock, for a passthrough handle: share the descriptor of its
 * inode for its user and access mode, or make its own that descriptor
 * (then of->fd stays). Only an O_RDONLY descriptor serves readers and an
 * O_RDWR one writers, without O_APPEND (the kernel refuses an O_APPEND
 * file's copy_file_range itself; the rest that comes here ignores it) or
 * O_NONBLOCK (ignored by every request on a regular file). Returns the
 * descriptor @of is to use instead of its own, or -1.
 */
static int share_fd(struct open_file *of)
{
	struct inode *n = of->inode;
	bool writes = (of->flags & O_ACCMODE) != O_RDONLY;
	struct pt_share *s;
	int fl;

	if (of->flags & PT_OWN_FLAGS)
		return -1;
	for (s = n->pt_shares; s; s = s->next)
		if (s->uid == of->uid && s->writes == writes)
			break;
	if (s) {
		s->users++;
		of->pt_share = s;
		of->fd_shared = true;
		return s->fd;
	}
	fl = fcntl(of->fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) != (writes ? O_RDWR : O_RDONLY) ||
	    ((fl & (O_APPEND | O_NONBLOCK)) &&
	     fcntl(of->fd, F_SETFL, fl & ~(O_APPEND | O_NONBLOCK))))
		return -1; /* a write-only fallback (open_backing) stays the handle's */
	s = malloc(sizeof(*s));
	if (!s)
		return -1;
	*s = (struct pt_share){
		.next = n->pt_shares, .uid = of->uid, .writes = writes, .fd = of->fd, .users = 1
	};
	n->pt_shares = s;
	of->pt_share = s;
	of->fd_shared = true;
	return -1;
}
#endif

int passthrough_open_locked(fuse_req_t req, struct open_file *of, const struct pt_choice *c,
			    struct fuse_file_info *fi, int *swap)
{
	struct inode *n = of->inode;
	const char *why = c->why;
	bool used = false; /* chosen by observed use */

	of->passthrough = false;
	*swap = -1;
	if (!why && !n->pt_opens && by_use(of, c)) {
		why = PT_WHY_USE;
		used = true;
	}
	/* one mode per inode: a handle already on the daemon path keeps it there */
	if (!why && !n->pt_opens)
		return 0;
#ifdef ACCEL_HAVE_PASSTHROUGH
	if (n->opens == n->pt_opens && backing_of(req, n, of->fd) > 0) {
		fi->backing_id = n->pt_backing_id;
		fi->keep_cache = 0; /* pages cached before belong to the daemon path */
		fi->direct_io = 0;
		n->pt_opens++;
		if ((of->flags & O_ACCMODE) != O_RDONLY) {
			of->pt_pid = fuse_req_ctx(req)->pid;
			__atomic_store_n(&n->pt_writer, of->pt_pid, __ATOMIC_RELAXED);
		}
		n->stamp_valid = false; /* nor may a later cached open keep them */
		of->passthrough = true;
		ACCEL_PROBE3(passthrough_open, (uint64_t)n->ino, why ? why : PT_WHY_JOIN,
			     (int)used);
		if (n->pt_opens == 1 && why)
			list_add(of, why);
		if (used)
			__atomic_add_fetch(&of->fs->pt_files.learned, 1, __ATOMIC_RELAXED);
		*swap = share_fd(of);
		cache_io_count_passthrough(of->fs, true);
		return 1;
	}
#else
	(void)req;
	(void)used;
	(void)fi;
#endif
	cache_io_count_passthrough(of->fs, false);
	return 0;
}

/* Under n->lock: what handle @of showed of the file's use (see the top). */
static void learn(struct open_file *of)
{
	struct inode *n = of->inode;
	struct tuning_use u = {
		.reads = __atomic_load_n(&of->use_reads, __ATOMIC_RELAXED),
		.read_bytes = __atomic_load_n(&of->use_bytes, __ATOMIC_RELAXED),
		.wrote = __atomic_load_n(&of->wrote, __ATOMIC_RELAXED),
	};

	if (of->passthrough) { /* its reads were the kernel's: only a writer tells */
		if ((of->flags & O_ACCMODE) != O_RDONLY)
			n->pt_bulk = false;
		return;
	}
	if (u.wrote || u.reads) { /* a new verdict */
		bool bulk = tuning_use_bulk(&u);
		unsigned int every = n->pt_bulk_every ? n->pt_bulk_every : PT_LOOK_AGAIN;

		if (!bulk || !n->pt_bulk)
			n->pt_bulk_every = PT_LOOK_AGAIN; /* a new verdict: look again soon */
		else if (every < PT_LOOK_MAX)
			n->pt_bulk_every = every * 2; /* confirmed: half as often */
		n->pt_bulk = bulk;
		n->pt_bulk_opens = 0;
		ACCEL_PROBE4(passthrough_verdict, (uint64_t)n->ino, (int)bulk, u.reads,
			     u.read_bytes);
	}
}

void passthrough_release_locked(struct open_file *of, struct pt_leftover *left)
{
	struct inode *n = of->inode;
	struct pt_share *s = of->pt_share, **p;

	*left = (struct pt_leftover){ .backing_id = 0, .fd = -1 };
	learn(of);
	if (of->pt_pid && n->pt_writer == of->pt_pid) /* its writes are another's now */
		__atomic_store_n(&n->pt_writer, 0, __ATOMIC_RELAXED);
	if (s && !--s->users) { /* its last user: the caller closes it */
		for (p = &n->pt_shares; *p != s; p = &(*p)->next)
			;
		*p = s->next;
		left->fd = s->fd;
		left->uid = s->uid;
		free(s);
	}
	of->pt_share = NULL;
	if (!of->passthrough || --n->pt_opens)
		return;
	list_remove(of->fs, n);
	left->backing_id = n->pt_backing_id;
	n->pt_backing_id = 0;
}

/* The kernel's FUSE_DEV_IOC_BACKING_CLOSE (linux/fuse.h >= 6.9; Debian 12's
 * headers predate it), what fuse_passthrough_close() sends for a request. */
#define BACKING_CLOSE _IOW(229, 2, uint32_t)

void passthrough_close(struct accelfs *fs, int backing_id)
{
#ifdef ACCEL_HAVE_PASSTHROUGH
	if (backing_id > 0 && ioctl(fuse_session_fd(fs->se), BACKING_CLOSE, &backing_id) < 0)
		log_msg(LOG_ERR, "passthrough: closing backing file %d: %s", backing_id,
			strerror(errno));
#else
	(void)fs;
	(void)backing_id;
#endif
}

int passthrough_check(struct accelfs *fs, char *why, size_t len)
{
#ifndef ACCEL_HAVE_PASSTHROUGH
	if (fs->opts.passthrough == PASSTHROUGH_ALWAYS) {
		snprintf(why, len,
			 "passthrough=always needs libfuse >= 3.16 (accelfs is built with %s)",
			 fuse_pkgversion());
		return -1;
	}
#else
	(void)fs;
	(void)why;
	(void)len;
#endif
	return 0;
}
