// SPDX-License-Identifier: MIT
/*
 * report.c - suggestion logic of `accel report` (see report.h): knees of
 * miss-ratio curves, the budget split by marginal gain, and the yes/no
 * verdicts. No I/O, no pool: curves and counters come in as values.
 */
#include <errno.h>
#include <stdlib.h>

#include "report.h"

#define STEPS_PER_OCTAVE 8

/* Candidate sizes: 1, 2, 3, ... then 8 geometric steps per octave. */
static uint64_t next_size(uint64_t s)
{
	uint64_t step = s / STEPS_PER_OCTAVE;

	return s + (step ? step : 1);
}

/* The largest size worth looking at: twice the working set, at least 16. */
static uint64_t top_size(const struct mrc_curve *c)
{
	uint64_t top = 2 * c->working_set;

	return top < 16 ? 16 : top;
}

/*
 * What @s global buffers add: the hits at reuse distances the handle's own
 * REPORT_LOCAL_DEFAULT local buffers do not already serve. (This also keeps
 * sampling noise, which SHARDS_adj books at distance 0, from buying buffers.)
 */
static double global_hit(const struct mrc_curve *c, uint64_t s)
{
	double h = mrc_curve_hit(c, s) - mrc_curve_hit(c, REPORT_LOCAL_DEFAULT);

	return s <= REPORT_LOCAL_DEFAULT || h < 0 ? 0 : h;
}

void report_clamp(struct mrc_curve *c, uint64_t buckets)
{
	unsigned int last = 0;

	if (!buckets)
		return;
	while (last + 1 < MRC_NBINS && mrc_bin_lo(last + 1) <= buckets - 1)
		last++;
	for (unsigned int b = last + 1; b < MRC_NBINS; b++) {
		c->bins[last] += c->bins[b];
		c->bins[b] = 0;
	}
	if (c->working_set > buckets)
		c->working_set = buckets;
	for (uint32_t i = 0; i < c->npoints; i++)
		c->hit[i] = mrc_curve_hit(c, c->buffers[i]);
}

uint64_t report_knee(const struct mrc_curve *c, uint64_t cap)
{
	uint64_t top = top_size(c);
	double best = global_hit(c, top);

	if (!(best > 0.01))
		return 0;
	if (cap && cap < top)
		top = cap;
	for (uint64_t s = 1; s < top; s = next_size(s))
		if (global_hit(c, s) >= REPORT_KNEE_SHARE * best)
			return s;
	return top;
}

/* What @s buffers of quota add to what file @a already gets (its base, or
 * what its local buffers give, whichever is more). */
static double gain_at(const struct report_alloc *a, uint64_t s)
{
	double local = mrc_curve_hit(a->curve, REPORT_LOCAL_DEFAULT);
	double h = mrc_curve_hit(a->curve, s) - (a->base > local ? a->base : local);

	return s <= REPORT_LOCAL_DEFAULT || h < 0 ? 0 : h;
}

/* A file's candidate sizes up to its cap (the cap itself last) and the hit
 * fraction at each, computed once. */
struct grid {
	uint64_t *size;
	double *hit;
	size_t n, at; /* at: index of the current size */
};

static int grid_make(const struct report_alloc *a, struct grid *g)
{
	size_t cap = 2;

	for (uint64_t s = 1; s < a->cap; s = next_size(s))
		cap++;
	g->size = malloc(cap * sizeof(uint64_t));
	g->hit = malloc(cap * sizeof(double));
	if (!g->size || !g->hit)
		return -ENOMEM;
	g->n = g->at = 0;
	g->size[g->n] = 0;
	g->hit[g->n++] = 0;
	for (uint64_t s = 1; s < a->cap; s = next_size(s)) {
		g->size[g->n] = s;
		g->hit[g->n++] = gain_at(a, s);
	}
	if (a->cap) {
		g->size[g->n] = a->cap;
		g->hit[g->n++] = gain_at(a, a->cap);
	}
	return 0;
}

/* The best next step of a file within @left buffers: extra hits per buffer,
 * and the size to step to in *to (a grid size, or all that is left). */
