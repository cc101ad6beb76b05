/* SPDX-License-Identifier: MIT */
/*
 * monscreen.h - what `accel monitor` draws, from one struct that holds
 * everything on the screen: the MONITOR RMS cache display of one file (or
 * of the whole pool), the hot files, the file picker and the key line.
 * Drawing only: no pool access, no clock, no input (cmd_monitor.c has those).
 */
#ifndef ACCELFS_TOOLS_MONSCREEN_H
#define ACCELFS_TOOLS_MONSCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "monstat.h"
#include "mstate.h"
#include "poolsnap.h"

/* The smallest screen everything fits on. */
#define MONSCREEN_MIN_COLS 60
#define MONSCREEN_MIN_LINES 14

/* One line of the hot-files view. */
struct mon_hot {
	const struct pool_stats_file *f;
	double rate; /* reads + writes per second over the last interval */
};

struct mon_view {
	const char *pool; /* pool name */
	const char *host;
	const struct poolsnap *snap;
	/* The cache display: the pool (file == NULL && !want_file) or one file. */
	bool want_file;			    /* a file was chosen */
	const char *file_label;		    /* its path as the user named it */
	const struct pool_stats_file *file; /* its stats, NULL if not in the pool */
	const struct monstat *ms;
	const struct mon_hot *hot; /* sorted */
	size_t nhot;
	const char *sort_name;
	double interval;
	bool paused;
	bool help;
	bool picking;				   /* the file picker replaces the screen */
	const struct pool_stats_file *const *pick; /* the picker's files, by path */
	size_t npick;
	size_t pick_sel; /* 0: the pool, i: pick[i - 1] */
	/* The mount view (per daemon, as MONITOR's per-node views): shown when
	 * want_mount; mount is its latest state (NULL: its daemon is gone),
	 * mount_prev the one an interval of mount_dt seconds before (or NULL). */
	bool want_mount;
	const char *mount_label;
	const struct mstate *mount, *mount_prev;
	double mount_dt;
	bool mount_picking; /* the mount picker replaces the screen */
	const struct mstate *mounts;
	size_t nmounts;
	size_t mount_sel;
};

/* Draw @v on stdscr and refresh. */
void monscreen_draw(const struct mon_view *v);

/* Lines the picker shows per page, for PgUp/PgDn. */
int monscreen_pick_page(void);

#endif
