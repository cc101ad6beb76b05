/* SPDX-License-Identifier: MIT */
/*
 * backend.h - file data I/O for accelfs: io_uring, or plain system calls.
 *
 * Everything that moves file data to or from a backing store goes through
 * here, so the rest of accelfs never cares which mechanism is in use. The
 * io_uring backend keeps one ring per calling thread (created on first use,
 * freed when the thread exits), so threads never contend for a ring lock and
 * a batch of operations costs one io_uring_enter(). When io_uring cannot be
 * used (kernel.io_uring_disabled, a seccomp filter, an old kernel) the sync
 * backend does the same work with pread/pwrite/fsync/fallocate.
 *
 * All functions return >= 0 on success and -errno on failure. Reads and
 * writes are "full": they retry short transfers, so a read returns less than
 * asked only at end of file.
 */
#ifndef ACCELFS_URING_BACKEND_H
#define ACCELFS_URING_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

enum backend_kind {
	BACKEND_AUTO = 0, /* io_uring if it works, else sync with a warning */
	BACKEND_URING,	  /* io_uring or fail */
	BACKEND_SYNC,	  /* pread/pwrite */
};

/* Counters, summed over all threads that ever did I/O. */
struct backend_stats {
	uint64_t reads;	 /* read operations completed */
	uint64_t writes; /* write operations completed */
	uint64_t fsyncs; /* fsync + fdatasync */
	uint64_t fallocates;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t syscalls; /* io_uring_enter() or plain I/O system calls issued */
};

enum backend_op_code {
	BACKEND_OP_READ,
	BACKEND_OP_WRITE,
	BACKEND_OP_FSYNC,
	BACKEND_OP_FDATASYNC,
	BACKEND_OP_FALLOCATE,
};

/* One operation of a batch; @res receives bytes transferred (or 0) or -errno. */
struct backend_op {
	enum backend_op_code op;
	int fd;
	void *buf;  /* READ/WRITE */
	size_t len; /* READ/WRITE/FALLOCATE */
	off_t off;
	int mode; /* FALLOCATE */
	ssize_t res;
};

/*
 * backend_init - choose the backend for the whole process.
 * @want: AUTO tries io_uring and falls back; URING fails when io_uring does not
 *        work; SYNC never touches io_uring.
 * @queue_depth: entries of each thread's ring (0 means 64).
 * @why/@whylen: when AUTO fell back, a one-line reason for the caller to log;
 *        otherwise set to "".
 * Returns 0, or -errno when @want is URING and io_uring is unusable.
 */
int backend_init(enum backend_kind want, unsigned int queue_depth, char *why, size_t whylen);

/* The backend actually in use (URING or SYNC) after backend_init(). */
enum backend_kind backend_active(void);

const char *backend_kind_name(enum backend_kind kind);

/* Parse "auto", "uring" or "sync". Returns 0 or -EINVAL. */
int backend_parse_kind(const char *s, enum backend_kind *kind);

/* Free the calling thread's ring now (otherwise done at thread exit). */
void backend_thread_release(void);

ssize_t backend_pread(int fd, void *buf, size_t len, off_t off);
ssize_t backend_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t backend_preadv(int fd, const struct iovec *iov, int iovcnt, off_t off);
ssize_t backend_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off);
int backend_fsync(int fd, bool datasync);
int backend_fallocate(int fd, int mode, off_t off, off_t len);

/*
 * backend_submit - run @n independent operations, submitted together.
 * Each op's @res is filled in. Reads and writes are full as above.
 * Returns 0 when every op ran (check each @res), or -errno if the batch
 * could not be submitted at all.
 */
int backend_submit(struct backend_op *ops, unsigned int n);

void backend_stats_get(struct backend_stats *out);

#endif
