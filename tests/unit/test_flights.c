// SPDX-License-Identifier: MIT
/*
 * test_flights.c - a mount's reads in flight (fuse/flights.c): what covers
 * what, READs' entries taken and given back (and none when all are taken),
 * a second run of a READ widening its entry, a waiter woken by the end of
 * the flight it waits for, and a wait for a flight that never ends bounded.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "cunit_main.h"
#include "flights.h"

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_cover(void)
{
	struct flights t;

	CU_ASSERT_EQUAL_FATAL(flights_init(&t), 0);
	CU_ASSERT_FALSE(flights_cover(&t, 1, 2, 0, 100));
	flight_start(&t, 3, 1, 2, 10, 20); /* buckets 10..19 of (1, 2) */
	CU_ASSERT_TRUE(flights_cover(&t, 1, 2, 19, 30));
	CU_ASSERT_TRUE(flights_cover(&t, 1, 2, 0, 11));
	CU_ASSERT_FALSE(flights_cover(&t, 1, 2, 20, 30)); /* end is exclusive */
	CU_ASSERT_FALSE(flights_cover(&t, 1, 2, 0, 10));
	CU_ASSERT_FALSE(flights_cover(&t, 1, 3, 10, 20)); /* another file */
	CU_ASSERT_FALSE(flights_cover(&t, 9, 2, 10, 20)); /* another device */
	flight_end(&t, 3);
	CU_ASSERT_FALSE(flights_cover(&t, 1, 2, 10, 20));
	flight_end(&t, 3); /* twice: nothing */
	CU_ASSERT_EQUAL(t.count, 0);
	flights_destroy(&t);
}

static void test_take(void)
{
	struct flights t;
	int held[FLIGHTS_TAKEN], h;

	CU_ASSERT_EQUAL_FATAL(flights_init(&t), 0);
	for (int i = 0; i < FLIGHTS_TAKEN; i++) {
		held[i] = flights_take(&t, 1, 2, (uint64_t)i * 10, (uint64_t)i * 10 + 1, -1);
		CU_ASSERT(held[i] >= FLIGHTS_FIXED); /* never one of the owner's */
	}
	CU_ASSERT_EQUAL(flights_take(&t, 1, 2, 5000, 5001, -1), -1); /* all taken */
	flights_give(&t, held[7]);
	CU_ASSERT_FALSE(flights_cover(&t, 1, 2, 70, 71));
	h = flights_take(&t, 1, 2, 100, 104, -1);
	CU_ASSERT_EQUAL(h, held[7]);
	/* a second run of the same READ widens its entry */
	CU_ASSERT_EQUAL(flights_take(&t, 1, 2, 110, 112, h), h);
	CU_ASSERT_TRUE(flights_cover(&t, 1, 2, 106, 107));
	for (int i = 0; i < FLIGHTS_TAKEN; i++)
		flights_give(&t, held[i]);
	flights_give(&t, -1); /* nothing */
	CU_ASSERT_EQUAL(t.count, 0);
	flights_destroy(&t);
}

struct ender {
	struct flights *t;
	int i;
};

static void *end_later(void *arg)
{
	struct ender *e = arg;

	usleep(100 * 1000);
	flight_end(e->t, e->i);
	return NULL;
}

static void test_wait(void)
{
	struct flights t;
	struct ender e = { &t, 0 };
	pthread_t th;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(flights_init(&t), 0);
	/* nothing in flight there: no wait */
	t0 = ms_now();
	flights_wait(&t, 1, 2, 0, 10, 5000000000ULL);
	CU_ASSERT(ms_now() - t0 < 1000);
	/* woken by the flight's end, long before the bound */
	flight_start(&t, 0, 1, 2, 0, 16);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, end_later, &e), 0);
	t0 = ms_now();
	flights_wait(&t, 1, 2, 4, 5, 30000000000ULL);
	CU_ASSERT(ms_now() - t0 >= 90);
	CU_ASSERT(ms_now() - t0 < 20000);
	CU_ASSERT_FALSE(flights_cover(&t, 1, 2, 0, 16));
	pthread_join(th, NULL);
	/* a flight that never ends: the wait gives up after its bound */
	flight_start(&t, 1, 1, 2, 0, 16);
	t0 = ms_now();
	flights_wait(&t, 1, 2, 0, 1, 200000000ULL);
	CU_ASSERT(ms_now() - t0 >= 190);
	CU_ASSERT(flights_cover(&t, 1, 2, 0, 1));
	flight_end(&t, 1);
	flights_destroy(&t);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("flights", NULL, NULL);
	CU_add_test(s, "what covers what", test_cover);
	CU_add_test(s, "entries taken and given", test_take);
	CU_add_test(s, "waits end with the flight, or at their bound", test_wait);
	return cunit_run();
}
