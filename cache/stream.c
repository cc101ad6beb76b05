// SPDX-License-Identifier: MIT
/*
 * stream.c - local -> global -> backend, as RMS does it, for one handle.
 *
 * A read of one bucket: take the file's ticket; look in the local buffers;
 * then in the pool, copying the whole bucket into a local buffer when the
 * stream has any (so the next reads of it stay local); then read the whole
 * bucket from the backend, outside any lock, fill the pool under the ticket
 * and keep a local copy. The stream's mutex guards only its local buffers.
 *
 * If the pool reused the file's slot (-ESTALE) the stream quietly takes a
 * new handle and retries once. The pool reuses a slot only while it holds
 * no dirty buffer (I8), so deferred bytes never go with it; a slot reused
 * under an open handle costs that handle its cached buckets, never a write:
 * when no slot can be had, writes go to the backend unbracketed (the file
 * then has no slot, so no cached copy to keep coherent) and deferral is
 * refused (-EAGAIN: the caller writes through).
 *
 * A pool that cannot be trusted for this file any more goes out of the way:
 * once the pool is broken (SIGBUS, pool_guard_broken) or an invalidation of the
 * file could not be done (a lock wait timed out and the epoch bump was
 * refused), the stream is "off": reads go straight to the backend, its local
 * buffers and the pool are not read again, writes need no bracket.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "local.h"
#include "mrc.h"
#include "readahead.h"
#include "probes.h"
#include "stream.h"
#include "thread_buf.h"

struct stream {
	struct pool *pool;
	struct pool_file *pf; /* lock: replaced on -ESTALE */
	struct local *lc;     /* lock */
	struct ra_state ra;   /* lock: the reader's access pattern (read-ahead) */
	void *mrc;	      /* the pool's miss-ratio curve region, or NULL */
	size_t mrc_size;
	struct pool_file *wpf;	    /* the write bracket's handle, NULL: unbracketed; the
				     * caller serialises a stream's brackets (see stream.h) */
	struct pool_file **retired; /* lock: replaced handles other threads may hold */
	unsigned int nretired;
	pthread_mutex_t lock;
	uint32_t bsize;
	uint32_t quota;
	uint64_t seq_next; /* lock: where a sequential reader's next read starts */
	bool off;	   /* atomic: the cache may be stale for this file: bypass it */
	bool exact;	   /* lock: deferred bytes keep exact ranges (stream_set_exact) */
	bool append;	   /* lock: deferred bytes are appends (stream_set_append) */
	struct pool_file_id id;
	char *path;
	/* The disk tier (stream_set_disk), or NULL; the rest under the lock. */
	struct disk_tier *disk;
	bool disk_on;	       /* dkey and disk_wseq hold */
	struct disk_key dkey;  /* the file's state its entries are named by */
	uint64_t disk_wseq;    /* the slot's wseq when dkey was known true */
	uint64_t w_off, w_len; /* the write between stream_write_begin and _end */
	uint64_t dra_lo, dra_hi; /* lock: buckets [lo, hi) found in the tier, fetch begun */
};

int stream_open(struct pool *pool, const struct pool_file_id *id, const char *path, uint32_t quota,
		unsigned int nlocal, struct stream **out)
{
	struct stream *st = calloc(1, sizeof(*st));
	int ret;

	if (!st)
		return -ENOMEM;
	st->pool = pool;
	st->bsize = pool_bucket_size(pool);
	st->quota = quota;
	st->id = *id;
	st->path = path ? strdup(path) : NULL;
	st->mrc = pool_stats_mrc_region(pool, &st->mrc_size);
	pthread_mutex_init(&st->lock, NULL);
	ret = local_create(st->bsize, nlocal, &st->lc);
	if (!ret)
		ret = pool_file_get(pool, id, path, quota, &st->pf);
	if (ret) {
		st->pf = NULL;
		stream_close(st);
		return ret;
	}
	ACCEL_PROBE4(file_open, id->ino, st->path, quota, nlocal);
	*out = st;
	return 0;
}

void stream_close(struct stream *st)
{
	if (!st)
		return;
	if (st->pf)
		ACCEL_PROBE1(file_close, st->id.ino);
	pool_file_put(st->pf);
	for (unsigned int i = 0; i < st->nretired; i++)
		pool_file_put(st->retired[i]);
	free(st->retired);
	local_destroy(st->lc);
	pthread_mutex_destroy(&st->lock);
	free(st->path);
	free(st);
}

