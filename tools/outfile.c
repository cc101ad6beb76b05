// SPDX-License-Identifier: MIT
/*
 * outfile.c - output files written through a temporary and renamed into
 * place, never through a name someone else controls (see outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tmpname.h"
#include "util.h"

/* Nothing at the target, or a regular file: 0; -ELOOP, -EEXIST or -errno else. */
static int check_target(const struct outfile *o)
{
	struct stat st;

	if (fstatat(o->dir_fd, o->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return S_ISREG(st.st_mode) ? 0 : -EEXIST;
}

static int create_tmp(struct outfile *o, const char *kind)
{
	int fd, ret = tmpname_make(o->tmp, sizeof(o->tmp), kind, o->name, getpid());

	if (ret < 0)
		return ret;
	fd = openat(o->dir_fd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0) {
		ret = -errno;
		if (ret == -EEXIST)
			memcpy(o->taken, o->tmp, sizeof(o->taken));
		o->tmp[0] = '\0'; /* someone else's: never removed */
		return ret;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path, const char *kind)
{
	int ret;

	o->f = NULL;
	o->tmp[0] = o->taken[0] = '\0';
	o->dir_fd = util_open_parent(path, o->name, sizeof(o->name));
	if (o->dir_fd < 0)
		return o->dir_fd;
	ret = check_target(o);
	if (ret == 0)
		ret = create_tmp(o, kind);
	if (ret < 0)
		outfile_discard(o);
	return ret;
}

int outfile_commit(struct outfile *o)
{
	int ret = fflush(o->f) || fsync(fileno(o->f)) ? -errno : 0;

	if (fclose(o->f) && ret == 0)
		ret = -errno;
	o->f = NULL;
	if (ret == 0)
		ret = check_target(o);
	if (ret == 0 && renameat(o->dir_fd, o->tmp, o->dir_fd, o->name) < 0)
		ret = -errno;
	if (ret == 0)
		o->tmp[0] = '\0';
	outfile_discard(o);
	return ret;
}

void outfile_discard(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0] && o->dir_fd >= 0)
		unlinkat(o->dir_fd, o->tmp, 0);
	o->tmp[0] = '\0';
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	o->dir_fd = -1;
}

const char *outfile_why(const struct outfile *o, int err, char *buf, size_t len)
{
	if (err == -EEXIST && o->taken[0])
		snprintf(buf, len, "the temporary name %s beside it is taken, not written",
			 o->taken);
	else if (err == -ELOOP)
		snprintf(buf, len, "is a symbolic link, not written");
	else if (err == -EEXIST)
		snprintf(buf, len, "exists and is not a regular file, not written");
	else
		snprintf(buf, len, "cannot write: %s", strerror(-err));
	return buf;
}
