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
#include <stdint.h>

#define WATCH_LONG_TIMEOUT 3600.0 /* entry/attr timeout with a watcher, unless set */
/* ... with the inotify watcher, whose echo filter may take an outside change
 * for the mount's own (watch_echo.c): the bound on how long that shows */
#define WATCH_INOTIFY_TIMEOUT 10.0

struct accelfs;
struct inode;
struct fuse_entry_param;
struct fuse_lowlevel_ops;

/* Choose and open the watcher for SOURCE (-o watch=); raises the default
 * timeouts when one is active. Call after the inode table is set up. */
void watch_setup(struct accelfs *fs);
/* Start the watcher thread (after daemonising); 0 or -errno (then off, logged). */
int watch_start(struct accelfs *fs);
/* Stop and join the thread, close the watcher, remove the state file; while
 * the workers still serve (a notification may need one). Idempotent. */
void watch_stop(struct accelfs *fs);
/* One log line on the mode and why (at INIT). */
void watch_log(struct accelfs *fs);
bool watch_active(struct accelfs *fs);
/* Does the watcher see every change in SOURCE (fanotify), not only in the
 * directories it could watch (inotify)? */
bool watch_covers_all(struct accelfs *fs);

/* Hooks of the inotify watcher (no-ops in the other modes; see watch_ino.c):
 * the entry @e of node @n is about to be given to the kernel under @parent
 * (watches a directory, shortens timeouts no watch covers); */
void watch_entry(struct accelfs *fs, struct inode *parent, struct inode *n,
		 struct fuse_entry_param *e);
/* may the kernel keep directory @n's listing (a watch reports its changes)? */
bool watch_covers_dir(struct accelfs *fs, struct inode *n);
/* the attribute timeout for a reply about @n; */
double watch_attr_timeout(struct accelfs *fs, struct inode *n);
/* the mutating handlers of @ops note the mount's own changes (watch_echo.c), */
void watch_echo_wrap(struct accelfs *fs, struct fuse_lowlevel_ops *ops);
/* as the flusher does for the node id @ino whose deferred bytes it writes. */
void watch_echo_node(struct accelfs *fs, uint64_t ino);

#endif