/* Is the cache out of the way for this stream (see the top of the file)? */
static bool bypass(struct stream *st)
{
	return __atomic_load_n(&st->off, __ATOMIC_RELAXED) || pool_guard_broken(st->pool);
}

/* An invalidation failed with @ret: unless the pool is gone anyway, stop using it. */
static int give_up(struct stream *st, int ret)
{
	if (pool_guard_broken(st->pool))
		return 0;
	if (ret < 0 && ret != -ESTALE)
		__atomic_store_n(&st->off, true, __ATOMIC_RELAXED);
	return ret;
}

struct pool_file *stream_file(struct stream *st)
{
	return st->pf;
}

/*
 * Lock held: the tier is usable from now on for the state st->id, if no
 * write is active and the pool holds no deferred bytes of the file: their
 * flush writes SOURCE without moving wseq (the buckets are in the pool,
 * dirty, already), so the state at open would stop being SOURCE's with
 * nothing to tell this stream. A deferral after the ticket moves wseq.
 */
static void disk_arm(struct stream *st)
{
	struct pool_ticket t;

	st->disk_on = false;
	if (!st->disk || !st->pf || pool_file_ticket_get(st->pf, &t) || t.busy ||
	    pool_dirty_count(st->pf))
		return;
	disk_key_of(st->disk, &st->id, &st->dkey);
	st->disk_wseq = t.wseq;
	st->dra_lo = st->dra_hi = 0;
	st->disk_on = true;
}

void stream_set_disk(struct stream *st, struct disk_tier *d)
{
	pthread_mutex_lock(&st->lock);
	st->disk = d;
	disk_arm(st);
	pthread_mutex_unlock(&st->lock);
}

bool stream_disk_get(struct stream *st, struct stream_disk *out)
{
	bool on;

	pthread_mutex_lock(&st->lock);
	on = st->disk_on && !bypass(st);
	if (on)
		*out = (struct stream_disk){ st->disk, st->dkey, st->disk_wseq };
	pthread_mutex_unlock(&st->lock);
	return on;
}

/* Would @len bytes of bucket @b be a whole entry of @sd's state? */
static bool disk_entry_whole(const struct stream_disk *sd, uint64_t b, size_t len, uint32_t bsize)
{
	return len == bsize || (len && b * bsize + len == sd->key.size);
}

void stream_disk_keep(const struct stream_disk *sd, struct pool_file *pf,
		      const struct pool_ticket *t, uint64_t first, const void *data, size_t len,
		      uint32_t bsize)
{
	const uint8_t *p = data;

	if (t->wseq != sd->wseq || !pool_file_ticket_current(pf, t))
		return;
	for (size_t done = 0; done < len; done += bsize, first++) {
		size_t n = len - done < bsize ? len - done : bsize;

		if (!disk_entry_whole(sd, first, n, bsize))
			return;
		disk_tier_put(sd->d, &sd->key, first, p + done, n);
	}
}

/*
 * Lock held: replace a handle whose slot the pool reused. The old one may be
 * in use by a thread reading the backend, so it is kept until close.
 */
