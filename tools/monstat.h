/* SPDX-License-Identifier: MIT */
/*
 * monstat.h - the arithmetic of the cache statistics display (OpenVMS
 * MONITOR RMS/ITEM=CAC), in one pure module so that `accel stat`, `accel
 * monitor` and any later script compute every figure the same way.
 *
 * Feed monstat_feed() successive snapshots of a file's (or the pool's)
 * counters, each with the time it was taken; read back one row per item:
 *
 *   CUR  the last interval: a rate is (events in the interval) / seconds;
 *        a hit percent is 100 * hits / attempts in the interval, 0.00 when
 *        the interval had no attempts (as MONITOR shows it).
 *   AVE  since the first snapshot: a rate is (events since) / (seconds
 *        since); a hit percent is 100 * total hits / total attempts since
 *        the first snapshot, not an average of the interval percentages.
 *   MIN, MAX  the extremes of CUR over the intervals so far.
 *
 * An attempt rate counts hits plus misses per second. Before the second
 * snapshot every value is 0. A counter that went backwards (the pool or the
 * file slot was recreated) restarts the statistics from that snapshot.
 */
#ifndef ACCELFS_TOOLS_MONSTAT_H
#define ACCELFS_TOOLS_MONSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "pool_layout.h"

/* The display's rows, in MONITOR's order. */
enum monstat_row {
	MONSTAT_LOCAL_HIT_PCT,
	MONSTAT_LOCAL_ATTEMPT_RATE,
	MONSTAT_GLOBAL_HIT_PCT,
	MONSTAT_GLOBAL_ATTEMPT_RATE,
	MONSTAT_GBUF_READ_RATE,
	MONSTAT_GBUF_WRITE_RATE,
	MONSTAT_LBUF_READ_RATE,
	MONSTAT_LBUF_WRITE_RATE,
	MONSTAT_NROWS,
};

struct monstat_val {
	double cur, ave, min, max;
};

/* Allocate it anywhere; touch it only through the functions below. */
struct monstat {
	unsigned int samples;	/* snapshots taken since the (re)start */
	unsigned int intervals; /* samples - 1, once there are any */
	double t0, tprev;
	uint64_t c0[POOL_C_FILE_MAX], cprev[POOL_C_FILE_MAX];
	struct monstat_val row[MONSTAT_NROWS];
};

/* Start (or restart) with no snapshot. */
void monstat_init(struct monstat *m);

/*
 * monstat_feed - add the snapshot @c (indexed by enum pool_counter) taken at
 * @t seconds (any monotonic clock). Returns 1 when it closed an interval and
 * the rows changed, 0 when it was the first snapshot, a restart (a counter
 * went backwards) or not later than the previous one (ignored).
 */
int monstat_feed(struct monstat *m, double t, const uint64_t c[POOL_C_FILE_MAX]);

/* The values of row @r (all 0 before the second snapshot). */
struct monstat_val monstat_get(const struct monstat *m, enum monstat_row r);

/* Intervals measured since the (re)start. */
unsigned int monstat_intervals(const struct monstat *m);

/* "Local Cache Hit Percent", ... as MONITOR labels the row. */
const char *monstat_label(enum monstat_row r);

/* True for the rows that are percentages rather than rates. */
bool monstat_is_pct(enum monstat_row r);

/* 100 * hits / attempts, or 0 when there were no attempts. */
double monstat_pct(uint64_t hits, uint64_t attempts);

/* (now - before) / seconds; 0 when @seconds <= 0 or the counter went back. */
double monstat_rate(uint64_t now, uint64_t before, double seconds);

/*
 * Reads and writes of a file, in buckets: every read is served by exactly
 * one of a local buffer, a global buffer or the backend, so reads = local
 * hits + global hits + backend reads; writes = backend writes.
 */
uint64_t monstat_reads(const uint64_t c[POOL_C_FILE_MAX]);
uint64_t monstat_writes(const uint64_t c[POOL_C_FILE_MAX]);

/* 100 * reads / (reads + writes); -1 when the file had no I/O at all. */
double monstat_read_share(const uint64_t c[POOL_C_FILE_MAX]);

/* A file whose I/O is at least this many percent reads gains from global buffers. */
#define MONSTAT_CANDIDATE_PCT 75.0

/* Read share >= MONSTAT_CANDIDATE_PCT (a file with no I/O is no candidate). */
bool monstat_candidate(const uint64_t c[POOL_C_FILE_MAX]);

#endif
