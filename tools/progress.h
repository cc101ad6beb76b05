/* SPDX-License-Identifier: MIT */
/*
 * progress.h - the one progress line of every accel operation that can take
 * more than a couple of seconds (convert, defrag, warm, report, pool
 * --recover): on stderr, only when stderr is a terminal (never in logs or
 * pipes), rewritten in place with \r at most four times a second, and
 * cleared before anything else is printed and at the end:
 *
 *   convert [##########          ]  52%  1/1 files  780.0 MiB/1.5 GiB
 *   warm    [###                 ]  15%  40/300 files  1.2/8.0 GiB
 *   report  40/300 files
 *
 * Work is counted in items (files, buffers) and bytes. An item may take
 * several passes over its bytes (convert copies a file, then reads both
 * copies to verify it): progress_item() says how much I/O the current item
 * will take, and progress_update() how much of it is done, so the bar moves
 * through every pass without going past the item's share.
 */
#ifndef ACCELFS_TOOLS_PROGRESS_H
#define ACCELFS_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_INTERVAL 0.25 /* seconds between two drawings */

struct progress {
	bool on;	      /* stderr is a terminal and the command is not quiet */
	bool drawn;	      /* a line is on the screen */
	const char *what;     /* "convert": the first word of the line */
	const char *unit;     /* "files": what the items are, NULL to show none */
	uint64_t items_total; /* 0: not known */
	uint64_t items_done;
	uint64_t bytes_total; /* 0: no bytes shown */
	uint64_t bytes_done;  /* of finished items */
	uint64_t item_size;   /* of the current item */
	uint64_t item_work;   /* I/O it takes: item_size times its passes */
	uint64_t item_done;   /* of item_work */
	double last;
};

/* Start a line for command @what; @allowed false (e.g. --quiet) keeps it off. */
void progress_init(struct progress *p, const char *what, const char *unit, uint64_t items,
		   uint64_t bytes, bool allowed);

/* The next item has @size bytes and takes @work bytes of I/O (0: as @size). */
void progress_item(struct progress *p, uint64_t size, uint64_t work);

/* copy_ctl-style callback: @done bytes of the current item's work are done. */
void progress_update(uint64_t done, void *p);

/* @items more are finished, with @bytes (counted whole); the current item ends. */
void progress_done(struct progress *p, uint64_t items, uint64_t bytes);

/* Wipe the line (before other output, and at the end); it comes back at the next update. */
void progress_clear(struct progress *p);

#endif
