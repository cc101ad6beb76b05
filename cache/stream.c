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
 * new handle and retries once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "local.h"
#include "probes.h"
#include "stream.h"

struct stream {
	struct pool *pool;
	struct pool_file *pf;	    /* lock: replaced on -ESTALE */
	struct local *lc;	    /* lock */
	void *spare;		    /* lock: one bucket of scratch kept for reuse */
	struct pool_file **retired; /* lock: replaced handles other threads may hold */
	unsigned int nretired;
	pthread_mutex_t lock;
	uint32_t bsize;
	uint32_t quota;
	uint64_t seq_next; /* lock: where a sequential reader's next read starts */
	struct pool_file_id id;
	char *path;
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
	free(st->spare);
	free(st->path);
	free(st);
}

struct pool_file *stream_file(struct stream *st)
{
	return st->pf;
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
	local_invalidate(st->lc, UINT64_MAX);
	return 0;
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
		pool_count(st->pf, bucket, POOL_C_LOCAL_ATTEMPTS, 1);
		ret = local_read(st->lc, t, bucket, buf, off, len);
		if (ret >= 0) {
			pool_count(st->pf, bucket, POOL_C_LOCAL_HITS, 1);
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
		return pool_read(st->pf, bucket, buf, off, len);
	ret = pool_read(st->pf, bucket, lb, 0, st->bsize);
	if (ret < 0)
		return ret;
	local_commit(st->lc, t, bucket, (size_t)ret);
	return local_read(st->lc, t, bucket, buf, off, len);
}

static void *scratch_get(struct stream *st)
{
	void *p;

	pthread_mutex_lock(&st->lock);
	p = st->spare;
	st->spare = NULL;
	pthread_mutex_unlock(&st->lock);
	/* page-aligned, so a caller may read into it with O_DIRECT */
	if (!p && posix_memalign(&p, 4096, st->bsize))
		p = NULL;
	return p;
}

static void scratch_put(struct stream *st, void *p)
{
	pthread_mutex_lock(&st->lock);
	if (!st->spare) {
		st->spare = p;
		p = NULL;
	}
	pthread_mutex_unlock(&st->lock);
	free(p);
}

/* A miss: read the whole bucket from the backend, fill pool and local buffer. */
static ssize_t read_backend(struct stream *st, struct pool_file *pf, const struct pool_ticket *t,
			    uint64_t bucket, void *buf, size_t off, size_t len, stream_read_fn fn,
			    void *arg)
{
	uint8_t *tmp = scratch_get(st);
	ssize_t got, n = 0;
	void *lb;

	if (!tmp)
		return -ENOMEM;
	got = fn(arg, tmp, st->bsize, bucket * st->bsize);
	if (got < 0)
		goto out;
	pool_count(pf, bucket, POOL_C_BACKEND_READS, 1);
	pool_count(pf, bucket, POOL_C_BACKEND_READ_BYTES, (uint64_t)got);
	/* Nothing past the end of the file is worth a buffer (a read at a
	 * bucket-aligned end would otherwise cache an empty one). */
	if (got == 0)
		goto out;
	pool_fill(pf, t, bucket, tmp, (size_t)got);
	pthread_mutex_lock(&st->lock);
	if (!t->busy && pf == st->pf && local_count(st->lc) && (lb = local_prepare(st->lc))) {
		memcpy(lb, tmp, (size_t)got);
		local_commit(st->lc, t, bucket, (size_t)got);
		pool_count(pf, bucket, POOL_C_LBUF_READ_IOS, 1);
	}
	pthread_mutex_unlock(&st->lock);
	if ((size_t)got > off)
		n = (size_t)got - off < len ? (ssize_t)((size_t)got - off) : (ssize_t)len;
	memcpy(buf, tmp + off, (size_t)n);
	got = n;
out:
	scratch_put(st, tmp);
	return got;
}

/* Read within one bucket. */
static ssize_t read_bucket(struct stream *st, uint64_t bucket, void *buf, size_t off, size_t len,
			   stream_read_fn fn, void *arg)
{
	struct pool_file *pf;
	struct pool_ticket t = { 0 };
	int level = 2;
	ssize_t ret;

	pthread_mutex_lock(&st->lock);
	ret = pool_ticket_get(st->pf, &t);
	if (ret == -ESTALE && !(ret = reopen(st)))
		ret = pool_ticket_get(st->pf, &t);
	if (!ret)
		ret = read_cached(st, &t, bucket, buf, off, len, &level);
	pf = st->pf;
	pthread_mutex_unlock(&st->lock);
	/* level: 0 local hit, 1 global hit, 2 miss (read from the backend) */
	ACCEL_PROBE5(cache_lookup, st->id.ino, bucket, ret >= 0 ? level : 2, st->path,
		     local_count(st->lc));
	if (ret >= 0)
		return ret;
	if (ret != -ENOENT)
		t.busy = true; /* the cache is unusable for now: read through, cache nothing */
	/* pf stays valid until stream_close(), even if reopen() replaces it. */
	return read_backend(st, pf, &t, bucket, buf, off, len, fn, arg);
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
		ssize_t ret = read_bucket(st, bucket, p + done, boff, n, fn, arg);

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
		pool_count(st->pf, first, POOL_C_LBUF_WRITE_IOS, (uint64_t)dropped);
	ret = pool_write_begin(st->pf, off, len);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int stream_write_end(struct stream *st, uint64_t off, ssize_t res)
{
	struct pool_file *pf;

	pthread_mutex_lock(&st->lock);
	pf = st->pf;
	if (res > 0) {
		pool_count(pf, off / st->bsize, POOL_C_BACKEND_WRITES, 1);
		pool_count(pf, off / st->bsize, POOL_C_BACKEND_WRITE_BYTES, (uint64_t)res);
	}
	pthread_mutex_unlock(&st->lock);
	return pool_write_end(pf);
}

int stream_truncate(struct stream *st, uint64_t size)
{
	int ret;

	pthread_mutex_lock(&st->lock);
	local_invalidate(st->lc, UINT64_MAX);
	ret = pool_truncate(st->pf, size);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int stream_revalidate(struct stream *st, const struct pool_file_id *id)
{
	int ret;

	pthread_mutex_lock(&st->lock);
	st->id = *id;
	ret = pool_file_revalidate(st->pf, id);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int stream_invalidate(struct stream *st)
{
	int ret;

	pthread_mutex_lock(&st->lock);
	local_invalidate(st->lc, UINT64_MAX);
	ret = pool_invalidate_file(st->pf);
	pthread_mutex_unlock(&st->lock);
	return ret;
}
