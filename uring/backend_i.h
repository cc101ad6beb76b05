/* SPDX-License-Identifier: MIT */
/*
 * backend_i.h - internals shared by the backend dispatcher and its two
 * implementations (backend_uring.c, backend_sync.c). Like Redis's ae.c in
 * front of ae_epoll.c: a tiny interface, one file per mechanism.
 */
#ifndef ACCELFS_URING_BACKEND_I_H
#define ACCELFS_URING_BACKEND_I_H

#include "backend.h"

/*
 * Per-thread counters. Only the owning thread writes them (relaxed atomic
 * stores, no read-modify-write), any thread may read them: statistics never
 * take a lock on the I/O path.
 */
struct backend_thread_stats {
	struct backend_stats s;
	struct backend_thread_stats *next; /* list of live threads, under stats_lock */
};

struct backend_thread_stats *backend_my_stats(void);

static inline void backend_count(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

void backend_count_op(const struct backend_op *op);

/* io_uring implementation: returns -errno when unusable; @why explains. */
int uring_probe(unsigned int queue_depth, char *why, size_t whylen);
int uring_submit(struct backend_op *ops, unsigned int n);
void uring_thread_release(void);

/* Plain system call implementation: always available. */
int sync_submit(struct backend_op *ops, unsigned int n);

#endif