static int reopen(struct stream *st)
{
	struct pool_file *pf, **r;
	int ret;

	r = realloc(st->retired, (st->nretired + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	st->retired = r;
	ret = pool_file_get(st->pool, &st->id, st->path, st->quota, &pf);
	if (ret)
		return ret;
	st->retired[st->nretired++] = st->pf;
	st->pf = pf;
	if (st->exact)
		pool_file_set_exact(pf);
	if (st->append)
		pool_file_set_append(pf);
	local_invalidate(st->lc, UINT64_MAX);
	st->disk_on = false; /* another slot, another wseq: until stream_revalidate */
	return 0;
}

void stream_set_exact(struct stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->exact = true;
	pool_file_set_exact(st->pf);
	pthread_mutex_unlock(&st->lock);
}

void stream_set_append(struct stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->append = true;
	pool_file_set_append(st->pf);
	pthread_mutex_unlock(&st->lock);
}

/* Lock held: local buffers, then the pool. Bytes, or -ENOENT on a miss. */
static ssize_t read_cached(struct stream *st, const struct pool_ticket *t, uint64_t bucket,
			   void *buf, size_t off, size_t len, int *level)
{
	ssize_t ret = -ENOENT;
	bool seq;
	void *lb;

	*level = 0;
	if (local_count(st->lc)) {
		pool_stats_count(st->pf, bucket, POOL_C_LOCAL_ATTEMPTS, 1);
		ret = local_read(st->lc, t, bucket, buf, off, len);
		if (ret >= 0) {
			pool_stats_count(st->pf, bucket, POOL_C_LOCAL_HITS, 1);
			return ret;
		}
	}
	*level = 1;
	/*
	 * Copy the whole bucket into a local buffer only for a sequential reader,
	 * whose next reads will hit it; a random reader would pay a bucket-sized
	 * copy for every small read.
	 */
	seq = bucket * st->bsize + off == st->seq_next;
	st->seq_next = bucket * st->bsize + off + len;
	lb = seq ? local_prepare(st->lc) : NULL;
	if (!lb)
		return pool_buf_read(st->pf, bucket, buf, off, len);
	ret = pool_buf_read(st->pf, bucket, lb, 0, st->bsize);
	if (ret < 0)
		return ret;
	local_commit(st->lc, t, bucket, (size_t)ret);
	return local_read(st->lc, t, bucket, buf, off, len);
}

/* Bytes one miss reads at most, its bucket and the request's next ones together. */
#define RUN_BYTES (1U << 20)

/*
 * How many of the @more buckets after @bucket the pool lacks, in a row:
 * the same request needs them next, so the miss reads them with its own.
 */
static uint32_t run_after(struct stream *st, struct pool_file *pf, const struct pool_ticket *t,
			  uint64_t bucket, uint32_t more)
{
	uint32_t n = 0, cap = RUN_BYTES / st->bsize;

	if (t->busy || cap < 2)
		return 0; /* nothing is cached now: one bucket at a time */
	if (more > cap - 1)
		more = cap - 1;
	while (n < more && !pool_buf_has(pf, bucket + 1 + n))
		n++;
	return n;
}

/*
 * The buckets after @bucket that a run read brought (@got bytes from @tmp,
 * @run buckets asked), into the pool as read ahead. A bucket cut short is
 * kept only where the file ends as its size at open says: anywhere else it
 * may be a short read, which would pass for the end of the file.
 */
static void run_fill(struct stream *st, struct pool_file *pf, const struct pool_ticket *t,
		     uint64_t bucket, const uint8_t *tmp, size_t got, uint32_t run)
{
	for (uint32_t i = 1; i <= run; i++) {
		size_t at = (size_t)i * st->bsize, part = got > at ? got - at : 0;

		if (part < st->bsize && (!part || (bucket + i) * st->bsize + part != st->id.size))
			return;
		pool_buf_fill_flags(pf, t, bucket + i, tmp + at,
				    part < st->bsize ? part : st->bsize, true);
	}
}

/*
 * The disk tier's copy of @bucket and of up to @run buckets after it into
 * @tmp, in one read: their length, or -ENOENT. Served only if nothing moved
 * the file since ticket @t, whose wseq is the one the entries' state was
 * known true under (read_bucket checked).
 */
static ssize_t read_disk(struct stream *st, const struct stream_disk *sd, struct pool_file *pf,
			 const struct pool_ticket *t, uint64_t bucket, uint32_t run, uint8_t *tmp)
{
	ssize_t got = disk_tier_read(sd->d, &sd->key, bucket, run + 1, tmp);

	if (got > 0 && !pool_file_ticket_current(pf, t))
		got = -ENOENT;
	ACCEL_PROBE3(disk_lookup, st->id.ino, bucket, got > 0 ? 1 : 0);
	return got;
}

/*
 * A miss: read the whole bucket from the backend, fill pool and local buffer.
 * With it, in the same read, the next buckets of the request that the pool
 * lacks (@more: how many the request still needs after this one): on a
 * network SOURCE each read is a round trip, and a kernel READ of 1 MiB was
 * 16 of them one after the other. Those go into the pool as read ahead
 * (counted issued, then used by the request's next buckets), so the
 * statistics still show one miss. The disk tier, where it keeps the
 * bucket, gives it and as many of the next ones as it keeps in one local
 * read the same way (four system calls a run instead of a bucket).
 */
static ssize_t read_backend(struct stream *st, struct pool_file *pf, const struct pool_ticket *t,
			    uint64_t bucket, void *buf, size_t off, size_t len, uint32_t more,
			    stream_read_fn fn, void *arg, const struct stream_disk *sd)
{
	uint32_t run = run_after(st, pf, t, bucket, more);
	size_t want = (size_t)(run + 1) * st->bsize;
	/* O_DIRECT-aligned */
	uint8_t *tmp = thread_buf_get(THREAD_BUF_BUCKET, want);
	ssize_t got, n = 0;
	void *lb;

	if (!tmp)
		return -ENOMEM;
	if (!sd || (got = read_disk(st, sd, pf, t, bucket, run, tmp)) <= 0) {
		got = fn(arg, tmp, want, bucket * st->bsize);
		if (got < 0)
			goto out;
		pool_stats_count(pf, bucket, POOL_C_BACKEND_READS, 1);
		pool_stats_count(pf, bucket, POOL_C_BACKEND_READ_BYTES, (uint64_t)got);
		if (sd)
			stream_disk_keep(sd, pf, t, bucket, tmp, (size_t)got, st->bsize);
	}
	run_fill(st, pf, t, bucket, tmp, (size_t)got, run); /* from SOURCE or the tier */
	if ((size_t)got > st->bsize)
		got = (ssize_t)st->bsize;
	/* Nothing past the end of the file is worth a buffer (a read at a
	 * bucket-aligned end would otherwise cache an empty one). */
	if (got == 0)
		goto out;
	pool_buf_fill(pf, t, bucket, tmp, (size_t)got);
	pthread_mutex_lock(&st->lock);
	if (!t->busy && pf == st->pf && local_count(st->lc) && (lb = local_prepare(st->lc))) {
		memcpy(lb, tmp, (size_t)got);
		local_commit(st->lc, t, bucket, (size_t)got);
		pool_stats_count(pf, bucket, POOL_C_LBUF_READ_IOS, 1);
	}
	pthread_mutex_unlock(&st->lock);
	if ((size_t)got > off)
		n = (size_t)got - off < len ? (ssize_t)((size_t)got - off) : (ssize_t)len;
	memcpy(buf, tmp + off, (size_t)n);
	got = n;
out:
	return got;
}

/* Read within one bucket; @more: buckets the request needs after it. */
static ssize_t read_bucket(struct stream *st, uint64_t bucket, void *buf, size_t off, size_t len,
			   uint32_t more, stream_read_fn fn, void *arg)
{
	struct pool_file *pf;
	struct pool_ticket t = { 0 };
	struct stream_disk sd, *sdp = NULL;
	int level = 2;
	ssize_t ret;

	if (bypass(st)) { /* whole buckets still: @fn may need aligned reads (O_DIRECT) */
		t.busy = true;
		pthread_mutex_lock(&st->lock);
		pf = st->pf;
		pthread_mutex_unlock(&st->lock);
		return read_backend(st, pf, &t, bucket, buf, off, len, 0, fn, arg, NULL);
	}
	pthread_mutex_lock(&st->lock);
	ret = pool_file_ticket_get(st->pf, &t);
	if (ret == -ESTALE && !(ret = reopen(st)))
		ret = pool_file_ticket_get(st->pf, &t);
	/* the tier's entries hold this state only while nothing moved the file */
	if (!ret && st->disk_on && !t.busy && t.wseq == st->disk_wseq) {
		sd = (struct stream_disk){ st->disk, st->dkey, st->disk_wseq };
		sdp = &sd;
	}
	if (st->mrc && !ret) { /* every reference of the file, whatever level serves it */
		uint32_t slot, gen;

		pool_stats_fslot(st->pf, &slot, &gen);
		if (mrc_access(st->mrc, st->mrc_size, slot, gen, bucket) == -ETIMEDOUT)
			pool_stats_count(st->pf, bucket, POOL_C_LOCK_TIMEOUTS, 1);
	}
	if (!ret)
		ret = read_cached(st, &t, bucket, buf, off, len, &level);
	pf = st->pf;
	pthread_mutex_unlock(&st->lock);
	/* level: 0 local hit, 1 global hit, 2 miss (read from the backend) */
	ACCEL_PROBE5(cache_lookup, st->id.ino, bucket, ret >= 0 ? level : 2, st->path,
		     local_count(st->lc));
	if (ret >= 0)
		return ret;
	if (ret != -ENOENT) {
		t.busy = true; /* the cache is unusable for now: read through, cache nothing */
		sdp = NULL;
	}
	/* pf stays valid until stream_close(), even if reopen() replaces it. */
	return read_backend(st, pf, &t, bucket, buf, off, len, more, fn, arg, sdp);
}

ssize_t stream_read(struct stream *st, void *buf, size_t len, uint64_t off, stream_read_fn fn,
		    void *arg)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		uint64_t bucket = off / st->bsize;
		size_t boff = off % st->bsize;
		size_t n = len - done < st->bsize - boff ? len - done : st->bsize - boff;
		uint64_t last = (off + (len - done) - 1) / st->bsize;
		uint32_t more = last - bucket < UINT32_MAX ? (uint32_t)(last - bucket) : UINT32_MAX;
		ssize_t ret = read_bucket(st, bucket, p + done, boff, n, more, fn, arg);

		if (ret < 0)
			return done ? (ssize_t)done : ret;
		done += (size_t)ret;
		off += (uint64_t)ret;
		if ((size_t)ret < n)
			break; /* end of file */
	}
	return (ssize_t)done;
}

