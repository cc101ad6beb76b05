/* SPDX-License-Identifier: MIT */
/*
 * fair.h - each user's share of the workers (fair.c): a user other than
 * root runs at most FAIR_SHARE(threads) requests at once; her others wait
 * parked, holding no worker, so requests she cannot finish (a stalled
 * SOURCE below her files, a slow network file) never take the workers
 * every other user needs.
 */
#ifndef ACCELFS_FUSE_FAIR_H
#define ACCELFS_FUSE_FAIR_H

#include "accelfs_i.h"

/* A user's requests in handlers at once: all workers but one. */
#define FAIR_SHARE(threads) ((threads) > 1 ? (threads)-1 : 1)
#define FAIR_PARKED_MAX 4096 /* a user's requests parked at once; past that EAGAIN */
#define FAIR_PARKED_BYTES (64U << 20) /* ... and their write data */

/* Wrap every handler of @ops (after reqstat_wrap: the outermost wrapper). */
void fair_wrap(struct accelfs *fs, struct fuse_lowlevel_ops *ops);
/* Before serving: @fs's table of users; 0 or -ENOMEM. */
int fair_init(struct accelfs *fs);
/* Requests parked so far (the mount's state file: accel stat). */
uint64_t fair_parked(struct accelfs *fs);
/* After serving: every parked request answered (EINTR), the table freed. */
void fair_stop(struct accelfs *fs);

#endif
