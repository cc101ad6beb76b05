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

#include "mstate.h"
#include "pool.h"
#include "pool_name.h"
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

struct mount_daemon {
	const char *point;
	uint32_t pid;
};

static int match_mount(const struct mstate *m, void *arg)
{
	struct mount_daemon *d = arg;

	if (strcmp(m->mountpoint, d->point))
		return 0;
	d->pid = m->pid;
	return 1;
}

/* A maps line's segment, if it is a pool segment in /dev/shm still under that name. */
static bool maps_pool_line(char *line, char name[POOL_NAME_LEN])
{
	unsigned long long ino;
	struct pool_header h;
	struct stat st;
	uint64_t size;
	char *path;
	int off;

	if (sscanf(line, "%*s %*s %*s %*s %llu %n", &ino, &off) != 1)
		return false;
	path = line + off;
	path[strcspn(path, "\n")] = '\0';
	if (strncmp(path, "/dev/shm/", 9) || strlen(path + 9) + 2 > POOL_NAME_LEN ||
	    lstat(path, &st) || st.st_ino != ino)
		return false; /* not shm, or removed (" (deleted)") or replaced since */
	snprintf(name, POOL_NAME_LEN, "/%s", path + 9);
	return poolseg_header(name, &h, &size) == 0;
}

/*
 * poolseg_of_mount - the pool the daemon serving accelfs mount @mountpoint
 * has attached: its state file (cache/mstate.h) names its pid, whose
 * /proc/PID/maps shows the segment. Writes "/name" to @name. Returns 0,
 * -ENOMEDIUM when that daemon has no pool mapped (cache=off, or its pool was
 * refused), -ESRCH when no daemon of ours publishes that mount, -EACCES when
 * its mappings may not be read, or -errno.
 */
static int poolseg_of_mount(const char *mountpoint, char name[POOL_NAME_LEN])
{
	struct mount_daemon d = { .point = mountpoint };
	char maps[64], line[4096];
	bool found = false;
	FILE *f;

	if (mstate_foreach((unsigned int)geteuid(), match_mount, &d) <= 0 || !d.pid)
		return -ESRCH;
	snprintf(maps, sizeof(maps), "/proc/%u/maps", (unsigned int)d.pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!found && fgets(line, sizeof(line), f))
		found = maps_pool_line(line, name);
	fclose(f);
	return found ? 0 : -ENOMEDIUM;
}

int poolseg_choose(const char *arg, const char *mountpoint, char name[POOL_NAME_LEN], char *why,
		   size_t len)
{
	int ret;

	if (arg)
		return pool_name_parse(arg, name, why, len);
	ret = mountpoint && mountpoint[0] ? poolseg_of_mount(mountpoint, name) : -ESRCH;
	if (ret == -ENOMEDIUM)
		snprintf(why, len,
			 "the accelfs mount %s uses no global buffer pool (cache=off, or its pool "
			 "was refused); name one with --pool",
			 mountpoint);
	if (ret == 0 || ret == -ENOMEDIUM)
		return ret;
	/* no daemon of ours in sight: the pool our daemons use by default */
	poolseg_default_name(name, POOL_NAME_LEN);
	return 0;
}

/* scandir() filter: a segment whose header this process can read as a pool's. */
static int readable_pool(const struct dirent *d)
{
	char name[POOL_NAME_LEN];
	struct pool_header h;
	uint64_t size;

	size_t len = strlen(d->d_name);

	if (d->d_name[0] == '.' || len + 2 > sizeof(name))
		return 0;
	name[0] = '/'; /* (checked to fit: no snprintf, which -O0 cannot prove) */
	memcpy(name + 1, d->d_name, len + 1);
	return poolseg_header(name, &h, &size) == 0;
}

void poolseg_missing(const char *name, char *msg, size_t len)
{
	struct dirent **ents;
	int n = scandir("/dev/shm", &ents, readable_pool, alphasort);
	size_t at;

	/* named as the list names them, as people type them: without the '/' */
	at = (size_t)snprintf(msg, len, "pool %s: no such pool (%s", name + (name[0] == '/'),
			      n > 0 ? "pools: " : "none exists yet: a mount creates its pool");
	for (int i = 0; i < n; i++) {
		if (at < len)
			at += (size_t)snprintf(msg + at, len - at, "%s%s", i ? ", " : "",
					       ents[i]->d_name);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	if (at < len)
		snprintf(msg + at, len - at, ")");
}
