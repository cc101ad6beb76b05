/* SPDX-License-Identifier: MIT */
/*
 * caps.h - the daemon's capabilities (capset(2) changes the calling thread;
 * threads created after inherit it).
 *
 * A file system lets a writer holding CAP_SYS_RESOURCE go past a disk
 * quota's hard limit and use what it keeps back for root (ext4's reserved
 * blocks), checking the thread that writes, creates or allocates. A root
 * daemon doing that for a user would let the user take what the
 * administrator kept back, so the daemon drops it from its effective set
 * before any thread starts; root's reserve follows the fsuid (ext4's resuid),
 * which creds.c sets to the user's for a user's writes.
 */
#ifndef ACCELFS_FUSE_CAPS_H
#define ACCELFS_FUSE_CAPS_H

#include <linux/capability.h>

/* The calling thread's sets (version 3, two words); 0 or -errno. */
int caps_get(struct __user_cap_data_struct d[2]);
int caps_set(const struct __user_cap_data_struct d[2]);

/* Drop CAP_SYS_RESOURCE from the calling thread's effective set (kept
 * permitted); 0, or -errno logged by the caller. */
int caps_drop_sysres(void);

#endif
