// SPDX-License-Identifier: MIT
/*
 * fd_cache.c - the bounded cache of the inode table's O_PATH descriptors
 * (fd_cache.h), and the file handles that reopen them.
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
#include "fd_cache.h"
#include "shared.h"

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
 * after a second reopen it each time. On a network SOURCE (shared mode)
 * that fstat is a round trip to the server, made under the cache lock that
 * every lookup and open needs: at 1 ms of network delay a pass over a few
 * thousand descriptors stalled every request for seconds (an untar ran 4x
 * the bare mount's time, 29 fstats per file). There only the idle test
 * closes descriptors: a file another host deleted is let go after
 * FD_IDLE_PASSES passes without a use.
 */
#define FD_CACHE_MAX 65536 /* descriptors the cache keeps open at most */
#define FD_CACHE_MIN 64	   /* ... at least, whatever RLIMIT_NOFILE says */
#define FD_REAP_SEC 1	   /* reaper period: a deleted file is freed within 2 */
#define FD_IDLE_PASSES 30  /* reaper passes without a use that close a descriptor */
#define FD_BATCH 64	   /* descriptors closed per cache lock hold */
#define MOUNTS_MAX 64	   /* backing mounts below SOURCE with handles */

/* Process-wide by nature: the descriptors are the process's (RLIMIT_NOFILE),
 * so is the cache that bounds them, and its reaper thread. */
static bool use_handles;       /* set at init, then read only */
static char fallback_why[160]; /* why not, for the mount's log line */
static size_t fd_cache_max;    /* set at init, then read only */
static bool reap_deleted;      /* set at init, then read only: fstat idle descriptors */

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
	return reap_deleted && !fstat(v->fd, &st) && st.st_nlink == 0;
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
void fd_cache_insert(struct inode *n)
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
void fd_cache_remove(struct inode *n)
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
	fd_cache_insert(n); /* only we can: the node was not on the ring */
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
void fd_cache_adopt(struct inode *n, int fd)
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
		fd_cache_insert(n);
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
bool fd_cache_handle_of(int fd, mode_t type, struct fh_buf *fh, int *mount_fd)
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
bool fd_cache_handle_equal(const struct file_handle *a, const struct file_handle *b)
{
	if (!a || !b)
		return a == b; /* without handles a node's descriptor pins its inode number */
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/* Can the daemon open SOURCE's handles? Else say why, for the log. */
static void handles_probe(int root_fd, struct inode_table *t)
{
	struct fh_buf fh;
	int id, mfd, fd, err;

	fh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(root_fd, "", &fh.h, &id, AT_EMPTY_PATH)) {
		snprintf(fallback_why, sizeof(fallback_why), "SOURCE has no file handles (%s)",
			 strerror(errno));
		return;
	}
	mfd = mount_fd_open(root_fd, S_IFDIR);
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
	if (inode_fh_set_root(t, &fh.h)) {
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

void fd_cache_init(struct accelfs *fs)
{
	reap_deleted = !shared_mode(fs); /* settled before the table is made */
	fd_cache_size();
	handles_probe(fs->root.fd, &fs->inodes);
}

void fd_cache_destroy(void)
{
	reaper_stop_join();
	for (size_t i = 0; i < nmounts; i++)
		close(mounts[i].fd);
	nmounts = 0;
}

/* fd_lock: is @n's descriptor open now (then marked used)? Without handles it always is. */
bool fd_cache_is_open(struct inode *n)
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
