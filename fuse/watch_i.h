/* SPDX-License-Identifier: MIT */
/*
 * watch_i.h - shared by the watcher's files: the thread (watch.c), the
 * fanotify reader (watch_fan.c), the inotify reader (watch_ino.c) and its
 * echo filter (watch_echo.c), and what a change makes the kernel forget
 * (watch_inval.c).
 */
#ifndef ACCELFS_FUSE_WATCH_I_H
#define ACCELFS_FUSE_WATCH_I_H

#include <stddef.h>
#include <stdint.h>

#include "accelfs_i.h"
#include "watch.h"

#define WATCH_NAME 1u /* the name @name in @parent appeared, went or was renamed */
#define WATCH_ATTR 2u /* @ino's attributes changed */
#define WATCH_DATA 4u /* @ino's data changed */

/* One change in SOURCE, already mapped to the kernel's node ids (0: not known). */
struct watch_change {
	unsigned int what;
	fuse_ino_t parent; /* directory of @name */
	const char *name;  /* NUL-terminated, NULL if none */
	fuse_ino_t ino;	   /* the object changed */
	bool dir;	   /* ... is a directory */
	pid_t pid;	   /* the process that changed it (fanotify), 0: unknown */
	pid_t pt_writer;   /* @ino's inode.pt_writer when found (fanotify), else 0 */
};

/* watch_inval.c: tell the kernel; no lock may be held by the caller. */
void watch_apply(struct accelfs *fs, const struct watch_change *c);
/* The event queue overflowed: invalidate everything the kernel holds. */
void watch_overflow(struct accelfs *fs);

/* watch_fan.c: fanotify on SOURCE's file system: a descriptor or -errno (@why said). */
int watch_fan_open(const char *source, char *why, size_t len);
/* Read and apply every queued event; -errno if the descriptor failed. */
int watch_fan_read(struct accelfs *fs, int fd, pid_t self);

/* watch.c: the mode now (atomic; only a failure turns it off) */
enum watch_mode watch_mode(struct accelfs *fs);

/* watch_ino.c: inotify, watching SOURCE's root: a descriptor or -errno (@why said). */
int watch_ino_open(struct accelfs *fs, char *why, size_t len);
/* Read and apply every queued event; -errno if the descriptor failed. */
int watch_ino_read(struct accelfs *fs, int fd);
/* Close the descriptor and free the map (the thread is stopped). */
void watch_ino_close(struct accelfs *fs);
/* @n is given to the kernel under @p in @e: watch it if a directory, and
 * shorten @e's timeouts where no watch covers them. */
void watch_ino_entry(struct accelfs *fs, struct inode *p, struct inode *n,
		     struct fuse_entry_param *e);
/* @n is being freed: its watch goes. */
void watch_ino_forget(struct accelfs *fs, struct inode *n);

/* watch_echo.c: the mount's own changes, noted by the wrapped handlers */
/* An event this soon after the daemon's own change is its echo: measured, the watcher
 * reads an echo within one 4 ms tick of the coarse clock (docs/bench/inotify-echo-window.json). */
#define ECHO_WINDOW_MS 100
/* Is @c (what, parent, name, ino set) the echo of one of the daemon's own changes? */
bool watch_echo_match(struct accelfs *fs, const struct watch_change *c);

#endif
