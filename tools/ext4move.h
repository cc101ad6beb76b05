/* SPDX-License-Identifier: MIT */
/*
 * ext4move.h - defragment a file in place on ext4 with EXT4_IOC_MOVE_EXT,
 * the way e4defrag does: reserve contiguous space in a nameless "donor"
 * file, then let the kernel exchange blocks. The kernel copies the data under
 * the inode locks, so the inode number, hard links, open handles, owner,
 * mode, xattrs and ACLs all stay as they are, and concurrent writers are
 * safe. We only restore atime/mtime afterwards (ctime moves, as it must).
 */
#ifndef ACCELFS_TOOLS_EXT4MOVE_H
#define ACCELFS_TOOLS_EXT4MOVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "copy.h"
#include "fiemap.h"

struct ext4move_job {
	/* in */
	int fd;		      /* the file, open O_RDWR */
	struct stat st;	      /* as it was before we started */
	int dir_fd;	      /* its directory, for the donor */
	struct copy_ctl copy; /* progress callback; bytes moved (out) */
	/* out */
	int donor_fd;
	struct fiemap_stats donor; /* layout of the reserved space */
	const char *failed;
};

/* True when @fd is on ext4 (the ioctl may still refuse, e.g. non-extent files). */
bool ext4move_possible(int fd);

/* Create the donor and reserve space for every data range; fills @job->donor. */
int ext4move_prepare(struct ext4move_job *job);

/*
 * ext4move_run - exchange the blocks range by range. Stops early with -EINTR
 * on a signal or -ESTALE when the file changed size or mtime meanwhile (what
 * was moved stays moved; the data is intact either way).
 */
int ext4move_run(struct ext4move_job *job);

/* Close the donor (which now owns the old blocks, freed on close). */
void ext4move_release(struct ext4move_job *job);

#endif
