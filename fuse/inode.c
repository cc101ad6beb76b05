// SPDX-License-Identifier: MIT
/*
 * inode.c - the table of backing inodes the kernel holds references to, and
 * the bounded cache of their O_PATH descriptors.
 *
 * A chained hash on (st_dev, st_ino) under one mutex. The table is touched by
 * lookup, create and forget, never by read or write, so one lock is enough;
 * it doubles when it gets crowded so chains stay short for trees with
 * millions of names.
 *
 * The kernel keeps a node for every name it caches until it sends FORGET,
 * so one descriptor per node would make RLIMIT_NOFILE a limit on the tree
 * (and a file deleted in SOURCE would stay allocated while the kernel
 * remembers its name). So, as virtiofsd's --inode-file-handles does, a node
 * is identified by its file handle, and only a bounded set of descriptors is
 * open, reopened with open_by_handle_at() on demand (see "descriptor cache"
 * below). Where SOURCE has no handles or the daemon may not open them
 * (CAP_DAC_READ_SEARCH), every node keeps its descriptor: the old mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"

/* Set once before serving (inode_set_free_hook), then read only. */
static void (*free_hook)(struct inode *n);
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inode **table;  /* under table_lock */
static size_t table_size;     /* power of two; under table_lock */
static size_t table_count;    /* under table_lock */
static struct inode *retired; /* retired nodes the kernel still holds, via hnext; table_lock */

/*
 * Descriptor cache. Every node with a file handle is in one of two states:
 * its descriptor open (fd >= 0, on the clock ring) or closed (fd == -1).
 * inode_fd_get() pins an open descriptor (fd_pins) or reopens one by handle;
 * only unpinned descriptors are closed, so a descriptor number is never
 * reused while a caller still uses it (that would send its operation to
 * another file). A hit takes only the node's own fd_lock and sets fd_ref;
 * the clock hand (ring_sweep_locked) closes descriptors not used since it
 * last passed, which approximates LRU without a global lock per operation.
 *
 * Two things shrink the cache: going over fd_cache_max, and the reaper
 * thread. Every FD_REAP_SEC it passes over the ring and closes a descriptor
 * that was not used since the last pass and whose file has no name left
 * (st_nlink 0: deleted in SOURCE, which it would otherwise keep allocated
 * until the kernel forgets the name), or that was not used for
 * FD_IDLE_PASSES passes (an idle daemon ends up holding none). The fstat
 * this costs is spent only on descriptors idle for a pass; closing every
 * idle descriptor at once would make a workload that comes back to a file
 * after a second reopen it each time.
 */
#define FD_CACHE_MAX 65536 /* descriptors the cache keeps open at most */
#define FD_CACHE_MIN 64	   /* ... at least, whatever RLIMIT_NOFILE says */
#define FD_REAP_SEC 1	   /* reaper period: a deleted file is freed within 2 */
#define FD_IDLE_PASSES 30  /* reaper passes without a use that close a descriptor */
#define FD_BATCH 64	   /* descriptors closed per cache lock hold */
#define MOUNTS_MAX 64	   /* backing mounts below SOURCE with handles */

struct fh_buf {
	struct file_handle h;
	unsigned char bytes[MAX_HANDLE_SZ];
};

static bool use_handles;       /* set at init, then read only */
static char fallback_why[160]; /* why not, for the mount's log line */
static size_t fd_cache_max;    /* set at init, then read only */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fd_link ring = { &ring, &ring }; /* head: newest; tail: the hand; cache_lock */
static size_t cache_count;		       /* descriptors on the ring; cache_lock */

/* Mount id -> an O_RDONLY descriptor on that mount (open_by_handle_at
 * refuses an O_PATH one). Entries are never removed: the descriptor keeps
 * the mount, and so its id, alive. */
static pthread_mutex_t mounts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int id, fd;
} mounts[MOUNTS_MAX];  /* mounts_lock */
static size_t nmounts; /* mounts_lock */

static pthread_mutex_t reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_cond;
static pthread_once_t reaper_once = PTHREAD_ONCE_INIT;
static pthread_t reaper;
static bool reaper_running, reaper_stop; /* reaper_lock */

