/* SPDX-License-Identifier: MIT */
/*
 * reqstat.h - what this mount served: requests by kind (count, errors,
 * time in the handler as a log2 histogram) and the bytes read and written,
 * counted in one place (reqstat.c wraps the ops table) and published in the
 * mount's state file (cache/mstate.h) by the watcher thread.
 */
#ifndef ACCELFS_FUSE_REQSTAT_H
#define ACCELFS_FUSE_REQSTAT_H

#include "accelfs_i.h"

struct mstate;

/* Wrap every handler of @ops (the last change to the table: ops_fill). */
void reqstat_wrap(struct fuse_lowlevel_ops *ops);

/* The kind of request this thread is serving (0: none), for a request handed to another thread. */
int reqstat_current(void);
/* On that thread: its replies count for request kind @kind (from reqstat_current()). */
void reqstat_adopt(int kind);

/* Sum the counters into @m's request kinds and byte counts. */
void reqstat_fill(struct mstate *m);

#endif
