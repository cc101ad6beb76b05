// SPDX-License-Identifier: MIT
/*
 * shmlock.c - locks in shared memory: their set-up, and bounded waits for
 * them under the one timeout policy (see shmlock.h).
 * pthread_mutex_clocklock() on CLOCK_MONOTONIC: a wall clock step can neither
 * shorten nor stretch the bound.
 *
 * ThreadSanitizer (GCC 12's libtsan) does not intercept
 * pthread_mutex_clocklock(), so a lock taken by that call would be invisible
 * to it and every access under a contended lock reported as a race: under
 * TSan the call is announced with its mutex annotations (the unlock and the
 * trylock are intercepted as usual).
 */
#include <errno.h>
#include <stdbool.h>
#include <time.h>

#include "clock.h"
#include "shmlock.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>

static int clocklock(pthread_mutex_t *m, const struct timespec *ts)
{
	unsigned try = __tsan_mutex_try_lock;
	int ret;

	__tsan_mutex_pre_lock(m, try);
	ret = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, ts);
	if (ret && ret != EOWNERDEAD)
		try |= __tsan_mutex_try_lock_failed;
	__tsan_mutex_post_lock(m, try, 0);
	return ret;
}
#else
static int clocklock(pthread_mutex_t *m, const struct timespec *ts)
{
	return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, ts);
}
#endif

int shm_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t attr;
	int ret = pthread_mutexattr_init(&attr);

	if (ret)
		return -ret;
	ret = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	if (!ret)
		ret = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	if (!ret)
		ret = pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
	return -ret;
}

/* Lock @m, waiting at most @wait_ns; returns as shm_mutex_lock(). */
static int lock_within(pthread_mutex_t *m, int64_t wait_ns)
{
	struct timespec ts;
	int ret = pthread_mutex_trylock(m);

	if (ret != EBUSY)
		return ret;
	mono_deadline(&ts, (uint64_t)wait_ns);
	do
		ret = clocklock(m, &ts);
	while (ret == EINTR);
	return ret;
}

int shm_mutex_lock(pthread_mutex_t *m, uint8_t *suspect)
{
	bool was = __atomic_load_n(suspect, __ATOMIC_RELAXED);
	int ret = lock_within(m, was ? SHM_LOCK_SUSPECT_NS : SHM_LOCK_WAIT_NS);

	if (ret == ETIMEDOUT)
		__atomic_store_n(suspect, 1, __ATOMIC_RELAXED);
	else if (ret == 0 || ret == EOWNERDEAD)
		__atomic_store_n(suspect, 0, __ATOMIC_RELAXED);
	return ret;
}
