// SPDX-License-Identifier: MIT
/*
 * pool_workload.c - a known workload on a global buffer pool, through the
 * cache library's stream front exactly as the daemon will drive it, so the
 * tests of accel stat and accel monitor can expect exact counters.
 *
 *   pool_workload POOL NBUFS BSIZE [--hold] FILE:NLOCAL:PASSES:WRITES...
 *
 * Creates (or attaches to) POOL with NBUFS buffers of BSIZE bytes. For each
 * operand, in order: opens a stream on FILE with NLOCAL local buffers, reads
 * the whole file PASSES times bucket by bucket, then rewrites its first
 * WRITES buckets with the bytes they hold (write-invalidate). Streams are
 * closed after their operand, or with --hold kept open (active streams)
 * until standard input reaches end of file; "ready" is printed once all
 * operands ran. Exits 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream.h"

#define MAX_STREAMS 16

static ssize_t backend_read(void *arg, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(*(int *)arg, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static int read_passes(struct stream *st, int *fd, size_t bsize, uint64_t size, int passes)
{
	char *buf = malloc(bsize);

	for (int p = 0; buf && p < passes; p++) {
		for (uint64_t off = 0; off < size; off += bsize) {
			if (stream_read(st, buf, bsize, off, backend_read, fd) < 0) {
				free(buf);
				return -1;
			}
		}
	}
	free(buf);
	return buf ? 0 : -1;
}

static int write_buckets(struct stream *st, int fd, size_t bsize, int writes)
{
	char *buf = malloc(bsize);
	int ret = buf ? 0 : -1;

	for (int w = 0; !ret && w < writes; w++) {
		uint64_t off = (uint64_t)w * bsize;
		ssize_t n = pread(fd, buf, bsize, (off_t)off);

		if (n <= 0 || stream_write_begin(st, off, (size_t)n))
			ret = -1;
		else
			ret = stream_write_end(st, off, pwrite(fd, buf, (size_t)n, (off_t)off)) ? -1
												: 0;
	}
	free(buf);
	return ret;
}

static struct stream *run_op(struct pool *pool, size_t bsize, char *op)
{
	char *path = strtok(op, ":"), *l = strtok(NULL, ":"), *p = strtok(NULL, ":");
	char *w = strtok(NULL, ":");
	struct pool_file_id id;
	struct stream *st = NULL;
	struct stat sb;
	int fd;

	if (!path || !l || !p || !w || (fd = open(path, O_RDWR)) < 0 || fstat(fd, &sb) < 0) {
		fprintf(stderr, "pool_workload: bad operand or file '%s'\n", path ? path : "");
		return NULL;
	}
	id = (struct pool_file_id){ .dev = sb.st_dev,
				    .ino = sb.st_ino,
				    .size = sb.st_size,
				    .mtime_ns =
					sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec,
				    .ctime_ns =
					sb.st_ctim.tv_sec * 1000000000LL + sb.st_ctim.tv_nsec };
	if (stream_open(pool, &id, path, 0, (unsigned int)atoi(l), &st) ||
	    read_passes(st, &fd, bsize, (uint64_t)sb.st_size, atoi(p)) ||
	    write_buckets(st, fd, bsize, atoi(w))) {
		fprintf(stderr, "pool_workload: %s: stream failed\n", path);
		stream_close(st);
		st = NULL;
	}
	close(fd);
	return st;
}

int main(int argc, char **argv)
{
	struct pool_config cfg = { 0 };
	struct stream *held[MAX_STREAMS];
	struct pool *pool;
	char err[256], c;
	int i = 4, n = 0, hold;

	if (argc < 5) {
		fprintf(stderr, "usage: pool_workload POOL NBUFS BSIZE [--hold] "
				"FILE:NLOCAL:PASSES:WRITES...\n");
		return 1;
	}
	cfg = (struct pool_config){ .name = argv[1],
				    .nbufs = (uint32_t)atoi(argv[2]),
				    .bucket_size = (uint32_t)atoi(argv[3]),
				    .err = err,
				    .errlen = sizeof(err) };
	if (pool_open(&cfg, &pool)) {
		fprintf(stderr, "pool_workload: %s\n", err);
		return 1;
	}
	hold = strcmp(argv[i], "--hold") == 0;
	for (i += hold; i < argc && n < MAX_STREAMS; i++) {
		struct stream *st = run_op(pool, pool_bucket_size(pool), argv[i]);

		if (!st)
			return 1;
		if (hold)
			held[n++] = st;
		else
			stream_close(st);
	}
	printf("ready\n");
	fflush(stdout);
	while (hold && read(0, &c, 1) > 0)
		;
	while (n)
		stream_close(held[--n]);
	pool_close(pool);
	return 0;
}
