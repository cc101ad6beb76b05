// SPDX-License-Identifier: MIT
/*
 * records.c - the three record workloads of the seed report (001_*, ch. 2)
 * for scripts/bench-records: one system call per 120-byte record, the way
 * COBOL, BASIC and 4GL runtimes do their I/O, so that the benchmark can count
 * how many of those calls reach the backend and the disk.
 *
 *   populate  create PATH, write COUNT records with write(2), one per call
 *   read      read COUNT records from PATH with read(2), one per call,
 *             checking each against the expected contents
 *   update    for each of COUNT records: pread(2) it, change it, pwrite(2)
 *             it back in place
 *   prepare   like populate, untimed use: the input of read and update
 *   check     verify PATH holds COUNT records (updated ones with -u)
 *
 * -s syncs after every record (fsync(2) after each write; not for read).
 * -k SEED varies the contents from run to run, so a cache that served a
 * previous run's file would be caught by the read check.
 * -S DIR also syncfs(2)s DIR at the end (the backend of a FUSE mount: a FUSE
 * file system need not pass syncfs on, and the time must include getting the
 * data to the device for everybody).
 *
 * The time covers open .. last record .. close .. syncfs(PATH's fs) ..
 * syncfs(DIR), CLOCK_MONOTONIC inside the process.  "calls" counts the
 * application's I/O system calls: read/write/pread/pwrite and fsync (not
 * open, close or the final syncfs).  Output, one line of key=value:
 *   workload=update records=1300 recsize=120 sync=0 calls=2600 data_calls=2600
 *   fsync_calls=0 seconds=0.012345 rps=105306
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECSIZE 120

struct run {
	const char *workload, *path, *syncdir;
	long count;
	unsigned long seed;
	int sync, updated;
	long data_calls, fsync_calls;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "records: %s %s: %s\n", what, path, strerror(errno));
	return -1;
}

/* Record i, shaped like WEBTEMP2 (002_*): REQTYPE(10) REQFILE(80) BROWSER(10)
 * REQTS(10) REQSIZE(4) REQUSER(4) GEOID(2) = 120 bytes. */
static void fill(unsigned char *rec, long i, unsigned long seed)
{
	char tmp[RECSIZE + 16];
	unsigned int sz = (unsigned int)((unsigned long)i * 2654435761UL ^ seed);
	unsigned int user = (unsigned int)(i % 977);
	unsigned short geo = (unsigned short)(i % 50);
	int n;

	memset(tmp, ' ', sizeof(tmp));
	n = snprintf(tmp, sizeof(tmp), "%-10s/docs/s%08lu/page%07ld.html", i % 3 ? "GET" : "POST",
		     seed % 100000000UL, i);
	if (n > 0 && n < (int)sizeof(tmp))
		tmp[n] = ' ';
	memcpy(tmp + 90, i % 2 ? "Mozilla/4 " : "MSIE 5.0  ", 10);
	snprintf(tmp + 100, 11, "%010lu", 946684800UL + (unsigned long)i * 37);
	memcpy(tmp + 110, &sz, 4);
	memcpy(tmp + 114, &user, 4);
	memcpy(tmp + 118, &geo, 2);
	memcpy(rec, tmp, RECSIZE);
}

/* The change update makes: REQTYPE becomes "UPDATED". */
static void modify(unsigned char *rec)
{
	memcpy(rec, "UPDATED   ", 10);
}

static int sync_record(struct run *r, int fd)
{
	if (!r->sync)
		return 0;
	r->fsync_calls++;
	return fsync(fd) < 0 ? fail("fsync", r->path) : 0;
}

static int do_populate(struct run *r, int fd)
{
	unsigned char rec[RECSIZE];

	for (long i = 0; i < r->count; i++) {
		fill(rec, i, r->seed);
		r->data_calls++;
		if (write(fd, rec, RECSIZE) != RECSIZE)
			return fail("write", r->path);
		if (sync_record(r, fd) < 0)
			return -1;
	}
	return 0;
}