int stream_write_begin(struct stream *st, uint64_t off, size_t len)
{
	uint64_t first = off / st->bsize, last = len ? (off + len - 1) / st->bsize : first;
	int ret, dropped = 0;

	ACCEL_PROBE3(cache_invalidate, st->id.ino, off, (uint64_t)len);
	pthread_mutex_lock(&st->lock);
	for (uint64_t b = first; b <= last && len; b++)
		dropped += local_invalidate(st->lc, b);
	if (dropped)
		pool_stats_count(st->pf, first, POOL_C_LBUF_WRITE_IOS, (uint64_t)dropped);
	ret = pool_buf_write_begin(st->pf, off, len);
	if (ret == -ESTALE && !(ret = reopen(st)))
		ret = pool_buf_write_begin(st->pf, off, len);
	st->wpf = ret ? NULL : st->pf;
	st->w_off = off;
	st->w_len = len;
	pthread_mutex_unlock(&st->lock);
	/* slot taken by another file and none free: write through, unbracketed */
	if (ret == -ESTALE || ret == -ENOSPC)
		return 0;
	/* a broken pool: there is no cached copy left to keep coherent */
	if (ret == -EIO && pool_guard_broken(st->pool))
		return 0;
	ret = give_up(st, ret);
	return ret == -ETIMEDOUT ? -EIO : ret;
}

