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
 * pool refuse the stale bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "prefetch.h"
#include "stream.h"

#define RA_SLOTS 16
#define RA_SLOT_MIN (1U << 20)
#define RA_RUNS 8 /* runs per read decision (strided access can ask for several) */

struct ra_slot {
	struct prefetch_req req;
	struct pool_file *pf;
	struct pool_ticket t;
	uint64_t first;
	struct ra_slot *next_free;
	void *buf; /* slot_bytes, page-aligned (O_DIRECT fills) */
};

static struct ra_slot slots[RA_SLOTS];
static struct ra_slot *free_slots;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t slot_bytes;
static uint32_t bsize;
static bool running;

static struct ra_slot *slot_get(void)
{
	struct ra_slot *s;

	pthread_mutex_lock(&slots_lock);
	s = free_slots;
	if (s)
		free_slots = s->next_free;
	pthread_mutex_unlock(&slots_lock);
	if (s && !s->buf && posix_memalign(&s->buf, 4096, slot_bytes)) {
		s->buf = NULL;
		pthread_mutex_lock(&slots_lock);
		s->next_free = free_slots;
		free_slots = s;
		pthread_mutex_unlock(&slots_lock);
		return NULL;
	}
	return s;
}

static void slot_put(struct ra_slot *s)
{
	if (s->req.fd >= 0)
		close(s->req.fd);
	s->req.fd = -1;
	pool_file_put(s->pf);
	s->pf = NULL;
	pthread_mutex_lock(&slots_lock);
	s->next_free = free_slots;
	free_slots = s;
	pthread_mutex_unlock(&slots_lock);
}

/* On the engine thread: the run came back. */
static void readahead_io_done(struct prefetch_req *req, ssize_t res)
{
	struct ra_slot *s = req->arg;

	if (res > 0)
		stream_prefetched(s->pf, &s->t, s->first, s->buf, (size_t)res, bsize);
	slot_put(s);
}

int readahead_io_start(struct accelfs *fs)
{
	struct pool *pool = fs->pool;
	int ret;

	if (!pool)
		return 0;
	/* a file's user.accelfs.readahead_max may turn it on where the mount's is 0,
	 * up to 1 MiB or the mount's limit, whichever is larger */
	bsize = pool_bucket_size(pool);
	slot_bytes = fs->opts.readahead_max < RA_SLOT_MIN ? RA_SLOT_MIN : fs->opts.readahead_max;
	slot_bytes = slot_bytes < bsize ? bsize : slot_bytes;
	slot_bytes = (slot_bytes + bsize - 1) / bsize * bsize;
	ret = prefetch_start(RA_SLOTS, fs->opts.backend != BACKEND_SYNC);
	if (ret)
		return ret;
	for (int i = RA_SLOTS - 1; i >= 0; i--) {
		slots[i].req.fd = -1;
		slots[i].next_free = free_slots;
		free_slots = &slots[i];
	}
	running = true;
	return 0;
}

void readahead_io_stop(void)
{
	if (!running)
		return;
	prefetch_stop(); /* every request's done() has run: all slots are free */
	running = false;
	for (int i = 0; i < RA_SLOTS; i++) {
		free(slots[i].buf);
		slots[i].buf = NULL;
	}
	free_slots = NULL;
}

/* Issue one run: its own descriptor and pool handle, a ticket, one read. */
static void issue(struct open_file *of, const struct stream_ra *run)
{
	struct ra_slot *s = slot_get();
	uint64_t len = (uint64_t)run->count * bsize;

	if (!s)
		return; /* everything in flight already: skip, the reader is not waiting */
	s->first = run->first;
	s->req = (struct prefetch_req){
		.fd = dup(cache_io_fill_fd(of)),
		.off = run->first * bsize,
		.len = (uint32_t)(len < slot_bytes ? len : slot_bytes),
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
	struct stream_ra runs[RA_RUNS];
	int n;

	if (!running || !of->stream || !of->readahead_max)
		return;
	/* windows end at SOURCE's size as last seen: deferred bytes past it are
	 * in the pool already, and there is nothing there to read ahead */
	n = stream_readahead(of->stream, off, len,
			     of->readahead_max < slot_bytes ? of->readahead_max : slot_bytes,
			     __atomic_load_n(&of->known_size, __ATOMIC_RELAXED), runs, RA_RUNS);
	for (int i = 0; i < n; i++)
		issue(of, &runs[i]);
}
