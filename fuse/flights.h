/* SPDX-License-Identifier: MIT */
/*
 * flights.h - a mount's reads of SOURCE in flight, by buckets of a file:
 * so that a READ reaching buckets another read is already fetching waits
 * for it instead of reading SOURCE a second time, and read-ahead leaves
 * them out of its next window (fuse/readahead_io.c).
 *
 * The table has FLIGHTS_FIXED entries its owner ties to its own readers
 * (read-ahead's request slots: entry i is slot i's) and FLIGHTS_TAKEN more
 * that READs take for the time of their own reading (flights_take; when
 * all are taken a read simply goes unpublished). Entries are atomics:
 * flights_cover looks without a lock. The lock (a leaf) is taken to end a
 * flight and to wait for one, so a waiter that saw a flight misses no end.
 */
#ifndef ACCELFS_FUSE_FLIGHTS_H
#define ACCELFS_FUSE_FLIGHTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define FLIGHTS_FIXED 16 /* the owner's entries: 0 .. FLIGHTS_FIXED - 1 */
#define FLIGHTS_TAKEN 64 /* READs publishing their own reading at once */

/* Buckets [first, end) of file (dev, ino) being read; atomics, end 0: none. */
struct flight {
	uint64_t dev, ino, first, end;
	uint32_t taken; /* a FLIGHTS_TAKEN entry in use */
};

struct flights {
	pthread_mutex_t lock;
	pthread_cond_t landed; /* a flight ended (broadcast under lock) */
	unsigned int count;    /* atomic: entries with end set */
	struct flight f[FLIGHTS_FIXED + FLIGHTS_TAKEN];
};

/* Returns 0 or -errno (the condition variable). */
int flights_init(struct flights *t);
void flights_destroy(struct flights *t);

/* Fixed entry @i (< FLIGHTS_FIXED) reads [@first, @end) of (@dev, @ino) from now on. */
void flight_start(struct flights *t, int i, uint64_t dev, uint64_t ino, uint64_t first,
		  uint64_t end);
/* Entry @i's bytes are where readers look now, or never will be: waiters look again. */
void flight_end(struct flights *t, int i);

/*
 * A READ reads [@first, @end) of (@dev, @ino) itself. @held: what its previous
 * call returned (-1 at first; the entry then grows to cover both). Returns the
 * entry for flights_give, or -1 (none free: not published).
 */
int flights_take(struct flights *t, uint64_t dev, uint64_t ino, uint64_t first, uint64_t end,
		 int held);
/* The READ's reading is over (its bytes in the pool); @held < 0: nothing. */
void flights_give(struct flights *t, int held);

/* Is a bucket of [@first, @end) of (@dev, @ino) in flight? No lock. */
bool flights_cover(struct flights *t, uint64_t dev, uint64_t ino, uint64_t first, uint64_t end);

/* Wait until no bucket of [@first, @end) of (@dev, @ino) is in flight, at most @max_ns. */
void flights_wait(struct flights *t, uint64_t dev, uint64_t ino, uint64_t first, uint64_t end,
		  uint64_t max_ns);

#endif
