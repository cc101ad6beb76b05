/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the clock accelfs measures latencies and deadlines with:
 * CLOCK_MONOTONIC, to the nanosecond, so a wall clock step neither shortens
 * nor stretches them. It lives in the lowest layer, uring/, because every
 * layer above needs it (probe latencies here, lock deadlines in cache/).
 * fuse/'s now_ns() is another clock on purpose: the coarse one, a tick of a
 * few ms, cheap enough for every request's interval checks.
 */
#ifndef ACCELFS_URING_CLOCK_H
#define ACCELFS_URING_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* @ts = @after_ns from now on CLOCK_MONOTONIC: a deadline for the timed waits. */
static inline void mono_deadline(struct timespec *ts, uint64_t after_ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(after_ns / 1000000000ULL);
	ts->tv_nsec += (long)(after_ns % 1000000000ULL);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

#endif
