/* SPDX-License-Identifier: MIT */
/*
 * shmlock.h - the one way a lock in shared memory is taken: robust,
 * process-shared, and never waited for without a bound.
 *
 * A lock word in a segment other processes map may be held by a process that
 * is stopped (SIGSTOP, a frozen cgroup) or stuck; waiting for it without a
 * bound would hang the waiter, and with it a mount and its SIGTERM. Every
 * pool and miss-ratio-curve lock is therefore set up and taken here, with a
 * deadline on CLOCK_MONOTONIC; the caller decides what to do without the lock.
 *
 * The timeout policy, the same for every such lock: a wait lasts at most
 * SHM_LOCK_WAIT_NS. A lock that timed out is "suspect" in this process (its
 * holder is stopped, or stuck) and is then waited for only SHM_LOCK_SUSPECT_NS
 * at a time, until it is had again: a stopped holder costs one long wait, not
 * one per operation.
 */
#ifndef ACCELFS_CACHE_SHMLOCK_H
#define ACCELFS_CACHE_SHMLOCK_H

#include <pthread.h>
#include <stdint.h>

/* How long any wait for a lock in shared memory may last. */
#define SHM_LOCK_WAIT_NS 2000000000LL
/* A lock that timed out before is given this much until it is seen free again. */
#define SHM_LOCK_SUSPECT_NS 10000000LL

/*
 * shm_mutex_init - initialise @m, in memory other processes map, as a robust,
 * process-shared mutex. Returns 0 or -errno.
 */
int shm_mutex_init(pthread_mutex_t *m);

/*
 * shm_mutex_lock - lock @m under the timeout policy above. @suspect is this
 * process's note that a wait for @m timed out (threads share it: relaxed
 * atomics): set on ETIMEDOUT, cleared once @m is had. Returns 0, EOWNERDEAD
 * (locked: the caller repairs, then marks it consistent), ETIMEDOUT (not
 * locked), or another positive errno (not locked).
 */
int shm_mutex_lock(pthread_mutex_t *m, uint8_t *suspect);

#endif
