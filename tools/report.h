/* SPDX-License-Identifier: MIT */
/*
 * report.h - the arithmetic behind `accel report`'s suggestions, pure so it
 * is unit-tested without a pool (tests/tools/test_report.c).
 *
 * Like z/OS LE's RPTSTG, which prints what a run used and a suggested
 * initial size, the report turns measurements into settings:
 *  - the knee of a file's miss-ratio curve (cache/mrc.h): the fewest buffers
 *    that give REPORT_KNEE_SHARE of the hits the file could get at all;
 *  - a memory budget split across files by marginal gain: repeatedly give
 *    the next buffers to the file whose curve gains the most hits per buffer
 *    (looking ahead over every larger size, so a loop's cliff is seen), and
 *    never more than its knee;
 *  - local buffers, the RMS global-buffering rule (>= 75 % reads), whether
 *    deferred write and read-ahead pay, whether a file is worth defragmenting.
 */
#ifndef ACCELFS_TOOLS_REPORT_H
#define ACCELFS_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrc.h"

#define REPORT_KNEE_SHARE 0.95	 /* knee: this share of the attainable hit fraction */
#define REPORT_LOCAL_DEFAULT 2	 /* the mount's local_buffers= default */
#define REPORT_LOCAL_MAX 16	 /* local buffers considered: 2, 4, 8, 16 */
#define REPORT_LOCAL_GAIN 0.02	 /* local buffers: stop when more gains less than 2 points */
#define REPORT_DEFRAG_SCORE 50.0 /* fragmentation score (fiemap.h) worth a defrag */
#define REPORT_DEFRAG_EXTRA 4	 /* ... with at least this many extents more than ideal */
#define REPORT_MIN_ACCESSES 64	 /* fewer sampled lookups: no curve-based advice */

/*
 * report_clamp - a file of @buckets buckets cannot be re-read at a distance
 * of @buckets or more of its own buckets: move what the sampled curve @c put
 * there (the estimate's scatter) to the largest possible distance, and
 * recompute its points. Nothing when @buckets is 0 (size unknown).
 */
void report_clamp(struct mrc_curve *c, uint64_t buckets);

/*
 * report_knee - the knee of @c: the fewest buffers (at most @cap, 0 = no cap)
 * whose hits reach REPORT_KNEE_SHARE of the most the curve can give, counting
 * only reuse beyond REPORT_LOCAL_DEFAULT (what local buffers serve anyway).
 * 0 when that is under 1 % of the lookups (a scan: buffers do not help).
 */
uint64_t report_knee(const struct mrc_curve *c, uint64_t cap);

/* One file's part in the budget split. */
struct report_alloc {
	const struct mrc_curve *curve; /* NULL: the file takes no part */
	double weight;		       /* lookups per unit time (or in total) */
	uint64_t cap;		       /* at most this many buffers (the knee) */
	double base;		       /* hit fraction (local + global) it gets now, 0..1 */
	uint64_t buffers;	       /* out: buffers given */
};

/*
 * report_split - share @budget buffers among @n files by marginal gain (see
 * above). Each file ends with 0 or one of its candidate sizes up to its cap.
 * A file's gain from N global buffers is the hits its curve gives at N beyond
 * @base, what it already gets from sharing the pool (a hot file keeps its
 * buffers without a quota), counting only reuse farther than the
 * REPORT_LOCAL_DEFAULT local buffers reach. Returns the buffers given in
 * total (<= @budget).
 */
uint64_t report_split(struct report_alloc *a, size_t n, uint64_t budget);

/*
 * report_local - local buffers for a file of curve @c: the smallest of 2, 4,
 * 8, 16 beyond which more would gain less than REPORT_LOCAL_GAIN. 2 (the
 * mount default) when the curve shows no short-distance reuse.
 */
unsigned int report_local(const struct mrc_curve *c);

/* Verdicts with a one-line reason (static strings). */
struct report_verdict {
	bool yes;
	bool known; /* false: not enough data to say */
	const char *why;
};

/* Read-ahead from its counters (issued, used, wasted; all 0 when absent or
 * read-ahead is off) and the curve: pays when most prefetched buckets are
 * used, or, without counters, when nearly every lookup is a first reference
 * (streaming); otherwise unknown. */
struct report_verdict report_readahead(uint64_t issued, uint64_t used, uint64_t wasted,
				       const struct mrc_curve *c);

/* Deferred write from reads, writes (buckets), backend writes and their
 * bytes: pays when writes are a quarter of the I/O or more and small. */
struct report_verdict report_deferred(uint64_t reads, uint64_t writes, uint64_t be_writes,
				      uint64_t be_write_bytes, uint32_t bucket_size);

/* Defragment from FIEMAP's extents, ideal extents and score: at least twice
 * the extents needed, and REPORT_DEFRAG_EXTRA more (a seek or two is not
 * worth a rewrite). */
struct report_verdict report_defrag(uint64_t extents, uint64_t ideal, double score);

#endif
