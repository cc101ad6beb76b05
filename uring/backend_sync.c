// SPDX-License-Identifier: MIT
/*
 * backend_sync.c - the fallback backend: one plain system call per step.
 * Same contract as the io_uring backend (full reads and writes, -errno),
 * so callers see identical behaviour whichever is active.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "backend_i.h"

static ssize_t sync_rw(struct backend_op *op, struct backend_stats *s)
{
	size_t done = 0;

	while (done < op->len) {
		char *p = (char *)op->buf + done;
		ssize_t n;

		if (op->op == BACKEND_OP_READ)
			n = pread(op->fd, p, op->len - done, op->off + done);
		else
			n = pwrite(op->fd, p, op->len - done, op->off + done);
		backend_count(&s->syscalls, 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0) {
			if (op->op == BACKEND_OP_WRITE)
				return done ? (ssize_t)done : -EIO;
			break; /* end of file */
		}
		done += n;
	}
	return done;
}

static ssize_t sync_one(struct backend_op *op, struct backend_stats *s)
{
	int ret;

	switch (op->op) {
	case BACKEND_OP_READ:
	case BACKEND_OP_WRITE:
		return sync_rw(op, s);
	case BACKEND_OP_FSYNC:
		ret = fsync(op->fd);
		break;
	case BACKEND_OP_FDATASYNC:
		ret = fdatasync(op->fd);
		break;
	case BACKEND_OP_FALLOCATE:
		ret = fallocate(op->fd, op->mode, op->off, (off_t)op->len);
		break;
	default:
		return -EINVAL;
	}
	backend_count(&s->syscalls, 1);
	return ret < 0 ? -errno : 0;
}

int sync_submit(struct backend_op *ops, unsigned int n)
{
	struct backend_stats *s = &backend_my_stats()->s;
	unsigned int i;

	for (i = 0; i < n; i++) {
		ops[i].res = sync_one(&ops[i], s);
		backend_count_op(&ops[i]);
	}
	return 0;
}
