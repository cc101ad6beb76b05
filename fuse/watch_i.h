/* SPDX-License-Identifier: MIT */
/*
 * watch_i.h - shared by the watcher's files: the thread (watch.c), the
 * fanotify reader (watch_fan.c) and what a change makes the kernel forget
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
};

/* Counters published in the state file (atomic). */
struct watch_counters {
	uint64_t events;
	uint64_t invalidations;
	uint64_t overflows;
};
extern struct watch_counters watch_counters;

/* watch_inval.c: tell the kernel; no lock may be held by the caller. */
void watch_apply(const struct watch_change *c);
/* The event queue overflowed: invalidate everything the kernel holds. */
void watch_overflow(void);

/* watch_fan.c: fanotify on SOURCE's file system: a descriptor or -errno (@why said). */
int watch_fan_open(const char *source, char *why, size_t len);
/* Read and apply every queued event; -errno if the descriptor failed. */
int watch_fan_read(int fd, pid_t self);

#endif
