/* SPDX-License-Identifier: MIT */
/*
 * prefetch.h - asynchronous read engine for read-ahead.
 *
 * The per-worker rings of backend.c submit and wait: right for a FUSE
 * request that needs its data before replying, useless for read-ahead whose
 * whole point is not to wait. This engine is one thread that owns one
 * io_uring ring (only that thread ever touches it, so the ring can be
 * SINGLE_ISSUER) and is fed from any thread through a bounded queue. When
 * io_uring cannot be set up, or is not wanted, the same thread does the reads
 * with pread(2): same contract, no overlap.
 *
 * Guarantees:
 * - prefetch_submit() never blocks and never allocates: the caller owns
 *   @req and its buffer until done() is called for it;
 * - done() is called exactly once for every request prefetch_submit()
 *   accepted, always from the engine thread, with the bytes read as the
 *   kernel returned them (short at end of file; no retry of short reads),
 *   -errno, or -ECANCELED if the engine stopped before the read started.
 *   -EINTR/-EAGAIN are retried, never reported. done() may call
 *   prefetch_submit() but must not call prefetch_stop(), and should be
 *   short: while it runs, no other read of the engine starts or completes;
 * - at most 4 * depth requests are accepted and not yet done; more are
 *   refused with -EAGAIN (the caller drops that prefetch);
 * - buf, off and len are passed to the kernel as they are: for an O_DIRECT
 *   descriptor they must be aligned as its file system requires.
 */
#ifndef ACCELFS_URING_PREFETCH_H
#define ACCELFS_URING_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct prefetch_req {
	int fd;
	uint64_t off;
	uint32_t len;
	void *buf;
	void (*done)(struct prefetch_req *req, ssize_t res);
	void *arg; /* the caller's */
	/* set by the engine before done(), for the caller to read there */
	uint64_t elapsed_ns; /* from the read's start to its completion; 0 if never started */
	/* private to the engine */
	struct prefetch_req *next;
	uint64_t t_ns; /* when the read was started */
};

/* Counters since the last prefetch_start(). */
struct prefetch_stats {
	uint64_t submitted; /* reads started on the backend (SQEs or preads; retries not counted) */
	uint64_t completed; /* done() with res >= 0 */
	uint64_t failed;    /* done() with res < 0 from the backend (not cancellations) */
	uint64_t dropped;   /* refused by prefetch_submit() (-EAGAIN) or cancelled at stop */
	uint64_t batches;   /* io_uring_submit() calls carrying reads; pread mode: queue drains */
};

/*
 * prefetch_start - start the engine thread with at most @depth reads in
 * flight (0 means 64; at most 4096). @use_uring false, or io_uring not
 * usable, means pread in the engine thread. Returns 0, -EBUSY when already
 * running, -EINVAL for a bad depth, or -errno from thread or eventfd creation.
 */
int prefetch_start(unsigned int depth, bool use_uring);

/*
 * prefetch_submit - queue @req (fd, off, len, buf, done and arg set).
 * Returns 0, -EAGAIN when the queue is full or the engine is not running,
 * -EINVAL when @req or its done is NULL. Any thread.
 */
int prefetch_submit(struct prefetch_req *req);

/*
 * prefetch_stop - refuse new requests, call done(req, -ECANCELED) for queued
 * ones not yet started, wait for the reads in flight (their done() gets the
 * real result), join the thread. Safe when not started; call it from one
 * controlling thread, never from done().
 */
void prefetch_stop(void);

/* True while the engine runs on io_uring (false: pread, or not running). */
bool prefetch_uses_uring(void);

void prefetch_stats_get(struct prefetch_stats *st);

#endif