static struct inode *ring_inode(struct fd_link *l)
{
	return (struct inode *)((char *)l - offsetof(struct inode, fd_link));
}

static void ring_del(struct fd_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
}

static void ring_add_head(struct fd_link *l)
{
	l->next = ring.next;
	l->prev = &ring;
	ring.next->prev = l;
	ring.next = l;
}

/* fd_lock held: the clock's test: used since the last pass? (then not again) */
static bool clock_due(struct inode *v)
{
	bool due = !v->fd_ref;

	v->fd_ref = false;
	return due;
}

static void close_all(const int *fds, size_t n)
{
	int saved = errno;

	while (n--)
		close(fds[n]);
	errno = saved;
}

/* fd_lock held: the reaper's test: has @v's descriptor outlived its use (see above)? */
static bool reap_due(struct inode *v)
{
	struct stat st;

	if (v->fd_ref) {
		v->fd_ref = false;
		v->fd_idle = 0;
		return false;
	}
	if (++v->fd_idle >= FD_IDLE_PASSES)
		return true;
	return !fstat(v->fd, &st) && st.st_nlink == 0;
}

/*
 * Move the hand over at most @scan nodes from the tail while more than
 * @target descriptors are open: an unpinned node that @due says may go
 * gives up its descriptor into @out, any other goes back to the head (the
 * clock's second chance, clock_due; the reaper's idle test, reap_due). A
 * busy node (fd_lock held: being reopened) is skipped: cache lock -> fd_lock
 * is only ever a trylock. Returns how many descriptors are in @out (at most
 * FD_BATCH), to close outside the lock.
 */
static size_t ring_sweep_locked(size_t target, size_t scan, bool (*due)(struct inode *), int *out)
{
	size_t n = 0;

	while (cache_count > target && scan-- && n < FD_BATCH) {
		struct fd_link *l = ring.prev;
		struct inode *v = ring_inode(l);
		bool evict = false;

		if (!pthread_mutex_trylock(&v->fd_lock)) {
			evict = !v->fd_pins && due(v);
			if (evict) {
				out[n++] = v->fd;
				v->fd = -1;
			}
			pthread_mutex_unlock(&v->fd_lock);
		}
		ring_del(l);
		if (evict) {
			v->fd_listed = false;
			cache_count--;
		} else {
			ring_add_head(l);
		}
	}
	return n;
}

/* The reaper: every FD_REAP_SEC, one pass over the whole ring. */
static void reap_pass(void)
{
	int fds[FD_BATCH];
	size_t left, n;

	pthread_mutex_lock(&cache_lock);
	left = cache_count;
	pthread_mutex_unlock(&cache_lock);
	while (left) {
		size_t scan = left < FD_BATCH ? left : FD_BATCH;

		pthread_mutex_lock(&cache_lock);
		n = ring_sweep_locked(0, scan, reap_due, fds);
		pthread_mutex_unlock(&cache_lock);
		close_all(fds, n);
		left -= scan;
	}
}

static void *reaper_main(void *arg)
{
	struct timespec ts;

	(void)arg;
	pthread_mutex_lock(&reaper_lock);
	while (!reaper_stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += FD_REAP_SEC;
		pthread_cond_timedwait(&reaper_cond, &reaper_lock, &ts);
		if (reaper_stop)
			break;
		pthread_mutex_unlock(&reaper_lock);
		reap_pass();
		pthread_mutex_lock(&reaper_lock);
	}
	pthread_mutex_unlock(&reaper_lock);
	return NULL;
}

/* Started by the first cached descriptor: after daemonising (threads do not survive fork). */
static void reaper_start(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reaper_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&reaper_lock);
	reaper_running = !pthread_create(&reaper, NULL, reaper_main, NULL);
	pthread_mutex_unlock(&reaper_lock);
	if (!reaper_running)
		log_msg(LOG_WARNING, "cannot start the descriptor reaper: files deleted in "
				     "SOURCE stay allocated until the cache evicts them");
}

