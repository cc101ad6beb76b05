// SPDX-License-Identifier: MIT
/*
 * seek_holes: where SEEK_DATA and SEEK_HOLE find data in a sparse file
 * (xfstests generic/436 and 539, issue 28), printed so that a run through
 * the mount can be compared with one in a local directory.
 *
 *   seek_holes DIR
 *
 * Makes DIR/sparse (8 MiB: data at 1 MiB, a small write at 3 MiB, 4 KiB at
 * 6 MiB, holes between) and DIR/tail (ending in data) and prints, one line
 * each: the data extents and single probes (inside data, inside a hole, at
 * and past EOF: ENXIO) asked through the writer while nothing is synced,
 * through a second, read-only descriptor, after fsync, and after reopening;
 * then copies DIR/sparse with cp --sparse=always and with plain cp while
 * the writer still holds it unsynced, and prints whether each copy has the
 * same bytes and the copy's own extents (its holes kept). Exit 0 unless
 * something could not be run; the comparison is the caller's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024L * 1024)
#define SIZE (8 * MiB)

static const char *dir;

static void seek_print(int fd, off_t off, int whence)
{
	off_t r = lseek(fd, off, whence);

	if (r < 0)
		printf(" %s(%ld)=%s", whence == SEEK_DATA ? "D" : "H", (long)off, strerror(errno));
	else
		printf(" %s(%ld)=%ld", whence == SEEK_DATA ? "D" : "H", (long)off, (long)r);
}

/* The data extents of @fd as SEEK_DATA/SEEK_HOLE report them, then single probes. */
static void map(const char *what, int fd)
{
	off_t off = 0, data, hole;

	printf("%s: extents", what);
	while ((data = lseek(fd, off, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole <= data) {
			printf(" bad hole %ld after data %ld", (long)hole, (long)data);
			break;
		}
		printf(" %ld-%ld", (long)data, (long)hole);
		off = hole;
	}
	if (data < 0 && errno != ENXIO)
		printf(" error %s", strerror(errno));
	printf(";");
	seek_print(fd, MiB + 100, SEEK_DATA);
	seek_print(fd, MiB + 100, SEEK_HOLE);
	seek_print(fd, 2 * MiB, SEEK_DATA);
	seek_print(fd, 7 * MiB, SEEK_HOLE);
	seek_print(fd, SIZE, SEEK_DATA);
	seek_print(fd, SIZE, SEEK_HOLE);
	seek_print(fd, SIZE + MiB, SEEK_DATA);
	printf("\n");
}

static void put(int fd, char c, size_t len, off_t off)
{
	char *buf = malloc(len);

	memset(buf, c, len);
	if (!buf || pwrite(fd, buf, len, off) != (ssize_t)len) {
		perror("pwrite");
		exit(2);
	}
	free(buf);
}

static int run(const char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status)
									       : -1;
}

/* Does @path have the bytes of @fd? */
static bool same(const char *path, int fd)
{
	static char a[65536], b[65536];
	int cfd = open(path, O_RDONLY);
	bool eq = cfd >= 0;

	for (off_t off = 0; eq && off < SIZE; off += sizeof(a))
		eq = pread(cfd, a, sizeof(a), off) == (ssize_t)sizeof(a) &&
		     pread(fd, b, sizeof(b), off) == (ssize_t)sizeof(b) && !memcmp(a, b, sizeof(a));
	if (cfd >= 0)
		close(cfd);
	return eq;
}

/* cp @how (NULL: plain) of DIR/sparse while its writer has not synced it. */
static void copy(const char *how, int fd)
{
	char src[4096], dst[4096];
	const char *argv[] = { "cp", how ? how : src, how ? src : dst, how ? dst : NULL, NULL };
	int cfd;

	snprintf(src, sizeof(src), "%s/sparse", dir);
	snprintf(dst, sizeof(dst), "%s/copy%s", dir, how ? how + 9 : "");
	if (run(argv)) {
		printf("cp %s: failed\n", how ? how : "");
		return;
	}
	printf("cp %s: %s\n", how ? how : "(plain)",
	       same(dst, fd) ? "same bytes" : "DIFFERENT BYTES");
	cfd = open(dst, O_RDONLY);
	if (cfd >= 0) {
		map(how ? "its copy" : "the plain copy", cfd);
		close(cfd);
	}
}

static int open_at(const char *name, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags, 0644);
	if (fd < 0) {
		perror(path);
		exit(2);
	}
	return fd;
}

int main(int argc, char **argv)
{
	int fd, rfd;

	if (argc != 2) {
		fprintf(stderr, "usage: seek_holes DIR\n");
		return 2;
	}
	dir = argv[1];
	fd = open_at("sparse", O_RDWR | O_CREAT | O_TRUNC);
	if (ftruncate(fd, SIZE)) {
		perror("ftruncate");
		return 2;
	}
	put(fd, 'a', 64 * 1024, MiB);	 /* a bucket: written through */
	put(fd, 'b', 100, 3 * MiB + 10); /* small: deferred where it may be */
	put(fd, 'c', 4096, 6 * MiB);
	map("writer, not synced", fd);
	rfd = open_at("sparse", O_RDONLY);
	map("reader, not synced", rfd);
	copy("--sparse=always", rfd);
	copy(NULL, rfd);
	put(fd, 'e', 4096, 5 * MiB); /* more, through the writer, after the reader opened */
	map("reader after another write", rfd);
	if (fsync(fd)) {
		perror("fsync");
		return 2;
	}
	map("writer after fsync", fd);
	close(fd);
	close(rfd);
	rfd = open_at("sparse", O_RDONLY);
	map("reopened", rfd);
	close(rfd);
	fd = open_at("tail", O_RDWR | O_CREAT | O_TRUNC);
	put(fd, 't', 4096, SIZE - 4096); /* ends in data: the hole at EOF */
	map("tail, not synced", fd);
	close(fd);
	return 0;
}
