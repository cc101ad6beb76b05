// SPDX-License-Identifier: MIT
/*
 * backend_uring.c - the io_uring backend.
 *
 * Threading model: one ring per thread that does I/O, created on the
 * thread's first request and torn down when the thread exits. The FUSE
 * daemon's workers each handle one request at a time and need its result
 * before replying, so a private ring gives them batching (all segments of a
 * request, or all ops a caller hands to backend_submit(), go in with one
 * io_uring_enter()) without any lock or cross-thread wakeup. A shared ring
 * with a completion thread would add two context switches per request for
 * no gain at these queue depths. Rings are SINGLE_ISSUER|DEFER_TASKRUN where
 * the kernel has it, which suits exactly this one-thread-per-ring use.
 *
 * A batch of one op that io_uring would hand to an io-wq worker thread is
 * made as the plain system call instead (inline_better): the ring gains
 * nothing for one op, and the hand-off costs a wake-up of that worker.
 * fsync, fdatasync and fallocate are always handed off; so are buffered
 * writes on a file system without async buffered writes (ext4). Measured
 * (docs/benchmarks.md, "Closes, single writes and deferred write under the
 * writeback cache"): 8 KiB WRITE requests, each one backend write, 30 us
 * through the ring against 21 us; SQLite in DELETE mode 2.77 s with fsync
 * on the ring against 2.49 s. Reads stay on the ring: a cached page
 * completes inline, and a miss is read asynchronously without a worker.
 *
 * If a thread cannot get a ring (memory, limits) it quietly does its I/O
 * through the sync backend: same results, just more system calls.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "backend_i.h"
#include "ring.h"

/* Largest transfer one SQE carries (its length field is 32 bits). */
#define URING_MAX_IO (1U << 30)

struct thread_ring {
	struct io_uring ring;
	unsigned int depth;
};

/* Process-wide by nature: each thread's ring is its own (thread-local); the
 * depth they are made with is the process's, set once by uring_probe(). */
static unsigned int ring_depth = 64;
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static __thread struct thread_ring *my_ring;
static __thread bool my_ring_failed;

static void ring_free(void *arg)
{
	struct thread_ring *tr = arg;

	io_uring_queue_exit(&tr->ring);
	free(tr);
}

static void ring_key_create(void)
{
	pthread_key_create(&ring_key, ring_free);
}

static struct thread_ring *ring_get(void)
{
	struct thread_ring *tr = my_ring;

	if (tr || my_ring_failed)
		return tr;
	pthread_once(&ring_once, ring_key_create);
	tr = calloc(1, sizeof(*tr));
	if (!tr || uring_ring_init(&tr->ring, ring_depth) < 0) {
		free(tr);
		my_ring_failed = true;
		return NULL;
	}
	tr->depth = ring_depth;
	pthread_setspecific(ring_key, tr);
	my_ring = tr;
	return tr;
}

void uring_thread_release(void)
{
	if (my_ring) {
		pthread_setspecific(ring_key, NULL);
		ring_free(my_ring);
		my_ring = NULL;
	}
}

int uring_probe(unsigned int queue_depth, char *why, size_t whylen)
{
	static const int needed[] = { IORING_OP_READ, IORING_OP_WRITE, IORING_OP_FSYNC,
				      IORING_OP_FALLOCATE };
	struct io_uring_probe *probe;
	struct io_uring ring;
	unsigned int i;
	int ret;

	ret = uring_ring_init(&ring, queue_depth);
	if (ret < 0) {
		snprintf(why, whylen, "io_uring_setup failed: %s", strerror(-ret));
		return ret;
	}
	probe = io_uring_get_probe_ring(&ring);
	for (i = 0; probe && i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (!io_uring_opcode_supported(probe, needed[i])) {
			snprintf(why, whylen, "io_uring lacks opcode %d", needed[i]);
			ret = -EOPNOTSUPP;
		}
	}
	if (probe)
		io_uring_free_probe(probe);
	io_uring_queue_exit(&ring);
	if (ret == 0)
		ring_depth = queue_depth;
	return ret;
}

