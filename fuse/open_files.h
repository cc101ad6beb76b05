/* SPDX-License-Identifier: MIT */
/*
 * open_files.h - every file open through the mount, in one list: what the
 * flusher, the watcher, lock forwarding and shutdown walk (open_files.c).
 * A handle may be pinned (its busy count) while one of them uses it
 * outside the list lock; removing it waits until nobody has it pinned.
 *
 * The list is the mount's (struct open_files, fs->files; a handle's own
 * of->fs). Lock: its lock (the list, each handle's busy) with the condition
 * idle; a leaf, but for a walk's callback under it (open_files_foreach),
 * which must not block.
 */
#ifndef ACCELFS_FUSE_OPEN_FILES_H
#define ACCELFS_FUSE_OPEN_FILES_H

#include <sys/stat.h>

#include "accelfs_i.h"

void open_files_add(struct open_file *of);
/* Take @of off the list, then wait until no walk has it pinned. */
void open_files_remove(struct open_file *of);
/* Give @of (listed) descriptor @fd instead of its own, once no walk has it
 * pinned; returns the old one, for the caller to close. */
int open_files_set_fd(struct open_file *of, int fd);
/* The first open file, or NULL (shutdown releases them one by one). */
struct open_file *open_files_first(struct accelfs *fs);

/* @fn for every open file, under the list lock: @fn must not block. */
void open_files_foreach(struct accelfs *fs, void (*fn)(struct open_file *of, void *arg), void *arg);

enum open_files_which {
	OPEN_FILES_DEFERRED, /* those that deferred a write (of->deferred) */
	OPEN_FILES_WRITTEN,  /* those that wrote (of->wrote) */
};
/*
 * @fn for each open file @which names, outside the list lock (a write-back
 * that takes long on a slow SOURCE must not hold up every open and release
 * meanwhile), each pinned while in use.
 */
void open_files_foreach_pinned(struct accelfs *fs, enum open_files_which which,
			       void (*fn)(struct open_file *of, void *arg), void *arg);

/* fstat(2) through one of @n's open handles (pinned while in use): 0 or
 * -errno, or @err if none is open. */
int open_files_fstat(struct accelfs *fs, struct inode *n, struct stat *st, int err);

#endif
