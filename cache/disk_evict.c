// SPDX-License-Identifier: MIT
/*
 * disk_evict.c - the disk tier's size bound. One thread per tier scans the
 * directory when a put takes the estimate past the bound, at start (to
 * learn what earlier daemons left) and every 30 s while puts happen. A
 * scan measures every entry (one file's state: the blocks of its sparse
 * file), and, over the bound, removes whole entries down to 90 % of it in
 * this order:
 *   1. entries never read since written (atime not after mtime), oldest
 *      first: a file read once, by a scan or a backup, goes before
 *   2. entries read again, least recently read first (atime, which a hit
 *      refreshes, disk.c).
 * Several daemons sharing one directory each scan; a removal racing
 * another's is harmless (ENOENT), and the bound holds within one scan. A
 * put into an entry being removed goes with it.
 *
 * At start the thread also empties and removes the layout before this one
 * (DISK_OLD_SUBDIR), which no daemon of this version reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "disk_i.h"

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
};

static int scan_entry(struct disk_tier *d, struct scan *s, int sub, const char *sname,
		      const char *name)
{
	struct victim *v;
	struct stat st;

	if (fstatat(sub, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return 0;
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

/* Directory XX (@x in hex) below @at, opened for reading, or NULL. */
static DIR *sub_open(int at, unsigned x)
{
	char sname[4];
	DIR *dir;
	int sub;

	snprintf(sname, sizeof(sname), "%02x", x);
	sub = openat(at, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return NULL;
	dir = fdopendir(sub);
	if (!dir)
		close(sub);
	return dir;
}

static int scan_dir(struct disk_tier *d, struct scan *s)
{
	for (unsigned x = 0; x < 256; x++) {
		char sname[4];
		struct dirent *de;
		DIR *dir = sub_open(d->dirfd, x);

		if (!dir)
			continue;
		snprintf(sname, sizeof(sname), "%02x/", x);
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
 * Free about @need bytes of entry @name by punching out its first buckets
 * kept (a file read once is read from its start: those are its oldest).
 * Returns the bytes freed.
 */
static uint64_t entry_trim(struct disk_tier *d, const char *name, uint64_t need)
{
	const off_t slot = (off_t)disk_slot(d->bsize);
	struct stat before, after;
	off_t from;
	uint64_t freed = 0;
	int fd = openat(d->dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (!fstat(fd, &before) && (from = lseek(fd, 0, SEEK_DATA)) >= 0 &&
	    !fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from / slot * slot,
		       (off_t)((need + (uint64_t)slot - 1) / (uint64_t)slot) * slot) &&
	    !fstat(fd, &after) && after.st_blocks < before.st_blocks)
		freed = (uint64_t)(before.st_blocks - after.st_blocks) * 512;
	close(fd);
	return freed;
}

/*
 * One scan: measure, then remove down to 90 % of the bound if over it; after
 * a put met a full file system, down to 90 % of what the entries take. The
 * last entry to go, if larger than what is left to free, loses only its
 * first buckets: a single file larger than the bound keeps its end.
 */
static void scan_once(struct disk_tier *d)
{
	struct scan s = { 0 };
	bool full = __atomic_exchange_n(&d->full, false, __ATOMIC_RELAXED);
	uint64_t limit = d->limit, goal;

	if (scan_dir(d, &s) == 0 && full && s.total / 10 * 9 < limit)
		limit = s.total / 10 * 9;
	goal = limit / 10 * 9;
	if (s.total > limit) {
		qsort(s.v, s.n, sizeof(*s.v), victim_order);
		for (size_t i = 0; i < s.n && s.total > goal; i++) {
			uint64_t need = s.total - goal, freed = 0;

			if (s.v[i].bytes > need)
				freed = entry_trim(d, s.v[i].name, need);
			if (!freed) {
				if (unlinkat(d->dirfd, s.v[i].name, 0) && errno != ENOENT)
					continue;
				freed = s.v[i].bytes;
			}
			s.total -= freed < s.total ? freed : s.total;
			__atomic_add_fetch(&d->evicted, 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&d->used, s.total, __ATOMIC_RELAXED);
	free(s.v);
}

static bool stopping(struct disk_tier *d)
{
	bool stop;

	pthread_mutex_lock(&d->lock);
	stop = d->stop;
	pthread_mutex_unlock(&d->lock);
	return stop;
}

/*
 * Empty and remove the old layout's directory: its XX/ directories' files,
 * then them, then it. Nothing in it is followed (unlinkat of names only).
 * An unmount meanwhile stops it between two directories (a tier of 1 GiB
 * was 16,384 files): the next daemon goes on.
 */
static void old_layout_remove(struct disk_tier *d)
{
	for (unsigned x = 0; x < 256; x++) {
		char sname[4];
		struct dirent *de;
		DIR *dir;

		if (stopping(d))
			return;
		dir = sub_open(d->oldfd, x);
		if (!dir)
			continue;
		while ((de = readdir(dir)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(dir), de->d_name, 0);
		closedir(dir);
		snprintf(sname, sizeof(sname), "%02x", x);
		unlinkat(d->oldfd, sname, AT_REMOVEDIR);
	}
	unlinkat(d->topfd, DISK_OLD_SUBDIR, AT_REMOVEDIR);
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

	if (d->oldfd >= 0)
		old_layout_remove(d);
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
