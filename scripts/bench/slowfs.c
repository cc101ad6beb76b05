// SPDX-License-Identifier: MIT
/*
 * slowfs.c - a FUSE file system that serves the files of one directory and
 * makes every read and write request cost a fixed delay: the "1990s disk"
 * backend of scripts/bench-records.  A loop device with direct I/O over an
 * image file inside a slowfs mount is a block device on which every request
 * costs ~delay_ms, including journal commits and writeback, which cgroup
 * blkio throttling does not charge to the workload (and it lets the first
 * requests of a burst through for free).
 *
 * Requests are served one at a time (run it with -s), like one disk arm.
 * Every open is direct_io, so the kernel caches nothing here and each loop
 * request arrives as its own READ or WRITE (max_write 1 MiB: loop requests
 * are not split).  fsync costs nothing and is not passed on: the model is a
 * write-through disk, whose writes are durable when they complete, and the
 * images are scratch.  The virtual file /.slowfs-stats (not delayed) reads as
 * one line "reads=N writes=N read_bytes=N write_bytes=N fsyncs=N writing=N", so
 * the benchmark can check that the loop device really sends its requests here
 * and a test can see a write being served (writing: writes in their delay).
 *
 * With -o stat_delay_ms=N every stat of a file (a LOOKUP or GETATTR) waits
 * N ms too, and the stats line gains stat_max=N, the most stats that were
 * ever in their delay at once: a test sees whether the client above sends
 * lookups of one directory in parallel (run it without -s for that).
 * The line always ends with read_max=N, the most bytes that reads asked for
 * while in their delay at once: how far ahead of its reader a client above
 * keeps reads in flight (again without -s).
 *
 * usage: slowfs DIR MOUNTPOINT [-o delay_ms=N,stat_delay_ms=N] [FUSE options, e.g. -s -f]
 * Only the top level of DIR is served (no subdirectories, no creation).
 */
#define FUSE_USE_VERSION 314
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATS_NAME "/.slowfs-stats"
#define STATS_SIZE 192 /* the line is padded with spaces to this size */

static struct {
	const char *dir;
	int dirfd;
	unsigned int delay_ms, stat_delay_ms;
	atomic_ullong stat_now, stat_max, read_now, read_max;
	atomic_ullong reads, writes, read_bytes, write_bytes, fsyncs, writing;
} sl;

static const struct fuse_opt slowfs_opts[] = {
	{ "delay_ms=%u", offsetof(__typeof__(sl), delay_ms), 0 },
	{ "stat_delay_ms=%u", offsetof(__typeof__(sl), stat_delay_ms), 0 },
	FUSE_OPT_END
};

/* The most of @now ever seen goes into @max. */
static void note_max(atomic_ullong *max, unsigned long long now)
{
	unsigned long long m = *max;

	while (now > m && !atomic_compare_exchange_weak(max, &m, now))
		;
}

static void slow_down(void)
{
	struct timespec ts = { sl.delay_ms / 1000, (long)(sl.delay_ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* "/name" -> "name" relative to DIR; "/" -> "." */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int stats_line(char *buf)
{
	int n = snprintf(buf, STATS_SIZE + 1,
			 "reads=%llu writes=%llu read_bytes=%llu "
			 "write_bytes=%llu fsyncs=%llu writing=%llu stat_max=%llu read_max=%llu",
			 sl.reads, sl.writes, sl.read_bytes, sl.write_bytes, sl.fsyncs, sl.writing,
			 sl.stat_max, sl.read_max);

	if (n < 0 || n >= STATS_SIZE)
		return -EOVERFLOW;
	memset(buf + n, ' ', STATS_SIZE - 1 - n);
	buf[STATS_SIZE - 1] = '\n';
	return STATS_SIZE;
}

static int sl_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, STATS_NAME) == 0) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = STATS_SIZE;
		return 0;
	}
	if (sl.stat_delay_ms && strcmp(path, "/")) {
		struct timespec ts = { sl.stat_delay_ms / 1000,
				       (long)(sl.stat_delay_ms % 1000) * 1000000L };

		note_max(&sl.stat_max, ++sl.stat_now);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		--sl.stat_now;
	}
	return fstatat(sl.dirfd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int sl_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	DIR *d;
	struct dirent *de;

	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOTDIR;
	d = opendir(sl.dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		fill(buf, de->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int sl_open(const char *path, struct fuse_file_info *fi)
{
	int fd;

	fi->direct_io = 1;
	if (strcmp(path, STATS_NAME) == 0) {
		fi->fh = (uint64_t)-1;
		return (fi->flags & O_ACCMODE) == O_RDONLY ? 0 : -EACCES;
	}
	fd = openat(sl.dirfd, rel(path), (fi->flags & ~(O_CREAT | O_EXCL | O_DIRECT)) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int sl_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	char line[STATS_SIZE + 1];
	ssize_t n;

	(void)path;
	if (fi->fh == (uint64_t)-1) {
		n = stats_line(line);
		if (n < 0 || off >= n)
			return n < 0 ? (int)n : 0;
		n = (size_t)(n - off) < size ? n - off : (ssize_t)size;
		memcpy(buf, line + off, (size_t)n);
		return (int)n;
	}
	note_max(&sl.read_max, sl.read_now += size);
	slow_down();
	sl.read_now -= size;
	n = pread((int)fi->fh, buf, size, off);
	if (n < 0)
		return -errno;
	sl.reads++;
	sl.read_bytes += (unsigned long long)n;
	return (int)n;
}

static int sl_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t n;

	(void)path;
	sl.writing++;
	slow_down();
	n = pwrite((int)fi->fh, buf, size, off);
	sl.writing--;
	if (n < 0)
		return -errno;
	sl.writes++;
	sl.write_bytes += (unsigned long long)n;
	return (int)n;
}

static int sl_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path, (void)datasync, (void)fi;
	sl.fsyncs++;
	return 0;
}

static int sl_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != (uint64_t)-1)
		close((int)fi->fh);
	return 0;
}

static int sl_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	return fstatvfs(sl.dirfd, sv) < 0 ? -errno : 0;
}

static void *sl_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_write = 1 << 20;
	/* the kernel then sends lookups of one directory in parallel (stat_max) */
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	cfg->direct_io = 1;
	cfg->use_ino = 1;
	return NULL;
}

static const struct fuse_operations slowfs_ops = {
	.init = sl_init,
	.getattr = sl_getattr,
	.readdir = sl_readdir,
	.open = sl_open,
	.read = sl_read,
	.write = sl_write,
	.fsync = sl_fsync,
	.release = sl_release,
	.statfs = sl_statfs,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	int ret;

	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: slowfs DIR MOUNTPOINT [-o delay_ms=N] [FUSE options]\n");
		return 2;
	}
	sl.dir = realpath(argv[1], NULL);
	sl.delay_ms = 5;
	sl.dirfd = sl.dir ? open(sl.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (sl.dirfd < 0) {
		fprintf(stderr, "slowfs: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fuse_opt_add_arg(&args, argv[0]);
	for (int i = 2; i < argc; i++)
		fuse_opt_add_arg(&args, argv[i]);
	if (fuse_opt_parse(&args, &sl, slowfs_opts, NULL) < 0)
		return 2;
	ret = fuse_main(args.argc, args.argv, &slowfs_ops, NULL);
	fuse_opt_free_args(&args);
	return ret;
}
