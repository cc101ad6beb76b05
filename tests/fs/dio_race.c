// SPDX-License-Identifier: MIT
/*
 * dio_race: direct writes racing buffered reads of the same range (xfstests
 * generic/451, issue 28). A reader thread reads the range through the page
 * cache in a loop while the main thread writes a new pattern over it with
 * O_DIRECT, asynchronously (Linux AIO, io_submit) or plainly (pwrite); once
 * a write has completed, a buffered read of the range must return the new
 * pattern, never the old one a racing read left in the page cache.
 *
 *   dio_race aio|sync|setfl FILE ITERATIONS
 *
 * setfl: asynchronous too, through a descriptor opened without O_DIRECT and
 * given it with fcntl(F_SETFL) (the file system opened it as a cached one).
 *
 * Exit 0: every read after a write saw it; 1: a stale read (or an error);
 * 77: the file system refuses O_DIRECT or AIO here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LEN (64 * 1024)
#define ALIGN 4096

static int rfd;
static int stop; /* atomic */

static void *reader(void *arg)
{
	char *buf = malloc(LEN);

	(void)arg;
	while (buf && !__atomic_load_n(&stop, __ATOMIC_RELAXED))
		if (pread(rfd, buf, LEN, 0) < 0)
			break;
	free(buf);
	return NULL;
}

static void fill(char *buf, int i)
{
	for (size_t k = 0; k < LEN; k++)
		buf[k] = (char)('A' + (i + k / ALIGN) % 26);
}

/* One direct write of @buf at 0, completed before returning: 0 or -errno. */
static int write_aio(aio_context_t ctx, int fd, char *buf)
{
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PWRITE,
			   .aio_fildes = (unsigned int)fd,
			   .aio_buf = (uint64_t)(uintptr_t)buf,
			   .aio_nbytes = LEN };
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;

	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		return -errno;
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		return -errno;
	return ev.res == LEN ? 0 : ev.res < 0 ? (int)ev.res : -EIO;
}

int main(int argc, char **argv)
{
	aio_context_t ctx = 0;
	char *buf = NULL, *seen = NULL;
	bool setfl = argc == 4 && !strcmp(argv[1], "setfl");
	bool aio = setfl || (argc == 4 && !strcmp(argv[1], "aio"));
	int fd, iters = argc == 4 ? atoi(argv[3]) : 0, stale = 0, ret = 0;
	pthread_t t;

	if (iters <= 0 || (!aio && strcmp(argv[1], "sync"))) {
		fprintf(stderr, "usage: dio_race aio|sync|setfl FILE ITERATIONS\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | (setfl ? 0 : O_DIRECT), 0644);
	if (fd >= 0 && setfl && fcntl(fd, F_SETFL, O_DIRECT)) {
		printf("SKIP: fcntl(F_SETFL, O_DIRECT) on %s: %s\n", argv[2], strerror(errno));
		return 77;
	}
	if (fd < 0) {
		printf("SKIP: O_DIRECT open of %s: %s\n", argv[2], strerror(errno));
		return 77;
	}
	if (aio && syscall(SYS_io_setup, 1, &ctx)) {
		printf("SKIP: io_setup: %s\n", strerror(errno));
		return 77;
	}
	rfd = open(argv[2], O_RDONLY);
	seen = malloc(LEN); /* after the skips: a skip leaks nothing (LSan) */
	if (!seen || rfd < 0 || posix_memalign((void **)&buf, ALIGN, LEN)) {
		perror("setup");
		return 1;
	}
	fill(buf, 0);
	if (pwrite(fd, buf, LEN, 0) != LEN) {
		printf("SKIP: O_DIRECT write: %s\n", strerror(errno));
		free(buf);
		free(seen);
		return 77;
	}
	pthread_create(&t, NULL, reader, NULL);
	for (int i = 1; i <= iters && !ret; i++) {
		fill(buf, i);
		ret = aio ? write_aio(ctx, fd, buf) : pwrite(fd, buf, LEN, 0) == LEN ? 0 : -errno;
		if (ret) {
			fprintf(stderr, "write %d: %s\n", i, strerror(-ret));
			break;
		}
		if (pread(rfd, seen, LEN, 0) != LEN) {
			perror("buffered read");
			ret = 1;
			break;
		}
		for (size_t k = 0; k < LEN; k += ALIGN)
			if (memcmp(seen + k, buf + k, ALIGN)) {
				if (!stale++)
					fprintf(stderr,
						"write %d: stale page at %zu: '%c', wrote '%c'\n",
						i, k, seen[k], buf[k]);
				break;
			}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (aio)
		syscall(SYS_io_destroy, ctx);
	printf("%s: %d of %d buffered reads after a direct write were stale\n", argv[1], stale,
	       iters);
	free(buf);
	free(seen);
	return ret || stale ? 1 : 0;
}
