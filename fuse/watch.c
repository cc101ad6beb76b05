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
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fair.h"
#include "mstate.h"
#include "reqstat.h"
#include "watch_i.h"

enum watch_mode watch_mode(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	return __atomic_load_n(&w->mode, __ATOMIC_RELAXED);
}

/* "fanotify", "inotify", "off". */
static const char *watch_mode_name(struct accelfs *fs)
{
	switch (watch_mode(fs)) {
	case WATCH_FANOTIFY:
		return "fanotify";
	case WATCH_INOTIFY:
		return "inotify";
	default:
		return "off";
	}
}

void watch_entry(struct accelfs *fs, struct inode *parent, struct inode *n,
		 struct fuse_entry_param *e)
{
	if (watch_mode(fs) == WATCH_INOTIFY)
		watch_ino_entry(fs, parent, n, e);
}

/* @n is being freed: the inode table's free hook, set by watch_setup. */
static void watch_forget(struct accelfs *fs, struct inode *n)
{
	if (n->type == S_IFDIR)
		watch_ino_forget(fs, n); /* also after a failure: the map still holds it */
}

bool watch_covers_dir(struct accelfs *fs, struct inode *n)
{
	return watch_mode(fs) != WATCH_INOTIFY ||
	       __atomic_load_n(&n->watch_wd, __ATOMIC_RELAXED) > 0;
}

double watch_attr_timeout(struct accelfs *fs, struct inode *n)
{
	struct watch *w = &fs->watch;

	if (watch_mode(fs) == WATCH_INOTIFY && __atomic_load_n(&n->watch_short, __ATOMIC_RELAXED))
		return w->short_attr;
	return opt_attr_timeout(fs);
}

bool watch_active(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	return __atomic_load_n(&w->mode, __ATOMIC_RELAXED) != WATCH_OFF;
}

bool watch_covers_all(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	return __atomic_load_n(&w->mode, __ATOMIC_RELAXED) == WATCH_FANOTIFY;
}

/* Raise the default timeouts: the watcher keeps long-cached names true. */
static void long_timeouts(struct accelfs *fs, struct accelfs_opts *o, double t)
{
	struct watch *w = &fs->watch;

	w->short_entry = o->entry_timeout;
	w->short_attr = o->attr_timeout;
	if (!opts_given(o, "entry_timeout"))
		o->entry_timeout = t;
	if (!opts_given(o, "attr_timeout"))
		o->attr_timeout = t;
}

/* fanotify if it can be had: its descriptor, or -errno with @why said. */
static int fan_try(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	if (!inode_handles_used()) {
		snprintf(w->why, sizeof(w->why), "inodes are not kept by file handle");
		return -ENOTSUP;
	}
	return watch_fan_open(fs->source_real, w->why, sizeof(w->why));
}

/* inotify after @fan_why (empty: asked for): a descriptor, or -errno with @why said. */
static int ino_try(struct accelfs *fs, const char *fan_why)
{
	struct watch *w = &fs->watch;
	char ino_why[128];
	int fd = watch_ino_open(fs, ino_why, sizeof(ino_why));

	if (fd < 0)
		snprintf(w->why, sizeof(w->why), "%s%s%s", fan_why, fan_why[0] ? "; " : "",
			 ino_why);
	else if (fan_why[0])
		snprintf(w->why, sizeof(w->why), "no fanotify (%s)", fan_why);
	else
		snprintf(w->why, sizeof(w->why), "watch=inotify");
	return fd;
}

void watch_setup(struct accelfs *fs)
{
	struct watch *w = &fs->watch;
	struct accelfs_opts *o = &fs->opts;
	char fan_why[sizeof(w->why)] = "";
	int fd = -1;

	inode_set_free_hook(fs, watch_forget);
	if (o->watch == WATCH_OFF) {
		snprintf(w->why, sizeof(w->why), "watch=off");
		return;
	}
	if (o->watch != WATCH_INOTIFY) {
		fd = fan_try(fs);
		if (fd >= 0) {
			w->fd = fd;
			w->mode = WATCH_FANOTIFY;
			long_timeouts(fs, o, WATCH_LONG_TIMEOUT);
			return;
		}
		if (o->watch == WATCH_FANOTIFY)
			return;
		snprintf(fan_why, sizeof(fan_why), "%s", w->why);
	}
	fd = ino_try(fs, fan_why);
	if (fd < 0)
		return;
	w->fd = fd;
	w->ino_owned = true;
	w->mode = WATCH_INOTIFY;
	long_timeouts(fs, o, WATCH_INOTIFY_TIMEOUT);
}

void watch_log(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	if (!watch_active(fs))
		log_msg(fs->opts.watch == WATCH_FANOTIFY || fs->opts.watch == WATCH_INOTIFY
			    ? LOG_WARNING
			    : LOG_INFO,
			"watch: off (%s): changes made in SOURCE behind the mount show after "
			"entry_timeout %gs / attr_timeout %gs",
			w->why, fs->opts.entry_timeout, fs->opts.attr_timeout);
	else
		log_msg(LOG_INFO, "watch: %s%s%s; entry_timeout %gs, attr_timeout %gs",
			watch_mode_name(fs), w->why[0] ? ": " : "", w->why, fs->opts.entry_timeout,
			fs->opts.attr_timeout);
}

/* The watcher is gone: names and attributes told from now on expire as without one. */
static void short_timeouts(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	__atomic_store(&fs->opts.entry_timeout, &w->short_entry, __ATOMIC_RELAXED);
	__atomic_store(&fs->opts.attr_timeout, &w->short_attr, __ATOMIC_RELAXED);
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
	d += m->pt_files + m->pt_learned + m->ra_delay_us; /* the delay moves both ways: fine */
	d += m->parked + m->ds.hits + m->ds.misses + m->ds.puts + m->ds.corrupt + m->ds.evicted +
	     m->ds.used;
	return d;
}