static void prep(struct io_uring_sqe *sqe, struct backend_op *op, size_t done)
{
	unsigned int len = op->len - done > URING_MAX_IO ? URING_MAX_IO : op->len - done;

	switch (op->op) {
	case BACKEND_OP_READ:
		io_uring_prep_read(sqe, op->fd, (char *)op->buf + done, len, op->off + done);
		break;
	case BACKEND_OP_WRITE:
		io_uring_prep_write(sqe, op->fd, (char *)op->buf + done, len, op->off + done);
		break;
	case BACKEND_OP_FSYNC:
		io_uring_prep_fsync(sqe, op->fd, 0);
		break;
	case BACKEND_OP_FDATASYNC:
		io_uring_prep_fsync(sqe, op->fd, IORING_FSYNC_DATASYNC);
		break;
	case BACKEND_OP_FALLOCATE:
		io_uring_prep_fallocate(sqe, op->fd, op->mode, op->off, (off_t)op->len);
		break;
	}
}

/*
 * Fold one completion into its op. Returns true when the op is finished,
 * false when a short transfer must be resubmitted for the rest.
 */
static bool complete(struct backend_op *op, size_t *done, int res)
{
	bool rw = op->op == BACKEND_OP_READ || op->op == BACKEND_OP_WRITE;

	if (res == -EINTR || res == -EAGAIN)
		return false;
	if (!rw) {
		op->res = res < 0 ? res : 0;
		return true;
	}
	if (res < 0) {
		op->res = *done ? (ssize_t)*done : res;
		return true;
	}
	if (res == 0) {
		op->res =
		    *done ? (ssize_t)*done : (op->op == BACKEND_OP_WRITE && op->len ? -EIO : 0);
		return true;
	}
	*done += res;
	if (*done >= op->len) {
		op->res = *done;
		return true;
	}
	return false;
}

/* The ring is in an unknown state: drop it, the thread goes on with sync I/O. */
static void ring_abandon(void)
{
	uring_thread_release();
	my_ring_failed = true;
}

/*
 * Submit ops[0..n) (n <= ring depth) and wait for all of them with one
 * io_uring_enter(), resubmitting the rest of any short transfer.
 */
static int run_chunk(struct thread_ring *tr, struct backend_op *ops, unsigned int n, size_t *done)
{
	struct backend_stats *s = &backend_my_stats()->s;
	struct io_uring_cqe *cqe;
	unsigned int i, head, seen, inflight = 0;
	int ret;

	for (i = 0; i < n; i++) {
		done[i] = 0;
		if ((ops[i].op == BACKEND_OP_READ || ops[i].op == BACKEND_OP_WRITE) &&
		    !ops[i].len) {
			ops[i].res = 0;
			continue;
		}
		struct io_uring_sqe *sqe = io_uring_get_sqe(&tr->ring);

		prep(sqe, &ops[i], 0);
		io_uring_sqe_set_data64(sqe, i);
		inflight++;
	}
	while (inflight) {
		ret = io_uring_submit_and_wait(&tr->ring, inflight);
		backend_count(&s->syscalls, 1);
		if (ret < 0 && ret != -EINTR)
			return ret;
		seen = 0;
		io_uring_for_each_cqe(&tr->ring, head, cqe)
		{
			i = (unsigned int)io_uring_cqe_get_data64(cqe);
			seen++;
			if (i >= n)
				continue;
			if (complete(&ops[i], &done[i], cqe->res)) {
				inflight--;
				backend_count_op(&ops[i]);
				continue;
			}
			struct io_uring_sqe *sqe = io_uring_get_sqe(&tr->ring);

			prep(sqe, &ops[i], done[i]);
			io_uring_sqe_set_data64(sqe, i);
		}
		io_uring_cq_advance(&tr->ring, seen);
	}
	return 0;
}

/* Would io_uring run this op on an io-wq worker? (see the top of the file) */
static bool inline_better(const struct backend_op *op)
{
	return op->op != BACKEND_OP_READ;
}

int uring_submit(struct backend_op *ops, unsigned int n)
{
	struct thread_ring *tr;
	size_t done[64];
	unsigned int chunk;
	int ret;

	if (n == 1 && inline_better(ops))
		return sync_submit(ops, 1);
	tr = ring_get();
	while (n) {
		if (!tr)
			return sync_submit(ops, n);
		chunk = n < tr->depth ? n : tr->depth;
		if (chunk > 64)
			chunk = 64;
		ret = run_chunk(tr, ops, chunk, done);
		if (ret < 0) {
			ring_abandon();
			return ret;
		}
		ops += chunk;
		n -= chunk;
	}
	return 0;
}
