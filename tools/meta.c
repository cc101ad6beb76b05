// SPDX-License-Identifier: MIT
/*
 * meta.c - copy metadata from a file to its replacement.
 *
 * Order, and why:
 *  1. extended attributes, ACLs included (setting an ACL rewrites mode bits);
 *  2. the accelfs attributes the FDL asks for (replace or remove);
 *  3. inode flags such as noatime/nodump (immutable/append-only are never
 *     copied: such files are refused before we start);
 *  4. owner, then mode (fchown clears set-user-ID, so fchmod comes after);
 *  5. atime and mtime last, because every step above changes ctime and may
 *     change mtime. ctime itself cannot be set by any system call.
 */
#include <errno.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "meta.h"
#include "tuning.h"

/* Flags worth keeping that any owner may set after the file exists. */
#define META_LATE_FLAGS (FS_NOATIME_FL | FS_NODUMP_FL | FS_SYNC_FL | FS_NOCOMP_FL)

static bool is_accelfs(const char *name)
{
	return strncmp(name, TUNING_PREFIX, strlen(TUNING_PREFIX)) == 0;
}

/* flistxattr into a malloc'ed buffer; *@len = 0 when there are none. */
static int list_names(int fd, char **names, ssize_t *len)
{
	ssize_t n;

	*names = NULL;
	*len = flistxattr(fd, NULL, 0);
	if (*len < 0 && errno == ENOTSUP)
		*len = 0; /* a file system without xattrs has none to copy */
	if (*len < 0)
		return -errno;
	if (*len == 0)
		return 0;
	*names = malloc((size_t)*len);
	if (!*names)
		return -ENOMEM;
	n = flistxattr(fd, *names, (size_t)*len);
	if (n < 0) {
		free(*names);
		*names = NULL;
		return errno == ERANGE ? -EAGAIN : -errno;
	}
	*len = n;
	return 0;
}

/* fgetxattr into a malloc'ed buffer. */
static int get_value(int fd, const char *name, char **val, ssize_t *len)
{
	*len = fgetxattr(fd, name, NULL, 0);
	if (*len < 0)
		return -errno;
	*val = malloc((size_t)*len + 1);
	if (!*val)
		return -ENOMEM;
	*len = fgetxattr(fd, name, *val, (size_t)*len);
	if (*len < 0) {
		free(*val);
		return errno == ERANGE ? -EAGAIN : -errno;
	}
	return 0;
}

/* Copy one attribute; the accelfs ones only when @with_accelfs. */
static int copy_one(int src, int dst, const char *name, bool with_accelfs)
{
	ssize_t len;
	char *val;
	int ret;

	if (is_accelfs(name) && !with_accelfs)
		return 0;
	ret = get_value(src, name, &val, &len);
	if (ret == -ENODATA)
		return 0; /* removed meanwhile */
	if (ret < 0)
		return ret;
	ret = fsetxattr(dst, name, val, (size_t)len, 0) < 0 ? -errno : 0;
	free(val);
	return ret;
}

static int copy_xattrs(int src, int dst, bool with_accelfs)
{
	ssize_t len, off;
	char *names;
	int ret;

	ret = list_names(src, &names, &len);
	for (off = 0; ret == 0 && off < len; off += (ssize_t)strlen(names + off) + 1)
		ret = copy_one(src, dst, names + off, with_accelfs);
	free(names);
	return ret;
}

int meta_accelfs_load(int fd, struct fdl *fdl)
{
	ssize_t len, off, vlen;
	char *names, *val;
	int ret;

	ret = list_names(fd, &names, &len);
	for (off = 0; ret == 0 && off < len; off += (ssize_t)strlen(names + off) + 1) {
		if (!is_accelfs(names + off) || !fdl_key_valid(names + off + strlen(TUNING_PREFIX)))
			continue;
		ret = get_value(fd, names + off, &val, &vlen);
		if (ret == -ENODATA) {
			ret = 0;
			continue;
		}
		if (ret == 0) {
			ret = fdl_attr_set(fdl, names + off + strlen(TUNING_PREFIX), val,
					   (size_t)vlen);
			free(val);
		}
	}
	free(names);
	return ret;
}

/* Make the accelfs attributes of @fd exactly those of @fdl. */
static int apply_accelfs(int fd, const struct fdl *fdl)
{
	char name[256];
	size_t i;

	for (i = 0; i < fdl->nattrs; i++) {
		snprintf(name, sizeof(name), TUNING_PREFIX "%s", fdl->attrs[i].name);
		if (fsetxattr(fd, name, fdl->attrs[i].value, fdl->attrs[i].len, 0) < 0)
			return -errno;
	}
	return 0;
}

int meta_flags_early(int src_fd, int dst_fd)
{
	int flags, want;

	if (ioctl(src_fd, FS_IOC_GETFLAGS, &flags) < 0 || !(flags & FS_NOCOW_FL))
		return 0;
	if (ioctl(dst_fd, FS_IOC_GETFLAGS, &want) < 0)
		return -errno;
	want |= FS_NOCOW_FL;
	return ioctl(dst_fd, FS_IOC_SETFLAGS, &want) < 0 ? -errno : 0;
}

static int copy_flags(int src_fd, int dst_fd)
{
	int flags, want;

	if (ioctl(src_fd, FS_IOC_GETFLAGS, &flags) < 0 || !(flags & META_LATE_FLAGS))
		return 0; /* no flags, or a file system without them */
	if (ioctl(dst_fd, FS_IOC_GETFLAGS, &want) < 0)
		return -errno;
	want |= flags & META_LATE_FLAGS;
	return ioctl(dst_fd, FS_IOC_SETFLAGS, &want) < 0 ? -errno : 0;
}

bool meta_is_locked(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return false;
	return flags & (FS_IMMUTABLE_FL | FS_APPEND_FL);
}

static int apply_owner_mode(int fd, struct meta_plan *plan)
{
	const struct fdl *fdl = plan->fdl;
	uid_t uid = fdl && fdl->has_uid ? fdl->uid : plan->st->st_uid;
	gid_t gid = fdl && fdl->has_gid ? fdl->gid : plan->st->st_gid;
	mode_t mode = fdl && fdl->has_mode ? fdl->mode : plan->st->st_mode & 07777;

	plan->failed = "set the owner";
	if (fchown(fd, uid, gid) < 0 && !(errno == EPERM && plan->owner_best_effort))
		return -errno;
	plan->failed = "set the mode";
	return fchmod(fd, mode) < 0 ? -errno : 0;
}

int meta_apply(int dst_fd, struct meta_plan *plan)
{
	const struct fdl *fdl = plan->fdl;
	bool keep_accelfs = !fdl || !fdl->has_accelfs;
	struct timespec ts[2];
	int ret = 0;

	plan->failed = "copy extended attributes";
	if (plan->src_fd >= 0)
		ret = copy_xattrs(plan->src_fd, dst_fd, keep_accelfs);
	if (ret == 0 && !keep_accelfs) {
		plan->failed = "set the accelfs attributes";
		ret = apply_accelfs(dst_fd, fdl);
	}
	if (ret == 0 && plan->src_fd >= 0) {
		plan->failed = "copy the inode flags";
		ret = copy_flags(plan->src_fd, dst_fd);
	}
	if (ret == 0)
		ret = apply_owner_mode(dst_fd, plan);
	if (ret < 0)
		return ret;
	plan->failed = "set the timestamps";
	ts[0] = plan->st->st_atim;
	ts[1] = plan->st->st_mtim;
	return futimens(dst_fd, ts) < 0 ? -errno : 0;
}
