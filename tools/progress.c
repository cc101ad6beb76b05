// SPDX-License-Identifier: MIT
/*
 * progress.c - draw "[#####     ]  45%  3/10 files  12.0/100.0 MiB" on a
 * terminal; see progress.h.
 */
#include <stdio.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

#define BAR_WIDTH 30

void progress_init(struct progress *p, unsigned int files, uint64_t bytes, bool allowed)
{
	p->on = allowed && isatty(STDERR_FILENO);
	p->files_total = files;
	p->files_done = 0;
	p->bytes_total = bytes;
	p->bytes_done = 0;
	p->bytes_file = 0;
	p->last = 0;
}

static void draw(struct progress *p)
{
	uint64_t done = p->bytes_done + p->bytes_file;
	char bar[BAR_WIDTH + 1], a[32], b[32];
	unsigned int pct, i;

	pct = p->bytes_total ? (unsigned int)(done * 100 / p->bytes_total) : 0;
	if (pct > 100)
		pct = 100;
	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < pct * BAR_WIDTH / 100 ? '#' : ' ';
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r\033[K[%s] %3u%%  %u/%u files  %s/%s", bar, pct, p->files_done,
		p->files_total, util_bytes(done, a, sizeof(a)),
		util_bytes(p->bytes_total, b, sizeof(b)));
	fflush(stderr);
}

void progress_update(uint64_t bytes, void *arg)
{
	struct progress *p = arg;
	double now;

	p->bytes_file = bytes;
	if (!p->on)
		return;
	now = util_now();
	if (now - p->last < 0.1)
		return;
	p->last = now;
	draw(p);
}

void progress_file_done(struct progress *p, uint64_t file_bytes)
{
	p->files_done++;
	p->bytes_done += file_bytes;
	p->bytes_file = 0;
	if (p->on)
		draw(p);
}

void progress_clear(struct progress *p)
{
	if (p->on)
		fprintf(stderr, "\r\033[K");
}
