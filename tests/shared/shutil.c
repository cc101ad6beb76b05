// SPDX-License-Identifier: MIT
/*
 * shutil.c - helpers of the shared-storage test programs (shutil.h).
 */
#include "shutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double clock_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

double wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

void sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1e3);
	ts.tv_nsec = (long)((ms - ts.tv_sec * 1e3) * 1e6);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long arg_long(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die("bad %s '%s'", what, s);
	return v;
}

char *path_in(char *buf, const char *dir, const char *name)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		die("path too long: %s/%s", dir, name);
	return buf;
}

ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += n;
	}
	return done;
}

ssize_t pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

int file_fill(const char *path, size_t len, char c)
{
	char *buf = malloc(len + 1);
	ssize_t ret = 0;
	int fd;

	if (!buf)
		return -ENOMEM;
	memset(buf, c, len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		ret = -errno;
	else
		ret = pwrite_all(fd, buf, len, 0);
	if (fd >= 0 && close(fd) < 0 && ret >= 0)
		ret = -errno;
	free(buf);
	return ret < 0 ? (int)ret : 0;
}

const char *err_name(int err)
{
	const char *name = strerrorname_np(err < 0 ? -err : err);

	return name ? name : "E?";
}

bool lock_kind_ok(const char *kind)
{
	return !strcmp(kind, "fcntl") || !strcmp(kind, "ofd") || !strcmp(kind, "flock");
}

static int lock_fcntl(int fd, int cmd, struct flock *fl)
{
	while (fcntl(fd, cmd, fl) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

int lock_set(int fd, const char *kind, short type, off_t start, off_t len, bool wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	int op;

	if (!strcmp(kind, "fcntl"))
		return lock_fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
	if (!strcmp(kind, "ofd"))
		return lock_fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
	op = type == F_UNLCK ? LOCK_UN : type == F_RDLCK ? LOCK_SH : LOCK_EX;
	while (flock(fd, op | (wait ? 0 : LOCK_NB)) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

int lock_test(int fd, const char *kind, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len
	};
	int ret;

	if (!strcmp(kind, "flock"))
		return -ENOTSUP;
	ret = lock_fcntl(fd, !strcmp(kind, "ofd") ? F_OFD_GETLK : F_GETLK, &fl);
	return ret < 0 ? ret : fl.l_type != F_UNLCK;
}
