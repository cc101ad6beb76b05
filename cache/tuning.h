/* SPDX-License-Identifier: MIT */
/*
 * tuning.h - the per-file tuning contract, defined once for the daemon
 * (fuse/cache_io.c reads it at every open) and the tools (accel set, show,
 * report write and show it): per-file settings kept with the file, like
 * RMS's SET FILE/GLOBAL_BUFFERS, as user.accelfs.<name> extended attributes
 * of the backing file.
 *
 * Stored forms: global_buffers "all" or decimal 0..2^28; local_buffers
 * decimal 0..1024; stats and deferred_write "on"/"off"; sync
 * "strict"/"relaxed"; readahead_max decimal bytes 0..1 GiB; passthrough
 * "auto"/"always"/"never" (accel set also takes on = always, off = never);
 * disk_cache "on"/"off" (the mount's disk tier for this file or not). An absent
 * attribute means "the mount's default". The daemon accepts exactly what
 * tuning_parse() accepts (suffixed sizes included) and ignores anything
 * else. The pool always counts; stats=on asks for the daemon to see the
 * file's I/O, so it keeps the file off kernel passthrough (passthrough=auto).
 *
 * Sizes everywhere (mount options, accel set, accel sysgen, FDL files) have
 * one grammar, tuning_parse_size(): decimal digits, then optionally K, M, G
 * or T (any case; powers of 1024), optionally followed by "iB" or "B".
 */
#ifndef ACCELFS_CACHE_TUNING_H
#define ACCELFS_CACHE_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUNING_PREFIX "user.accelfs."
#define TUNING_VALUE_LEN 32		      /* a stored value, NUL included */
#define TUNING_GLOBAL_MAX (1U << 28)	      /* global_buffers, and the global_buffers= option */
#define TUNING_LOCAL_MAX 1024U		      /* local_buffers, and the local_buffers= option */
#define TUNING_READAHEAD_LIMIT (1ULL << 30) /* readahead_max, and the readahead_max= option */

enum tuning_key {
	TUNING_GLOBAL_BUFFERS,
	TUNING_LOCAL_BUFFERS,
	TUNING_STATS,
	TUNING_DEFERRED_WRITE,
	TUNING_SYNC,
	TUNING_READAHEAD_MAX,
	TUNING_PASSTHROUGH,
	TUNING_DISK_CACHE,
	TUNING_N,
};

struct tuning_attr {
	const char *name;   /* "global_buffers": the attribute user.accelfs.<name> */
	const char *option; /* "global-buffers": the accel set option --<option> */
	const char *syntax; /* for messages: "N (0..268435456), all or default" */
	bool later;	    /* stored and shown; not used by the daemon */
};

/* The description of attribute @k (k < TUNING_N). */
const struct tuning_attr *tuning_attr(enum tuning_key k);

/* Parse a size in the one grammar above. 0, -EINVAL, or -ERANGE (> 2^62). */
int tuning_parse_size(const char *s, uint64_t *out);

/*
 * tuning_parse - check the user's @in for attribute @k and write the stored
 * form to @out (TUNING_VALUE_LEN bytes). "default" gives an empty @out: the
 * attribute is to be removed. Returns 0, or -EINVAL for a malformed value,
 * -ERANGE for one out of range.
 */
int tuning_parse(enum tuning_key k, const char *in, char *out);

/* True if @stored (as read from the attribute) is a value the daemon accepts. */
bool tuning_stored_valid(enum tuning_key k, const char *stored);

/* What a file's attributes ask for; -1 / false: not set (the mount's default). */
struct tuning_values {
	int64_t global_buffers; /* POOL_QUOTA_ALL for "all" */
	int64_t local_buffers;
	int deferred_write; /* 1 on, 0 off, -1 not set */
	int sync_relaxed;   /* 1 relaxed, 0 strict, -1 not set */
	int64_t readahead_max;
	int passthrough; /* TUNING_PT_* below, TUNING_PT_AUTO when not set */
	int stats;	 /* 1 on, 0 off, -1 not set */
	int disk_cache;	 /* 1 on, 0 off, -1 not set (the mount's disk_cache= decides) */
};

