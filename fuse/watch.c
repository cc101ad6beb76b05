// SPDX-License-Identifier: MIT
/*
 * watch.c - the watcher thread: one per mount, reading the kernel's change
 * events about SOURCE and telling the FUSE kernel module what to forget
 * (watch_inval.c), so names and attributes may be cached for an hour.
 *
 * Mode (-o watch=): fanotify where the daemon may (root, a local file system
 * with file handles, which the inode table uses too), else inotify on the
 * directories the kernel holds (watch_ino.c), else off: today's short
 * timeouts. watch=inotify skips fanotify. A watcher that fails, at start or later, never fails the
 * mount: it says so in one log line, the short timeouts apply again to what
 * the kernel is told from then on, and what it cached with the long ones is
 * invalidated once (watch_overflow).
 *
 * The thread also publishes the mount's state file (cache/mstate.h) for
 * `accel stat`: at start, then every MSTATE_PUBLISH_MS when a counter (the
 * watcher's, the requests' of reqstat.c, the pool's this daemon moved)
 * changed.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mstate.h"
#include "reqstat.h"
#include "watch_i.h"

/* Set before the thread starts; only watch_failed() changes it later: atomic. */
static enum watch_mode mode = WATCH_OFF;
static int watch_fd = -1; /* the fanotify or inotify descriptor */
static int stop_fd = -1;  /* eventfd: watch_stop() wakes the thread */
static pthread_t thread;
static bool running;
static bool ino_owned;		       /* watch_fd is watch_ino.c's */
static char why[256];		       /* why the mode is what it is, for the log */
static double short_entry, short_attr; /* the timeouts without a watcher */

enum watch_mode watch_mode(void)
{
	return __atomic_load_n(&mode, __ATOMIC_RELAXED);
}

/* "fanotify", "inotify", "off". */
static const char *watch_mode_name(void)
{
	switch (watch_mode()) {
	case WATCH_FANOTIFY:
		return "fanotify";
	case WATCH_INOTIFY:
		return "inotify";
	default:
		return "off";
	}
}

void watch_short_timeouts(double *entry, double *attr)
{
	*entry = short_entry; /* set before the workers start */
	*attr = short_attr;
}

void watch_entry(struct inode *parent, struct inode *n, struct fuse_entry_param *e)
{
	if (watch_mode() == WATCH_INOTIFY)
		watch_ino_entry(parent, n, e);
}

/* @n is being freed: the inode table's free hook, set by watch_setup. */
static void watch_forget(struct inode *n)
{
	if (n->type == S_IFDIR)
		watch_ino_forget(n); /* also after a failure: the map still holds it */
}

bool watch_covers_dir(struct inode *n)
{
	return watch_mode() != WATCH_INOTIFY || __atomic_load_n(&n->watch_wd, __ATOMIC_RELAXED) > 0;
}

double watch_attr_timeout(struct accelfs *fs, struct inode *n)
{
	if (watch_mode() == WATCH_INOTIFY && __atomic_load_n(&n->watch_short, __ATOMIC_RELAXED))
		return short_attr;
	return opt_attr_timeout(fs);
}

bool watch_active(void)
{
	return __atomic_load_n(&mode, __ATOMIC_RELAXED) != WATCH_OFF;
}

bool watch_covers_all(void)
{
	return __atomic_load_n(&mode, __ATOMIC_RELAXED) == WATCH_FANOTIFY;
}

/* Raise the default timeouts: the watcher keeps long-cached names true. */
static void long_timeouts(struct accelfs_opts *o, double t)
{
	short_entry = o->entry_timeout;
	short_attr = o->attr_timeout;
	if (!opts_given(o, "entry_timeout"))
		o->entry_timeout = t;
	if (!opts_given(o, "attr_timeout"))
		o->attr_timeout = t;
}

/* fanotify if it can be had: its descriptor, or -errno with @why said. */
static int fan_try(struct accelfs *fs)
{
	if (!inode_handles_used()) {
		snprintf(why, sizeof(why), "inodes are not kept by file handle");
		return -ENOTSUP;
	}
	return watch_fan_open(fs->source_real, why, sizeof(why));
}

