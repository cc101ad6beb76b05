// SPDX-License-Identifier: MIT
/*
 * watch_ino.c - the inotify watcher, for a daemon that cannot have fanotify
 * (no CAP_SYS_ADMIN, or inodes not kept by file handle): one inotify watch
 * on each directory node the kernel holds, added when the daemon first gives
 * the directory to the kernel (watch_ino_entry: lookup, mkdir, readdirplus)
 * and removed when the kernel forgets it (watch_ino_forget) or the directory
 * goes (IN_IGNORED). A watch is added through the node's own descriptor
 * ("/proc/self/fd/N" of its O_PATH descriptor), never a path from SOURCE.
 *
 * Coverage is per directory: a name or attribute given out under a
 * directory that could not be watched (EACCES, ENOSPC from
 * fs.inotify.max_user_watches) carries the short timeouts, and so does the
 * node from then on (inode->watch_short), as does a regular file with other
 * links (a change through a name in a directory not watched is not reported
 * here). The directories not watched are counted (watch_unwatched) and the
 * first refusal logged.
 *
 * The wd -> node map (map_lock) also keeps a node from being freed while
 * the watcher uses it: watch_ino_forget() takes map_lock before the node
 * goes. Lock order: map_lock -> the node's fd_lock -> the fd cache lock
 * (inode_fd_get); map_lock is never held with the inode table lock, and the
 * watcher holds none when it calls watch_apply().
 *
 * Echoes: inotify does not say who made a change; watch_echo.c matches the
 * daemon's own recent changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "creds.h"
#include "watch_i.h"

/*
 * Names appearing, going or moving (CREATE, DELETE, MOVED_*); attributes
 * (ATTRIB: chmod, chown, utimes, xattrs, and the directory's own); data
 * (MODIFY: write, truncate; CLOSE_WRITE: what an mmap writer changed, which
 * MODIFY never reports). Not DELETE_SELF/MOVE_SELF: the parent's watch
 * reports the name, and IN_IGNORED follows a deletion anyway. EXCL_UNLINK:
 * nothing about names already gone (a temporary file written after its
 * unlink); ONLYDIR: the descriptor must be a directory.
 */
#define INO_MASK                                                                       \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY | \
	 IN_CLOSE_WRITE | IN_ONLYDIR | IN_EXCL_UNLINK)
#define INO_BUF 65536

struct wd_slot {
	int wd; /* 0: free */
	struct inode *n;
};

static size_t wd_slot(int wd, size_t size)
{
	return ((size_t)(unsigned int)wd * 0x9e3779b1u) & (size - 1);
}

/* map_lock held: the slot of @wd, or of the free slot where it would go. */
static struct wd_slot *map_find(struct watch *w, int wd)
{
	size_t i = wd_slot(wd, w->map_size);

	while (w->map[i].wd && w->map[i].wd != wd)
		i = (i + 1) & (w->map_size - 1);
	return &w->map[i];
}

/* map_lock held: room for one more (load <= 1/2); -ENOMEM. */
static int map_reserve(struct watch *w)
{
	size_t nsize = w->map_size ? w->map_size * 2 : 1024;
	struct wd_slot *old = w->map, *nm;
	size_t osize = w->map_size;

	if (w->map_size && (w->map_count + 1) * 2 <= w->map_size)
		return 0;
	nm = calloc(nsize, sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	w->map = nm;
	w->map_size = nsize;
	for (size_t i = 0; i < osize; i++)
		if (old[i].wd)
			*map_find(w, old[i].wd) = old[i];
	free(old);
	return 0;
}

/* map_lock held: remove @s (backward shift, so probing stays unbroken). */
static void map_del(struct watch *w, struct wd_slot *s)
{
	size_t i = (size_t)(s - w->map), j = i;

	w->map[i].wd = 0;
	w->map_count--;
	for (;;) {
		size_t home;

		j = (j + 1) & (w->map_size - 1);
		if (!w->map[j].wd)
			return;
		home = wd_slot(w->map[j].wd, w->map_size);
		/* can map[j] move to the hole at i? (its home is not in (i, j]) */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			w->map[i] = w->map[j];
			w->map[j].wd = 0;
			i = j;
		}
	}
}

/* map_lock held: @n cannot be watched (-@err). */
static void refused(struct watch *w, struct inode *n, int err)
{
	__atomic_store_n(&n->watch_wd, -1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->counters.unwatched, 1, __ATOMIC_RELAXED);
	if (w->logged)
		return;
	w->logged = true;
	log_msg(LOG_WARNING,
		"watch: inotify: cannot watch a directory (%s%s): names and attributes under "
		"directories not watched use the short timeouts (accel stat: watch_unwatched)",
		strerror(err), err == ENOSPC ? ": raise fs.inotify.max_user_watches" : "");
}

