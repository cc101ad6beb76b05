/* SPDX-License-Identifier: MIT */
/*
 * mstate.h - a daemon's per-mount state file, the contract between the
 * daemon (fuse/watch.c writes it) and `accel stat` (reads it).
 *
 * The pool is shared by every mount on the host, so what belongs to one
 * mount (its watcher's mode and counters) is published apart: one small
 * text file per daemon, MSTATE_DIR_ROOT/mount-PID for root daemons, else
 * $XDG_RUNTIME_DIR/accelfs/mount-PID, one "key value" per line (keys below,
 * in this order; unknown keys are ignored by readers). The daemon replaces
 * it whole (write to a temporary name, rename), so a reader never sees half
 * a file, and removes it at exit; a file whose process is gone (kill -9) is
 * skipped by readers and removed by the next daemon that starts.
 */
#ifndef ACCELFS_CACHE_MSTATE_H
#define ACCELFS_CACHE_MSTATE_H

#include <stddef.h>
#include <stdint.h>

#define MSTATE_DIR_ROOT "/run/accelfs"
#define MSTATE_PATH_LEN 4096

struct mstate {
	uint32_t pid;			  /* the daemon */
	char mountpoint[MSTATE_PATH_LEN]; /* canonical; a newline in it ends it */
	char source[MSTATE_PATH_LEN];
	char watch[16];		      /* "fanotify", "inotify" or "off" */
	uint64_t watch_events;	      /* changes seen in SOURCE that concern the mount */
	uint64_t watch_invalidations; /* notifications sent to the kernel */
	uint64_t watch_overflows;     /* event queue overflows (everything invalidated) */
	uint64_t watch_unwatched; /* inotify: directories held but not watched (short timeouts) */
	char shared[192];	  /* "on (why)" or "off (why)": shared mode (fuse/shared.c) */
	char locks[16];		  /* "forward" or "local" */
};

/* Publish @m (mkdir'ing the directory, 0755); 0 or -errno. */
int mstate_write(const struct mstate *m);
/* Remove the daemon @pid's file, if any. */
void mstate_remove(uint32_t pid);
/* Remove the files of daemons that are gone (killed) from this euid's directory. */
void mstate_sweep(void);
/*
 * Call @fn for each live daemon's state in the directories of root and of
 * @uid (sorted by pid); stops at and returns @fn's first non-zero value,
 * else 0.
 */
int mstate_foreach(unsigned int uid, int (*fn)(const struct mstate *m, void *arg), void *arg);

#endif
