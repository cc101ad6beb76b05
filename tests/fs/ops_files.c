// SPDX-License-Identifier: MIT
/*
 * ops_files.c: ops_compare cases for file data: open/create, read/write,
 * flush/release, fsync, fallocate modes, copy_file_range, SEEK_DATA/SEEK_HOLE,
 * sparse files and a file beyond 4 GiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ops.h"

#define KiB 1024LL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

/* Records the checksum of len bytes at off of fd, and how many were read. */
static void sum_range(const char *label, int fd, off_t off, size_t len)
{
	char *buf = malloc(len);
	ssize_t n;

	n = pread(fd, buf, len, off);
	if (n < 0)
		ops_rec("%s: pread = -1 %s", label, ops_errname(errno));
	else
		ops_rec("%s: got=%zd fnv=%016llx", label, n,
			(unsigned long long)ops_fnv(OPS_FNV_INIT, buf, n));
	free(buf);
}

void ops_case_open(void)
{
	int fd, fd2;

	OPS_CHK("open missing", open("f", O_RDONLY));
	fd = OPS_CHK("create excl", open("f", O_RDWR | O_CREAT | O_EXCL, 0640));
	ops_fstat("created", fd);
	OPS_CHK("create excl again", open("f", O_RDWR | O_CREAT | O_EXCL, 0640));
	OPS_CHK("write", write(fd, "0123456789", 10));
	OPS_CHK("close (flush+release)", close(fd));
	ops_sum("after close", "f");
	fd = OPS_CHK("open O_APPEND", open("f", O_WRONLY | O_APPEND));
	OPS_CHK("lseek 0", lseek(fd, 0, SEEK_SET));
	OPS_CHK("append", write(fd, "abc", 3));
	OPS_CHK("position after append", lseek(fd, 0, SEEK_CUR));
	fd2 = OPS_CHK("dup", dup(fd));
	OPS_CHK("close dup (flush)", close(fd2));
	OPS_CHK("append after dup close", write(fd, "de", 2));
	OPS_CHK("close", close(fd));
	ops_sum("after append", "f");
	fd = OPS_CHK("open O_RDONLY", open("f", O_RDONLY));
	OPS_CHK("write to O_RDONLY", write(fd, "x", 1));
	close(fd);
	fd = OPS_CHK("open O_WRONLY", open("f", O_WRONLY));
	OPS_CHK("read from O_WRONLY", read(fd, &fd2, 1));
	close(fd);
	fd = OPS_CHK("open O_TRUNC", open("f", O_RDWR | O_TRUNC));
	ops_fstat("after O_TRUNC", fd);
	close(fd);
	OPS_CHK("chmod 000", chmod("f", 0));
	OPS_CHK("open mode 000 as owner", ops_open_close("f", O_RDONLY, 0));
	fd = OPS_CHK("creat existing keeps mode", open("f", O_WRONLY | O_CREAT | O_TRUNC, 0777));
	ops_fstat("mode kept", fd);
	close(fd);
}

static void rw_vectors(int fd)
{
	char a[100], b[3000], c[5];
	struct iovec iov[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };

	ops_pattern(a, sizeof(a), 41);
	ops_pattern(b, sizeof(b), 42);
	ops_pattern(c, sizeof(c), 43);
	OPS_CHK("pwritev", pwritev(fd, iov, 3, 8190));
	memset(b, 0, sizeof(b));
	OPS_CHK("preadv", preadv(fd, iov, 3, 8000));
	ops_rec("preadv data fnv=%016llx",
		(unsigned long long)ops_fnv(ops_fnv(OPS_FNV_INIT, a, 100), b, 3000));
}

void ops_case_rw(void)
{
	size_t len = 3 * MiB + 123;
	char *buf = malloc(len);
	int fd;

	ops_pattern(buf, len, 40);
	fd = OPS_CHK("create", open("f", O_RDWR | O_CREAT, 0644));
	OPS_CHK("write 3 MiB", write(fd, buf, len));
	OPS_CHK("pwrite unaligned", pwrite(fd, "XYZ", 3, 4095));
	OPS_CHK("pwrite past EOF", pwrite(fd, "tail", 4, len + 10000));
	ops_fstat("size", fd);
	sum_range("read all", fd, 0, len + 20000);
	sum_range("read across hole", fd, len - 100, 10200);
	sum_range("read at EOF", fd, len + 10004, 100);
	sum_range("read past EOF", fd, len + 99999, 100);
	sum_range("read 1 byte", fd, 4096, 1);
	rw_vectors(fd);
	OPS_CHK("lseek end", lseek(fd, 0, SEEK_END));
	OPS_CHK("lseek negative", lseek(fd, -1, SEEK_SET));
	OPS_CHK("read at end", read(fd, buf, 10));
	OPS_CHK("ftruncate down", ftruncate(fd, 5000));
	sum_range("after ftruncate down", fd, 0, 10000);
	OPS_CHK("ftruncate up", ftruncate(fd, 70000));
	sum_range("after ftruncate up", fd, 0, 80000);
	OPS_CHK("close", close(fd));
	ops_sum("reopened", "f");
	OPS_CHK("truncate path", truncate("f", 12345));
	ops_sum("after truncate", "f");
	OPS_CHK("truncate missing", truncate("g", 1));
	OPS_CHK("truncate negative", truncate("f", -1));
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("truncate dir", truncate("d", 0));
	free(buf);
}