static double best_step(const struct report_alloc *a, const struct grid *g, uint64_t left,
			uint64_t *to)
{
	uint64_t cur = g->size[g->at], last = a->cap - cur < left ? a->cap : cur + left;
	double best = 0, d;

	for (size_t i = g->at + 1; i < g->n && g->size[i] <= last; i++) {
		d = a->weight * (g->hit[i] - g->hit[g->at]) / (double)(g->size[i] - cur);
		if (d > best) {
			best = d;
			*to = g->size[i];
		}
	}
	if (last > cur) {
		d = a->weight * (gain_at(a, last) - g->hit[g->at]) / (double)(last - cur);
		if (d > best) {
			best = d;
			*to = last;
		}
	}
	return best;
}

/* Move file @g to size @s (between grid points if the budget ends there). */
static void grid_move(struct grid *g, const struct report_alloc *a, uint64_t s)
{
	while (g->at + 1 < g->n && g->size[g->at + 1] <= s)
		g->at++;
	if (g->size[g->at] != s) { /* off the grid: make the current point s */
		g->size[g->at] = s;
		g->hit[g->at] = gain_at(a, s);
	}
}

uint64_t report_split(struct report_alloc *a, size_t n, uint64_t budget)
{
	struct grid *g = calloc(n ? n : 1, sizeof(*g));
	uint64_t used = 0;

	for (size_t i = 0; i < n; i++) {
		a[i].buffers = 0;
		if (g && a[i].curve && a[i].weight > 0 && grid_make(&a[i], &g[i]))
			g[i].n = 0; /* out of memory: that file gets no advice */
	}
	for (; g;) {
		double best = 0;
		size_t who = n;
		uint64_t to = 0;

		for (size_t i = 0; i < n; i++) {
			uint64_t t = 0;
			double d = g[i].n ? best_step(&a[i], &g[i], budget - used, &t) : 0;

			if (d > best) {
				best = d;
				who = i;
				to = t;
			}
		}
		if (who == n)
			break;
		used += to - a[who].buffers;
		a[who].buffers = to;
		grid_move(&g[who], &a[who], to);
	}
	for (size_t i = 0; g && i < n; i++) {
		free(g[i].size);
		free(g[i].hit);
	}
	free(g);
	return used;
}

unsigned int report_local(const struct mrc_curve *c)
{
	double top = mrc_curve_hit(c, REPORT_LOCAL_MAX);

	for (unsigned int l = 2; l < REPORT_LOCAL_MAX; l *= 2)
		if (top - mrc_curve_hit(c, l) < REPORT_LOCAL_GAIN)
			return l;
	return REPORT_LOCAL_MAX;
}

struct report_verdict report_readahead(uint64_t issued, uint64_t used, uint64_t wasted,
				       const struct mrc_curve *c)
{
	if (issued >= 16)
		return used >= wasted && 2 * used >= issued
			   ? (struct report_verdict){ true, true,
						      "most prefetched buckets were read" }
			   : (struct report_verdict){ false, true,
						      "most prefetched buckets were wasted" };
	if (!c || c->accesses < REPORT_MIN_ACCESSES || !(c->total > 0))
		return (struct report_verdict){ false, false, "not enough reads to tell" };
	if (c->cold >= 0.9 * c->total)
		return (struct report_verdict){ true, true,
						"streaming: nearly every bucket is read once" };
	return (
	    struct report_verdict){ false, false,
				    "no read-ahead counters, and a curve cannot tell sequential "
				    "re-reads from random ones" };
}

struct report_verdict report_deferred(uint64_t reads, uint64_t writes, uint64_t be_writes,
				      uint64_t be_write_bytes, uint32_t bucket_size)
{
	if (reads + writes < REPORT_MIN_ACCESSES || !writes)
		return (struct report_verdict){ false, writes != 0 || reads + writes >= 1,
						"no writes to speak of" };
	if (4 * writes < reads + writes)
		return (struct report_verdict){ false, true, "read-mostly (< 25 % writes)" };
	if (be_writes && be_write_bytes / be_writes >= bucket_size / 2)
		return (struct report_verdict){ false, true,
						"writes are already large (>= half a bucket)" };
	return (struct report_verdict){ true, true, ">= 25 % small writes: merging them pays" };
}

struct report_verdict report_defrag(uint64_t extents, uint64_t ideal, double score)
{
	if (extents <= ideal || extents < 2)
		return (struct report_verdict){ false, true, "contiguous (ideal layout)" };
	if (score < REPORT_DEFRAG_SCORE || extents < ideal + REPORT_DEFRAG_EXTRA)
		return (struct report_verdict){ false, true, "a few extents more than ideal" };
	return (struct report_verdict){ true, true, "at least twice the extents needed" };
}
