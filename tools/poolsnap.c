// SPDX-License-Identifier: MIT
/*
 * poolsnap.c - read-only snapshots of a global buffer pool for accel stat
 * and accel monitor, and the user-facing reasons when a pool cannot be read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mountres.h"
#include "poolseg.h"
#include "poolsnap.h"
#include "util.h"

/* "owner uid 0, mode 0600" of the segment behind @name, if we may stat it. */
static void owner_hint(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	if (stat(path, &st) == 0)
		snprintf(buf, len, " (owner uid %u, mode %04o; run as the owner or root)",
			 (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
	else
		buf[0] = '\0';
}

int poolsnap_open(const char *name, struct pool **out, char *msg, size_t len)
{
	char err[256], hint[96];
	int ret;

	if (!name)
		name = POOL_DEFAULT_NAME;
	ret = pool_open_readonly(name, out, err, sizeof(err));
	if (ret == -ENOENT) {
		poolseg_missing(name, msg, len);
	} else if (ret == -EPERM && err[0]) {
		snprintf(msg, len, "%s", err); /* untrusted: names owner, mode and the fix */
	} else if (ret == -EACCES || ret == -EPERM) {
		owner_hint(name, hint, sizeof(hint));
		snprintf(msg, len, "pool %s: permission denied%s", name, hint);
	} else if (ret == -EINVAL) {
		snprintf(msg, len, "%s", err[0] ? err : strerror(-ret));
	} else if (ret && err[0]) {
		snprintf(msg, len, "pool %s", err); /* err starts with the name */
	} else if (ret) {
		snprintf(msg, len, "pool %s: %s", name, strerror(-ret));
	}
	return ret;
}

static int collect(const struct pool_stats_file *st, void *arg)
{
	struct poolsnap *s = arg;
	struct pool_stats_file *n;

	if (s->nfiles == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;

		n = realloc(s->files, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->files = n;
		s->cap = cap;
	}
	s->files[s->nfiles++] = *st;
	return 0;
}

int poolsnap_take(struct pool *pool, struct poolsnap *s)
{
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	s->realtime_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	s->t = util_now();
	s->nfiles = 0;
	pool_info(pool, &s->info);
	ret = pool_stats_get(pool, &s->st);
	if (ret)
		return ret;
	return pool_stats_file_iter(pool, collect, s);
}

void poolsnap_free(struct poolsnap *s)
{
	free(s->files);
	s->files = NULL;
	s->nfiles = s->cap = 0;
}

const struct pool_stats_file *poolsnap_find(const struct poolsnap *s, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		if (s->files[i].dev == dev && s->files[i].ino == ino)
			return &s->files[i];
	}
	return NULL;
}

int poolsnap_file_id(const char *path, struct mountres *r, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	int ret = mountres_resolve(path, r);

	if (ret < 0)
		return ret;
	if (stat(r->path, &st) < 0)
		return -errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int poolsnap_target(const char *pool_arg, const char *file, char name[POOL_NAME_LEN], uint64_t *dev,
		    uint64_t *ino, char *msg, size_t len)
{
	struct mountres r = { .mountpoint = "" };
	int ret = file ? poolsnap_file_id(file, &r, dev, ino) : 0;

	if (ret < 0) {
		snprintf(msg, len, "%s: %s", file, strerror(-ret));
		return ret;
	}
	return poolseg_choose(pool_arg, r.mountpoint, name, msg, len);
}
