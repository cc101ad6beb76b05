// SPDX-License-Identifier: MIT
/*
 * records.c - fixed-length records written by two hosts into one shared
 * file, the way record-oriented programs (COBOL indexed and relative files,
 * mail spools) share data (tests/shared).
 *
 *   records write FILE PARITY NREC SIZE START_MS PACE_US LOCK
 *       writes the records i = PARITY, PARITY + 2, ... < NREC, record i at
 *       offset i * SIZE with pwrite at wall-clock time START_MS + i * PACE_US,
 *       so two writers (parity 0 on one host, 1 on the other) interleave in
 *       time; LOCK 1 holds an fcntl write lock on the record's bytes around
 *       each write
 *   records verify NAME FILE NREC SIZE WAIT_MS
 *       reads FILE until every record is intact or WAIT_MS ms passed; prints
 *       "count NAME INTACT NREC [first bad records]"
 *   records init FILE NREC SIZE
 *       NREC counter records, every counter 0 (also the blank records a
 *       pre-allocated file of the interleaved writers starts with)
 *   records count FILE NREC SIZE ITERS
 *       ITERS times for each record: fcntl write lock on it (waiting), read
 *       it, add one to its counter, write it back, unlock; the file is open
 *       throughout, as a record-locking program keeps it
 *   records counters-check NAME FILE NREC SIZE EXPECT
 *       prints "count NAME GOOD NREC [counters]": GOOD counters hold EXPECT
 *
 * Exit 0 unless an I/O call failed (1, with the call and errno) or on usage (2).
 */
#include "shutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZE 4096
#define SHOW_BAD 8 /* bad records named in the output */

/* record @i of the interleaved file: its number, its writer, one letter */
static void record_fill(char *buf, long i, long size)
{
	int n = snprintf(buf, size, "record %06ld parity %ld ", i, i % 2);

	memset(buf + n, 'a' + i % 26, size - n - 1);
	buf[size - 1] = '\n';
}

static int open_file(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	return fd;
}

static void lock_record(int fd, long i, long size, short type)
{
	int ret = lock_set(fd, "fcntl", type, (off_t)i * size, size, true);

	if (ret)
		die("fcntl lock of record %ld: %s", i, err_name(ret));
}

static int cmd_write(const char *path, long parity, long nrec, long size, long start, long pace,
		     long lock)
{
	char buf[MAX_SIZE];
	int fd = open_file(path, O_RDWR | O_CREAT);

	for (long i = parity; i < nrec; i += 2) {
		ssize_t n;

		sleep_ms(start + i * pace / 1e3 - wall_ms());
		record_fill(buf, i, size);
		if (lock)
			lock_record(fd, i, size, F_WRLCK);
		n = pwrite_all(fd, buf, size, (off_t)i * size);
		if (n < 0)
			die("pwrite of record %ld: %s", i, err_name(n));
		if (lock)
			lock_record(fd, i, size, F_UNLCK);
	}
	if (close(fd) < 0)
		die("close %s: %s", path, strerror(errno));
	return 0;
}

/* reads the whole file; the number of intact records, the first bad ones in @bad */
static long intact(const char *path, long nrec, long size, char *bad, size_t badlen)
{
	char *data = malloc(nrec * size), want[MAX_SIZE];
	long good = 0, shown = 0;
	size_t used = 0;
	ssize_t n;
	int fd;

	if (!data)
		die("out of memory");
	fd = open_file(path, O_RDONLY);
	n = pread_all(fd, data, nrec * size, 0);
	if (n < 0)
		die("read %s: %s", path, err_name(n));
	close(fd);
	bad[0] = 0;
	for (long i = 0; i < nrec; i++) {
		record_fill(want, i, size);
		if ((i + 1) * size <= n && !memcmp(data + i * size, want, size)) {
			good++;
		} else if (shown++ < SHOW_BAD && used < badlen) {
			used += snprintf(bad + used, badlen - used, " %ld", i);
		}
	}
	free(data);
	return good;
}

static int cmd_verify(const char *name, const char *path, long nrec, long size, long wait)
{
	double end = mono_ms() + wait;
	char bad[256];
	long good;

	while ((good = intact(path, nrec, size, bad, sizeof(bad))) < nrec && mono_ms() < end)
		sleep_ms(100);
	printf("count %s %ld %ld%s%s\n", name, good, nrec, good < nrec ? " bad records:" : "", bad);
	return 0;
}

