// SPDX-License-Identifier: MIT
/*
 * readahead_io.c - adaptive read-ahead (RMS multiblock count + read-ahead).
 *
 * After each read of a cached file, the handle's stream decides (from the
 * pattern so far: sequential or strided, cache/readahead.h) which runs of
 * buckets to fetch next; this file reads each run with ONE asynchronous
 * request on the prefetch engine's io_uring ring (uring/prefetch.h) and puts
 * the result into the pool as prefetched buckets, so the reader's next
 * requests are pool hits and the backend sees few large reads issued ahead
 * of time. The window doubles while the pattern holds, up to readahead_max
 * plus SOURCE's delay: each read's time beyond moving its bytes at 1 GB/s
 * (cache/tuning.h), a low quantile of the recent ones (note_delay: queueing
 * is not delay), adds that many bytes in whole readahead_max, up to
 * readahead_latency_max. A window is read in runs of at most a slot's size,
 * several in flight: on a network SOURCE the window then covers the round
 * trip (bandwidth x delay).
 *
 * A fixed set of request slots, each with its own buffer (allocated once,
 * at first use), bounds the memory and the I/O in flight; when none is free
 * the prefetch is simply skipped. A request holds its own descriptor (dup)
 * and its own pool handle, so a file closed meanwhile is no problem, and a
 * coherence ticket taken before the read, so a write in between makes the
 * pool refuse the stale bytes. Where the file has a disk tier (disk_cache=),
 * what a run brought is kept there too, under the same ticket.
 *
 * Reads in flight are published, run by run, in the mount's table of
 * flights (flights.h): each slot's, and each READ's own reading of buckets
 * the pool did not have (readahead_reading .. readahead_read_done). A READ
 * that reaches buckets in flight waits for them (readahead_wait, at most
 * RA_WAIT_NS) instead of reading them from SOURCE a second time, and a
 * window leaves out buckets in flight: on a slow SOURCE the read under way
 * is further along than a new one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "fill_fd.h"
#include "flights.h"
#include "prefetch.h"
#include "stream.h"
#include "tuning.h"

#define RA_SLOTS FLIGHTS_FIXED /* slot i's reads are flight i */
#define RA_SLOT_MIN (1U << 20)
#define RA_RUNS 8 /* runs per read decision (strided access can ask for several) */
#define RA_WAIT_NS (5ULL * 1000000000ULL) /* a reader waits this long for a run, then reads */
#define RA_DELAY_RUNS 64 /* the delay is a low quantile of the last this many runs' */

struct ra_slot {
	struct readahead *ra; /* the mount's set it belongs to */
	struct prefetch_req req;
	struct pool_file *pf;
	struct pool_ticket t;
	struct stream_disk sd; /* the file's disk tier when issued, if sd_on */
	bool sd_on;
	uint64_t first;
	struct ra_slot *next_free;
	void *buf; /* slot_bytes, page-aligned (O_DIRECT fills) */
	int flight; /* its entry in the mount's flights */
};

/* A mount's read-ahead (fs->ra, from readahead_io_start to _stop). */
struct readahead {
	struct ra_slot slots[RA_SLOTS];
	struct ra_slot *free_slots; /* lock */
	pthread_mutex_t lock;
	struct flights flights; /* what is being read: the slots', and READs' own */
	size_t slot_bytes; /* set at start, then read only */
	uint32_t bsize;	   /* set at start, then read only */
	uint64_t cap;	   /* set at start: the largest window SOURCE's delay may ask for */
	uint64_t delay_ns; /* atomic: SOURCE's delay per read, a low quantile (note_delay) */
	/* the engine thread's only: the last RA_DELAY_RUNS delays, a ring (note_delay) */
	uint64_t delays[RA_DELAY_RUNS];
	unsigned int ndelays, next_delay;
};

/*
 * Fold the delay of a run that came back into the mount's estimate: the
 * tenth percentile of the last RA_DELAY_RUNS runs' delays (the least while
 * there are fewer than ten). Waiting in a queue, behind our own reads or
 * for a CPU, only ever adds to a run's time, and a larger window queues
 * more: an average climbs on its own queueing (measured: 5.6 ms on slowfs
 * at 1 ms). A low quantile is SOURCE's own delay, and unlike the least it
 * is not pinned to nothing by the odd read SOURCE's client answered from
 * its cache (seen on GlusterFS). Engine thread only; recomputed every 8th
 * run (a sort of 64 numbers).
 */
