// SPDX-License-Identifier: MIT
/*
 * backend.c - the front of the backend: choosing the mechanism, the
 * single-operation helpers (each a batch of one), and statistics.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_i.h"
#include "clock.h"
#include "probes.h"

/* Process-wide by nature: one backend for every thread of the process, and
 * statistics summed over those threads (each keeps its own, thread-local). */
static enum backend_kind active = BACKEND_SYNC;

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct backend_thread_stats *stats_live; /* under stats_lock */
static struct backend_stats stats_retired;	/* under stats_lock */
static pthread_key_t stats_key;
static pthread_once_t stats_once = PTHREAD_ONCE_INIT;
static __thread struct backend_thread_stats *my_stats;

static void stats_add(struct backend_stats *to, const struct backend_stats *from)
{
	to->reads += __atomic_load_n(&from->reads, __ATOMIC_RELAXED);
	to->writes += __atomic_load_n(&from->writes, __ATOMIC_RELAXED);
	to->fsyncs += __atomic_load_n(&from->fsyncs, __ATOMIC_RELAXED);
	to->fallocates += __atomic_load_n(&from->fallocates, __ATOMIC_RELAXED);
	to->read_bytes += __atomic_load_n(&from->read_bytes, __ATOMIC_RELAXED);
	to->write_bytes += __atomic_load_n(&from->write_bytes, __ATOMIC_RELAXED);
	to->syscalls += __atomic_load_n(&from->syscalls, __ATOMIC_RELAXED);
}

/* Thread exit: fold the thread's counters into the retired totals. */
static void stats_thread_exit(void *arg)
{
	struct backend_thread_stats *ts = arg, **pp;

	pthread_mutex_lock(&stats_lock);
	for (pp = &stats_live; *pp; pp = &(*pp)->next) {
		if (*pp == ts) {
			*pp = ts->next;
			break;
		}
	}
	stats_add(&stats_retired, &ts->s);
	pthread_mutex_unlock(&stats_lock);
	free(ts);
}

static void stats_key_create(void)
{
	pthread_key_create(&stats_key, stats_thread_exit);
}

struct backend_thread_stats *backend_my_stats(void)
{
	static struct backend_thread_stats oom_sink; /* counts lost, I/O still works */
	struct backend_thread_stats *ts = my_stats;

	if (ts)
		return ts;
	pthread_once(&stats_once, stats_key_create);
	ts = calloc(1, sizeof(*ts));
	if (!ts)
		return &oom_sink;
	pthread_mutex_lock(&stats_lock);
	ts->next = stats_live;
	stats_live = ts;
	pthread_mutex_unlock(&stats_lock);
	pthread_setspecific(stats_key, ts);
	my_stats = ts;
	return ts;
}

void backend_count_op(const struct backend_op *op)
{
	struct backend_stats *s = &backend_my_stats()->s;

	if (op->res < 0)
		return;
	switch (op->op) {
	case BACKEND_OP_READ:
		backend_count(&s->reads, 1);
		backend_count(&s->read_bytes, op->res);
		break;
	case BACKEND_OP_WRITE:
		backend_count(&s->writes, 1);
		backend_count(&s->write_bytes, op->res);
		break;
	case BACKEND_OP_FSYNC:
	case BACKEND_OP_FDATASYNC:
		backend_count(&s->fsyncs, 1);
		break;
	case BACKEND_OP_FALLOCATE:
		backend_count(&s->fallocates, 1);
		break;
	}
}

void backend_stats_get(struct backend_stats *out)
{
	struct backend_thread_stats *ts;

	pthread_mutex_lock(&stats_lock);
	*out = stats_retired;
	for (ts = stats_live; ts; ts = ts->next)
		stats_add(out, &ts->s);
	pthread_mutex_unlock(&stats_lock);
}

int backend_init(enum backend_kind want, unsigned int queue_depth, char *why, size_t whylen)
{
	int ret;

	if (whylen)
		why[0] = '\0';
	if (!queue_depth)
		queue_depth = 64;
	if (want == BACKEND_SYNC) {
		active = BACKEND_SYNC;
		return 0;
	}
	ret = uring_probe(queue_depth, why, whylen);
	if (ret == 0) {
		active = BACKEND_URING;
		return 0;
	}
	if (want == BACKEND_URING)
		return ret;
	active = BACKEND_SYNC;
	return 0;
}

enum backend_kind backend_active(void)
{
	return active;
}