/*
 * After a write: the tier's copies of the buckets it changed, under the
 * state the stream knew, go (no stream can take that state for SOURCE's
 * any more: the write moved wseq, see stream.h; this closes the window of
 * one opened just before the write and given its pool slot just after).
 */
static void disk_drop_written(struct stream *st)
{
	uint64_t first, last, end;

	pthread_mutex_lock(&st->lock);
	end = st->dkey.size ? (st->dkey.size - 1) / st->bsize : 0;
	first = st->w_off / st->bsize;
	last = st->w_len ? (st->w_off + st->w_len - 1) / st->bsize : end;
	if (st->disk && st->dkey.size && first <= end)
		disk_tier_drop(st->disk, &st->dkey, first, last < end ? last : end);
	st->disk_on = false; /* until stream_revalidate gives the new state */
	pthread_mutex_unlock(&st->lock);
}

int stream_write_end(struct stream *st, uint64_t off, ssize_t res)
{
	struct pool_file *pf = st->wpf;

	if (st->disk)
		disk_drop_written(st);

	if (!pf)
		return 0;
	st->wpf = NULL;
	if (res > 0) {
		pool_stats_count(pf, off / st->bsize, POOL_C_BACKEND_WRITES, 1);
		pool_stats_count(pf, off / st->bsize, POOL_C_BACKEND_WRITE_BYTES, (uint64_t)res);
	}
	return pool_buf_write_end(pf);
}

