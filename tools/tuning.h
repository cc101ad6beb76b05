/* SPDX-License-Identifier: MIT */
/*
 * tuning.h - per-file tuning kept with the file, like RMS's SET FILE/GLOBAL:
 * user.accelfs.<name> extended attributes of the backing file, read by the
 * daemon at each open (fuse/cache_io.c). This module knows the attributes,
 * validates what a user asks for, turns it into the stored form the daemon
 * parses, and reads and writes the attributes of a path.
 *
 * Stored forms: global_buffers "all" or decimal 0..2^28; local_buffers
 * decimal 0..1024; stats and deferred_write "on"/"off"; sync
 * "strict"/"relaxed"; readahead_max decimal bytes 0..1 GiB. An absent
 * attribute means "the mount's default". stats, deferred_write, sync and
 * readahead_max are stored and shown only: the daemon does not use them yet.
 */
#ifndef ACCELFS_TOOLS_TUNING_H
#define ACCELFS_TOOLS_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUNING_PREFIX "user.accelfs."
#define TUNING_VALUE_LEN 32 /* a stored value, NUL included */
#define TUNING_GLOBAL_MAX (1U << 28)
#define TUNING_LOCAL_MAX 1024U
#define TUNING_READAHEAD_LIMIT (1ULL << 30)

enum tuning_key {
	TUNING_GLOBAL_BUFFERS,
	TUNING_LOCAL_BUFFERS,
	TUNING_STATS,
	TUNING_DEFERRED_WRITE,
	TUNING_SYNC,
	TUNING_READAHEAD_MAX,
	TUNING_N,
};

struct tuning_attr {
	const char *name;   /* "global_buffers": the attribute user.accelfs.<name> */
	const char *option; /* "global-buffers": the accel set option --<option> */
	const char *syntax; /* for messages: "N (0..268435456), all or default" */
	bool later;	    /* stored and shown; not used by the daemon yet */
};

/* The description of attribute @k (k < TUNING_N). */
const struct tuning_attr *tuning_attr(enum tuning_key k);

/*
 * tuning_parse - check the user's @in for attribute @k and write the stored
 * form to @out (TUNING_VALUE_LEN bytes). "default" gives an empty @out: the
 * attribute is to be removed. Returns 0, or -EINVAL for a malformed value,
 * -ERANGE for one out of range.
 */
int tuning_parse(enum tuning_key k, const char *in, char *out);

/* True if @stored (as read from the attribute) is a value the daemon accepts. */
bool tuning_stored_valid(enum tuning_key k, const char *stored);

/*
 * tuning_get - read attribute @k of @path into @val (TUNING_VALUE_LEN bytes).
 * Returns 1 if set, 0 if absent, -errno: -ENOTSUP when the file system has
 * no user extended attributes, -ERANGE when the stored value is too long.
 */
int tuning_get(const char *path, enum tuning_key k, char *val);

/* Set attribute @k of @path to @val, or remove it if @val is "". 0 or -errno. */
int tuning_put(const char *path, enum tuning_key k, const char *val);

/* Parse "4M", "512k", "1G", "4096": bytes. 0, -EINVAL or -ERANGE (> 2^62). */
int tuning_parse_size(const char *s, uint64_t *out);

#endif