/* map_lock held: watch @n through its own descriptor; 0 or -errno. */
static int add_locked(struct watch *w, struct inode *n)
{
	char path[PROC_FD_LEN];
	int fd, wd, err = 0;
	struct wd_slot *s;
	bool suspended;

	if (n->watch_wd)
		return n->watch_wd > 0 ? 0 : -EACCES;
	if (w->ino_fd < 0)
		return -EBADF; /* stopped */
	fd = inode_fd_get(n);
	suspended = creds_suspend(); /* the daemon's watch, not the caller's */
	wd = INODE_FD_OR(fd, inotify_add_watch(w->ino_fd, proc_fd_path(fd, path), INO_MASK));
	err = errno;
	if (creds_resume(suspended)) {
		log_msg(LOG_CRIT, "cannot take the caller's credentials again: stopping");
		abort();
	}
	inode_fd_put(n, fd);
	if (wd >= 0 && map_reserve(w))
		err = ENOMEM; /* the watch stays, unused: events on it are dropped */
	if (wd < 0 || err == ENOMEM) {
		refused(w, n, err);
		return -err;
	}
	s = map_find(w, wd);
	if (!s->wd) /* else the inode's watch already stood for another node: now this one's */
		w->map_count++;
	*s = (struct wd_slot){ wd, n };
	__atomic_store_n(&n->watch_wd, wd, __ATOMIC_RELAXED);
	return 0;
}

int watch_ino_open(struct accelfs *fs, char *why, size_t len)
{
	struct watch *w = &fs->watch;
	int ret;

	w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino_fd < 0) {
		ret = -errno;
		snprintf(why, len, "inotify_init1: %s", strerror(-ret));
		return ret;
	}
	pthread_mutex_lock(&w->map_lock);
	ret = add_locked(w, &fs->root);
	pthread_mutex_unlock(&w->map_lock);
	if (ret) {
		snprintf(why, len, "cannot watch SOURCE: %s", strerror(-ret));
		close(w->ino_fd);
		w->ino_fd = -1;
		return ret;
	}
	return w->ino_fd;
}

void watch_ino_entry(struct accelfs *fs, struct inode *p, struct inode *n,
		     struct fuse_entry_param *e)
{
	struct watch *w = &fs->watch;

	if (S_ISDIR(n->type) && !__atomic_load_n(&n->watch_wd, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&w->map_lock);
		add_locked(w, n);
		pthread_mutex_unlock(&w->map_lock);
	}
	/* the parent cannot be forgotten while the kernel waits for this reply */
	if (__atomic_load_n(&p->watch_wd, __ATOMIC_RELAXED) <= 0 ||
	    (S_ISREG(e->attr.st_mode) && e->attr.st_nlink > 1))
		__atomic_store_n(&n->watch_short, true, __ATOMIC_RELAXED);
	/* the timeouts without a watcher, set before the workers start */
	if (__atomic_load_n(&p->watch_wd, __ATOMIC_RELAXED) <= 0)
		e->entry_timeout = w->short_entry;
	if (__atomic_load_n(&n->watch_short, __ATOMIC_RELAXED))
		e->attr_timeout = w->short_attr;
}

