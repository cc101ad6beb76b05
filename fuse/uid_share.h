/* SPDX-License-Identifier: MIT */
/*
 * uid_share.h - a user's share of the daemon's descriptors for open files
 * and of the pool's file slots (uid_share.c).
 */
#ifndef ACCELFS_FUSE_UID_SHARE_H
#define ACCELFS_FUSE_UID_SHARE_H

#include <stdbool.h>
#include <sys/types.h>

/* Is @uid's use counted against a share? Not root's, nor the daemon's own
 * user's (a user's own mount serves her alone). */
bool uid_share_counted(uid_t uid);

/* At start, after RLIMIT_NOFILE is settled: the share's size. */
void uid_share_init(void);
/* One more descriptor for @uid (an open handle, a lock's descriptor): 0,
 * or -@err past its share (logged): EMFILE for an open, ENOLCK for a lock. */
int uid_share_take(uid_t uid, int err);
/* ... one fewer. */
void uid_share_give(uid_t uid);

/* At pool attach: the pool's file slots, a quarter of which one user may hold. */
void uid_share_pool_init(unsigned int nfiles);
/* One more pool file handle (a cached open) of @uid: true, or false past its
 * share, when the open goes uncached (logged). */
bool uid_share_pool_take(uid_t uid);
/* ... one fewer. */
void uid_share_pool_give(uid_t uid);

#endif
