// SPDX-License-Identifier: MIT
/*
 * poolseg.c - looking at a pool segment from outside: its header (through
 * cache/'s one reader, pool_seg_header) and the processes that map it, from
 * /proc, so that even a pool the cache library refuses (another layout
 * version, a corrupt geometry) can be named and described before it is
 * removed. Anything inside the pool (file slots, counters) is read only by
 * attaching with pool_open_readonly() and cache/'s seqlock readers. A segment that fails the pool's
 * trust check (pool_seg_trusted: not ours, writable by others, not a regular file) is not read at
 * all.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool.h"
#include "poolseg.h"

void poolseg_default_name(char *buf, size_t len)
{
	if (geteuid() == 0)
		snprintf(buf, len, "%s", POOL_DEFAULT_NAME);
	else
		snprintf(buf, len, "%s-%u", POOL_DEFAULT_NAME, (unsigned int)geteuid());
}

/* Readers trust what pool_open_readonly() trusts: ours, or a group's within 0660. */
static int seg_open(const char *name)
{
	return pool_seg_open(name, O_RDONLY, 0660, NULL, 0);
}

int poolseg_trust(const char *name, char *why, size_t len)
{
	int fd = pool_seg_open(name, O_RDONLY, 0660, why, len);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int poolseg_header(const char *name, struct pool_header *h, uint64_t *size)
{
	int ret, fd = seg_open(name);

	if (fd < 0)
		return fd;
	ret = pool_seg_header(fd, h, size);
	close(fd);
	return ret;
}

/* True if the maps file @f has a mapping of inode @ino at path @path. */
static bool maps_has(FILE *f, ino_t ino, const char *path)
{
	char line[4096];
	unsigned long long i;
	int off;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %llu %n", &i, &off) != 1 || i != ino)
			continue;
		if (!strncmp(line + off, path, strlen(path)))
			return true;
	}
	return false;
}

int poolseg_users(const char *name, pid_t *pids, size_t max)
{
	char path[128], maps[64];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	if (lstat(path, &st))
		return -errno;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		pid_t pid = (pid_t)atoi(d->d_name);
		FILE *f;

		if (!isdigit((unsigned char)d->d_name[0]) || pid == getpid())
			continue;
		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
		f = fopen(maps, "re");
		if (!f)
			continue;
		if (maps_has(f, st.st_ino, path) && (size_t)n++ < max)
			pids[n - 1] = pid;
		fclose(f);
	}
	closedir(dir);
	return n;
}