static void reaper_stop_join(void)
{
	bool running;

	pthread_mutex_lock(&reaper_lock);
	running = reaper_running;
	reaper_stop = true;
	if (running)
		pthread_cond_signal(&reaper_cond);
	pthread_mutex_unlock(&reaper_lock);
	if (running)
		pthread_join(reaper, NULL);
}

/* Put @n's freshly opened descriptor (set by the caller) on the ring. */
static void cache_insert(struct inode *n)
{
	int fds[FD_BATCH];
	size_t cnt;

	pthread_once(&reaper_once, reaper_start);
	pthread_mutex_lock(&cache_lock);
	ring_add_head(&n->fd_link);
	n->fd_listed = true;
	cache_count++;
	cnt = ring_sweep_locked(fd_cache_max, 2 * cache_count, clock_due, fds);
	pthread_mutex_unlock(&cache_lock);
	close_all(fds, cnt);
}

/* Take @n off the ring (it is being freed); its descriptor is the caller's. */
static void cache_remove(struct inode *n)
{
	pthread_mutex_lock(&cache_lock);
	if (n->fd_listed) {
		ring_del(&n->fd_link);
		n->fd_listed = false;
		cache_count--;
	}
	pthread_mutex_unlock(&cache_lock);
}

int inode_fd_get(struct inode *n)
{
	bool suspended;
	int fd, err;

	if (!n->fh)
		return n->fd; /* kept until FORGET */
	pthread_mutex_lock(&n->fd_lock);
	if (n->fd >= 0) {
		n->fd_pins++;
		n->fd_ref = true;
		fd = n->fd;
		pthread_mutex_unlock(&n->fd_lock);
		return fd;
	}
	/* Under fd_lock: one reopen for all callers of this node. It needs
	 * CAP_DAC_READ_SEARCH, which a thread acting with a user's fsuid has
	 * dropped: the daemon's own credentials for this call only. */
	suspended = creds_suspend();
	fd = open_by_handle_at(n->mount_fd, n->fh, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	if (creds_resume(suspended)) { /* fail closed: the request must not go on as root */
		log_msg(LOG_CRIT, "cannot take the caller's credentials again: stopping");
		abort();
	}
	if (fd < 0) {
		fd = -err;
		pthread_mutex_unlock(&n->fd_lock);
		return fd;
	}
	n->fd = fd;
	n->fd_pins++;
	n->fd_ref = true;
	pthread_mutex_unlock(&n->fd_lock);
	cache_insert(n); /* only we can: the node was not on the ring */
	return fd;
}

/*
 * @n's file is gone from SOURCE (an open of it failed with ESTALE): close
 * its cached descriptor now, if nobody has it pinned. A network SOURCE's
 * client may go on resolving the name to the file our descriptor holds
 * (glusterfs does) until that is let go. Cache lock, then fd_lock by
 * trylock only, as the sweep takes them.
 */
void inode_fd_drop(struct inode *n)
{
	int fd = -1;

	if (!n->fh)
		return; /* kept until FORGET: the only way to the node */
	pthread_mutex_lock(&cache_lock);
	if (n->fd_listed && !pthread_mutex_trylock(&n->fd_lock)) {
		if (!n->fd_pins && n->fd >= 0) {
			fd = n->fd;
			n->fd = -1;
			ring_del(&n->fd_link);
			n->fd_listed = false;
			cache_count--;
		}
		pthread_mutex_unlock(&n->fd_lock);
	}
	pthread_mutex_unlock(&cache_lock);
	if (fd >= 0)
		close(fd);
}

void inode_fd_put(struct inode *n, int fd)
{
	if (fd < 0 || !n->fh)
		return;
	pthread_mutex_lock(&n->fd_lock);
	n->fd_pins--;
	pthread_mutex_unlock(&n->fd_lock);
}

/* A lookup found @n with @fd in hand: keep it if @n's was closed, saving a reopen. */
static void fd_adopt(struct inode *n, int fd)
{
	bool adopted = false;

	if (n->fh) {
		pthread_mutex_lock(&n->fd_lock);
		if (n->fd < 0) {
			n->fd = fd;
			n->fd_ref = true;
			adopted = true;
		}
		pthread_mutex_unlock(&n->fd_lock);
	}
	if (adopted)
		cache_insert(n);
	else
		close(fd);
}

/* A descriptor open for reading on the object @fd (of type @type) names, or -errno. */
static int mount_fd_open(int fd, mode_t type)
{
	char path[PROC_FD_LEN];
	int mfd;

	if (S_ISDIR(type))
		mfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if (S_ISREG(type))
		mfd = open(proc_fd_path(fd, path), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	else
		return -ENOTSUP; /* opening a device or FIFO has effects */
	return mfd < 0 ? -errno : mfd;
}

/*
 * The descriptor that opens handles of mount @id (a bind mount below SOURCE
 * has its own), made from @fd, an object of type @type on it. -errno if
 * there is none: the node then keeps its descriptor.
 */
static int mount_fd_of(int id, int fd, mode_t type)
{
	int mfd = -ENOSPC;
	size_t i;

	if (id == mounts[0].id)
		return mounts[0].fd; /* SOURCE's own mount: set at init, never changes */
	pthread_mutex_lock(&mounts_lock);
	for (i = 1; i < nmounts && mounts[i].id != id; i++)
		;
	if (i < nmounts) {
		mfd = mounts[i].fd;
	} else if (nmounts < MOUNTS_MAX) {
		mfd = mount_fd_open(fd, type);
		if (mfd >= 0) {
			mounts[nmounts].id = id;
			mounts[nmounts++].fd = mfd;
		}
	}
	pthread_mutex_unlock(&mounts_lock);
	return mfd;
}

/* @fd's handle into @fh, and the descriptor to reopen it with; false: keep @fd instead. */
static bool handle_of(int fd, mode_t type, struct fh_buf *fh, int *mount_fd)
{
	int id;

	if (!use_handles)
		return false;
	fh->h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &fh->h, &id, AT_EMPTY_PATH))
		return false; /* e.g. a mount below SOURCE without handles */
	*mount_fd = mount_fd_of(id, fd, type);
	return *mount_fd >= 0;
}

