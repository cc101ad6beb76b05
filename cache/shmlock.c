// SPDX-License-Identifier: MIT
/*
 * shmlock.c - bounded waits for locks in shared memory (see shmlock.h).
 * pthread_mutex_clocklock() on CLOCK_MONOTONIC: a wall clock step can neither
 * shorten nor stretch the bound.
 */
#include <errno.h>
#include <time.h>

#include "shmlock.h"

int shm_mutex_lock(pthread_mutex_t *m, int64_t wait_ns)
{
	struct timespec ts;
	int ret = pthread_mutex_trylock(m);

	if (ret != EBUSY)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(wait_ns / 1000000000LL);
	ts.tv_nsec += (long)(wait_ns % 1000000000LL);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	do
		ret = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts);
	while (ret == EINTR);
	return ret;
}
