// SPDX-License-Identifier: MIT
/*
 * readahead.c - the read-ahead decision of one handle, after the kernel's
 * mm/readahead.c: a small window once a pattern is seen, doubled each time
 * the reader reaches the last half of the window issued before (the
 * kernel's PG_readahead "async trigger"), so the next window is in flight
 * while the reader still has data and no bucket is asked for twice.
 *
 * Patterns, in buckets of the cache:
 * - sequential: a read starts where the previous one ended, or overlaps it,
 *   or skips less than one bucket (record programs re-read a record before
 *   rewriting it, or skip a few bytes of padding). Prefetching starts on
 *   the second such read.
 * - strided: the read starts are a constant distance apart and the gaps
 *   between reads are a bucket or more (with smaller gaps every bucket is
 *   touched anyway, and that is sequential). Prefetching starts on the
 *   third read, the first that confirms the stride, and asks only for the
 *   buckets of the predicted reads, one window per read (ra_next()).
 * Anything else is random: the window is dropped and detection starts over
 * with this read, so a changed pattern begins again with a small window.
 * Except reads that come out of order: the kernel sends its own read-ahead
 * of a file as two READ requests at once, which reach the daemon (and
 * complete) in either order. A read that skips no more than the previous
 * read's length, where that read was RA_REORDER_MIN buckets or more (the
 * kernel's read-ahead, not a program's records), is sequential; a read of
 * a sequential pattern behind the previous one by less than the window (or
 * RA_REORDER_BUCKETS) changes nothing. Without this every reordering
 * restarted the window at RA_INIT_BUCKETS, and a reader on a slow SOURCE
 * never got ahead of it.
 *
 * Invariant that makes "no bucket twice" hold: within a pattern every
 * window starts after last_req, the last bucket already asked for (or being
 * read by the reader itself when the pattern began), and moves it forward.
 */
#include <string.h>

#include "readahead.h"

enum { RA_MODE_NONE, RA_MODE_SEQ, RA_MODE_STRIDE };

/* The first window, in buckets: the kernel starts as small, then doubles. */
#define RA_INIT_BUCKETS 2
/* How far behind the previous read a reordered read of a sequential pattern may start */
#define RA_REORDER_BUCKETS 32
/* Reads this long (buckets) or longer are the kernel's read-ahead, which it sends two at a time */
#define RA_REORDER_MIN 2

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The last bucket a read of [@off, @end) touches (@end saturated, so it may equal @off). */
static uint64_t ra_last_bucket(uint64_t off, uint64_t end, uint32_t bs)
{
	return (end > off ? end - 1 : off) / bs;
}

void ra_reset(struct ra_state *ra)
{
	memset(ra, 0, sizeof(*ra));
}

/* The next window size: RA_INIT_BUCKETS first, then double, never past @max. */
static uint32_t ra_grow(uint32_t size, uint32_t max)
{
	if (!size)
		return max < RA_INIT_BUCKETS ? max : RA_INIT_BUCKETS;
	return size > max / 2 ? max : size * 2;
}

/* A read of a sequential pattern that came out of order, behind the previous one (see the top) */
static bool ra_reordered(const struct ra_state *ra, uint64_t off)
{
	uint64_t back = ra->size > RA_REORDER_BUCKETS ? ra->size : RA_REORDER_BUCKETS;

	if (ra->mode != RA_MODE_SEQ || !ra->seen || off >= ra->prev_off)
		return false;
	if (back > UINT64_MAX / ra->bucket_size)
		return true;
	return ra->prev_off - off < back * ra->bucket_size;
}

static int ra_classify(const struct ra_state *ra, uint64_t off)
{
	if (!ra->seen)
		return RA_MODE_NONE;
	if (off >= ra->prev_off && off < sat_add(ra->prev_end, ra->bucket_size))
		return RA_MODE_SEQ;
	/* reordered (see the top): the later of two reads sent together came first */
	if (ra->prev_end - ra->prev_off >= RA_REORDER_MIN * (uint64_t)ra->bucket_size &&
	    off > ra->prev_end && off - ra->prev_end <= ra->prev_end - ra->prev_off)
		return RA_MODE_SEQ;
	if (ra->stride && off > ra->prev_off && off - ra->prev_off == ra->stride)
		return RA_MODE_STRIDE;
	return RA_MODE_NONE;
}