/* Same file? The handle carries the generation, so a reused inode number differs. */
static bool handle_equal(const struct file_handle *a, const struct file_handle *b)
{
	if (!a || !b)
		return a == b; /* without handles a node's descriptor pins its inode number */
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/* Can the daemon open SOURCE's handles? Else say why, for the log. */
static void handles_probe(void)
{
	struct fh_buf fh;
	int id, mfd, fd, err;

	fh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(accelfs.root.fd, "", &fh.h, &id, AT_EMPTY_PATH)) {
		snprintf(fallback_why, sizeof(fallback_why), "SOURCE has no file handles (%s)",
			 strerror(errno));
		return;
	}
	mfd = mount_fd_open(accelfs.root.fd, S_IFDIR);
	fd = mfd < 0 ? mfd : open_by_handle_at(mfd, &fh.h, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		err = mfd < 0 ? -mfd : errno;
		snprintf(fallback_why, sizeof(fallback_why), "cannot open file handles (%s%s)",
			 strerror(err), err == EPERM ? ": no CAP_DAC_READ_SEARCH" : "");
		if (mfd >= 0)
			close(mfd);
		return;
	}
	close(fd);
	if (inode_fh_set_root(&fh.h)) {
		snprintf(fallback_why, sizeof(fallback_why), "out of memory");
		close(mfd);
		return;
	}
	mounts[0].id = id;
	mounts[0].fd = mfd;
	nmounts = 1;
	use_handles = true;
}

/* Half the descriptor limit (the rest is for open files), within the bounds. */
static void fd_cache_size(void)
{
	struct rlimit rl;
	rlim_t half = getrlimit(RLIMIT_NOFILE, &rl) ? FD_CACHE_MIN : rl.rlim_cur / 2;

	fd_cache_max = half < FD_CACHE_MIN   ? FD_CACHE_MIN
		       : half > FD_CACHE_MAX ? FD_CACHE_MAX
					     : (size_t)half;
}

bool inode_handles_used(void)
{
	return use_handles;
}