/* counter record: "counter N", spaces, newline */
static void counter_fill(char *buf, unsigned long v, long size)
{
	int n = snprintf(buf, size, "counter %012lu", v);

	memset(buf + n, ' ', size - n - 1);
	buf[size - 1] = '\n';
}

static int cmd_init(const char *path, long nrec, long size)
{
	char buf[MAX_SIZE];
	int fd = open_file(path, O_RDWR | O_CREAT | O_TRUNC);

	counter_fill(buf, 0, size);
	for (long i = 0; i < nrec; i++) {
		if (pwrite_all(fd, buf, size, (off_t)i * size) < 0)
			die("pwrite %s: %s", path, strerror(errno));
	}
	if (fsync(fd) < 0 || close(fd) < 0)
		die("fsync/close %s: %s", path, strerror(errno));
	return 0;
}

static unsigned long counter_read(int fd, long i, long size)
{
	char buf[MAX_SIZE + 1];
	ssize_t n = pread_all(fd, buf, size, (off_t)i * size);
	unsigned long v;

	if (n != size)
		die("read of record %ld: %s", i, n < 0 ? err_name(n) : "short");
	buf[size] = 0;
	if (sscanf(buf, "counter %lu", &v) != 1)
		die("record %ld is not a counter: %.20s", i, buf);
	return v;
}

static int cmd_count(const char *path, long nrec, long size, long iters)
{
	char buf[MAX_SIZE];
	int fd = open_file(path, O_RDWR);

	for (long it = 0; it < iters; it++) {
		for (long i = 0; i < nrec; i++) {
			ssize_t n;

			lock_record(fd, i, size, F_WRLCK);
			counter_fill(buf, counter_read(fd, i, size) + 1, size);
			n = pwrite_all(fd, buf, size, (off_t)i * size);
			if (n < 0)
				die("pwrite of record %ld: %s", i, err_name(n));
			lock_record(fd, i, size, F_UNLCK);
		}
	}
	if (close(fd) < 0)
		die("close %s: %s", path, strerror(errno));
	return 0;
}

static int cmd_check(const char *name, const char *path, long nrec, long size, long expect)
{
	int fd = open_file(path, O_RDONLY);
	long good = 0;

	printf("count %s", name);
	for (long i = 0; i < nrec; i++)
		good += counter_read(fd, i, size) == (unsigned long)expect;
	printf(" %ld %ld counters:", good, nrec);
	for (long i = 0; i < nrec; i++)
		printf(" %lu", counter_read(fd, i, size));
	printf(" (each should be %ld)\n", expect);
	close(fd);
	return 0;
}

static long num(const char *s, const char *what, long max)
{
	long v = arg_long(s, what);

	if (v > max)
		die("%s %ld is above %ld", what, v, max);
	return v;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (argc == 9 && !strcmp(cmd, "write"))
		return cmd_write(argv[2], num(argv[3], "PARITY", 1), num(argv[4], "NREC", 1 << 20),
				 num(argv[5], "SIZE", MAX_SIZE), arg_long(argv[6], "START_MS"),
				 arg_long(argv[7], "PACE_US"), num(argv[8], "LOCK", 1));
	if (argc == 7 && !strcmp(cmd, "verify"))
		return cmd_verify(argv[2], argv[3], num(argv[4], "NREC", 1 << 20),
				  num(argv[5], "SIZE", MAX_SIZE), arg_long(argv[6], "WAIT_MS"));
	if (argc == 5 && !strcmp(cmd, "init"))
		return cmd_init(argv[2], num(argv[3], "NREC", 1 << 20),
				num(argv[4], "SIZE", MAX_SIZE));
	if (argc == 6 && !strcmp(cmd, "count"))
		return cmd_count(argv[2], num(argv[3], "NREC", 1 << 20),
				 num(argv[4], "SIZE", MAX_SIZE), arg_long(argv[5], "ITERS"));
	if (argc == 7 && !strcmp(cmd, "counters-check"))
		return cmd_check(argv[2], argv[3], num(argv[4], "NREC", 1 << 20),
				 num(argv[5], "SIZE", MAX_SIZE), arg_long(argv[6], "EXPECT"));
	fprintf(stderr, "usage: records write FILE PARITY NREC SIZE START_MS PACE_US LOCK\n"
			"       records verify NAME FILE NREC SIZE WAIT_MS\n"
			"       records init FILE NREC SIZE\n"
			"       records count FILE NREC SIZE ITERS\n"
			"       records counters-check NAME FILE NREC SIZE EXPECT\n");
	return 2;
}
