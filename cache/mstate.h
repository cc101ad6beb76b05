/* SPDX-License-Identifier: MIT */
/*
 * mstate.h - a daemon's per-mount state file, the contract between the
 * daemon (fuse/watch.c writes it) and `accel stat` (reads it).
 *
 * The pool is shared by every mount on the host, so what belongs to one
 * mount (its watcher's mode and counters) is published apart: one small
 * text file per daemon, MSTATE_DIR_ROOT/mount-PID for root daemons, else
 * $XDG_RUNTIME_DIR/accelfs/mount-PID, one "key value" per line (keys below,
 * in this order; unknown keys are ignored by readers). The daemon replaces
 * it whole (write to a temporary name, rename), so a reader never sees half
 * a file, and removes it at exit; a file whose process is gone (kill -9) is
 * skipped by readers and removed by the next daemon that starts.
 *
 * Besides the watcher, the file carries what the daemon served (fuse/
 * reqstat.c counts, the watcher thread publishes every MSTATE_PUBLISH_MS
 * while anything moved), after the keys above:
 *
 *   pool NAME            the pool it attached ("" when caching is off)
 *   read_bytes N         bytes its READ replies carried
 *   write_bytes N        bytes its WRITE replies acknowledged
 *   parked N             requests that waited for their user's share of the
 *                        workers (fuse/fair.c)
 *   disk DIR             the disk tier's directory (disk_cache=; "" none)
 *   disk_hits N, disk_misses N, disk_puts N, disk_put_errors N,
 *   disk_corrupt N, disk_evicted N, disk_used N, disk_limit N
 *                        the tier's counters in this daemon (cache/disk.h,
 *                        struct disk_stats); used and limit are bytes
 *   passthrough_files N  files in kernel passthrough mode now
 *   passthrough_learned N
 *                        opens passed through by observed use (passthrough=
 *                        auto: bulk sequential reads, fuse/passthrough.c)
 *   readahead_delay_us N SOURCE's delay per read as read-ahead measured it
 *                        (fuse/readahead_io.c: a low quantile of its recent
 *                        reads), which its window grows by; 0: none seen
 *   pool_COUNTER N       for each pool counter (pool_stats_counter_name()):
 *                        what this daemon added to it (pool_stats_own())
 *   req KIND COUNT ERRORS TIME_US H0 ... H23
 *                        one line per kind of request served at least once
 *                        (KIND: the libfuse operation, "read", "lookup", ...):
 *                        how many, how many were answered with an error,
 *                        their total time in the handler in microseconds,
 *                        and MSTATE_HIST counts of that time by log2 bucket
 *                        (mstate_hist_bucket()).
 *
 * All counters only grow while the daemon runs (passthrough_files is a
 * count of now).
 *
 * Which files are passed through, and why, is in a second file beside it,
 * mount-PID.passthrough, mode 0600 (it names files; the state file is
 * world-readable): one line per file, "WHY<TAB>PATH", WHY one of
 * "passthrough=always", "attribute always", "auto: needs nothing of the
 * daemon", "auto: bulk sequential reads"; PATH is SOURCE's path of the file
 * when it entered the mode, with tab, newline and backslash written as
 * \ooo (octal, as /proc/mounts: mountinfo_unescape() undoes it).
 * Written from the first time a file goes passthrough on (none before: no
 * list), replaced whole like the state file, and removed with it.
 */
#ifndef ACCELFS_CACHE_MSTATE_H
#define ACCELFS_CACHE_MSTATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "disk.h"
#include "pool_layout.h"

#define MSTATE_DIR_ROOT "/run/accelfs"
#define MSTATE_PATH_LEN 4096
#define MSTATE_PUBLISH_MS 200 /* counters reach readers within this */
#define MSTATE_REQ_MAX 64     /* request kinds a file lists */
#define MSTATE_REQ_NAME 24
#define MSTATE_HIST 24 /* latency buckets: under 1 us, under 2 us, ..., 4.2 s and more */

/* One kind of request: "req" lines. */
struct mstate_req {
	char name[MSTATE_REQ_NAME];
	uint64_t count, errors;
	uint64_t time_us;	    /* total time in the handler */
	uint64_t hist[MSTATE_HIST]; /* counts by mstate_hist_bucket() */
};

