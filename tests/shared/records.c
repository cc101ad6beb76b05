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
 *   records append FILE PARITY NREC SIZE START_MS PACE_US
 *       as write, but each record is one write(2) on a descriptor opened
 *       O_APPEND (a log shared by two hosts): where it lands is SOURCE's
 *   records verify-appends NAME FILE NREC SIZE WAIT_MS
 *       reads FILE until it holds NREC intact records, each writer's in the
 *       order written, or WAIT_MS ms passed; prints "count NAME GOOD NREC
 *       [first bad places]" (GOOD: the records at their place in that order)
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

/* the first @len bytes of @path (fewer at its end: their count in *@n), malloc'ed */
static char *read_upto(const char *path, size_t len, ssize_t *n)
{
	char *data = malloc(len);
	int fd;

	if (!data)
		die("out of memory");
	fd = open_file(path, O_RDONLY);
	*n = pread_all(fd, data, len, 0);
	if (*n < 0)
		die("read %s: %s", path, err_name(*n));
	close(fd);
	return data;
}

/* reads the whole file; the number of intact records, the first bad ones in @bad */
static long intact(const char *path, long nrec, long size, char *bad, size_t badlen)
{
	char want[MAX_SIZE];
	long good = 0, shown = 0;
	size_t used = 0;
	ssize_t n;
	char *data = read_upto(path, nrec * size, &n);
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

typedef long check_fn(const char *path, long nrec, long size, char *bad, size_t badlen);

/* @check FILE every 100 ms until all is right or @wait ms passed; print the count */
static int verify(check_fn *check, const char *name, const char *path, long nrec, long size,
		  long wait)
{
	double end = mono_ms() + wait;
	char bad[256];
	long good;

	while ((good = check(path, nrec, size, bad, sizeof(bad))) < nrec && mono_ms() < end)
		sleep_ms(100);
	printf("count %s %ld %ld%s%s\n", name, good, nrec, good < nrec ? " bad:" : "", bad);
	return 0;
}

static int cmd_append(const char *path, long parity, long nrec, long size, long start, long pace)
{
	char buf[MAX_SIZE];
	int fd = open_file(path, O_WRONLY | O_CREAT | O_APPEND);

	for (long i = parity; i < nrec; i += 2) {
		ssize_t n;

		sleep_ms(start + i * pace / 1e3 - wall_ms());
		record_fill(buf, i, size);
		n = write(fd, buf, size);
		if (n != size)
			die("append of record %ld: %s", i, n < 0 ? strerror(errno) : "short");
	}
	if (close(fd) < 0)
		die("close %s: %s", path, strerror(errno));
	return 0;
}

/* records of both writers in any interleaving, each writer's in order */
static long appended(const char *path, long nrec, long size, char *bad, size_t badlen)
{
	char want[MAX_SIZE];
	long good = 0, shown = 0, next[2] = { 0, 1 };
	size_t used = 0;
	ssize_t n;
	/* one record more: a record appended twice shows */
	char *data = read_upto(path, (nrec + 1) * size, &n);
	bad[0] = 0;
	for (long k = 0; k < nrec; k++) {
		char rec[MAX_SIZE + 1] = "";
		long i = -1, p = -1;

		if ((k + 1) * size <= n)
			memcpy(rec, data + k * size, size), rec[size] = 0;
		if (sscanf(rec, "record %ld parity %ld", &i, &p) == 2 && (p == 0 || p == 1) &&
		    i == next[p]) {
			record_fill(want, i, size);
			if (!memcmp(data + k * size, want, size)) {
				next[p] += 2;
				good++;
				continue;
			}
		}
		if (shown++ < SHOW_BAD && used < badlen)
			used += snprintf(bad + used, badlen - used, " %ld", k);
	}
	if (n > nrec * size && used < badlen) /* more than was written: a record twice */
		snprintf(bad + used, badlen - used, " (%zd bytes, not %ld)", n, nrec * size);
	if (n > nrec * size)
		good = 0;
	free(data);
	return good;
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
		return verify(intact, argv[2], argv[3], num(argv[4], "NREC", 1 << 20),
			      num(argv[5], "SIZE", MAX_SIZE), arg_long(argv[6], "WAIT_MS"));
	if (argc == 8 && !strcmp(cmd, "append"))
		return cmd_append(argv[2], num(argv[3], "PARITY", 1), num(argv[4], "NREC", 1 << 20),
				  num(argv[5], "SIZE", MAX_SIZE), arg_long(argv[6], "START_MS"),
				  arg_long(argv[7], "PACE_US"));
	if (argc == 7 && !strcmp(cmd, "verify-appends"))
		return verify(appended, argv[2], argv[3], num(argv[4], "NREC", 1 << 20),
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
			"       records append FILE PARITY NREC SIZE START_MS PACE_US\n"
			"       records verify-appends NAME FILE NREC SIZE WAIT_MS\n"
			"       records init FILE NREC SIZE\n"
			"       records count FILE NREC SIZE ITERS\n"
			"       records counters-check NAME FILE NREC SIZE EXPECT\n");
	return 2;
}
