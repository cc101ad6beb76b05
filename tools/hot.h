/* SPDX-License-Identifier: MIT */
/*
 * hot.h - how "hot" a file is, for `accel defrag --hot-first`: its I/O count
 * in the accelfs global buffer pool (backend reads and writes plus cache
 * hits), so that the files the daemons work hardest are defragmented first.
 */
#ifndef ACCELFS_TOOLS_HOT_H
#define ACCELFS_TOOLS_HOT_H

#include <stdint.h>

/*
 * I/O count of the backing file @path in the pool this user's daemons use
 * (poolseg_default_name()); 0 when the pool or the file is not there.
 */
uint64_t hot_score(const char *path);

#endif
