// SPDX-License-Identifier: MIT
/*
 * mstate.c - per-mount state files (see mstate.h for the contract).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mstate.h"

#define MSTATE_MAX_FILES 256 /* daemons listed per directory */

/* The state directory for euid @uid into @buf; 0 or -errno (-ENOENT: none). */
static int mstate_dir(unsigned int uid, char *buf, size_t len)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");

	if (uid == 0)
		return snprintf(buf, len, "%s", MSTATE_DIR_ROOT) < (int)len ? 0 : -ENAMETOOLONG;
	if (!rt || rt[0] != '/')
		return -ENOENT;
	return snprintf(buf, len, "%s/accelfs", rt) < (int)len ? 0 : -ENAMETOOLONG;
}

static int write_all(int fd, const struct mstate *m)
{
	char buf[2 * MSTATE_PATH_LEN + 512];
	int n = snprintf(
	    buf, sizeof(buf),
	    "pid %" PRIu32 "\nmountpoint %s\nsource %s\nwatch %s\n"
	    "watch_events %" PRIu64 "\nwatch_invalidations %" PRIu64 "\nwatch_overflows %" PRIu64
	    "\nwatch_unwatched %" PRIu64 "\nshared %s\nlocks %s\n",
	    m->pid, m->mountpoint, m->source, m->watch, m->watch_events, m->watch_invalidations,
	    m->watch_overflows, m->watch_unwatched, m->shared, m->locks);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	return write(fd, buf, (size_t)n) == n ? 0 : -EIO;
}

int mstate_write(const struct mstate *m)
{
	char dir[MSTATE_PATH_LEN], tmp[MSTATE_PATH_LEN + 64], path[MSTATE_PATH_LEN + 64];
	int fd, ret = mstate_dir(geteuid(), dir, sizeof(dir));

	if (ret)
		return ret;
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	/* ours alone, not a symlink or a directory someone else may write */
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	snprintf(tmp, sizeof(tmp), "%s/.mount-%" PRIu32 ".tmp", dir, m->pid);
	snprintf(path, sizeof(path), "%s/mount-%" PRIu32, dir, m->pid);
	unlink(tmp); /* a temporary a killed daemon of this pid left */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, m);
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

void mstate_remove(uint32_t pid)
{
	char dir[MSTATE_PATH_LEN], path[MSTATE_PATH_LEN + 64];

	if (mstate_dir(geteuid(), dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/mount-%" PRIu32, dir, pid);
	unlink(path);
}

/* One "key value" line into @m; unknown keys are ignored. */
static void parse_line(char *line, struct mstate *m)
{
	char *v = strchr(line, ' ');

	if (!v)
		return;
	*v++ = '\0';
	v[strcspn(v, "\n")] = '\0';
	if (!strcmp(line, "pid"))
		m->pid = (uint32_t)strtoul(v, NULL, 10);
	else if (!strcmp(line, "mountpoint"))
		snprintf(m->mountpoint, sizeof(m->mountpoint), "%s", v);
	else if (!strcmp(line, "source"))
		snprintf(m->source, sizeof(m->source), "%s", v);
	else if (!strcmp(line, "watch"))
		snprintf(m->watch, sizeof(m->watch), "%s", v);
	else if (!strcmp(line, "watch_events"))
		m->watch_events = strtoull(v, NULL, 10);
	else if (!strcmp(line, "watch_invalidations"))
		m->watch_invalidations = strtoull(v, NULL, 10);
	else if (!strcmp(line, "watch_overflows"))
		m->watch_overflows = strtoull(v, NULL, 10);
	else if (!strcmp(line, "watch_unwatched"))
		m->watch_unwatched = strtoull(v, NULL, 10);
	else if (!strcmp(line, "shared"))
		snprintf(m->shared, sizeof(m->shared), "%s", v);
	else if (!strcmp(line, "locks"))
		snprintf(m->locks, sizeof(m->locks), "%s", v);
}

/* Parse the file @path into @m; 0 or -errno. */
static int mstate_read(const char *path, struct mstate *m)
{
	char line[MSTATE_PATH_LEN + 32];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f))
		parse_line(line, m);
	fclose(f);
	return m->pid ? 0 : -EINVAL;
}

static int pid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The pids of the state files in @dir, sorted; their count. */
static size_t list_pids(const char *dir, uint32_t *pids)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < MSTATE_MAX_FILES) {
		char *end;
		unsigned long pid;

		if (strncmp(de->d_name, "mount-", 6))
			continue;
		pid = strtoul(de->d_name + 6, &end, 10);
		if (!*end && pid && pid <= UINT32_MAX)
			pids[n++] = (uint32_t)pid;
	}
	closedir(d);
	qsort(pids, n, sizeof(*pids), pid_cmp);
	return n;
}

static int foreach_in(const char *dir, int (*fn)(const struct mstate *, void *), void *arg)
{
	uint32_t pids[MSTATE_MAX_FILES];
	size_t n = list_pids(dir, pids);
	char path[MSTATE_PATH_LEN + 64];
	struct mstate *m = malloc(sizeof(*m));
	int ret = 0;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++) {
		if (kill((pid_t)pids[i], 0) && errno == ESRCH)
			continue; /* its daemon is gone */
		snprintf(path, sizeof(path), "%s/mount-%" PRIu32, dir, pids[i]);
		if (!mstate_read(path, m) && m->pid == pids[i])
			ret = fn(m, arg);
	}
	free(m);
	return ret;
}

void mstate_sweep(void)
{
	uint32_t pids[MSTATE_MAX_FILES];
	char dir[MSTATE_PATH_LEN], path[MSTATE_PATH_LEN + 64];
	size_t n;

	if (mstate_dir(geteuid(), dir, sizeof(dir)))
		return;
	n = list_pids(dir, pids);
	for (size_t i = 0; i < n; i++) {
		if (!kill((pid_t)pids[i], 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/mount-%" PRIu32, dir, pids[i]);
		unlink(path);
	}
}

int mstate_foreach(unsigned int uid, int (*fn)(const struct mstate *m, void *arg), void *arg)
{
	char dir[MSTATE_PATH_LEN];
	int ret = foreach_in(MSTATE_DIR_ROOT, fn, arg);

	if (!ret && uid != 0 && !mstate_dir(uid, dir, sizeof(dir)))
		ret = foreach_in(dir, fn, arg);
	return ret;
}
