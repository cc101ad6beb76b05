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

#endif
