// SPDX-License-Identifier: MIT
/*
 * progress.c - draw "what [#####     ]  45%  3/10 files  12.0/100.0 MiB" on
 * a terminal; see progress.h.
 */
#include <stdio.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

#define BAR_WIDTH 20

void progress_init(struct progress *p, const char *what, const char *unit, uint64_t items,
		   uint64_t bytes, bool allowed)
{
	*p = (struct progress){ .on = allowed && isatty(STDERR_FILENO),
				.what = what,
				.unit = unit,
				.items_total = items,
				.bytes_total = bytes };
}

/* Bytes done: the finished items, and the current one's share of its work. */
static uint64_t bytes_now(const struct progress *p)
{
	uint64_t part = p->item_size;

	if (p->item_done < p->item_work)
		part =
		    (uint64_t)((double)p->item_size * (double)p->item_done / (double)p->item_work);
	return p->bytes_done + part;
}

/* 0..100 of the bytes, else of the items; -1 when neither total is known. */
static int percent(const struct progress *p)
{
	uint64_t done = p->bytes_total ? bytes_now(p) : p->items_done;
	uint64_t total = p->bytes_total ? p->bytes_total : p->items_total;

	if (!total)
		return -1;
	return done >= total ? 100 : (int)(done * 100 / total);
}

static void draw(struct progress *p)
{
	char bar[BAR_WIDTH + 1], a[32], b[32];
	int pct = percent(p), i;

	fprintf(stderr, "\r\033[K%s", p->what);
	if (pct >= 0) {
		for (i = 0; i < BAR_WIDTH; i++)
			bar[i] = i < pct * BAR_WIDTH / 100 ? '#' : ' ';
		bar[BAR_WIDTH] = '\0';
		fprintf(stderr, " [%s] %3d%%", bar, pct);
	}
	if (p->unit && p->items_total)
		fprintf(stderr, "  %llu/%llu %s", (unsigned long long)p->items_done,
			(unsigned long long)p->items_total, p->unit);
	else if (p->unit)
		fprintf(stderr, "  %llu %s", (unsigned long long)p->items_done, p->unit);
	if (p->bytes_total)
		fprintf(stderr, "  %s/%s", util_bytes(bytes_now(p), a, sizeof(a)),
			util_bytes(p->bytes_total, b, sizeof(b)));
	fflush(stderr);
	p->drawn = true;
}

/* Draw unless the last drawing is too recent. */
static void tick(struct progress *p)
{
	double now;

	if (!p->on)
		return;
	now = util_now();
	if (p->drawn && now - p->last < PROGRESS_INTERVAL)
		return;
	p->last = now;
	draw(p);
}

void progress_item(struct progress *p, uint64_t size, uint64_t work)
{
	p->item_size = size;
	p->item_work = work ? work : size;
	p->item_done = 0;
}

void progress_update(uint64_t done, void *arg)
{
	struct progress *p = arg;

	p->item_done = done;
	tick(p);
}

void progress_done(struct progress *p, uint64_t items, uint64_t bytes)
{
	p->items_done += items;
	p->bytes_done += bytes;
	p->item_size = p->item_work = p->item_done = 0;
	tick(p);
}

void progress_clear(struct progress *p)
{
	if (p->on && p->drawn)
		fprintf(stderr, "\r\033[K");
	p->drawn = false;
}