void inode_fd_log_mode(void)
{
	struct rlimit rl = { 0 };

	if (use_handles) {
		log_msg(LOG_INFO, "inodes kept by file handle; at most %zu descriptors cached",
			fd_cache_max);
		return;
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	log_msg(LOG_WARNING,
		"%s: one descriptor per name the kernel caches, so RLIMIT_NOFILE (%llu) limits "
		"the tree in use (see accel sysgen)",
		fallback_why, (unsigned long long)rl.rlim_cur);
}

static size_t slot_of(dev_t dev, ino_t ino, size_t size)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> 17) & (size - 1);
}

int inode_table_init(void)
{
	table_size = 4096;
	table = calloc(table_size, sizeof(*table));
	if (!table)
		return -ENOMEM;
	fd_cache_size();
	handles_probe();
	return 0;
}

/* The node's descriptors and locks go with it (nobody else holds it now). */
static void inode_free(struct inode *n)
{
	if (n->fh)
		cache_remove(n);
	if (n->fd >= 0)
		close(n->fd);
	if (n->wb_fd >= 0)
		close(n->wb_fd);
	free(n->fh);
	pthread_mutex_destroy(&n->lock);
	pthread_mutex_destroy(&n->wb_lock);
	pthread_mutex_destroy(&n->fd_lock);
	free(n);
}

void inode_table_destroy(void)
{
	size_t i;

	reaper_stop_join();
	inode_fh_destroy();
	for (i = 0; i < table_size; i++) {
		struct inode *n, *next;

		for (n = table[i]; n; n = next) {
			next = n->hnext;
			inode_free(n);
		}
	}
	while (retired) {
		struct inode *n = retired;

		retired = n->hnext;
		inode_free(n);
	}
	for (i = 0; i < nmounts; i++)
		close(mounts[i].fd);
	nmounts = 0;
	free(table);
	table = NULL;
	table_count = 0;
}

/* Double the table; on allocation failure keep the old one (chains just grow). */
static void table_grow(void)
{
	size_t i, nsize = table_size * 2;
	struct inode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (i = 0; i < table_size; i++) {
		struct inode *n, *next;

		for (n = table[i]; n; n = next) {
			size_t s = slot_of(n->dev, n->ino, nsize);

			next = n->hnext;
			n->hnext = nt[s];
			nt[s] = n;
		}
	}
	free(table);
	table = nt;
	table_size = nsize;
}

struct inode *inode_get(fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &accelfs.root;
	return (struct inode *)(uintptr_t)ino;
}

static struct inode *find_locked(dev_t dev, ino_t ino)
{
	struct inode *n;

	for (n = table[slot_of(dev, ino, table_size)]; n; n = n->hnext)
		if (n->dev == dev && n->ino == ino)
			return n;
	return NULL;
}

bool stamp_equal(const struct inode *n, const struct stat *st)
{
	return n->stamp_valid && n->stamp_size == st->st_size &&
	       n->stamp_mtime.tv_sec == st->st_mtim.tv_sec &&
	       n->stamp_mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       n->stamp_ctime.tv_sec == st->st_ctim.tv_sec &&
	       n->stamp_ctime.tv_nsec == st->st_ctim.tv_nsec;
}

bool stamp_data_differs(const struct inode *n, const struct stat *st)
{
	return n->stamp_valid &&
	       (n->stamp_size != st->st_size || n->stamp_mtime.tv_sec != st->st_mtim.tv_sec ||
		n->stamp_mtime.tv_nsec != st->st_mtim.tv_nsec);
}

void stamp_set(struct inode *n, const struct stat *st)
{
	n->stamp_valid = true;
	n->stamp_size = st->st_size;
	n->stamp_mtime = st->st_mtim;
	n->stamp_ctime = st->st_ctim;
}

/*
 * What file_remove_privs() would clear on a write by an unprivileged caller:
 * set-user-ID, and set-group-ID when group execute is set (without it the
 * bit means mandatory locking, and stays). Kept per node so the write path
 * pays one atomic load when there is nothing to clear (ops_file.c).
 */
