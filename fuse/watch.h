/* SPDX-License-Identifier: MIT */
/*
 * watch.h - the mount's watcher: changes made to SOURCE behind the mount
 * (another program, a second daemon) are told to the kernel as they happen,
 * so names and attributes can be cached for long and still be true
 * (docs/design.md, "The watcher").
 *
 * Lifecycle: watch_setup() before mounting chooses the mode (never fails the
 * mount: a watcher that cannot be had is "off", with today's timeouts);
 * watch_start() after daemonising starts the thread; watch_stop() at
 * shutdown (before the session loop ends, and again after it for an
 * unmount from outside) joins it and frees everything.
 */
#ifndef ACCELFS_FUSE_WATCH_H
#define ACCELFS_FUSE_WATCH_H

#include <stdbool.h>

#define WATCH_LONG_TIMEOUT 3600.0 /* entry/attr timeout with a watcher, unless set */

/* Choose and open the watcher for SOURCE (-o watch=); raises the default
 * timeouts when one is active. Call after the inode table is set up. */
void watch_setup(void);
/* Start the watcher thread (after daemonising); 0 or -errno (then off, logged). */
int watch_start(void);
/* Stop and join the thread, close the watcher, remove the state file; while
 * the workers still serve (a notification may need one). Idempotent. */
void watch_stop(void);
/* One log line on the mode and why (at INIT). */
void watch_log(void);
/* "fanotify", "off". */
const char *watch_mode_name(void);
bool watch_active(void);

#endif
