// SPDX-License-Identifier: MIT
/*
 * fiemap.c - read a file's extent list and measure its fragmentation.
 * The merge rules are written once in fiemap.h; defrag, analyze and the tests
 * all use these numbers so "better" means the same thing everywhere.
 */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "fiemap.h"
#include "util.h"

#define FIEMAP_BATCH 256

int fiemap_push(struct fiemap_map *map, const struct fiemap_x *x)
{
	struct fiemap_x *ext;

	if ((map->n & (map->n - 1)) == 0) { /* n is 0 or a power of two: grow */
		ext = realloc(map->ext, (map->n ? map->n * 2 : 16) * sizeof(*ext));
		if (!ext)
			return -ENOMEM;
		map->ext = ext;
	}
	map->ext[map->n++] = *x;
	return 0;
}

void fiemap_free(struct fiemap_map *map)
{
	free(map->ext);
	map->ext = NULL;
	map->n = 0;
}

static uint32_t x_flags(uint32_t kflags)
{
	uint32_t flags = 0;

	if (kflags & FIEMAP_EXTENT_UNWRITTEN)
		flags |= FIEMAP_X_UNWRITTEN;
	if (kflags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
		      FIEMAP_EXTENT_NOT_ALIGNED))
		flags |= FIEMAP_X_NOPHYS;
	return flags;
}

/* One FIEMAP call from *@start; sets *@last when the kernel says it is done. */
static int read_batch(int fd, struct fiemap *fm, struct fiemap_map *map, uint64_t *start, int *last)
{
	struct fiemap_x x;
	unsigned int i;
	int ret;

	memset(fm, 0, sizeof(*fm));
	fm->fm_start = *start;
	fm->fm_length = FIEMAP_MAX_OFFSET - *start;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = FIEMAP_BATCH;
	if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0)
		return errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno;
	*last = fm->fm_mapped_extents == 0;
	for (i = 0; i < fm->fm_mapped_extents; i++) {
		const struct fiemap_extent *fe = &fm->fm_extents[i];

		x.logical = fe->fe_logical;
		x.physical = fe->fe_physical;
		x.length = fe->fe_length;
		x.flags = x_flags(fe->fe_flags);
		ret = fiemap_push(map, &x);
		if (ret < 0)
			return ret;
		*start = fe->fe_logical + fe->fe_length;
		if (fe->fe_flags & FIEMAP_EXTENT_LAST)
			*last = 1;
	}
	return 0;
}

int fiemap_read(int fd, struct fiemap_map *map)
{
	struct fiemap *fm;
	uint64_t start = 0;
	int last = 0, ret = 0;

	map->ext = NULL;
	map->n = 0;
	if (util_test_flag("ACCEL_TEST_NO_FIEMAP"))
		return -EOPNOTSUPP;
	fm = calloc(1, sizeof(*fm) + FIEMAP_BATCH * sizeof(struct fiemap_extent));
	if (!fm)
		return -ENOMEM;
	while (!last && ret == 0)
		ret = read_batch(fd, fm, map, &start, &last);
	free(fm);
	if (ret < 0)
		fiemap_free(map);
	return ret;
}

/* Does @b continue @a on disk as well as in the file? */
static int continues(const struct fiemap_x *a, const struct fiemap_x *b)
{
	if ((a->flags | b->flags) & FIEMAP_X_NOPHYS)
		return 0;
	return a->logical + a->length == b->logical && a->physical + a->length == b->physical;
}

static void count_hole(struct fiemap_stats *st, uint64_t from, uint64_t to)
{
	if (to > st->size)
		to = st->size;
	if (to > from) {
		st->holes++;
		st->hole_bytes += to - from;
	}
}

/* The extents a data run of @len bytes needs at best, @unit bytes at a time. */
static uint64_t run_extents(uint64_t len, uint64_t unit)
{
	return unit && len > unit ? (len + unit - 1) / unit : 1;
}

void fiemap_stats(const struct fiemap_map *map, uint64_t size, uint64_t unit,
		  struct fiemap_stats *st)
{
	uint64_t end = 0, run = 0; /* logical end of the previous extent; start of its run */
	size_t i;

	memset(st, 0, sizeof(*st));
	st->size = size;
	st->kernel_extents = map->n;
	for (i = 0; i < map->n; i++) {
		const struct fiemap_x *x = &map->ext[i];

		st->mapped += x->length;
		if (x->flags & FIEMAP_X_UNWRITTEN)
			st->unwritten++;
		if (i == 0 || !continues(&map->ext[i - 1], x))
			st->extents++;
		if (i == 0 || x->logical != end) {
			if (i)
				st->ideal += run_extents(end - run, unit);
			st->data_runs++;
			run = x->logical;
		}
		count_hole(st, end, x->logical);
		end = x->logical + x->length;
	}
	if (map->n)
		st->ideal += run_extents(end - run, unit);
	count_hole(st, end, size);
	if (st->extents > st->ideal)
		st->score = 100.0 * (double)(st->extents - st->ideal) / (double)st->extents;
}