void inode_note_mode(struct inode *n, const struct stat *st)
{
	bool setid =
	    S_ISREG(st->st_mode) &&
	    ((st->st_mode & S_ISUID) || (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP));

	if (__atomic_load_n(&n->setid, __ATOMIC_RELAXED) != setid)
		__atomic_store_n(&n->setid, setid, __ATOMIC_RELAXED);
}

/* A node for @fd/@st, kept by handle @fh (opened through @mount_fd) or, if NULL, by @fd. */
static struct inode *inode_new(int fd, const struct stat *st, const struct file_handle *fh,
			       int mount_fd)
{
	struct inode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (fh) {
		n->fh = malloc(sizeof(*fh) + fh->handle_bytes);
		if (!n->fh) {
			free(n);
			return NULL;
		}
		memcpy(n->fh, fh, sizeof(*fh) + fh->handle_bytes);
		n->mount_fd = mount_fd;
	}
	n->fd = fd;
	n->wb_fd = -1;
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->type = st->st_mode & S_IFMT;
	pthread_mutex_init(&n->lock, NULL);
	pthread_mutex_init(&n->wb_lock, NULL);
	pthread_mutex_init(&n->fd_lock, NULL);
	stamp_set(n, st);
	inode_note_mode(n, st);
	return n;
}

/*
 * With the writeback cache the kernel owns a regular file's size and times
 * and ignores the ones we report, so a change made in SOURCE behind our back
 * (another mount, another program) would never show. When a lookup finds the
 * backing file changed while nothing has it open through us, the node is
 * retired and the name gets a new node: the kernel drops the old inode, its
 * size and its pages, and sees the file as it now is (close-to-open).
 * Table lock held.
 */
static bool must_retire(struct inode *n, const struct stat *st)
{
	bool retire;

	if (!accelfs.opts.writeback || accelfs.opts.kernel_cache != KERNEL_CACHE_AUTO ||
	    !S_ISREG(st->st_mode))
		return false;
	/* Data only: our own metadata changes (link, chmod, xattrs) move ctime.
	 * But any change the watcher saw made outside (watch_inval.c): the
	 * kernel would keep its ctime (and times) otherwise. */
	pthread_mutex_lock(&n->lock);
	retire =
	    n->opens == 0 && (stamp_data_differs(n, st) ||
			      __atomic_exchange_n(&n->changed_outside, false, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&n->lock);
	return retire;
}

static void unlink_locked(struct inode *n)
{
	struct inode **pp = &table[slot_of(n->dev, n->ino, table_size)];

	inode_fh_del(n);
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == n) {
			*pp = n->hnext;
			table_count--;
			return;
		}
	}
}

/* Table lock held: @n no longer stands for its name; freed when the kernel forgets it. */
static void retire_locked(struct inode *n)
{
	unlink_locked(n);
	n->retired = true;
	n->hnext = retired;
	retired = n;
}

/* Table lock held: insert a new node for @fd/@st; NULL on ENOMEM. */
static struct inode *insert_locked(int fd, const struct stat *st, const struct file_handle *fh,
				   int mount_fd)
{
	struct inode *n = inode_new(fd, st, fh, mount_fd);
	size_t s;

	if (!n)
		return NULL;
	n->nlookup = 1;
	if (++table_count > table_size * 2)
		table_grow();
	s = slot_of(n->dev, n->ino, table_size);
	n->hnext = table[s];
	table[s] = n;
	inode_fh_add(n);
	return n;
}

struct inode *inode_ref(int fd, const struct stat *st, int *err)
{
	struct fh_buf fhb;
	int mount_fd = -1;
	const struct file_handle *fh;
	struct inode *n;

