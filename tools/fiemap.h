/* SPDX-License-Identifier: MIT */
/*
 * fiemap.h - where a file's bytes are on disk, and how far that is from ideal.
 *
 * fiemap_read() asks the kernel (FS_IOC_FIEMAP, after syncing delayed
 * allocations) for every extent of a file. fiemap_stats() is pure arithmetic
 * on that list, so it is unit-tested without a file system.
 *
 * Terms used across accel and docs/defrag.md:
 *  - kernel extent: one FIEMAP record. ext4 splits extents at 128 MiB even
 *    when the blocks continue, so this count overstates fragmentation.
 *  - extent (what accel reports): a run of kernel extents that continue each
 *    other both logically and physically. Seeking happens between extents.
 *  - data run: a logically contiguous stretch of data between holes. A file
 *    cannot have fewer extents than data runs.
 *  - ideal: the fewest extents the file system can give the file: one per
 *    data run, or more where a run is longer than the file system can keep
 *    contiguous (the unit, fslimit.h: ext4's block group): ceil(run / unit)
 *    per run.
 */
#ifndef ACCELFS_TOOLS_FIEMAP_H
#define ACCELFS_TOOLS_FIEMAP_H

#include <stddef.h>
#include <stdint.h>

#define FIEMAP_X_UNWRITTEN 0x1 /* allocated, reads as zeros */
#define FIEMAP_X_NOPHYS 0x2    /* no meaningful physical address (inline, encoded) */

struct fiemap_x {
	uint64_t logical;
	uint64_t physical;
	uint64_t length;
	uint32_t flags; /* FIEMAP_X_* */
};

struct fiemap_map {
	struct fiemap_x *ext;
	size_t n;
};

struct fiemap_stats {
	uint64_t size;	 /* file size (input) */
	uint64_t mapped; /* bytes covered by extents, preallocation included */
	uint64_t kernel_extents;
	uint64_t extents;   /* merged as described above */
	uint64_t data_runs; /* runs of data between holes */
	uint64_t ideal;	    /* the fewest extents the file system can give (>= data_runs) */
	uint64_t holes;	    /* gaps inside [0, size) */
	uint64_t hole_bytes;
	uint64_t unwritten; /* kernel extents flagged unwritten */
	double score;	    /* 0 = ideal .. approaching 100 = one extent per block */
};

/*
 * fiemap_read - fill @map with all extents of @fd in logical order.
 * Returns 0, -EOPNOTSUPP when the file system has no FIEMAP (also forced by
 * ACCEL_TEST_NO_FIEMAP=1), -ENOMEM or another -errno. Free with fiemap_free().
 */
int fiemap_read(int fd, struct fiemap_map *map);

void fiemap_free(struct fiemap_map *map);

/* Append one extent; returns 0 or -ENOMEM. (Used by fiemap_read and tests.) */
int fiemap_push(struct fiemap_map *map, const struct fiemap_x *x);

/*
 * fiemap_stats - summarise @map for a file of @size bytes on a file system
 * that keeps at most @unit bytes contiguous (0: no limit; fslimit_unit()).
 * The score is 100 * (extents - ideal) / extents: 0 at the ideal, 50 when
 * there are twice as many extents as needed, 90 at ten times.
 */
void fiemap_stats(const struct fiemap_map *map, uint64_t size, uint64_t unit,
		  struct fiemap_stats *st);

#endif