static int do_read(struct run *r, int fd)
{
	unsigned char rec[RECSIZE], want[RECSIZE];

	for (long i = 0; i < r->count; i++) {
		r->data_calls++;
		if (read(fd, rec, RECSIZE) != RECSIZE)
			return fail("short read of", r->path);
		fill(want, i, r->seed);
		if (r->updated)
			modify(want);
		if (memcmp(rec, want, RECSIZE) != 0) {
			fprintf(stderr, "records: %s: record %ld differs\n", r->path, i);
			return -1;
		}
	}
	return 0;
}

static int do_update(struct run *r, int fd)
{
	unsigned char rec[RECSIZE];

	for (long i = 0; i < r->count; i++) {
		off_t off = (off_t)i * RECSIZE;

		r->data_calls += 2;
		if (pread(fd, rec, RECSIZE, off) != RECSIZE)
			return fail("pread", r->path);
		modify(rec);
		if (pwrite(fd, rec, RECSIZE, off) != RECSIZE)
			return fail("pwrite", r->path);
		if (sync_record(r, fd) < 0)
			return -1;
	}
	return 0;
}

/* syncfs(2) of the file system holding PATH, as `sync -f PATH` does. */
static int syncfs_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return fail("open for syncfs", path);
	ret = syncfs(fd);
	close(fd);
	return ret < 0 ? fail("syncfs", path) : 0;
}

static int run_workload(struct run *r)
{
	int writing = strcmp(r->workload, "read") != 0 && strcmp(r->workload, "check") != 0;
	int flags = strcmp(r->workload, "update") == 0 ? O_RDWR
		    : writing			     ? O_WRONLY | O_CREAT | O_TRUNC
						     : O_RDONLY;
	int fd = open(r->path, flags | O_CLOEXEC, 0644);
	int ret;

	if (fd < 0)
		return fail("open", r->path);
	if (strcmp(r->workload, "update") == 0)
		ret = do_update(r, fd);
	else if (writing)
		ret = do_populate(r, fd);
	else
		ret = do_read(r, fd);
	if (close(fd) < 0 && ret == 0)
		ret = fail("close", r->path);
	if (ret == 0 && writing)
		ret = syncfs_path(r->path);
	if (ret == 0 && r->syncdir)
		ret = syncfs_path(r->syncdir);
	return ret;
}

/* check: the size too, since read stops at COUNT records. */
static int check_size(const struct run *r)
{
	struct stat st;

	if (stat(r->path, &st) < 0)
		return fail("stat", r->path);
	if (st.st_size != (off_t)r->count * RECSIZE) {
		fprintf(stderr, "records: %s has %lld bytes, want %lld\n", r->path,
			(long long)st.st_size, (long long)r->count * RECSIZE);
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: records [-s] [-u] [-k SEED] [-S DIR] "
			"populate|read|update|prepare|check PATH COUNT\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	double t0, t1;
	int c;

	while ((c = getopt(argc, argv, "suk:S:")) != -1) {
		switch (c) {
		case 's': r.sync = 1; break;
		case 'u': r.updated = 1; break;
		case 'k': r.seed = strtoul(optarg, NULL, 10); break;
		case 'S': r.syncdir = optarg; break;
		default: return usage();
		}
	}
	if (argc - optind != 3)
		return usage();
	r.workload = argv[optind];
	r.path = argv[optind + 1];
	r.count = strtol(argv[optind + 2], NULL, 10);
	if (r.count <= 0)
		return usage();
	if (strcmp(r.workload, "check") == 0)
		return check_size(&r) < 0 || run_workload(&r) < 0;
	if (strcmp(r.workload, "prepare") == 0)
		return run_workload(&r) < 0;
	if (strcmp(r.workload, "populate") && strcmp(r.workload, "read") &&
	    strcmp(r.workload, "update"))
		return usage();
	if (r.sync && strcmp(r.workload, "read") == 0) {
		fprintf(stderr, "records: read has no per-record sync variant\n");
		return 2;
	}
	t0 = now();
	if (run_workload(&r) < 0)
		return 1;
	t1 = now();
	printf("workload=%s records=%ld recsize=%d sync=%d calls=%ld data_calls=%ld "
	       "fsync_calls=%ld seconds=%.6f rps=%.0f\n",
	       r.workload, r.count, RECSIZE, r.sync, r.data_calls + r.fsync_calls, r.data_calls,
	       r.fsync_calls, t1 - t0, (double)r.count / (t1 - t0));
	return 0;
}