	if (st->st_dev == accelfs.root.dev && st->st_ino == accelfs.root.ino) {
		close(fd); /* the root reached again through a name (e.g. a bind mount) */
		return &accelfs.root;
	}
	fh = handle_of(fd, st->st_mode & S_IFMT, &fhb, &mount_fd) ? &fhb.h : NULL;
	pthread_mutex_lock(&table_lock);
	n = find_locked(st->st_dev, st->st_ino);
	/* Another handle: the inode number was freed and reused by a new file. */
	if (n && (!handle_equal(n->fh, fh) || must_retire(n, st))) {
		retire_locked(n);
		n = NULL;
	}
	if (n) {
		n->nlookup++;
		pthread_mutex_unlock(&table_lock);
		fd_adopt(n, fd);
		inode_note_mode(n, st);
		return n;
	}
	n = insert_locked(fd, st, fh, mount_fd);
	pthread_mutex_unlock(&table_lock);
	if (!n) {
		close(fd);
		*err = ENOMEM;
	} else if (n->fh) {
		cache_insert(n); /* the lookup's descriptor serves until the cache evicts it */
	}
	return n;
}

/* fd_lock: is @n's descriptor open now (then marked used)? Without handles it always is. */
static bool fd_is_open(struct inode *n)
{
	bool open = true;

	if (n->fh) {
		pthread_mutex_lock(&n->fd_lock);
		open = n->fd >= 0;
		if (open)
			n->fd_ref = true;
		pthread_mutex_unlock(&n->fd_lock);
	}
	return open;
}

struct inode *inode_ref_known(const struct stat *st)
{
	struct inode *n;

	if (st->st_dev == accelfs.root.dev && st->st_ino == accelfs.root.ino)
		return &accelfs.root;
	pthread_mutex_lock(&table_lock);
	n = find_locked(st->st_dev, st->st_ino);
	if (n && must_retire(n, st)) { /* as inode_ref() would: must_retire consumes */
		retire_locked(n);
		n = NULL;
	}
	if (n)
		n->nlookup++; /* held: it cannot be freed while we look at its descriptor */
	pthread_mutex_unlock(&table_lock);
	if (!n)
		return NULL;
	/* Open now, so open since before @st was taken: a closed one is reopened
	 * only by handle, which fails for an inode freed meanwhile (ESTALE). */
	if (fd_is_open(n)) {
		inode_note_mode(n, st);
		return n;
	}
	inode_unref(n, 1);
	return NULL;
}

void inode_unref(struct inode *n, uint64_t count)
{
	if (n == &accelfs.root)
		return;
	pthread_mutex_lock(&table_lock);
	if (count > n->nlookup)
		count = n->nlookup; /* never underflow on a confused kernel */
	n->nlookup -= count;
	if (n->nlookup) {
		pthread_mutex_unlock(&table_lock);
		return;
	}
	if (!n->retired) {
		unlink_locked(n);
	} else {
		struct inode **pp;

		for (pp = &retired; *pp && *pp != n; pp = &(*pp)->hnext)
			;
		if (*pp)
			*pp = n->hnext;
	}
	pthread_mutex_unlock(&table_lock);
	if (free_hook) /* the watcher's: its inotify watch, before the node goes */
		free_hook(n);
	inode_free(n);
}

void inode_set_free_hook(void (*fn)(struct inode *n))
{
	free_hook = fn;
}

/* For the watchers (watch_ino.c, watch_inval.c): see accelfs_i.h. */
fuse_ino_t inode_find_id(dev_t dev, ino_t ino, bool changed)
{
	struct inode *n;
	fuse_ino_t id = 0;

	if (dev == accelfs.root.dev && ino == accelfs.root.ino)
		return FUSE_ROOT_ID;
	pthread_mutex_lock(&table_lock);
	n = find_locked(dev, ino);
	if (n) {
		id = (fuse_ino_t)(uintptr_t)n;
		if (changed)
			__atomic_store_n(&n->changed_outside, true, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&table_lock);
	return id;
}

size_t inode_all_ids(fuse_ino_t **out)
{
	fuse_ino_t *ids;
	size_t cnt = 0;

	pthread_mutex_lock(&table_lock);
	ids = malloc((table_count + 1) * sizeof(*ids));
	if (ids) {
		ids[cnt++] = FUSE_ROOT_ID;
		for (size_t i = 0; i < table_size; i++)
			for (struct inode *n = table[i]; n; n = n->hnext)
				ids[cnt++] = (fuse_ino_t)(uintptr_t)n;
	}
	pthread_mutex_unlock(&table_lock);
	*out = ids;
	return cnt;
}
