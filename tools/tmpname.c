// SPDX-License-Identifier: MIT
/*
 * tmpname.c - make and recognise ".accel-<kind>.<name>.<pid>.tmp" and remove
 * the ones left by dead processes (see tmpname.h for why this is safe).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpname.h"

static const char *const kinds[] = { "defrag", "convert", "defrag-old", "fdl", "prom" };

int tmpname_make(char *buf, size_t len, const char *kind, const char *base, pid_t pid)
{
	int keep = NAME_MAX - 40; /* room for prefix, pid and suffix */
	int n;

	n = snprintf(buf, len, ".accel-%s.%.*s.%d.tmp", kind, keep, base, (int)pid);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool tmpname_parse(const char *name, pid_t *pid)
{
	size_t len = strlen(name), i, k;
	const char *dot;
	char *end;
	long v;

	if (len < 5 || strcmp(name + len - 4, ".tmp") != 0)
		return false;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		i = strlen(kinds[k]);
		if (strncmp(name, ".accel-", 7) == 0 && strncmp(name + 7, kinds[k], i) == 0 &&
		    name[7 + i] == '.')
			break;
	}
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		return false;
	dot = name + len - 5; /* last char before ".tmp" */
	while (dot > name && *dot >= '0' && *dot <= '9')
		dot--;
	if (*dot != '.' || dot == name + len - 5 || dot <= name + 8 + i)
		return false;
	v = strtol(dot + 1, &end, 10);
	if (end != name + len - 4 || v <= 0 || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

static bool pid_dead(pid_t pid)
{
	return pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH;
}

int tmpname_clean(int dir_fd, void (*report)(const char *name, void *arg), void *arg)
{
	struct dirent *de;
	struct stat st;
	int fd, removed = 0;
	DIR *dir;
	pid_t pid;

	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		if (!tmpname_parse(de->d_name, &pid) || !pid_dead(pid))
			continue;
		if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(dir_fd, de->d_name, 0) == 0) {
			removed++;
			if (report)
				report(de->d_name, arg);
		}
	}
	closedir(dir);
	return removed;
}
