/* SPDX-License-Identifier: MIT */
/*
 * fslimit.h - how long a contiguous run of a file the file system under it
 * can give, so that "ideal" means the fewest extents this file can have
 * there, not one per data run regardless.
 *
 * ext2/3/4 allocate within block groups: a group starts with (or, with
 * flex_bg, may start with) a backup superblock, group descriptors, bitmaps
 * or inode tables, so data cannot be relied on to run on from one group
 * into the next. One extent per group is the best ext4 promises: 128 MiB
 * with 4 KiB blocks (32768 blocks per group, 8 x the block size, one bitmap
 * block's bits). ext4's largest extent, 32768 blocks, is the same 128 MiB
 * there, and accel merges extent records that continue on disk anyway
 * (fiemap.h), so it adds no limit of its own. The group size is read from
 * the superblock when the device can be read (root), else it is mkfs.ext4's
 * default for the block size statfs() gives, and the description says so.
 * A file mapped by indirect blocks (ext2/3, or ext4 without extents) is
 * interrupted by an indirect block every block_size / 4 blocks.
 * Other file systems: no limit known (unit 0); ideal stays one per data run.
 */
#ifndef ACCELFS_TOOLS_FSLIMIT_H
#define ACCELFS_TOOLS_FSLIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct fslimit {
	dev_t dev;	   /* the file system described (st_dev), for reuse */
	bool valid;	   /* filled in for @dev */
	uint64_t group;	   /* ext*: bytes per block group; 0 not ext* */
	uint64_t indirect; /* ext*: bytes between indirect blocks of a block-mapped file */
	bool from_sb;	   /* group read from the superblock, not estimated */
	char fs[8];	   /* "ext4", or "" */
};

/*
 * fslimit_unit - the longest run, in bytes, the file system of @fd can give
 * this file (0: no limit known), refreshing @l when @fd is on another file
 * system than it describes (keep one @l per run: the superblock is read
 * once per file system). @why gets "ext4 block groups of 128.0 MiB" (with
 * "(estimated)" when not read from the superblock), or "" for 0. Never fails.
 */
uint64_t fslimit_unit(int fd, struct fslimit *l, char *why, size_t len);

#endif
