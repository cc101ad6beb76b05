/* SPDX-License-Identifier: MIT */
/* disk_auto.h - disk_cache=auto (see disk_auto.c). */
#ifndef ACCELFS_DISK_AUTO_H
#define ACCELFS_DISK_AUTO_H

#include <stddef.h>

struct accelfs;

/* where a root daemon keeps the tier: DISK_AUTO_ROOT_PARENT/accelfs */
#define DISK_AUTO_ROOT_PARENT "/var/cache"

/*
 * After the pool and shared mode are set up: on a shared SOURCE, opens the
 * disk tier in the daemon user's cache directory (fs->opts.disk_cache is
 * then that directory). 0: done, or off by design (local SOURCE); > 0: off
 * because something was in the way, @why says what; -ENOMEM.
 */
int disk_auto_setup(struct accelfs *fs, char *why, size_t len);

#endif
