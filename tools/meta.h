/* SPDX-License-Identifier: MIT */
/*
 * meta.h - carry a file's metadata over to its replacement: extended
 * attributes (ACLs live in system.posix_acl_* and travel with them), the
 * accelfs tuning attributes (user.accelfs.*), inode flags, owner, mode and
 * nanosecond timestamps. The order of meta_apply() matters and is explained
 * in meta.c. Every function returns 0 or -errno and never prints.
 */
#ifndef ACCELFS_TOOLS_META_H
#define ACCELFS_TOOLS_META_H

#include <stdbool.h>
#include <sys/stat.h>

#include "fdl.h"

/* What meta_apply() should put on the new file. */
struct meta_plan {
	const struct stat *st;	/* the original: owner, mode, times */
	int src_fd;		/* copy its xattrs and flags; -1 for none */
	const struct fdl *fdl;	/* overrides ownership/accelfs attrs; may be NULL */
	bool owner_best_effort; /* an EPERM from fchown is not an error */
	const char *failed;	/* out: which step failed, for messages */
};

/* Collect every user.accelfs.* attribute of @fd into @fdl. */
int meta_accelfs_load(int fd, struct fdl *fdl);

/* Inode flags that must be set before any data is written (FS_NOCOW_FL). */
int meta_flags_early(int src_fd, int dst_fd);

/* Put all metadata of @plan on @dst_fd; the timestamps go last. */
int meta_apply(int dst_fd, struct meta_plan *plan);

/* True when @fd has the immutable or append-only flag (cannot be replaced). */
bool meta_is_locked(int fd);

#endif
