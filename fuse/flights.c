// SPDX-License-Identifier: MIT
/*
 * flights.c - a mount's reads of SOURCE in flight (see flights.h).
 *
 * An entry is written by its one owner (a slot's issuer, or the READ that
 * took it): dev, ino and first before end, end last with release; a
 * reader loads end with acquire first. An entry reused meanwhile may show
 * a newer flight's fields: still a flight in progress, whose end will
 * broadcast. end goes back to 0 only under the lock, with the broadcast,
 * and a waiter checks and sleeps under it: no end is missed.
 */
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "flights.h"

int flights_init(struct flights *t)
{
	pthread_condattr_t ca;
	int ret;

	*t = (struct flights){ .count = 0 };
	ret = pthread_condattr_init(&ca);
	if (ret)
		return -ret;
	/* the wait's deadline on CLOCK_MONOTONIC: a clock step neither ends nor stretches it */
	ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&t->landed, &ca);
	pthread_condattr_destroy(&ca);
	if (ret)
		return -ret;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void flights_destroy(struct flights *t)
{
	pthread_cond_destroy(&t->landed);
	pthread_mutex_destroy(&t->lock);
}

static void publish(struct flights *t, struct flight *fl, uint64_t dev, uint64_t ino,
		    uint64_t first, uint64_t end)
{
	__atomic_store_n(&fl->dev, dev, __ATOMIC_RELAXED);
	__atomic_store_n(&fl->ino, ino, __ATOMIC_RELAXED);
	__atomic_store_n(&fl->first, first, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->count, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&fl->end, end, __ATOMIC_RELEASE);
}

void flight_start(struct flights *t, int i, uint64_t dev, uint64_t ino, uint64_t first,
		  uint64_t end)
{
	publish(t, &t->f[i], dev, ino, first, end);
}

void flight_end(struct flights *t, int i)
{
	struct flight *fl = &t->f[i];

	pthread_mutex_lock(&t->lock);
	if (__atomic_load_n(&fl->end, __ATOMIC_RELAXED)) {
		__atomic_store_n(&fl->end, 0, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&t->count, 1, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&t->landed);
	}
	pthread_mutex_unlock(&t->lock);
}

int flights_take(struct flights *t, uint64_t dev, uint64_t ino, uint64_t first, uint64_t end,
		 int held)
{
	if (held >= 0) { /* a second run of the same READ: the entry covers both */
		struct flight *fl = &t->f[held];
		uint64_t f0 = __atomic_load_n(&fl->first, __ATOMIC_RELAXED);
		uint64_t e0 = __atomic_load_n(&fl->end, __ATOMIC_RELAXED);

		__atomic_store_n(&fl->first, f0 < first ? f0 : first, __ATOMIC_RELAXED);
		__atomic_store_n(&fl->end, e0 > end ? e0 : end, __ATOMIC_RELEASE);
		return held;
	}
	for (int i = FLIGHTS_FIXED; i < FLIGHTS_FIXED + FLIGHTS_TAKEN; i++) {
		uint32_t free = 0;

		if (__atomic_compare_exchange_n(&t->f[i].taken, &free, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			publish(t, &t->f[i], dev, ino, first, end);
			return i;
		}
	}
	return -1;
}

void flights_give(struct flights *t, int held)
{
	if (held < 0)
		return;
	flight_end(t, held);
	__atomic_store_n(&t->f[held].taken, 0, __ATOMIC_RELEASE);
}

bool flights_cover(struct flights *t, uint64_t dev, uint64_t ino, uint64_t first, uint64_t end)
{
	if (!__atomic_load_n(&t->count, __ATOMIC_RELAXED))
		return false;
	for (int i = 0; i < FLIGHTS_FIXED + FLIGHTS_TAKEN; i++) {
		struct flight *fl = &t->f[i];
		uint64_t e = __atomic_load_n(&fl->end, __ATOMIC_ACQUIRE);

		if (e > first && __atomic_load_n(&fl->first, __ATOMIC_RELAXED) < end &&
		    __atomic_load_n(&fl->ino, __ATOMIC_RELAXED) == ino &&
		    __atomic_load_n(&fl->dev, __ATOMIC_RELAXED) == dev)
			return true;
	}
	return false;
}

void flights_wait(struct flights *t, uint64_t dev, uint64_t ino, uint64_t first, uint64_t end,
		  uint64_t max_ns)
{
	struct timespec until;

	if (!flights_cover(t, dev, ino, first, end))
		return;
	mono_deadline(&until, max_ns);
	pthread_mutex_lock(&t->lock);
	while (flights_cover(t, dev, ino, first, end))
		if (pthread_cond_timedwait(&t->landed, &t->lock, &until) == ETIMEDOUT)
			break; /* a read stuck that long: the caller reads for itself */
	pthread_mutex_unlock(&t->lock);
}