struct mstate {
	uint32_t pid;			  /* the daemon */
	char mountpoint[MSTATE_PATH_LEN]; /* canonical; a newline in it ends it */
	char source[MSTATE_PATH_LEN];
	char watch[16];		      /* "fanotify", "inotify" or "off" */
	uint64_t watch_events;	      /* changes seen in SOURCE that concern the mount */
	uint64_t watch_invalidations; /* notifications sent to the kernel */
	uint64_t watch_overflows;     /* event queue overflows (everything invalidated) */
	uint64_t watch_unwatched; /* inotify: directories held but not watched (short timeouts) */
	char shared[192];	  /* "on (why)" or "off (why)": shared mode (fuse/shared.c) */
	char locks[16];		  /* "forward" or "local" */
	char pool[POOL_NAME_LEN]; /* "/name", or "" */
	uint64_t read_bytes, write_bytes;
	uint64_t parked; /* requests that waited for their user's share of the workers */
	char disk[MSTATE_PATH_LEN];  /* the disk tier's directory, "" none */
	struct disk_stats ds;	     /* its counters */
	uint64_t pt_files, pt_learned; /* passthrough_files, passthrough_learned */
	uint64_t ra_delay_us;	       /* readahead_delay_us */
	uint64_t c[POOL_C_POOL_MAX]; /* what this daemon added to the pool's counters */
	unsigned int nreq;
	struct mstate_req req[MSTATE_REQ_MAX];
};

/*
 * The histogram bucket of a request that took @ns: bucket b < MSTATE_HIST - 1
 * holds times under 2^b microseconds (and, but for b = 0, at least
 * 2^(b-1)); the last holds 2^(MSTATE_HIST - 2) us (4.2 s) and more.
 */
static inline unsigned int mstate_hist_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int b = us ? 64 - (unsigned int)__builtin_clzll(us) : 0;

	return b < MSTATE_HIST - 1 ? b : MSTATE_HIST - 1;
}

/* The upper bound of bucket @b in microseconds (2^b); 0 for the open last bucket. */
uint64_t mstate_hist_le_us(unsigned int b);
/*
 * The @q quantile (0 < q <= 1) of @r's times, in microseconds: the upper
 * bound of the bucket it falls in (2^(MSTATE_HIST - 2) for the last); 0
 * when @r counted nothing.
 */
uint64_t mstate_req_quantile_us(const struct mstate_req *r, double q);
/* Requests and errors of every kind, summed into *@count and *@errors. */
void mstate_req_totals(const struct mstate *m, uint64_t *count, uint64_t *errors);

/* Publish @m (mkdir'ing the directory, 0755); 0 or -errno. */
int mstate_write(const struct mstate *m);
/* Publish the passthrough list (@len bytes of "WHY\tPATH" lines); 0 or -errno. */
int mstate_pt_write(uint32_t pid, const char *text, size_t len);
/*
 * Open the daemon @pid's passthrough list for reading, from root's
 * directory or @uid's; NULL with errno set (ENOENT: none, EACCES: not the
 * reader's to see).
 */
FILE *mstate_pt_open(uint32_t pid, unsigned int uid);
/* Remove the daemon @pid's files, if any. */
void mstate_remove(uint32_t pid);
/* Remove the files of daemons that are gone (killed) from this euid's directory. */
void mstate_sweep(void);
/* Parse the file @path into @m; 0 or -errno. */
int mstate_read(const char *path, struct mstate *m);
/*
 * Call @fn for each live daemon's state in the directories of root and of
 * @uid (sorted by pid); stops at and returns @fn's first non-zero value,
 * else 0.
 */
int mstate_foreach(unsigned int uid, int (*fn)(const struct mstate *m, void *arg), void *arg);
/* The live daemons' states (as mstate_foreach) into a malloc'ed *@out; 0 or -ENOMEM. */
int mstate_list(unsigned int uid, struct mstate **out, size_t *n);
/*
 * The state of the daemon serving the mount point @path (any spelling of
 * it; not a path below it) into @m: 0, -ESRCH when no live daemon of root
 * or @uid serves it, or realpath's -errno for @path itself.
 */
int mstate_find(unsigned int uid, const char *path, struct mstate *m);

#endif
