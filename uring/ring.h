/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the one way accelfs sets up an io_uring ring.
 *
 * Every ring of accelfs is used by one thread only (a worker's own ring in
 * backend_uring.c, the read-ahead engine's in prefetch.c), which is what
 * IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN promise the kernel:
 * completions are then run in that thread when it waits, not by task work
 * that interrupts it. Kernels before 6.1 refuse these flags with -EINVAL;
 * the ring is then set up without them, which is only slower.
 */
#ifndef ACCELFS_URING_RING_H
#define ACCELFS_URING_RING_H

#include <liburing.h>

/*
 * uring_ring_init - set up @ring with @entries entries for one thread, with
 * the flags above where the kernel takes them. Returns 0 or -errno (the ring
 * is then not set up).
 */
int uring_ring_init(struct io_uring *ring, unsigned int entries);

#endif
