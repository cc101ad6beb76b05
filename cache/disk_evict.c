// SPDX-License-Identifier: MIT
/*
 * disk_evict.c - the disk tier's size bound. One thread per tier scans the
 * directory when a put takes the estimate past the bound, at start (to
 * learn what earlier daemons left) and every 30 s while puts happen. A
 * scan measures every entry, removes temporary files older than a minute
 * (a writer killed mid-entry), and, over the bound, removes entries down
 * to 90 % of it in this order:
 *   1. entries never read since written (atime not after mtime), oldest
 *      first: a file read once, by a scan or a backup, goes before
 *   2. entries read again, least recently read first (atime, which a hit
 *      refreshes, disk.c).
 * Several daemons sharing one directory each scan; a removal racing
 * another's is harmless (ENOENT), and the bound holds within one scan.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "disk_i.h"

#define TMP_AGE_S 60

struct victim {
	int64_t when; /* ns: mtime (never read again) or atime (read again) */
	bool reread;  /* class 2 */
	uint64_t bytes;
	char name[DISK_NAME_MAX];
};

struct scan {
	struct victim *v;
	size_t n, cap;
	uint64_t total;
	time_t now;
};

static int scan_entry(struct disk_tier *d, struct scan *s, int sub, const char *sname,
		      const char *name)
{
	struct victim *v;
	struct stat st;

	if (fstatat(sub, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return 0;
	if (strstr(name, ".t")) { /* being written, or left by a writer that died */
		if (s->now - st.st_mtim.tv_sec > TMP_AGE_S)
			unlinkat(sub, name, 0);
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct victim *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	v = &s->v[s->n++];
	v->reread = disk_ts_ns(&st.st_atim) > disk_ts_ns(&st.st_mtim);
	v->when = v->reread ? disk_ts_ns(&st.st_atim) : disk_ts_ns(&st.st_mtim);
	v->bytes = (uint64_t)st.st_blocks * 512;
	s->total += v->bytes;
	(void)d;
	snprintf(v->name, sizeof(v->name), "%.3s%.*s", sname, (int)sizeof(v->name) - 4, name);
	return 0;
}

static int scan_dir(struct disk_tier *d, struct scan *s)
{
	for (unsigned x = 0; x < 256; x++) {
		char sname[4];
		struct dirent *de;
		DIR *dir;
		int sub;

		snprintf(sname, sizeof(sname), "%02x/", x);
		sname[2] = '\0';
		sub = openat(d->dirfd, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		sname[2] = '/';
		dir = fdopendir(sub);
		if (!dir) {
			close(sub);
			continue;
		}
		while ((de = readdir(dir)))
			if (de->d_name[0] != '.' &&
			    scan_entry(d, s, dirfd(dir), sname, de->d_name)) {
				closedir(dir);
				return -ENOMEM;
			}
		closedir(dir);
	}
	return 0;
}

static int victim_order(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->reread != y->reread)
		return x->reread ? 1 : -1;
	return x->when < y->when ? -1 : x->when > y->when;
}

/*
 * One scan: measure, then remove down to 90 % of the bound if over it; after
 * a put met a full file system, down to 90 % of what the entries take.
 */
static void scan_once(struct disk_tier *d)
{
	struct scan s = { .now = time(NULL) };
	bool full = __atomic_exchange_n(&d->full, false, __ATOMIC_RELAXED);
	uint64_t limit = d->limit, goal;

	if (scan_dir(d, &s) == 0 && full && s.total / 10 * 9 < limit)
		limit = s.total / 10 * 9;
	goal = limit / 10 * 9;
	if (s.total > limit) {
		qsort(s.v, s.n, sizeof(*s.v), victim_order);
		for (size_t i = 0; i < s.n && s.total > goal; i++) {
			if (unlinkat(d->dirfd, s.v[i].name, 0) && errno != ENOENT)
				continue;
			s.total -= s.v[i].bytes;
			__atomic_add_fetch(&d->evicted, 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&d->used, s.total, __ATOMIC_RELAXED);
	free(s.v);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)disk_ts_ns(&ts);
}

/* Scan when asked (at most once a second) and every 30 s while puts happen. */
static void *evict_main(void *arg)
{
	struct disk_tier *d = arg;
	uint64_t puts_seen = UINT64_MAX, periodic = 0, kicked = 0; /* scan at start */

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		uint64_t now = mono_ns(), puts = __atomic_load_n(&d->puts, __ATOMIC_RELAXED);
		uint64_t next = periodic;
		struct timespec until;

		if ((d->want_scan && now >= kicked) || (puts != puts_seen && now >= periodic)) {
			d->want_scan = false;
			puts_seen = puts;
			pthread_mutex_unlock(&d->lock);
			scan_once(d);
			pthread_mutex_lock(&d->lock);
			kicked = mono_ns() + 1000000000ULL;
			periodic = mono_ns() + DISK_SCAN_EVERY_NS;
			continue;
		}
		if (d->want_scan && kicked < next)
			next = kicked;
		if (next <= now)
			next = now + DISK_SCAN_EVERY_NS;
		until.tv_sec = (time_t)(next / 1000000000ULL);
		until.tv_nsec = (long)(next % 1000000000ULL);
		pthread_cond_timedwait(&d->wake, &d->lock, &until);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

void disk_evict_init(struct disk_tier *d)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->wake, &ca);
	pthread_condattr_destroy(&ca);
}

int disk_evict_start(struct disk_tier *d)
{
	int ret;

	if (d->thread_started)
		return 0;
	ret = -pthread_create(&d->thread, NULL, evict_main, d);
	d->thread_started = !ret;
	return ret;
}

void disk_evict_stop(struct disk_tier *d)
{
	if (d->thread_started) {
		pthread_mutex_lock(&d->lock);
		d->stop = true;
		pthread_cond_signal(&d->wake);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
}

void disk_evict_kick(struct disk_tier *d)
{
	pthread_mutex_lock(&d->lock);
	if (!d->want_scan) {
		d->want_scan = true;
		pthread_cond_signal(&d->wake);
	}
	pthread_mutex_unlock(&d->lock);
}
