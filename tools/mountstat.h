/* SPDX-License-Identifier: MIT */
/*
 * mountstat.h - one mount's statistics as `accel stat` and `accel monitor`
 * show them: what its daemon served (cache/mstate.h) for people (a line in
 * a list, or the detail of --mount) and for scripts (a JSON object of
 * schema accelfs-stat/1's "mounts" array, on one line).
 */
#ifndef ACCELFS_TOOLS_MOUNTSTAT_H
#define ACCELFS_TOOLS_MOUNTSTAT_H

#include <stdint.h>

#include "mstate.h"

/* Percent of the bucket reads the pool served (local or global hit); -1: no reads. */
double mountstat_hit_pct(const struct mstate *m);

/* The list's header (@m NULL) or @m's line, and the line of its mode (shared, locks). */
void mountstat_row(const struct mstate *m);

/* The detail of `accel stat --mount`. */
void mountstat_text(const struct mstate *m);

/* The JSON object (no newline). */
void mountstat_json(const struct mstate *m);

/* "  KIND  COUNT ..." header (@r NULL) or one request kind's line into @buf. */
void mountstat_req_line(const struct mstate_req *r, char *buf, size_t len);

/*
 * The state of the daemon serving the mount point @path into @m: 0, or -1
 * after one line on stderr for command @cmd (no such path; no running
 * accelfs daemon visible to the caller serves it).
 */
int mountstat_find(const char *cmd, const char *path, struct mstate *m);

/* @s with control characters shown as '?', so a name cannot drive the terminal. */
const char *mountstat_printable(const char *s, char *buf, size_t len);

#endif
