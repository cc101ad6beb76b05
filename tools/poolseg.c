// SPDX-License-Identifier: MIT
/*
 * poolseg.c - looking at a pool segment from outside: header, mappers and
 * granted quotas, read with pread() and /proc so that even a pool the cache
 * library refuses (another layout version, a corrupt header) can be named
 * and described before it is removed. A segment that fails the pool's trust
 * check (pool_seg_trusted: not ours, writable by others, not a regular file)
 * is not read at all.
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
	struct stat st;
	ssize_t n;
	int fd = seg_open(name);

	if (fd < 0)
		return fd;
	n = fstat(fd, &st) ? -1 : pread(fd, h, sizeof(*h), 0);
	close(fd);
	if (n < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	if ((size_t)n < sizeof(*h) || h->magic != POOL_MAGIC)
		return -EPROTO;
	return 0;
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

int64_t poolseg_granted(const char *name, uint32_t slot, uint64_t dev, uint64_t ino)
{
	struct pool_header h;
	struct pool_fslot fs;
	uint64_t size, off;
	uint32_t gen;
	int fd, ret = poolseg_header(name, &h, &size);

	if (ret)
		return ret;
	off = h.off_files + (uint64_t)slot * sizeof(fs);
	if (slot >= h.nfiles || off + sizeof(fs) > size)
		return -EINVAL;
	fd = seg_open(name);
	if (fd < 0)
		return fd;
	/* idgen is the slot's identity seqlock (I6): even and unchanged around the copy */
	ret = pread(fd, &fs, sizeof(fs), (off_t)off) == sizeof(fs) ? 0 : -EIO;
	gen = fs.idgen;
	if (!ret && pread(fd, &fs.idgen, sizeof(gen),
			  (off_t)(off + offsetof(struct pool_fslot, idgen))) != sizeof(gen))
		ret = -EIO;
	close(fd);
	if (ret)
		return ret;
	if ((gen & 1) || gen != fs.idgen || fs.state != POOL_FSLOT_USED || fs.dev != dev ||
	    fs.ino != ino)
		return -ESTALE;
	return fs.reserve;
}
