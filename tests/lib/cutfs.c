// SPDX-License-Identifier: MIT
/*
 * cutfs.c - a power-cut simulator for the durability tests, in the way of
 * LazyFS: a FUSE file system serving the top-level files of one directory
 * (a disk image, put on a loop device with direct I/O) that holds every
 * write in memory until fsync, as a disk's volatile write cache would. The
 * loop device turns a flush (REQ_PREFLUSH, the journal's commits, a file
 * system's fsync) into FSYNC here, which writes the held blocks to the
 * image and fdatasyncs it. Writing "cut" to the control file /.cutfs-ctl
 * is the power cut: every held write is dropped, and from then on writes
 * are dropped as they come and fsync does nothing (a dead disk), so the
 * image keeps exactly what was flushed before the cut. "eio" makes the
 * disk fail instead: every write and flush from then on answers EIO (a
 * dying disk, for the write-error tests). "live" ends either.
 *
 * Blocks of 4 KiB; one image at a time (the last opened file); requests
 * are served one at a time (run with -s). Files keep their size (a loop
 * image is never resized).
 *
 * usage: cutfs DIR MOUNTPOINT [FUSE options, e.g. -s -f]
 */
#define FUSE_USE_VERSION 314
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTL_NAME "/.cutfs-ctl"
#define BLK 4096

static struct {
	const char *dir;
	int dirfd;
	bool dead;	/* after "cut": writes are dropped */
	bool failing;	/* after "eio": writes and flushes fail */
	int fd;		/* the image whose writes are held */
	uint8_t **held; /* block -> its held bytes, NULL: the image's */
	size_t nblocks;
	unsigned long long holds, flushes, dropped;
} cf = { .fd = -1 };

static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static void drop_held(void)
{
	for (size_t i = 0; i < cf.nblocks; i++) {
		cf.dropped += cf.held[i] != NULL;
		free(cf.held[i]);
		cf.held[i] = NULL;
	}
}

static int flush_held(void)
{
	for (size_t i = 0; i < cf.nblocks; i++) {
		if (!cf.held[i])
			continue;
		if (pwrite(cf.fd, cf.held[i], BLK, (off_t)i * BLK) != BLK)
			return -EIO;
		free(cf.held[i]);
		cf.held[i] = NULL;
	}
	cf.flushes++;
	return fdatasync(cf.fd) ? -errno : 0;
}

static int cf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	if (!strcmp(path, CTL_NAME)) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG | 0200;
		st->st_nlink = 1;
		return 0;
	}
	return fstatat(cf.dirfd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int cf_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	DIR *d;
	struct dirent *de;

	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	d = opendir(cf.dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		fill(buf, de->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int cf_open(const char *path, struct fuse_file_info *fi)
{
	struct stat st;
	int fd;

	fi->direct_io = 1;
	if (!strcmp(path, CTL_NAME)) {
		fi->fh = (uint64_t)-1;
		return 0;
	}
	fd = openat(cf.dirfd, rel(path), O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return -errno;
	if (cf.fd >= 0) { /* a new image: the old one's held writes are flushed */
		flush_held();
		close(cf.fd);
	}
	free(cf.held);
	cf.nblocks = ((size_t)st.st_size + BLK - 1) / BLK;
	cf.held = calloc(cf.nblocks ? cf.nblocks : 1, sizeof(*cf.held));
	if (!cf.held)
		return -ENOMEM;
	cf.fd = dup(fd);
	fi->fh = (uint64_t)fd;
	return 0;
}

static int cf_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	size_t done = 0;

	(void)path, (void)fi;
	while (done < size) {
		size_t b = (size_t)(off + done) / BLK, boff = (size_t)(off + done) % BLK;
		size_t n = size - done < BLK - boff ? size - done : BLK - boff;
		ssize_t r;

		if (b < cf.nblocks && cf.held[b]) {
			memcpy(buf + done, cf.held[b] + boff, n);
			r = (ssize_t)n;
		} else {
			r = pread(cf.fd, buf + done, n, off + (off_t)done);
			if (r < 0)
				return -errno;
			if (r == 0)
				break;
		}
		done += (size_t)r;
	}
	return (int)done;
}

static int cf_ctl(const char *buf, size_t size)
{
	if (size >= 3 && !strncmp(buf, "cut", 3)) {
		cf.dead = true;
		drop_held();
	} else if (size >= 3 && !strncmp(buf, "eio", 3)) {
		cf.failing = true;
	} else if (size >= 4 && !strncmp(buf, "live", 4)) {
		cf.dead = cf.failing = false;
	} else {
		return -EINVAL;
	}
	return (int)size;
}

static int cf_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	size_t done = 0;

	(void)path;
	if (fi->fh == (uint64_t)-1)
		return cf_ctl(buf, size);
	if (cf.dead)
		return (int)size; /* the disk is off: nothing arrives */
	if (cf.failing)
		return -EIO;
	while (done < size) {
		size_t b = (size_t)(off + done) / BLK, boff = (size_t)(off + done) % BLK;
		size_t n = size - done < BLK - boff ? size - done : BLK - boff;

		if (b >= cf.nblocks)
			return -ENOSPC;
		if (!cf.held[b]) {
			cf.held[b] = calloc(1, BLK);
			if (!cf.held[b] || pread(cf.fd, cf.held[b], BLK, (off_t)b * BLK) < 0)
				return -EIO;
			cf.holds++;
		}
		memcpy(cf.held[b] + boff, buf + done, n);
		done += n;
	}
	return (int)size;
}

static int cf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path, (void)datasync, (void)fi;
	if (cf.failing)
		return -EIO;
	return cf.dead || cf.fd < 0 ? 0 : flush_held();
}

static int cf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)size, (void)fi;
	return strcmp(path, CTL_NAME) ? -EPERM : 0; /* "echo cut >" truncates first */
}

static int cf_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	return 0; /* a close is no flush of a disk cache */
}

static int cf_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != (uint64_t)-1)
		close((int)fi->fh);
	return 0;
}

static int cf_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	return fstatvfs(cf.dirfd, sv) < 0 ? -errno : 0;
}

static void *cf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_write = 1 << 20;
	cfg->direct_io = 1;
	cfg->use_ino = 1;
	return NULL;
}

static void cf_destroy(void *data)
{
	(void)data;
	if (cf.fd >= 0 && !cf.dead)
		flush_held();
	fprintf(stderr, "cutfs: %llu blocks held, %llu flushes, %llu blocks dropped\n", cf.holds,
		cf.flushes, cf.dropped);
}

static const struct fuse_operations cutfs_ops = {
	.init = cf_init,
	.destroy = cf_destroy,
	.getattr = cf_getattr,
	.readdir = cf_readdir,
	.open = cf_open,
	.read = cf_read,
	.write = cf_write,
	.fsync = cf_fsync,
	.truncate = cf_truncate,
	.flush = cf_flush,
	.release = cf_release,
	.statfs = cf_statfs,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	int ret;

	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: cutfs DIR MOUNTPOINT [FUSE options]\n");
		return 2;
	}
	cf.dir = realpath(argv[1], NULL);
	cf.dirfd = cf.dir ? open(cf.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (cf.dirfd < 0) {
		fprintf(stderr, "cutfs: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fuse_opt_add_arg(&args, argv[0]);
	for (int i = 2; i < argc; i++)
		fuse_opt_add_arg(&args, argv[i]);
	ret = fuse_main(args.argc, args.argv, &cutfs_ops, NULL);
	fuse_opt_free_args(&args);
	return ret;
}