/* The passthrough attribute's values. */
enum { TUNING_PT_AUTO, TUNING_PT_ALWAYS, TUNING_PT_NEVER };

/* The mount's defaults the passthrough rule needs (fuse/passthrough.c fills them). */
struct tuning_mount {
	bool deferred_write; /* deferred_write=on and the pool in use */
	bool sync_relaxed;   /* sync=relaxed */
};

/*
 * tuning_passthrough_need - the rule of passthrough=auto, defined once for
 * the daemon and accel show: what file @t needs from the daemon, so that its
 * opens stay on the daemon path, as a short reason ("deferred_write",
 * "sync=relaxed", "global_buffers", "local_buffers", "stats",
 * "readahead_max"); NULL when it needs nothing and may go to the kernel.
 * @m: the mount's defaults, NULL when unknown (accel show: attributes only).
 * The attribute itself is not consulted here (always/never decide alone).
 */
const char *tuning_passthrough_need(const struct tuning_values *t, const struct tuning_mount *m);

/*
 * What the daemon saw of one handle's use of a file (its READ requests; the
 * kernel sends a program's sequential reads as large read-ahead requests,
 * its random ones as the pages asked for), for the rule below.
 */
struct tuning_use {
	uint64_t reads;	     /* READ requests served */
	uint64_t read_bytes; /* bytes they returned */
	bool wrote;	     /* a write reached SOURCE or the pool */
};

#define TUNING_BULK_BYTES (1ULL << 20)	  /* bulk: a handle read at least this much ... */
#define TUNING_BULK_REQUEST (64ULL << 10) /* ... in requests of at least this on average */

/*
 * tuning_use_bulk - the observed half of passthrough=auto, defined once for
 * the daemon and its tests: true when @u is bulk sequential reading and
 * nothing else (no write; TUNING_BULK_BYTES or more in requests of
 * TUNING_BULK_REQUEST or more on average), the use where the daemon's
 * buffers add nothing to the kernel's own page cache of SOURCE and its
 * requests only cost time. A handle that read nothing says nothing: false.
 */
bool tuning_use_bulk(const struct tuning_use *u);

/*
 * Read-ahead sized for SOURCE's delay (bandwidth x delay). The bandwidth
 * planned for is 1 GB/s, one byte a nanosecond: each millisecond SOURCE
 * takes to answer a read beyond moving its bytes at that rate is 1 MB more
 * window (in whole base windows), so a network file system's round trip is
 * covered by reads in flight, and a local disk (its reads no slower than
 * that) keeps the base.
 */
/* The delay part of one read of @len bytes that took @elapsed_ns: what exceeds @len at 1 GB/s. */
uint64_t tuning_readahead_delay(uint64_t elapsed_ns, uint64_t len);

/*
 * tuning_readahead_window - the read-ahead window in bytes: @base (the
 * window for a SOURCE without delay) plus @delay_ns worth of bytes at the
 * planned bandwidth in whole @base (rounded down: windows stay aligned with
 * reads of that size, and a delay under one @base's worth adds nothing),
 * never past @cap; @cap below @base: @base.
 */
uint64_t tuning_readahead_window(uint64_t base, uint64_t delay_ns, uint64_t cap);

/*
 * tuning_read_fd - the daemon's reader: every valid tuning attribute of the
 * open file @fd (one flistxattr when the file has none). A value that
 * tuning_parse() refuses is ignored, as if absent. Never fails: a file
 * system without user xattrs has no tuning.
 */
void tuning_read_fd(int fd, struct tuning_values *t);

/* tuning_none - the values of a file without tuning attributes (one the
 * daemon has just created: user attributes are never inherited). */
void tuning_none(struct tuning_values *t);

/*
 * tuning_get - read attribute @k of @path into @val (TUNING_VALUE_LEN bytes).
 * Returns 1 if set, 0 if absent, -errno: -ENOTSUP when the file system has
 * no user extended attributes, -ERANGE when the stored value is too long.
 */
int tuning_get(const char *path, enum tuning_key k, char *val);

/* Set attribute @k of @path to @val, or remove it if @val is "". 0 or -errno. */
int tuning_put(const char *path, enum tuning_key k, const char *val);

#endif