void ops_case_fsync(void)
{
	int fd, dfd;

	fd = open("f", O_RDWR | O_CREAT, 0644);
	OPS_CHK("write", write(fd, "data", 4));
	OPS_CHK("fsync", fsync(fd));
	OPS_CHK("fdatasync", fdatasync(fd));
	OPS_CHK("sync_file_range", sync_file_range(fd, 0, 4, SYNC_FILE_RANGE_WRITE));
	OPS_CHK("syncfs", syncfs(fd));
	close(fd);
	fd = open("f", O_RDONLY);
	OPS_CHK("fsync O_RDONLY", fsync(fd));
	close(fd);
	OPS_CHK("mkdir d", mkdir("d", 0755));
	dfd = OPS_CHK("open dir", open("d", O_RDONLY | O_DIRECTORY));
	OPS_CHK("fsyncdir", fsync(dfd));
	OPS_CHK("fdatasync dir", fdatasync(dfd));
	close(dfd);
	ops_sum("content", "f");
}

static void falloc(const char *label, int fd, int mode, off_t off, off_t len)
{
	char l[128];

	snprintf(l, sizeof(l), "fallocate %s", label);
	OPS_CHK(l, fallocate(fd, mode, off, len));
	snprintf(l, sizeof(l), "after %s", label);
	ops_fstat(l, fd);
	sum_range(l, fd, 0, 1 * MiB);
}

void ops_case_fallocate(void)
{
	int fd;

	ops_mkfile("f", 256 * KiB, 50);
	fd = open("f", O_RDWR);
	falloc("plain extend", fd, 0, 200 * KiB, 200 * KiB);
	falloc("keep size beyond EOF", fd, FALLOC_FL_KEEP_SIZE, 400 * KiB, 100 * KiB);
	falloc("punch hole", fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8 * KiB, 64 * KiB);
	falloc("punch unaligned", fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100001, 5555);
	falloc("punch past EOF", fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 390 * KiB,
	       100 * KiB);
	falloc("punch without keep", fd, FALLOC_FL_PUNCH_HOLE, 0, 4096);
	falloc("zero range", fd, FALLOC_FL_ZERO_RANGE, 150 * KiB, 8000);
	falloc("zero range extend", fd, FALLOC_FL_ZERO_RANGE, 390 * KiB, 50 * KiB);
	falloc("zero range keep", fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 430 * KiB,
	       50 * KiB);
	falloc("zero length", fd, 0, 0, 0);
	falloc("negative offset", fd, 0, -1, 10);
	OPS_CHK("SEEK_HOLE after punch", lseek(fd, 0, SEEK_HOLE));
	OPS_CHK("SEEK_DATA in punched", lseek(fd, 8 * KiB, SEEK_DATA));
	close(fd);
	fd = open("f", O_RDONLY);
	OPS_CHK("fallocate on O_RDONLY", fallocate(fd, 0, 0, 10));
	close(fd);
}

static long copy_all(int in, loff_t *oin, int out, loff_t *oout, size_t len)
{
	long total = 0;
	ssize_t n;

	while (len > 0) {
		n = copy_file_range(in, oin, out, oout, len, 0);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		total += n;
		len -= n;
	}
	return total;
}