int stream_truncate(struct stream *st, uint64_t size)
{
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	local_invalidate(st->lc, UINT64_MAX);
	if (st->wpf)
		ret = pool_buf_truncate(st->wpf, size);
	pthread_mutex_unlock(&st->lock);
	return give_up(st, ret);
}

int stream_revalidate(struct stream *st, const struct pool_file_id *id)
{
	int ret;

	pthread_mutex_lock(&st->lock);
	st->id = *id;
	ret = pool_file_revalidate(st->pf, id);
	disk_arm(st);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int stream_invalidate(struct stream *st)
{
	int ret;

	pthread_mutex_lock(&st->lock);
	local_invalidate(st->lc, UINT64_MAX);
	st->disk_on = false; /* SOURCE changed behind us: the state at open is gone */
	ret = pool_file_invalidate(st->pf);
	pthread_mutex_unlock(&st->lock);
	return ret == -EBUSY ? ret : give_up(st, ret); /* -EBUSY: dirty, kept (I8) */
}

/* Defer the bytes of one bucket: patch the cached copy, or read it first. */
static ssize_t defer_bucket(struct stream *st, struct pool_file *pf, uint64_t bucket,
			    const uint8_t *data, size_t boff, size_t n, stream_read_fn fn,
			    void *arg, uint32_t owner, bool *foreign)
{
	struct pool_ticket t;
	uint8_t *base = NULL;
	ssize_t got = 0;
	int ret = pool_dirty_defer(pf, bucket, boff, data, n, NULL, 0, 0, owner);

	for (int tries = 0; ret == 0 || (ret == -EAGAIN && tries < 4); tries++) {
		if (!base && !(base = thread_buf_get(THREAD_BUF_BUCKET, st->bsize)))
			return -ENOMEM;
		ret = pool_file_ticket_get(pf, &t);
		if (ret)
			break;
		got = fn(arg, base, st->bsize, bucket * st->bsize);
		if (got < 0) {
			ret = (int)got;
			break;
		}
		pool_stats_count(pf, bucket, POOL_C_BACKEND_READS, 1);
		pool_stats_count(pf, bucket, POOL_C_BACKEND_READ_BYTES, (uint64_t)got);
		ret = pool_dirty_defer(pf, bucket, boff, data, n, base, (size_t)got, t.wseq, owner);
	}
	if (ret == 2)
		*foreign = true;
	return ret > 0 ? (ssize_t)n : ret == -EAGAIN ? -EAGAIN : ret;
}

ssize_t stream_write_defer(struct stream *st, const void *buf, size_t len, uint64_t off,
			   stream_read_fn fn, void *arg, uint32_t owner, bool *foreign)
{
	uint64_t first = off / st->bsize, last = len ? (off + len - 1) / st->bsize : first;
	const uint8_t *p = buf;
	struct pool_file *pf;
	size_t done = 0;
	ssize_t ret = 0;

	*foreign = false;
	if (!len)
		return 0;
	if (bypass(st))
		return -EAGAIN; /* write through */
	pthread_mutex_lock(&st->lock);
	for (uint64_t b = first; b <= last; b++)
		local_invalidate(st->lc, b);
	ret = pool_buf_write_begin_mode(st->pf, off, len, true);
	if (ret == -ESTALE && !(ret = reopen(st)))
		ret = pool_buf_write_begin_mode(st->pf, off, len, true);
	pf = st->pf;
	pthread_mutex_unlock(&st->lock);
	/* no slot for the file (-ENOSPC from reopen): the caller writes through */
	if (ret)
		return ret == -ESTALE || ret == -ENOSPC ? -EAGAIN : ret;
	while (done < len && ret >= 0) {
		uint64_t bucket = (off + done) / st->bsize;
		size_t boff = (off + done) % st->bsize;
		size_t n = len - done < st->bsize - boff ? len - done : st->bsize - boff;

		ret = defer_bucket(st, pf, bucket, p + done, boff, n, fn, arg, owner, foreign);
		if (ret >= 0)
			done += n;
	}
	pool_buf_write_end(pf);
	if (ret == -ENOSPC || ret == -ESTALE || ret == -ETIMEDOUT || ret == -EIO || ret == -EXDEV)
		ret = -EAGAIN; /* write through (after a flush of what is deferred) */
	if (ret < 0)
		return ret;
	pool_stats_count(pf, first, POOL_C_DEFERRED_WRITES, 1);
	return (ssize_t)len;
}

#define FLUSH_BATCH 64 /* buckets per flush batch, at most */

/* Write one run of dirty bytes (@n buckets of @run, @len bytes at @start) with one call. */
static int flush_run(struct stream *st, struct pool_file *pf, const struct pool_dirty *run, int n,
		     const uint8_t *p, uint64_t start, size_t len, uint32_t owner,
		     stream_write_fn fn, void *arg)
{
	ssize_t w = fn(arg, p, len, start);

	ACCEL_PROBE4(deferred_flush, st->id.ino, start, (uint64_t)len, (int64_t)w);
	if (w < 0 || (size_t)w != len) {
		pool_stats_count(pf, run[0].bucket, POOL_C_FLUSH_ERRORS, 1);
		return w < 0 ? (int)w : -EIO;
	}
	pool_stats_count(pf, run[0].bucket, POOL_C_FLUSH_WRITES, 1);
	pool_stats_count(pf, run[0].bucket, POOL_C_BACKEND_WRITES, 1);
	pool_stats_count(pf, run[0].bucket, POOL_C_BACKEND_WRITE_BYTES, (uint64_t)len);
	for (int i = 0; i < n; i++)
		pool_dirty_clean(pf, &run[i], owner);
	return 0;
}

/*
 * One batch: bucket i's dirty bytes are copied to slot i of @buf at their
 * offset in the bucket, so a run of buckets whose dirty bytes touch (one
 * ends its bucket, the next starts at 0) is contiguous in @buf too and goes
 * to SOURCE as one write.
 */
static int flush_batch(struct stream *st, struct pool_file *pf, struct pool_dirty *list, int n,
		       uint8_t *buf, uint32_t owner, stream_write_fn fn, void *arg)
{
	int err = 0, run = -1;

	for (int i = 0; i < n; i++)
		if (pool_dirty_copy(pf, &list[i], owner, buf + (size_t)i * st->bsize) <= 0)
			list[i].hi = list[i].lo = 0; /* cleaned meanwhile: skip */
	for (int i = 0; i <= n && !err; i++) {
		bool joins = run >= 0 && i < n && list[i].hi > list[i].lo &&
			     list[i].bucket == list[i - 1].bucket + 1 &&
			     list[i - 1].hi == st->bsize && list[i].lo == 0;

		if (run >= 0 && !joins) {
			uint8_t *p = buf + (size_t)run * st->bsize + list[run].lo;
			size_t len =
			    (size_t)(i - 1 - run) * st->bsize + list[i - 1].hi - list[run].lo;

			err = flush_run(st, pf, &list[run], i - run, p,
					list[run].bucket * st->bsize + list[run].lo, len, owner, fn,
					arg);
			run = -1;
		}
		if (run < 0 && i < n && list[i].hi > list[i].lo)
			run = i;
	}
	return err;
}

int stream_flush(struct stream *st, uint32_t owner, uint64_t before_ns, stream_write_fn fn,
		 void *arg)
{
	return stream_flush_below(st, owner, before_ns, UINT64_MAX, fn, arg);
}

int stream_flush_below(struct stream *st, uint32_t owner, uint64_t before_ns, uint64_t limit,
		       stream_write_fn fn, void *arg)
{
	struct pool_dirty list[FLUSH_BATCH];
	int batch = STREAM_FLUSH_BYTES / st->bsize, n = 0, err = 0;
	struct pool_file *pf;
	uint8_t *buf;

	batch = batch < 1 ? 1 : batch > FLUSH_BATCH ? FLUSH_BATCH : batch;
	pthread_mutex_lock(&st->lock);
	pf = st->pf;
	if (pool_guard_broken(st->pool)) { /* our deferred bytes went with the segment */
		pthread_mutex_unlock(&st->lock);
		return pool_dirty_lost(pf, true) ? -EIO : 0;
	}
	pthread_mutex_unlock(&st->lock);
	if (!(buf = thread_buf_get(THREAD_BUF_FLUSH, (size_t)batch * st->bsize)))
		return -ENOMEM;
	/* Flushes of one stream are serialised by the caller (one flusher per file). */
	/* Until nothing is left, or a batch fails (its buckets stay dirty for next
	 * time); a bucket rewritten while on its way is written again, a few times
	 * at most. */
	for (int round = 0; !err && round < 16; round++) {
		int kept = 0;

		n = pool_dirty_list(pf, owner, before_ns, list, batch);
		for (int i = 0; i < n; i++)
			if (list[i].bucket < limit)
				list[kept++] = list[i];
		if (n > 0)
			n = kept;
		if (n <= 0)
			break;
		err = flush_batch(st, pf, list, n, buf, owner, fn, arg);
	}
	if (!err && n < 0)
		err = n;
	return err == -ETIMEDOUT ? -EIO : err; /* a stuck pool lock: kept dirty, retried */
}

uint32_t stream_dirty(struct stream *st)
{
	struct pool_file *pf;
	uint32_t n;

	pthread_mutex_lock(&st->lock);
	pf = st->pf;
	pthread_mutex_unlock(&st->lock);
	n = pool_dirty_count(pf); /* may be what meets the SIGBUS: look after it */
	if (pool_guard_broken(st->pool))
		return pool_dirty_lost(pf, false); /* to be reported by the next flush */
	return n;
}

int stream_grown(struct stream *st, uint64_t off, uint64_t size)
{
	uint64_t bucket = off / st->bsize, start = bucket * st->bsize;
	struct pool_file *pf;

	pthread_mutex_lock(&st->lock);
	local_invalidate(st->lc, bucket);
	pf = st->pf;
	pthread_mutex_unlock(&st->lock);
	return size > start ? give_up(st, pool_dirty_bucket_grown(pf, bucket, size - start)) : 0;
}

/*
 * Lock held: the reader's next read of bucket @b will be a disk tier hit,
 * not worth a read ahead from SOURCE; the kernel is asked to read the
 * entry ahead instead. The run of buckets already found is remembered, so
 * a window that moves on asks for each entry once.
 */
static bool on_disk(struct stream *st, uint64_t b)
{
	if (!st->disk_on)
		return false;
	if (b >= st->dra_lo && b < st->dra_hi)
		return true;
	if (!disk_tier_prefetch(st->disk, &st->dkey, b))
		return false;
	if (b != st->dra_hi)
		st->dra_lo = b;
	st->dra_hi = b + 1;
	return true;
}

int stream_readahead(struct stream *st, uint64_t off, size_t len, uint64_t max_bytes, uint64_t size,
		     struct stream_ra *out, int max)
{
	uint32_t max_buckets =
	    (uint32_t)(max_bytes / st->bsize < UINT32_MAX ? max_bytes / st->bsize : UINT32_MAX);
	uint64_t last = size ? (size - 1) / st->bsize : 0;
	struct ra_window w;
	struct pool_file *pf;
	int n = 0;
	bool more;

	if (!size || bypass(st))
		return 0;
	pthread_mutex_lock(&st->lock);
	pf = st->pf;
	for (more = ra_on_read(&st->ra, off, len, st->bsize, max_buckets, &w); more && n < max;
	     more = ra_next(&st->ra, &w)) {
		uint64_t b = w.first, end = w.first + w.count;

		if (end > last + 1)
			end = last + 1;
		/* one read per run of buckets the pool does not have yet */
		while (b < end && n < max) {
			uint64_t e;

			while (b < end && (pool_buf_has(pf, b) || on_disk(st, b)))
				b++;
			for (e = b; e < end && !pool_buf_has(pf, e) && !on_disk(st, e); e++)
				;
			if (e > b) {
				out[n++] =
				    (struct stream_ra){ .first = b, .count = (uint32_t)(e - b) };
				ACCEL_PROBE3(readahead_plan, st->id.ino, b, e - b);
			}
			b = e;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

int stream_prefetched(struct pool_file *pf, const struct pool_ticket *t, uint64_t first,
		      const void *data, size_t len, uint32_t bsize)
{
	const uint8_t *p = data;
	int filled = 0;

	pool_stats_count(pf, first, POOL_C_BACKEND_READS, 1); /* one backend read for the run */
	pool_stats_count(pf, first, POOL_C_BACKEND_READ_BYTES, len);

	for (size_t done = 0; done < len; done += bsize, first++) {
		size_t n = len - done < bsize ? len - done : bsize;

		if (pool_buf_fill_flags(pf, t, first, p + done, n, true) == 1)
			filled++;
	}
	return filled;
}
