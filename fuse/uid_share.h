/* SPDX-License-Identifier: MIT */
/*
 * uid_share.h - a user's share of the daemon's descriptors for open files
 * (uid_share.c).
 */
#ifndef ACCELFS_FUSE_UID_SHARE_H
#define ACCELFS_FUSE_UID_SHARE_H

#include <sys/types.h>

/* At start, after RLIMIT_NOFILE is settled: the share's size. */
void uid_share_init(void);
/* One more descriptor for @uid (an open handle, a lock's descriptor): 0,
 * or -@err past its share (logged): EMFILE for an open, ENOLCK for a lock. */
int uid_share_take(uid_t uid, int err);
/* ... one fewer. */
void uid_share_give(uid_t uid);

#endif
