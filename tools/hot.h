/* SPDX-License-Identifier: MIT */
/*
 * hot.h - how "hot" a file is, for `accel defrag --hot-first`.
 *
 * The score is meant to be the file's I/O count from the accelfs buffer-pool
 * statistics. The pool does not exist yet, so for now every file scores 0
 * and --hot-first keeps the command-line/walk order. This function is filled
 * in by the buffer-pool work; nothing else needs to change.
 */
#ifndef ACCELFS_TOOLS_HOT_H
#define ACCELFS_TOOLS_HOT_H

#include <stdint.h>

/* I/O count of the backing file @path; 0 when unknown (today: always). */
uint64_t hot_score(const char *path);

#endif