void watch_ino_forget(struct accelfs *fs, struct inode *n)
{
	struct watch *w = &fs->watch;
	struct wd_slot *s;

	if (!__atomic_load_n(&n->watch_wd, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&w->map_lock);
	if (n->watch_wd > 0 && w->map_size) {
		s = map_find(w, n->watch_wd);
		if (s->wd && s->n == n) {
			map_del(w, s);
			inotify_rm_watch(w->ino_fd,
					 n->watch_wd); /* under map_lock: no add races it */
		}
	} else if (n->watch_wd < 0) {
		__atomic_sub_fetch(&w->counters.unwatched, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&n->watch_wd, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&w->map_lock);
}

/* map_lock held: the directory's watch went (deleted, or its file system unmounted). */
static void ignored_locked(struct watch *w, struct wd_slot *s)
{
	struct inode *n = s->n;

	map_del(w, s);
	/* names given under it from now on: the short timeouts */
	__atomic_store_n(&n->watch_wd, -1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->counters.unwatched, 1, __ATOMIC_RELAXED);
}

/*
 * Map one event to the change it stands for (see watch_i.h); false if it
 * concerns nothing the kernel holds. The child of a name event is found by
 * fstatat() under its directory, under map_lock (the directory node stays).
 */
static bool ino_change(struct accelfs *fs, const struct inotify_event *ev, struct watch_change *c,
		       struct stat *st)
{
	struct watch *w = &fs->watch;
	const uint32_t need_child =
	    IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE;
	bool have = false;
	struct wd_slot *s;
	int fd;

	pthread_mutex_lock(&w->map_lock);
	s = w->map_size ? map_find(w, ev->wd) : NULL;
	if (!s || !s->wd) {
		pthread_mutex_unlock(&w->map_lock);
		return false;
	}
	if (ev->mask & IN_IGNORED) {
		ignored_locked(w, s);
		pthread_mutex_unlock(&w->map_lock);
		return false;
	}
	if (ev->len && (ev->mask & need_child)) {
		fd = inode_fd_get(s->n);
		have = !INODE_FD_OR(fd, fstatat(fd, ev->name, st, AT_SYMLINK_NOFOLLOW));
		inode_fd_put(s->n, fd);
	}
	if (ev->len) {
		c->parent = s->n->nodeid;
		c->name = ev->name;
	} else {
		c->ino = s->n->nodeid; /* the directory itself */
	}
	pthread_mutex_unlock(&w->map_lock);
	if (have)
		c->ino = inode_find_id(fs, st->st_dev, st->st_ino, false);
	return true;
}

/* What the event says changed; 0: nothing to tell the kernel. */
static unsigned int ino_what(const struct inotify_event *ev, const struct watch_change *c)
{
	unsigned int what = 0;

	if (ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
		what |= WATCH_NAME;
	/* a name that now leads to a node the kernel holds: a link, or a move */
	if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && c->ino)
		what |= WATCH_ATTR;
	if (ev->mask & IN_ATTRIB)
		what |= WATCH_ATTR;
	if (ev->mask & IN_MODIFY)
		what |= WATCH_DATA;
	/* a close of a file the kernel holds no node of changes nothing it caches
	 * (and the daemon's own write-back descriptor closes at FORGET) */
	if ((ev->mask & IN_CLOSE_WRITE) && c->ino)
		what |= WATCH_DATA;
	return what;
}

static void ino_event(struct accelfs *fs, const struct inotify_event *ev)
{
	struct watch_change c = { 0 };
	struct stat st;

	if (ev->mask & IN_Q_OVERFLOW) {
		watch_overflow(fs);
		return;
	}
	if (!ino_change(fs, ev, &c, &st))
		return;
	c.what = ino_what(ev, &c);
	c.dir = ev->mask & IN_ISDIR;
	if (!c.what || watch_echo_match(fs, &c))
		return;
	/* as fanotify does: a file changed outside gets a new node at its next
	 * lookup (must_retire, inode.c); found again: it may have gone since */
	if (c.ino && c.name && (c.what & (WATCH_ATTR | WATCH_DATA)))
		c.ino = inode_find_id(fs, st.st_dev, st.st_ino, true);
	watch_apply(fs, &c);
}

int watch_ino_read(struct accelfs *fs, int fd)
{
	/* one watcher thread per daemon */
	static char buf[INO_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(fd, buf, INO_BUF)) > 0) {
		size_t off = 0;

		while (off + sizeof(struct inotify_event) <= (size_t)n) {
			const struct inotify_event *ev = (const void *)(buf + off);
			size_t left = (size_t)n - off - sizeof(*ev);

			/* the name: within what was read, NUL-terminated (padded with NULs) */
			if (ev->len > left || (ev->len && !memchr(ev->name, '\0', ev->len)))
				return -EPROTO;
			off += sizeof(*ev) + ev->len;
			ino_event(fs, ev);
		}
		if (off != (size_t)n)
			return -EPROTO;
		/* room for the largest event was left: the queue was empty */
		if ((size_t)n + sizeof(struct inotify_event) + NAME_MAX + 1 <= INO_BUF)
			break;
	}
	return n < 0 && errno != EAGAIN && errno != EINTR ? -errno : 0;
}

void watch_ino_close(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	pthread_mutex_lock(&w->map_lock);
	if (w->ino_fd >= 0)
		close(w->ino_fd);
	w->ino_fd = -1;
	free(w->map);
	w->map = NULL;
	w->map_size = w->map_count = 0;
	pthread_mutex_unlock(&w->map_lock);
}