const char *backend_kind_name(enum backend_kind kind)
{
	switch (kind) {
	case BACKEND_AUTO:
		return "auto";
	case BACKEND_URING:
		return "uring";
	case BACKEND_SYNC:
		return "sync";
	}
	return "?";
}

int backend_parse_kind(const char *s, enum backend_kind *kind)
{
	if (!strcmp(s, "auto"))
		*kind = BACKEND_AUTO;
	else if (!strcmp(s, "uring") || !strcmp(s, "io_uring"))
		*kind = BACKEND_URING;
	else if (!strcmp(s, "sync"))
		*kind = BACKEND_SYNC;
	else
		return -EINVAL;
	return 0;
}

void backend_thread_release(void)
{
	if (active == BACKEND_URING)
		uring_thread_release();
}

/* Probe arguments (and the clock) cost only while a tracer is attached. */
static uint64_t probe_submit(const struct backend_op *ops, unsigned int n)
{
	unsigned int i;

	if (ACCEL_PROBE_ENABLED(backend_submit))
		for (i = 0; i < n; i++)
			ACCEL_PROBE4(backend_submit, (int)ops[i].op, ops[i].fd,
				     (uint64_t)ops[i].len, (int64_t)ops[i].off);
	return ACCEL_PROBE_ENABLED(backend_complete) ? mono_ns() : 0;
}

static void probe_complete(const struct backend_op *ops, unsigned int n, uint64_t t0)
{
	uint64_t ns = mono_ns() - t0;
	unsigned int i;

	for (i = 0; i < n; i++)
		ACCEL_PROBE4(backend_complete, (int)ops[i].op, ops[i].fd, (int64_t)ops[i].res, ns);
}

int backend_submit(struct backend_op *ops, unsigned int n)
{
	uint64_t t0 = probe_submit(ops, n);
	int ret = active == BACKEND_URING ? uring_submit(ops, n) : sync_submit(ops, n);

	if (t0 && ret == 0)
		probe_complete(ops, n, t0);
	return ret;
}

static ssize_t submit_one(struct backend_op *op)
{
	int ret = backend_submit(op, 1);

	return ret < 0 ? ret : op->res;
}

ssize_t backend_pread(int fd, void *buf, size_t len, off_t off)
{
	struct backend_op op = {
		.op = BACKEND_OP_READ, .fd = fd, .buf = buf, .len = len, .off = off
	};

	return submit_one(&op);
}

ssize_t backend_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	struct backend_op op = {
		.op = BACKEND_OP_WRITE, .fd = fd, .buf = (void *)buf, .len = len, .off = off
	};

	return submit_one(&op);
}

/* Vectors become one op per segment, submitted as one batch. */
static ssize_t submit_vec(enum backend_op_code code, int fd, const struct iovec *iov, int iovcnt,
			  off_t off)
{
	struct backend_op small[16], *ops = small;
	ssize_t total = 0;
	int i, ret;

	if (iovcnt < 0)
		return -EINVAL;
	if (iovcnt > 16 && !(ops = calloc(iovcnt, sizeof(*ops))))
		return -ENOMEM;
	for (i = 0; i < iovcnt; i++) {
		ops[i] = (struct backend_op){ .op = code,
					      .fd = fd,
					      .buf = iov[i].iov_base,
					      .len = iov[i].iov_len,
					      .off = off };
		off += iov[i].iov_len;
	}
	ret = backend_submit(ops, iovcnt);
	for (i = 0; ret == 0 && i < iovcnt; i++) {
		if (ops[i].res < 0) {
			ret = total ? 0 : ops[i].res;
			break;
		}
		total += ops[i].res;
		if ((size_t)ops[i].res < ops[i].len)
			break; /* end of file: later segments are beyond it */
	}
	if (ops != small)
		free(ops);
	return ret < 0 ? ret : total;
}

ssize_t backend_preadv(int fd, const struct iovec *iov, int iovcnt, off_t off)
{
	return submit_vec(BACKEND_OP_READ, fd, iov, iovcnt, off);
}

ssize_t backend_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off)
{
	return submit_vec(BACKEND_OP_WRITE, fd, iov, iovcnt, off);
}

int backend_fsync(int fd, bool datasync)
{
	struct backend_op op = { .op = datasync ? BACKEND_OP_FDATASYNC : BACKEND_OP_FSYNC,
				 .fd = fd };

	return (int)submit_one(&op);
}

int backend_fallocate(int fd, int mode, off_t off, off_t len)
{
	struct backend_op op = {
		.op = BACKEND_OP_FALLOCATE, .fd = fd, .off = off, .len = (size_t)len, .mode = mode
	};

	return (int)submit_one(&op);
}