/* inotify after @fan_why (empty: asked for): a descriptor, or -errno with @why said. */
static int ino_try(struct accelfs *fs, const char *fan_why)
{
	char ino_why[128];
	int fd = watch_ino_open(fs, ino_why, sizeof(ino_why));

	if (fd < 0)
		snprintf(why, sizeof(why), "%s%s%s", fan_why, fan_why[0] ? "; " : "", ino_why);
	else if (fan_why[0])
		snprintf(why, sizeof(why), "no fanotify (%s)", fan_why);
	else
		snprintf(why, sizeof(why), "watch=inotify");
	return fd;
}

void watch_setup(struct accelfs *fs)
{
	struct accelfs_opts *o = &fs->opts;
	char fan_why[sizeof(why)] = "";
	int fd = -1;

	inode_set_free_hook(watch_forget);
	if (o->watch == WATCH_OFF) {
		snprintf(why, sizeof(why), "watch=off");
		return;
	}
	if (o->watch != WATCH_INOTIFY) {
		fd = fan_try(fs);
		if (fd >= 0) {
			watch_fd = fd;
			mode = WATCH_FANOTIFY;
			long_timeouts(o, WATCH_LONG_TIMEOUT);
			return;
		}
		if (o->watch == WATCH_FANOTIFY)
			return;
		snprintf(fan_why, sizeof(fan_why), "%s", why);
	}
	fd = ino_try(fs, fan_why);
	if (fd < 0)
		return;
	watch_fd = fd;
	ino_owned = true;
	mode = WATCH_INOTIFY;
	long_timeouts(o, WATCH_INOTIFY_TIMEOUT);
}

void watch_log(struct accelfs *fs)
{
	if (!watch_active())
		log_msg(fs->opts.watch == WATCH_FANOTIFY || fs->opts.watch == WATCH_INOTIFY
			    ? LOG_WARNING
			    : LOG_INFO,
			"watch: off (%s): changes made in SOURCE behind the mount show after "
			"entry_timeout %gs / attr_timeout %gs",
			why, fs->opts.entry_timeout, fs->opts.attr_timeout);
	else
		log_msg(LOG_INFO, "watch: %s%s%s; entry_timeout %gs, attr_timeout %gs",
			watch_mode_name(), why[0] ? ": " : "", why, fs->opts.entry_timeout,
			fs->opts.attr_timeout);
}

/* The watcher is gone: names and attributes told from now on expire as without one. */
static void short_timeouts(struct accelfs *fs)
{
	__atomic_store(&fs->opts.entry_timeout, &short_entry, __ATOMIC_RELAXED);
	__atomic_store(&fs->opts.attr_timeout, &short_attr, __ATOMIC_RELAXED);
}

/* A sum that moves whenever a counter of @m does (they only grow). */
static uint64_t digest(const struct mstate *m)
{
	uint64_t d = m->watch_events + m->watch_invalidations + m->watch_overflows + m->read_bytes +
		     m->write_bytes;

	for (unsigned int i = 0; i < m->nreq; i++)
		d += m->req[i].count + m->req[i].errors;
	for (int c = 0; c < POOL_C_POOL_MAX; c++)
		d += m->c[c];
	return d;
}

/* The mount's state file: mode and counters (cache/mstate.h), when they moved or @force. */
static void publish(struct accelfs *fs, struct mstate *m, bool force)
{
	uint64_t before = digest(m), unwatched = m->watch_unwatched;
	struct pool *pool = fs->pool;

	m->watch_events = __atomic_load_n(&watch_counters.events, __ATOMIC_RELAXED);
	m->watch_invalidations = __atomic_load_n(&watch_counters.invalidations, __ATOMIC_RELAXED);
	m->watch_overflows = __atomic_load_n(&watch_counters.overflows, __ATOMIC_RELAXED);
	m->watch_unwatched = __atomic_load_n(&watch_counters.unwatched, __ATOMIC_RELAXED);
	reqstat_fill(m);
	if (pool)
		pool_stats_own(pool, m->c);
	if (!force && digest(m) == before && m->watch_unwatched == unwatched)
		return;
	snprintf(m->watch, sizeof(m->watch), "%s", watch_mode_name());
	mstate_write(m);
}

