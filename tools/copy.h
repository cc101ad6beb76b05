/* SPDX-License-Identifier: MIT */
/*
 * copy.h - move a file's data into another file, holes included, and prove
 * the result is identical.
 *
 * Data ranges are found with SEEK_DATA/SEEK_HOLE, so holes stay holes, and
 * are moved in batches of large reads and writes through uring/backend.h
 * (one io_uring_enter per batch). The checksum is position-keyed and skips
 * zero words, so a hole and a run of written zeros sum the same and a
 * range's contribution does not depend on how it was split into reads.
 */
#ifndef ACCELFS_TOOLS_COPY_H
#define ACCELFS_TOOLS_COPY_H

#include <signal.h>
#include <stdint.h>

struct copy_ctl {
	/* in */
	void (*progress)(uint64_t bytes, void *arg); /* after each batch, may be NULL */
	void *arg;
	uint64_t offset; /* added to the bytes progress() is told: earlier passes' work */
	/* out */
	uint64_t bytes; /* data bytes copied */
};

/* A data range [start, end) of a file. */
struct copy_range {
	uint64_t start;
	uint64_t end;
};

/*
 * copy_next_data - the first data range at or after @from in a file of @size.
 * Returns 1 with @r filled, 0 when there is no more data, or -errno. Where
 * SEEK_DATA is unsupported, everything up to @size counts as data.
 */
int copy_next_data(int fd, uint64_t from, uint64_t size, struct copy_range *r);

/*
 * copy_data - copy every data range of @in below @size to the same offsets
 * of @out, then set @out's size to @size. Stops with -EINTR when a signal set
 * util_stop_sig and -EBUSY when util_lease_broken was set. Returns 0 or -errno.
 */
int copy_data(int in, int out, uint64_t size, struct copy_ctl *ctl);

/*
 * copy_checksum - checksum of the first @size bytes of @fd (holes read as
 * zeros). @ctl (may be NULL) is told the bytes read so far, plus its offset.
 */
int copy_checksum(int fd, uint64_t size, uint64_t *sum, const struct copy_ctl *ctl);

/*
 * The checksum arithmetic, exposed for the unit tests: add @len bytes found at
 * file offset @off. @off must be a multiple of 8; a short last word is padded
 * with zeros, so only the piece that ends a range (or the file) may be short.
 */
void copy_sum_update(uint64_t *sum, uint64_t off, const void *buf, size_t len);

#endif