/*
 * The list of files in passthrough mode (cache/mstate.h), when it changed
 * since the one of generation *@seen was written, or @force.
 */
static void publish_pt(struct accelfs *fs, struct mstate *m, bool force, uint64_t *seen)
{
	uint64_t gen = __atomic_load_n(&fs->pt_files.gen, __ATOMIC_RELAXED);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	m->pt_learned = __atomic_load_n(&fs->pt_files.learned, __ATOMIC_RELAXED);
	/* No file until a first file went passthrough (gen 0: none ever did;
	 * fs->passthrough is INIT's, which may come while this thread runs). */
	if (gen == *seen && (!force || !gen))
		return;
	f = open_memstream(&text, &len);
	if (!f)
		return; /* the next tick tries again */
	m->pt_files = passthrough_files_write(fs, f);
	if (!fclose(f) && !mstate_pt_write(m->pid, text, len))
		*seen = gen;
	free(text);
}

/* The mount's state file: mode and counters (cache/mstate.h), when they moved or @force. */
static void publish(struct accelfs *fs, struct mstate *m, bool force, uint64_t *pt_seen)
{
	struct watch *w = &fs->watch;
	uint64_t before = digest(m), unwatched = m->watch_unwatched;
	struct pool *pool = fs->pool;

	m->watch_events = __atomic_load_n(&w->counters.events, __ATOMIC_RELAXED);
	m->watch_invalidations = __atomic_load_n(&w->counters.invalidations, __ATOMIC_RELAXED);
	m->watch_overflows = __atomic_load_n(&w->counters.overflows, __ATOMIC_RELAXED);
	m->watch_unwatched = __atomic_load_n(&w->counters.unwatched, __ATOMIC_RELAXED);
	reqstat_fill(m);
	m->parked = fair_parked(fs);
	m->ra_delay_us = readahead_delay_ns(fs) / 1000;
	if (fs->disk) {
		snprintf(m->disk, sizeof(m->disk), "%s", fs->opts.disk_cache);
		disk_tier_stats(fs->disk, &m->ds);
	}
	if (pool)
		pool_stats_own(pool, m->c);
	publish_pt(fs, m, force, pt_seen);
	if (!force && digest(m) == before && m->watch_unwatched == unwatched)
		return;
	snprintf(m->watch, sizeof(m->watch), "%s", watch_mode_name(fs));
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
	struct watch *w = &fs->watch;

	log_msg(LOG_ERR, "watch: %s failed (%s): invalidating everything, now off",
		watch_mode_name(fs), strerror(-err));
	__atomic_store_n(&w->mode, WATCH_OFF, __ATOMIC_RELAXED);
	short_timeouts(fs);
	watch_overflow(fs);
}

static void *watch_main(void *arg)
{
	struct accelfs *fs = arg;
	struct watch *w = &fs->watch;
	static struct mstate m; /* one thread; 8 KiB of paths and the request kinds */
	struct pollfd p[2] = { { .fd = w->fd, .events = POLLIN },
			       { .fd = w->stop_fd, .events = POLLIN } };
	const uint64_t tick = MSTATE_PUBLISH_MS * 1000000ULL;
	pid_t self = getpid();
	int ret;
	uint64_t last, pt_seen = 0;

	mstate_sweep(); /* files of daemons killed before they could remove theirs */
	mstate_init(fs, &m);
	publish(fs, &m, true, &pt_seen);
	last = now_ns();
	for (;;) {
		uint64_t since = now_ns() - last;
		int wait = since >= tick ? 0 : MSTATE_PUBLISH_MS - (int)(since / 1000000);
		bool failed = false;

		p[0].fd = w->mode == WATCH_OFF ? -1 : w->fd;
		ret = poll(p, 2, wait);
		if (ret < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents &&
		    (ret = w->mode == WATCH_INOTIFY ? watch_ino_read(fs, w->fd)
						    : watch_fan_read(fs, w->fd, self)) < 0) {
			watch_failed(fs, ret);
			failed = true;
		}
		/* A burst of events wakes the thread at each one: the state
		 * file (a create and a rename) at most every tick, with what
		 * the requests moved meanwhile. A watcher that failed says so
		 * at once. */
		if (failed || now_ns() - last >= tick) {
			publish(fs, &m, failed, &pt_seen);
			last = now_ns();
		}
	}
	return NULL;
}

int watch_start(struct accelfs *fs)
{
	struct watch *w = &fs->watch;

	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0 || pthread_create(&w->thread, NULL, watch_main, fs)) {
		if (w->mode != WATCH_OFF) {
			log_msg(LOG_ERR, "watch: cannot start the watcher thread: off");
			short_timeouts(fs); /* before INIT: nothing was cached with the long ones */
		}
		w->mode = WATCH_OFF;
		return -EAGAIN;
	}
	w->running = true;
	return 0;
}

void watch_stop(struct accelfs *fs)
{
	struct watch *w = &fs->watch;
	uint64_t one = 1;

	/* the shutdown thread and the end of the session loop may both come */
	pthread_mutex_lock(&w->stop_lock);
	if (w->running) {
		(void)!write(w->stop_fd, &one, sizeof(one));
		pthread_join(w->thread, NULL);
		w->running = false;
		mstate_remove((uint32_t)getpid());
	}
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	__atomic_store_n(&w->mode, WATCH_OFF, __ATOMIC_RELAXED); /* no new watches */
	if (w->ino_owned)
		watch_ino_close(fs); /* closes w->fd */
	else if (w->fd >= 0)
		close(w->fd);
	w->ino_owned = false;
	w->stop_fd = w->fd = -1;
	pthread_mutex_unlock(&w->stop_lock);
}
