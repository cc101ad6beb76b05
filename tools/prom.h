/* SPDX-License-Identifier: MIT */
/*
 * prom.h - `accel stat --prometheus`: a pool snapshot, its files and the
 * mounts of the running daemons in the Prometheus text exposition format
 * (version 0.0.4), for node_exporter's textfile collector or any scraper.
 *
 * Names follow Prometheus's conventions: prefix accelfs_, then the object
 * (pool, file, mount), then what is measured; counters end in _total, byte
 * amounts say _bytes. Every family has its # HELP and # TYPE lines and its
 * samples together. Labels: pool="/name" on pool and file metrics; dev
 * ("MAJOR:MINOR"), ino and path on file metrics; pid and mountpoint on
 * mount metrics. The counters are cache/'s (pool_stats_counter_name()), in
 * buckets unless their name says bytes; docs/monitoring.md lists them.
 */
#ifndef ACCELFS_TOOLS_PROM_H
#define ACCELFS_TOOLS_PROM_H

#include <stdio.h>

#include "mstate.h"
#include "poolsnap.h"

/*
 * prom_write - write the metrics of pool @name to @f: those of snapshot @s
 * (NULL when the pool could not be read: accelfs_pool_up is then 0 and only
 * the mounts follow), of its files (only @only when not NULL), and of every
 * daemon whose state file this user can see. Returns 0 or -EIO.
 */
int prom_write(FILE *f, const char *name, const struct poolsnap *s,
	       const struct pool_stats_file *only);

/*
 * prom_write_mounts - the mount families alone, for the @n daemons @ms:
 * accelfs_mount_info, the watcher's counters, the bytes read and written,
 * accelfs_mount_pool_COUNTER_total (what the daemon added to each pool
 * counter), accelfs_mount_requests_total and ..._request_errors_total by
 * op, and the histogram accelfs_mount_request_duration_seconds by op.
 * Returns 0 or -EIO.
 */
int prom_write_mounts(FILE *f, const struct mstate *ms, size_t n);

#endif