static void mstate_init(struct accelfs *fs, struct mstate *m)
{
	memset(m, 0, sizeof(*m));
	m->pid = (uint32_t)getpid();
	snprintf(m->mountpoint, sizeof(m->mountpoint), "%s", fs->mountpoint_real);
	snprintf(m->source, sizeof(m->source), "%s", fs->source_real);
	snprintf(m->shared, sizeof(m->shared), "%s (%s)", fs->shared ? "on" : "off",
		 fs->shared_why);
	snprintf(m->locks, sizeof(m->locks), "%s",
		 fs->opts.locks == LOCKS_FORWARD ? "forward" : "local");
	if (fs->pool)
		snprintf(m->pool, sizeof(m->pool), "%s", cache_io_pool_name(fs));
}

/* The watcher failed while running: off from now on, and nothing cached trusted. */
static void watch_failed(struct accelfs *fs, int err)
{
	log_msg(LOG_ERR, "watch: %s failed (%s): invalidating everything, now off",
		watch_mode_name(), strerror(-err));
	__atomic_store_n(&mode, WATCH_OFF, __ATOMIC_RELAXED);
	short_timeouts(fs);
	watch_overflow(fs);
}

static void *watch_main(void *arg)
{
	struct accelfs *fs = arg;
	static struct mstate m; /* one thread; 8 KiB of paths and the request kinds */
	struct pollfd p[2] = { { .fd = watch_fd, .events = POLLIN },
			       { .fd = stop_fd, .events = POLLIN } };
	const uint64_t tick = MSTATE_PUBLISH_MS * 1000000ULL;
	pid_t self = getpid();
	int ret;
	uint64_t last;

	mstate_sweep(); /* files of daemons killed before they could remove theirs */
	mstate_init(fs, &m);
	publish(fs, &m, true);
	last = now_ns();
	for (;;) {
		uint64_t since = now_ns() - last;
		int wait = since >= tick ? 0 : MSTATE_PUBLISH_MS - (int)(since / 1000000);
		bool failed = false;

		p[0].fd = mode == WATCH_OFF ? -1 : watch_fd;
		ret = poll(p, 2, wait);
		if (ret < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents &&
		    (ret = mode == WATCH_INOTIFY ? watch_ino_read(fs, watch_fd)
						 : watch_fan_read(fs, watch_fd, self)) < 0) {
			watch_failed(fs, ret);
			failed = true;
		}
		/* A burst of events wakes the thread at each one: the state
		 * file (a create and a rename) at most every tick, with what
		 * the requests moved meanwhile. A watcher that failed says so
		 * at once. */
		if (failed || now_ns() - last >= tick) {
			publish(fs, &m, failed);
			last = now_ns();
		}
	}
	return NULL;
}

int watch_start(struct accelfs *fs)
{
	stop_fd = eventfd(0, EFD_CLOEXEC);
	if (stop_fd < 0 || pthread_create(&thread, NULL, watch_main, fs)) {
		if (mode != WATCH_OFF) {
			log_msg(LOG_ERR, "watch: cannot start the watcher thread: off");
			short_timeouts(fs); /* before INIT: nothing was cached with the long ones */
		}
		mode = WATCH_OFF;
		return -EAGAIN;
	}
	running = true;
	return 0;
}

void watch_stop(void)
{
	static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
	uint64_t one = 1;

	/* the shutdown thread and the end of the session loop may both come */
	pthread_mutex_lock(&stop_lock);
	if (running) {
		(void)!write(stop_fd, &one, sizeof(one));
		pthread_join(thread, NULL);
		running = false;
		mstate_remove((uint32_t)getpid());
	}
	if (stop_fd >= 0)
		close(stop_fd);
	__atomic_store_n(&mode, WATCH_OFF, __ATOMIC_RELAXED); /* no new watches */
	if (ino_owned)
		watch_ino_close(); /* closes watch_fd */
	else if (watch_fd >= 0)
		close(watch_fd);
	ino_owned = false;
	stop_fd = watch_fd = -1;
	pthread_mutex_unlock(&stop_lock);
}