static void note_delay(struct readahead *ra, const struct prefetch_req *req, ssize_t res)
{
	uint64_t sorted[RA_DELAY_RUNS];
	unsigned int n;

	ra->delays[ra->next_delay] = tuning_readahead_delay(req->elapsed_ns, (uint64_t)res);
	ra->next_delay = (ra->next_delay + 1) % RA_DELAY_RUNS;
	if (ra->ndelays < RA_DELAY_RUNS)
		ra->ndelays++;
	n = ra->ndelays;
	if (n >= 8 && ra->next_delay % 8)
		return;
	memcpy(sorted, ra->delays, n * sizeof(sorted[0]));
	for (unsigned int i = 1; i < n; i++) { /* insertion sort: 64 at most */
		uint64_t v = sorted[i];
		unsigned int j = i;

		for (; j && sorted[j - 1] > v; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = v;
	}
	__atomic_store_n(&ra->delay_ns, sorted[n / 10], __ATOMIC_RELAXED);
}

static struct ra_slot *slot_get(struct readahead *ra)
{
	struct ra_slot *s;

	pthread_mutex_lock(&ra->lock);
	s = ra->free_slots;
	if (s)
		ra->free_slots = s->next_free;
	pthread_mutex_unlock(&ra->lock);
	if (s && !s->buf && posix_memalign(&s->buf, 4096, ra->slot_bytes)) {
		s->buf = NULL;
		pthread_mutex_lock(&ra->lock);
		s->next_free = ra->free_slots;
		ra->free_slots = s;
		pthread_mutex_unlock(&ra->lock);
		return NULL;
	}
	return s;
}

static void slot_put(struct ra_slot *s)
{
	struct readahead *ra = s->ra;

	if (s->req.fd >= 0)
		close(s->req.fd);
	s->req.fd = -1;
	pool_file_put(s->pf);
	s->pf = NULL;
	flight_end(&ra->flights, s->flight); /* its bytes are in the pool, or never will be */
	pthread_mutex_lock(&ra->lock);
	s->next_free = ra->free_slots;
	ra->free_slots = s;
	pthread_mutex_unlock(&ra->lock);
}

int readahead_reading(struct open_file *of, uint64_t off, size_t len, int held)
{
	struct readahead *ra = of->fs->ra;

	if (!ra || !len)
		return held;
	return flights_take(&ra->flights, of->id.dev, of->id.ino, off / ra->bsize,
			    (off + len - 1) / ra->bsize + 1, held);
}

void readahead_read_done(struct accelfs *fs, int held)
{
	if (fs->ra)
		flights_give(&fs->ra->flights, held);
}

void readahead_wait(struct open_file *of, uint64_t off, size_t len)
{
	struct readahead *ra = of->fs->ra;

	if (ra && len)
		flights_wait(&ra->flights, of->id.dev, of->id.ino, off / ra->bsize,
			     (off + len - 1) / ra->bsize + 1, RA_WAIT_NS);
}

/* On the engine thread: the run came back. */
static void readahead_io_done(struct prefetch_req *req, ssize_t res)
{
	struct ra_slot *s = req->arg;

	if (res > 0)
		note_delay(s->ra, req, res); /* only the engine thread writes it */
	if (res > 0 && s->sd_on)
		stream_disk_keep(&s->sd, s->pf, &s->t, s->first, s->buf, (size_t)res, s->ra->bsize);
	if (res > 0)
		stream_prefetched(s->pf, &s->t, s->first, s->buf, (size_t)res, s->ra->bsize);
	slot_put(s);
}

int readahead_io_start(struct accelfs *fs)
{
	struct pool *pool = fs->pool;
	struct readahead *ra;
	size_t slot_bytes;
	uint32_t bsize;
	int ret;

	if (!pool)
		return 0;
	/* a file's user.accelfs.readahead_max may turn it on where the mount's is 0,
	 * up to 1 MiB or the mount's limit, whichever is larger */
	bsize = pool_bucket_size(pool);
	slot_bytes = fs->opts.readahead_max < RA_SLOT_MIN ? RA_SLOT_MIN : fs->opts.readahead_max;
	slot_bytes = slot_bytes < bsize ? bsize : slot_bytes;
	slot_bytes = (slot_bytes + bsize - 1) / bsize * bsize;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	ret = prefetch_start(RA_SLOTS, fs->opts.backend != BACKEND_SYNC);
	if (ret) {
		free(ra);
		return ret;
	}
	pthread_mutex_init(&ra->lock, NULL);
	ret = flights_init(&ra->flights);
	if (ret) {
		prefetch_stop();
		pthread_mutex_destroy(&ra->lock);
		free(ra);
		return ret;
	}
	ra->bsize = bsize;
	ra->slot_bytes = slot_bytes;
	/* half the slots for one window: the next one goes out at its middle */
	ra->cap = fs->opts.readahead_latency_max < slot_bytes * (RA_SLOTS / 2)
		      ? fs->opts.readahead_latency_max
		      : slot_bytes * (RA_SLOTS / 2);
	for (int i = RA_SLOTS - 1; i >= 0; i--) {
		ra->slots[i].ra = ra;
		ra->slots[i].flight = i;
		ra->slots[i].req.fd = -1;
		ra->slots[i].next_free = ra->free_slots;
		ra->free_slots = &ra->slots[i];
	}
	fs->ra = ra;
	return 0;
}

void readahead_io_stop(struct accelfs *fs)
{
	struct readahead *ra = fs->ra;

	if (!ra)
		return;
	prefetch_stop(); /* every request's done() has run: all slots are free */
	fs->ra = NULL;
	for (int i = 0; i < RA_SLOTS; i++)
		free(ra->slots[i].buf);
	flights_destroy(&ra->flights);
	pthread_mutex_destroy(&ra->lock);
	free(ra);
}

/* Issue one run of at most a slot: its own descriptor and pool handle, a ticket, one read. */
static void issue(struct readahead *ra, struct open_file *of, const struct stream_ra *run)
{
	struct ra_slot *s = slot_get(ra);
	uint64_t len = (uint64_t)run->count * ra->bsize;

	if (!s)
		return; /* everything in flight already: skip, the reader is not waiting */
	s->first = run->first;
	s->sd_on = stream_disk_get(of->stream, &s->sd);
	s->req = (struct prefetch_req){
		.fd = dup(fill_fd_get(of)),
		.off = run->first * ra->bsize,
		.len = (uint32_t)(len < ra->slot_bytes ? len : ra->slot_bytes),
		.buf = s->buf,
		.done = readahead_io_done,
		.arg = s,
	};
	if (s->req.fd < 0 || pool_file_dup(stream_file(of->stream), &s->pf) ||
	    pool_file_ticket_get(s->pf, &s->t) || s->t.busy)
		goto drop;
	flight_start(&ra->flights, s->flight, of->id.dev, of->id.ino, run->first,
		     run->first + (s->req.len + ra->bsize - 1) / ra->bsize);
	if (prefetch_submit(&s->req))
		goto drop;
	return;
drop:
	slot_put(s);
}

/* Is bucket @b of @of's file in flight (a slot's, or a READ's own)? */
static bool bucket_in_flight(struct readahead *ra, const struct open_file *of, uint64_t b)
{
	return flights_cover(&ra->flights, of->id.dev, of->id.ino, b, b + 1);
}

/* Issue @run in pieces of at most a slot, leaving out buckets already in flight. */
static void issue_run(struct readahead *ra, struct open_file *of, const struct stream_ra *run)
{
	uint64_t most = ra->slot_bytes / ra->bsize, b = run->first, end = run->first + run->count;

	while (b < end) {
		uint64_t e;

		while (b < end && bucket_in_flight(ra, of, b))
			b++;
		for (e = b; e < end && e - b < most && !bucket_in_flight(ra, of, e); e++)
			;
		if (e > b)
			issue(ra, of,
			      &(struct stream_ra){ .first = b, .count = (uint32_t)(e - b) });
		b = e;
	}
}

/* The window for a handle whose limit is @base: a slot at most, plus SOURCE's delay. */
static uint64_t readahead_window(const struct readahead *ra, uint64_t base)
{
	if (base > ra->slot_bytes)
		base = ra->slot_bytes;
	return tuning_readahead_window(base, __atomic_load_n(&ra->delay_ns, __ATOMIC_RELAXED),
				       ra->cap);
}

void cache_io_readahead(struct open_file *of, uint64_t off, size_t len)
{
	struct readahead *ra = of->fs->ra;
	struct stream_ra runs[RA_RUNS];
	int n;

	if (!ra || !of->stream || !of->readahead_max)
		return;
	/* windows end at SOURCE's size as last seen: deferred bytes past it are
	 * in the pool already, and there is nothing there to read ahead */
	n = stream_readahead(of->stream, off, len, readahead_window(ra, of->readahead_max),
			     __atomic_load_n(&of->known_size, __ATOMIC_RELAXED), runs, RA_RUNS);
	for (int i = 0; i < n; i++)
		issue_run(ra, of, &runs[i]);
}

uint64_t readahead_delay_ns(const struct accelfs *fs)
{
	return fs->ra ? __atomic_load_n(&fs->ra->delay_ns, __ATOMIC_RELAXED) : 0;
}
