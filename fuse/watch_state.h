/* SPDX-License-Identifier: MIT */
/*
 * watch_state.h - the mount's watcher state (fs->watch), kept by the
 * watcher's files (watch_i.h) and only by them: the thread and its mode
 * (watch.c), the inotify map (watch_ino.c), the echo table (watch_echo.c)
 * and the counters the state file publishes (watch_inval.c).
 */
#ifndef ACCELFS_FUSE_WATCH_STATE_H
#define ACCELFS_FUSE_WATCH_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#define ECHO_SLOTS 4096 /* power of two: 32 KiB */

/* Counters published in the state file (atomic). */
struct watch_counters {
	uint64_t events;
	uint64_t invalidations;
	uint64_t overflows;
	uint64_t unwatched; /* inotify: directory nodes that could not be watched */
};

struct wd_slot;

struct watch {
	/* watch.c. Set before the thread starts; only watch_failed() changes it later: atomic. */
	enum watch_mode mode;
	int fd;	     /* the fanotify or inotify descriptor */
	int stop_fd; /* eventfd: watch_stop() wakes the thread */
	pthread_t thread;
	bool running;
	bool ino_owned;			/* fd is watch_ino.c's */
	char why[256];			/* why the mode is what it is, for the log */
	double short_entry, short_attr; /* the timeouts without a watcher */
	pthread_mutex_t stop_lock;	/* stopping once (watch_stop) */
	struct watch_counters counters;

	/* watch_ino.c: the inotify watches */
	pthread_mutex_t map_lock;
	struct wd_slot *map; /* open addressing on wd; map_lock */
	size_t map_size;     /* power of two; map_lock */
	size_t map_count;    /* map_lock */
	int ino_fd;	     /* map_lock to close (watch_stop); the watcher reads it */
	bool logged;	     /* the first refusal was logged; map_lock */

	/* watch_echo.c: the mount's own changes */
	uint64_t echo_tab[ECHO_SLOTS]; /* atomic: key's high bits | ms clock */
	bool echo_on;		       /* set before the workers start, then read only */
};

/* What a struct watch starts as (static storage: main.c). */
#define WATCH_STATE_INIT                                                                       \
	{                                                                                      \
		.mode = WATCH_OFF, .fd = -1, .stop_fd = -1,                                    \
		.stop_lock = PTHREAD_MUTEX_INITIALIZER, .map_lock = PTHREAD_MUTEX_INITIALIZER, \
		.ino_fd = -1,                                                                  \
	}

#endif
