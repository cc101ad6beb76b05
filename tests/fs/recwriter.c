// SPDX-License-Identifier: MIT
/*
 * recwriter: writes numbered records and says which ones are durable; used by
 * the shutdown tests (SIGTERM, SIGINT, fusermount3 -u while writes are in
 * flight) to prove that every acknowledged write reached SOURCE.
 *
 *   recwriter FILE ACKLOG    write record 0, 1, 2, ... to FILE (which must
 *                            exist: no O_CREAT, so a vanished mount cannot
 *                            redirect writes into the bare mount point); each
 *                            record is opened, written, fdatasync'ed and
 *                            closed; only then its number is appended to
 *                            ACKLOG.  Runs until an error (exit 0, the mount
 *                            went away) or 200000 records (exit 3: nobody
 *                            stopped the mount).
 *   recwriter -c FILE N      check that records 0..N-1 are intact in FILE;
 *                            exit 0 or 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC 64

static void make(char *r, long i)
{
	unsigned long sum = 5381;
	int k, n;

	n = snprintf(r, REC, "record %010ld ", i);
	for (k = n; k < REC - 9; k++)
		r[k] = 'a' + (i + k) % 26;
	for (k = 0; k < REC - 9; k++)
		sum = sum * 33 + (unsigned char)r[k];
	snprintf(r + REC - 9, 10, "%08lx", sum & 0xffffffffUL);
	r[REC - 1] = '\n';
}

static int write_one(const char *file, long i)
{
	char r[REC + 1];
	int fd, ret = 0;

	make(r, i);
	fd = open(file, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, r, REC, (off_t)i * REC) != REC || fdatasync(fd) < 0)
		ret = errno ? -errno : -EIO;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

static int run(const char *file, const char *acklog)
{
	FILE *ack = fopen(acklog, "w");
	long i;
	int ret;

	if (!ack) {
		perror(acklog);
		return 2;
	}
	setvbuf(ack, NULL, _IOLBF, 0);
	for (i = 0; i < 200000; i++) {
		ret = write_one(file, i);
		if (ret < 0) {
			fprintf(stderr, "recwriter: record %ld: %s (stopping)\n", i,
				strerror(-ret));
			fclose(ack);
			return 0;
		}
		fprintf(ack, "%ld\n", i);
	}
	fclose(ack);
	return 3;
}

static int check(const char *file, long n)
{
	char want[REC + 1], got[REC];
	int fd = open(file, O_RDONLY);
	long i;

	if (fd < 0) {
		perror(file);
		return 1;
	}
	for (i = 0; i < n; i++) {
		make(want, i);
		if (pread(fd, got, REC, (off_t)i * REC) != REC || memcmp(want, got, REC)) {
			printf("recwriter: acknowledged record %ld of %ld is missing or corrupt\n",
			       i, n);
			close(fd);
			return 1;
		}
	}
	close(fd);
	printf("recwriter: all %ld acknowledged records present\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "-c"))
		return check(argv[2], atol(argv[3]));
	if (argc == 3)
		return run(argv[1], argv[2]);
	fprintf(stderr, "usage: recwriter FILE ACKLOG | recwriter -c FILE N\n");
	return 2;
}