void ops_case_copy_range(void)
{
	loff_t oin, oout;
	int in, out;

	ops_mkfile("src", 1 * MiB + 77, 60);
	OPS_CHK("mkdir d", mkdir("d", 0755));
	in = open("src", O_RDONLY);
	out = open("d/dst", O_RDWR | O_CREAT, 0644);
	OPS_CHK("copy whole (fd offsets)", copy_all(in, NULL, out, NULL, 2 * MiB));
	ops_sum("dst after whole", "d/dst");
	oin = 1000;
	oout = 500 * KiB + 3;
	OPS_CHK("copy with offsets", copy_all(in, &oin, out, &oout, 300 * KiB));
	ops_rec("offsets advanced: in=%lld out=%lld", (long long)oin, (long long)oout);
	oin = 2 * MiB;
	OPS_CHK("copy from beyond EOF", copy_all(in, &oin, out, NULL, 100));
	oin = 0;
	oout = 3 * MiB;
	OPS_CHK("copy past dst EOF", copy_all(in, &oin, out, &oout, 4096));
	ops_fstat("dst size", out);
	ops_sum("dst final", "d/dst");
	oin = 0;
	oout = 100;
	OPS_CHK("copy overlapping same file", copy_file_range(out, &oin, out, &oout, 1000, 0));
	OPS_CHK("copy to O_RDONLY", copy_file_range(out, NULL, in, NULL, 10, 0));
	OPS_CHK("copy bad flags", copy_file_range(in, NULL, out, NULL, 10, 1));
	close(out);
	out = open(".", O_RDONLY | O_DIRECTORY);
	OPS_CHK("copy from dir", copy_file_range(out, NULL, in, NULL, 10, 0));
	close(in);
	close(out);
}

void ops_case_lseek(void)
{
	char buf[4096];
	int fd;

	memset(buf, 'd', sizeof(buf));
	fd = open("sparse", O_RDWR | O_CREAT, 0644);
	OPS_CHK("write at 0", pwrite(fd, buf, 4096, 0));
	OPS_CHK("write at 1 MiB", pwrite(fd, buf, 4096, 1 * MiB));
	OPS_CHK("extend to 2 MiB", ftruncate(fd, 2 * MiB));
	OPS_CHK("fsync", fsync(fd));
	OPS_CHK("SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
	OPS_CHK("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
	OPS_CHK("SEEK_DATA 4096", lseek(fd, 4096, SEEK_DATA));
	OPS_CHK("SEEK_HOLE 1 MiB", lseek(fd, 1 * MiB, SEEK_HOLE));
	OPS_CHK("SEEK_DATA after last data", lseek(fd, 1 * MiB + 4096, SEEK_DATA));
	OPS_CHK("SEEK_HOLE at EOF", lseek(fd, 2 * MiB, SEEK_HOLE));
	OPS_CHK("SEEK_DATA past EOF", lseek(fd, 3 * MiB, SEEK_DATA));
	OPS_CHK("SEEK_END", lseek(fd, -10, SEEK_END));
	OPS_CHK("SEEK_CUR", lseek(fd, 5, SEEK_CUR));
	OPS_CHK("read at cur", read(fd, buf, 100));
	OPS_CHK("bad whence", lseek(fd, 0, 42));
	sum_range("hole reads zero", fd, 8192, 4096);
	close(fd);
	fd = open("empty", O_RDWR | O_CREAT, 0644);
	OPS_CHK("SEEK_DATA empty", lseek(fd, 0, SEEK_DATA));
	OPS_CHK("SEEK_HOLE empty", lseek(fd, 0, SEEK_HOLE));
	close(fd);
}

void ops_case_bigfile(void)
{
	struct stat st;
	char buf[4096];
	int fd;

	fd = OPS_CHK("create", open("big", O_RDWR | O_CREAT, 0644));
	OPS_CHK("pwrite at 5 GiB", pwrite(fd, "hello", 5, 5 * GiB));
	OPS_CHK("pwrite at 4 GiB - 2", pwrite(fd, "span", 4, 4 * GiB - 2));
	OPS_CHK("fsync", fsync(fd));
	OPS_CHK("fstat", fstat(fd, &st));
	ops_rec("size=%lld sparse=%d", (long long)st.st_size, st.st_blocks < 256);
	memset(buf, 0, sizeof(buf));
	OPS_CHK("pread at 5 GiB", pread(fd, buf, sizeof(buf), 5 * GiB));
	ops_rec("data at 5 GiB: %.5s", buf);
	sum_range("across 4 GiB", fd, 4 * GiB - 4096, 8192);
	sum_range("hole at 3 GiB", fd, 3 * GiB, 4096);
	OPS_CHK("SEEK_DATA from 4 GiB+4096", lseek(fd, 4 * GiB + 4096, SEEK_DATA));
	OPS_CHK("SEEK_HOLE from 5 GiB", lseek(fd, 5 * GiB, SEEK_HOLE));
	OPS_CHK("ftruncate 6 GiB", ftruncate(fd, 6 * GiB));
	OPS_CHK("ftruncate 4 GiB + 1", ftruncate(fd, 4 * GiB + 1));
	ops_fstat("after truncates", fd);
	sum_range("tail after truncate", fd, 4 * GiB - 4, 100);
	close(fd);
	fd = OPS_CHK("open O_APPEND", open("big", O_WRONLY | O_APPEND));
	OPS_CHK("append beyond 4 GiB", write(fd, "A", 1));
	OPS_CHK("position", lseek(fd, 0, SEEK_CUR));
	close(fd);
	ops_stat("final", "big");
}
