// SPDX-License-Identifier: MIT
/*
 * ring.c - io_uring ring set-up for one thread (see ring.h).
 */
#include <errno.h>

#include "ring.h"

int uring_ring_init(struct io_uring *ring, unsigned int entries)
{
	int ret = io_uring_queue_init(entries, ring,
				      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);

	if (ret == -EINVAL)
		ret = io_uring_queue_init(entries, ring, 0);
	return ret;
}
