// SPDX-License-Identifier: MIT
/*
 * seghdr.c - a pool segment's header, read without attaching: the one reader
 * of it for the tools that list, describe or remove pools (`accel pool`,
 * `accel sysgen`), including pools pool_open() refuses (another layout
 * version, a corrupt geometry), which must still be named before removal.
 *
 * Only the immutable part of the header means anything here: the creator
 * stores magic last (release), so a copy that shows POOL_MAGIC holds the
 * geometry the creator wrote. The caller has checked the descriptor with
 * pool_seg_trusted() (pool_seg_open() does).
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool.h"

int pool_seg_header(int fd, struct pool_header *h, uint64_t *size)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPROTO;
	n = pread(fd, h, sizeof(*h), 0);
	if (n < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	if ((size_t)n < sizeof(*h) || h->magic != POOL_MAGIC)
		return -EPROTO;
	return 0;
}
