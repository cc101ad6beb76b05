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
 * of time. The window doubles while the pattern holds, up to readahead_max.
 *
 * A fixed set of request slots, each with its own buffer (allocated once,
 * at first use), bounds the memory and the I/O in flight; when none is free
 * the prefetch is simply skipped. A request holds its own descriptor (dup)
 * and its own pool handle, so a file closed meanwhile is no problem, and a
 * coherence ticket taken before the read, so a write in between makes the
 * pool refuse the stale bytes. Where the file has a disk tier (disk_cache=),
 * what a run brought is kept there too, under the same ticket.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "fill_fd.h"
#include "prefetch.h"
#include "stream.h"

#define RA_SLOTS 16
#define RA_SLOT_MIN (1U << 20)
#define RA_RUNS 8 /* runs per read decision (strided access can ask for several) */

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
};

/* A mount's read-ahead (fs->ra, from readahead_io_start to _stop). */
struct readahead {
	struct ra_slot slots[RA_SLOTS];
	struct ra_slot *free_slots; /* lock */
	pthread_mutex_t lock;
	size_t slot_bytes; /* set at start, then read only */
	uint32_t bsize;	   /* set at start, then read only */
};

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
	pthread_mutex_lock(&ra->lock);
	s->next_free = ra->free_slots;
	ra->free_slots = s;
	pthread_mutex_unlock(&ra->lock);
}

/* On the engine thread: the run came back. */
static void readahead_io_done(struct prefetch_req *req, ssize_t res)
{
	struct ra_slot *s = req->arg;

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
	ra->bsize = bsize;
	ra->slot_bytes = slot_bytes;
	for (int i = RA_SLOTS - 1; i >= 0; i--) {
		ra->slots[i].ra = ra;
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
	pthread_mutex_destroy(&ra->lock);
	free(ra);
}

/* Issue one run: its own descriptor and pool handle, a ticket, one read. */
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
	    pool_file_ticket_get(s->pf, &s->t) || s->t.busy || prefetch_submit(&s->req))
		slot_put(s);
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
	n = stream_readahead(of->stream, off, len,
			     of->readahead_max < ra->slot_bytes ? of->readahead_max
								: ra->slot_bytes,
			     __atomic_load_n(&of->known_size, __ATOMIC_RELAXED), runs, RA_RUNS);
	for (int i = 0; i < n; i++)
		issue(ra, of, &runs[i]);
}