/* Hand out the sequential window of ra->size buckets after last_req. */
static bool ra_emit_seq(struct ra_state *ra, struct ra_window *out)
{
	uint64_t last_bucket = UINT64_MAX / ra->bucket_size;
	uint64_t room = last_bucket - ra->last_req;

	if (!room)
		return false; /* the reader is at the end of what an offset can name */
	out->first = ra->last_req + 1;
	out->count = room < ra->size ? (uint32_t)room : ra->size;
	ra->last_req += out->count;
	ra->trigger = out->first + out->count / 2;
	return true;
}

/* @cur: the last bucket the current read touches. */
static bool ra_seq(struct ra_state *ra, uint64_t cur, uint32_t max, struct ra_window *out)
{
	if (!ra->size || cur > ra->last_req) /* new pattern, or the reader overtook the window */
		ra->last_req = cur;
	else if (cur < ra->trigger)
		return false;
	ra->size = ra_grow(ra->size, max);
	return ra_emit_seq(ra, out);
}

/* Queue up to ra->size buckets' worth of predicted reads starting at @p. */
static bool ra_queue_stride(struct ra_state *ra, uint64_t p, uint64_t len, uint64_t per_read,
			    struct ra_window *out)
{
	uint64_t s = ra->stride, n = ra->size / per_read, fit;

	if (!n)
		n = 1;
	fit = (UINT64_MAX - p) / s + 1; /* predicted reads whose start an offset can name */
	if (n > fit)
		n = fit;
	ra->pend_off = p;
	ra->pend_len = len;
	ra->pend_left = (uint32_t)n;
	ra->next = s > (UINT64_MAX - p) / n ? UINT64_MAX : p + n * s;
	ra->trigger = p + (n / 2) * s;
	return ra_next(ra, out);
}

static bool ra_strided(struct ra_state *ra, uint64_t off, uint64_t end, uint32_t max,
		       struct ra_window *out)
{
	uint32_t bs = ra->bucket_size;
	uint64_t cur = ra_last_bucket(off, end, bs), per_read = cur - off / bs + 1, p;

	if (!ra->size || off >= ra->next) {
		if (off > UINT64_MAX - ra->stride)
			return false;
		p = off + ra->stride;
		ra->last_req = ra->size && ra->last_req > cur ? ra->last_req : cur;
	} else if (off >= ra->trigger) {
		p = ra->next;
	} else {
		return false;
	}
	ra->size = ra_grow(ra->size, max);
	return ra_queue_stride(ra, p, end - off, per_read, out);
}

bool ra_next(struct ra_state *ra, struct ra_window *out)
{
	while (ra->pend_left) {
		uint64_t p = ra->pend_off, end = sat_add(p, ra->pend_len);
		uint64_t first = p / ra->bucket_size;
		uint64_t last = ra_last_bucket(p, end, ra->bucket_size);

		if (--ra->pend_left)
			ra->pend_off = p + ra->stride; /* ra_queue_stride() checked it fits */
		if (last <= ra->last_req)
			continue;
		if (first <= ra->last_req)
			first = ra->last_req + 1;
		if (last - first >= ra->size)
			last = first + ra->size - 1;
		out->first = first;
		out->count = (uint32_t)(last - first + 1);
		ra->last_req = last;
		return true;
	}
	return false;
}

bool ra_on_read(struct ra_state *ra, uint64_t off, size_t len, uint32_t bucket_size,
		uint32_t max_buckets, struct ra_window *out)
{
	uint64_t end = sat_add(off, len);
	int mode;

	if (!len)
		return false;
	ra->pend_left = 0;
	if (!bucket_size || !max_buckets || bucket_size != ra->bucket_size) {
		ra_reset(ra);
		if (!bucket_size || !max_buckets)
			return false;
		ra->bucket_size = bucket_size;
	}
	if (ra_reordered(ra, off))
		return false;
	mode = ra_classify(ra, off);
	if (mode != ra->mode) {
		ra->mode = (uint8_t)mode;
		ra->size = 0; /* a new pattern starts small */
	}
	if (mode != RA_MODE_STRIDE)
		ra->stride =
		    mode == RA_MODE_NONE && ra->seen && off > ra->prev_off ? off - ra->prev_off : 0;
	ra->prev_off = off;
	ra->prev_end = end;
	ra->seen = 1;
	if (ra->size > max_buckets)
		ra->size = max_buckets;
	if (mode == RA_MODE_SEQ)
		return ra_seq(ra, ra_last_bucket(off, end, bucket_size), max_buckets, out);
	if (mode == RA_MODE_STRIDE)
		return ra_strided(ra, off, end, max_buckets, out);
	return false;
}
