// SPDX-License-Identifier: MIT
/*
 * copy.c - copy data ranges with batched backend I/O and checksum files.
 *
 * A batch is up to COPY_BATCH reads of COPY_CHUNK bytes submitted together,
 * then the matching writes submitted together: with io_uring each half is
 * one system call, and the buffers are reused for the whole file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "copy.h"
#include "util.h"

#define COPY_CHUNK (1U << 20)
#define COPY_BATCH 8U

struct batch {
	void *buf[COPY_BATCH];
	struct backend_op op[COPY_BATCH];
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

void copy_sum_update(uint64_t *sum, uint64_t off, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t word, idx = off / 8;
	size_t i;

	for (i = 0; i < len; i += 8, idx++) {
		word = 0;
		memcpy(&word, p + i, len - i < 8 ? len - i : 8);
		if (word)
			*sum += mix64(word + idx * 0x9e3779b97f4a7c15ULL);
	}
}

int copy_next_data(int fd, uint64_t from, uint64_t size, struct copy_range *r)
{
	off_t start, end;

	if (from >= size)
		return 0;
	start = lseek(fd, (off_t)from, SEEK_DATA);
	if (start < 0 && errno == ENXIO)
		return 0;
	if (start < 0 && errno != EINVAL)
		return -errno;
	if (start < 0) { /* no SEEK_DATA: all data */
		r->start = from;
		r->end = size;
		return 1;
	}
	end = lseek(fd, start, SEEK_HOLE);
	if (end < 0)
		return -errno;
	if ((uint64_t)start >= size)
		return 0;
	r->start = (uint64_t)start;
	r->end = (uint64_t)end < size ? (uint64_t)end : size;
	return 1;
}

static void batch_free(struct batch *b)
{
	unsigned int i;

	for (i = 0; i < COPY_BATCH; i++)
		free(b->buf[i]);
}

static int batch_alloc(struct batch *b)
{
	unsigned int i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < COPY_BATCH; i++) {
		if (posix_memalign(&b->buf[i], 4096, COPY_CHUNK)) {
			batch_free(b);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Queue reads of [pos, end) in chunks; returns the number of ops. */
static unsigned int batch_reads(struct batch *b, int fd, uint64_t pos, uint64_t end)
{
	unsigned int n;

	for (n = 0; n < COPY_BATCH && pos < end; n++) {
		b->op[n] = (struct backend_op){
			.op = BACKEND_OP_READ, .fd = fd, .buf = b->buf[n], .off = (off_t)pos
		};
		b->op[n].len = end - pos < COPY_CHUNK ? end - pos : COPY_CHUNK;
		pos += b->op[n].len;
	}
	return n;
}

/* Submit @n ops; returns total bytes, or the first -errno. */
static ssize_t batch_run(struct batch *b, unsigned int n)
{
	ssize_t total = 0;
	unsigned int i;
	int ret;

	ret = backend_submit(b->op, n);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		if (b->op[i].res < 0)
			return b->op[i].res;
		total += b->op[i].res;
	}
	return total;
}

static int stop_requested(void)
{
	if (util_stop_sig)
		return -EINTR;
	return util_lease_broken ? -EBUSY : 0;
}

/* Copy [r->start, r->end); a short read (the file shrank) ends the range early. */
static int copy_range(int in, int out, const struct copy_range *r, struct batch *b,
		      struct copy_ctl *ctl)
{
	uint64_t pos = r->start;
	unsigned int i, n;
	ssize_t got, put;

	while (pos < r->end) {
		if (stop_requested())
			return stop_requested();
		n = batch_reads(b, in, pos, r->end);
		got = batch_run(b, n);
		if (got < 0)
			return (int)got;
		for (i = 0; i < n; i++) {
			b->op[i].op = BACKEND_OP_WRITE;
			b->op[i].fd = out;
			b->op[i].len = (size_t)b->op[i].res;
		}
		put = batch_run(b, n);
		if (put < 0)
			return (int)put;
		if (put != got)
			return -EIO;
		ctl->bytes += (uint64_t)got;
		if (ctl->progress)
			ctl->progress(ctl->offset + ctl->bytes, ctl->arg);
		if (got == 0)
			break;
		pos += (uint64_t)got;
	}
	return 0;
}

/* Extend to @size for trailing holes. Never truncate to the size the file already
 * has: ext4 then drops the blocks preallocated beyond EOF. */
static int set_size(int fd, uint64_t size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size == size)
		return 0;
	return ftruncate(fd, (off_t)size) < 0 ? -errno : 0;
}

int copy_data(int in, int out, uint64_t size, struct copy_ctl *ctl)
{
	struct copy_range r = { 0, 0 };
	struct batch b;
	int ret;

	ret = batch_alloc(&b);
	while (ret == 0) {
		ret = copy_next_data(in, r.end, size, &r);
		if (ret <= 0)
			break;
		ret = copy_range(in, out, &r, &b, ctl);
	}
	if (ret == 0)
		ret = stop_requested();
	if (ret == 0)
		ret = set_size(out, size);
	batch_free(&b);
	return ret;
}

/* Sum [start, end) (both multiples of 8 except a final end) chunk by chunk. */
static int sum_range(int fd, uint64_t start, uint64_t end, void *buf, uint64_t *sum,
		     const struct copy_ctl *ctl)
{
	ssize_t got;
	size_t len;

	while (start < end) {
		len = end - start < COPY_CHUNK ? end - start : COPY_CHUNK;
		got = backend_pread(fd, buf, len, (off_t)start);
		if (got < 0)
			return (int)got;
		copy_sum_update(sum, start, buf, (size_t)got);
		if (ctl && ctl->progress)
			ctl->progress(ctl->offset + start + (uint64_t)got, ctl->arg);
		if ((size_t)got < len)
			return 0; /* end of file: the rest reads as zeros */
		start += len;
	}
	return 0;
}

int copy_checksum(int fd, uint64_t size, uint64_t *sum, const struct copy_ctl *ctl)
{
	struct copy_range r = { 0, 0 };
	uint64_t done = 0, start, end;
	void *buf;
	int ret;

	*sum = 0;
	if (posix_memalign(&buf, 4096, COPY_CHUNK))
		return -ENOMEM;
	for (;;) {
		ret = copy_next_data(fd, r.end, size, &r);
		if (ret <= 0)
			break;
		start = r.start & ~7ULL; /* whole words: a word is summed once, whole */
		if (start < done)
			start = done;
		end = (r.end + 7) & ~7ULL;
		ret = sum_range(fd, start, end, buf, sum, ctl);
		if (ret < 0)
			break;
		done = end;
	}
	free(buf);
	return ret;
}
