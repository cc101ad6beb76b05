// SPDX-License-Identifier: MIT
/*
 * quotafs.c - a FUSE file system serving a directory, whose writes fail
 * with EDQUOT once a byte budget is spent, as a disk quota would: the
 * SOURCE of the EDQUOT tests where the kernel cannot give ext4 quotas
 * (tests/cachefs/write-quota.sh; CI's kernel lacks CONFIG_QFMT_V2). Every
 * byte written counts, overwrites too; the write that reaches the budget is
 * short, the next ones fail. Writing "limit N" to the control file
 * /.quotafs-ctl sets the budget to N more bytes ("limit -1": none, the
 * start).
 *
 * Files and directories only (no links, no special files, no xattrs: the
 * answers are those of a file system without them); requests one at a
 * time (run with -s).
 *
 * usage: quotafs DIR MOUNTPOINT [FUSE options, e.g. -s -f]
 */
#define FUSE_USE_VERSION 314
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CTL_NAME "/.quotafs-ctl"
#define CTL_FH ((uint64_t)-1)

static struct {
	int dirfd;
	long long budget; /* bytes writes may still take; < 0: no limit */
	unsigned long long refused;
} qf = { .dirfd = -1, .budget = -1 };

static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int qf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	if (!strcmp(path, CTL_NAME)) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		return 0;
	}
	return fstatat(qf.dirfd, rel(path), st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int qf_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	int fd = openat(qf.dirfd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;

	(void)off, (void)fi, (void)flags;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((e = readdir(d)))
		fill(buf, e->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int qf_open(const char *path, struct fuse_file_info *fi)
{
	int fd;

	if (!strcmp(path, CTL_NAME)) {
		fi->fh = CTL_FH;
		return 0;
	}
	fd = openat(qf.dirfd, rel(path), (fi->flags & ~O_NOFOLLOW) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int qf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(qf.dirfd, rel(path), fi->flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int qf_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t r = pread((int)fi->fh, buf, size, off);

	(void)path;
	return r < 0 ? -errno : (int)r;
}

static int qf_ctl(const char *buf, size_t size)
{
	char word[64];
	long long n;

	snprintf(word, sizeof(word), "%.*s", (int)(size < 63 ? size : 63), buf);
	if (sscanf(word, "limit %lld", &n) != 1)
		return -EINVAL;
	qf.budget = n;
	return (int)size;
}

static int qf_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t r;

	(void)path;
	if (fi->fh == CTL_FH)
		return qf_ctl(buf, size);
	if (qf.budget == 0) {
		qf.refused++;
		return -EDQUOT;
	}
	if (qf.budget > 0 && (long long)size > qf.budget)
		size = (size_t)qf.budget;
	r = pwrite((int)fi->fh, buf, size, off);
	if (r < 0)
		return -errno;
	if (qf.budget > 0)
		qf.budget -= r;
	return (int)r;
}

static int qf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh == CTL_FH)
		return 0;
	return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) ? -errno : 0;
}

static int qf_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != CTL_FH)
		close((int)fi->fh);
	return 0;
}

static int qf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (!strcmp(path, CTL_NAME))
		return 0; /* "echo limit N >" truncates first */
	if (fi && fi->fh != CTL_FH)
		return ftruncate((int)fi->fh, size) ? -errno : 0;
	{
		int fd = openat(qf.dirfd, rel(path), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		int ret = fd < 0 || ftruncate(fd, size) ? -errno : 0;

		if (fd >= 0)
			close(fd);
		return ret;
	}
}

static int qf_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)fi;
	return utimensat(qf.dirfd, rel(path), tv, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int qf_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	return fchmodat(qf.dirfd, rel(path), mode, 0) ? -errno : 0;
}

static int qf_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	(void)fi;
	return fchownat(qf.dirfd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int qf_unlink(const char *path)
{
	return unlinkat(qf.dirfd, rel(path), 0) ? -errno : 0;
}

static int qf_mkdir(const char *path, mode_t mode)
{
	return mkdirat(qf.dirfd, rel(path), mode) ? -errno : 0;
}

static int qf_rmdir(const char *path)
{
	return unlinkat(qf.dirfd, rel(path), AT_REMOVEDIR) ? -errno : 0;
}

static int qf_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	return fstatvfs(qf.dirfd, sv) ? -errno : 0;
}

static void *qf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_write = 1 << 20;
	cfg->use_ino = 1;
	cfg->direct_io = 1; /* every write reaches the budget, none waits in a page cache */
	return NULL;
}

static void qf_destroy(void *data)
{
	(void)data;
	fprintf(stderr, "quotafs: %llu writes refused with EDQUOT\n", qf.refused);
}

static const struct fuse_operations quotafs_ops = {
	.init = qf_init,
	.destroy = qf_destroy,
	.getattr = qf_getattr,
	.readdir = qf_readdir,
	.open = qf_open,
	.create = qf_create,
	.read = qf_read,
	.write = qf_write,
	.fsync = qf_fsync,
	.release = qf_release,
	.truncate = qf_truncate,
	.utimens = qf_utimens,
	.chmod = qf_chmod,
	.chown = qf_chown,
	.unlink = qf_unlink,
	.mkdir = qf_mkdir,
	.rmdir = qf_rmdir,
	.statfs = qf_statfs,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	int ret;

	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: quotafs DIR MOUNTPOINT [FUSE options]\n");
		return 2;
	}
	qf.dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (qf.dirfd < 0) {
		fprintf(stderr, "quotafs: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fuse_opt_add_arg(&args, argv[0]);
	for (int i = 2; i < argc; i++)
		fuse_opt_add_arg(&args, argv[i]);
	ret = fuse_main(args.argc, args.argv, &quotafs_ops, NULL);
	fuse_opt_free_args(&args);
	return ret;
}
