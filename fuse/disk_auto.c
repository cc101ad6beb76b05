// SPDX-License-Identifier: MIT
/*
 * disk_auto.c - disk_cache=auto: the disk tier where it pays, in a place of
 * the daemon user's own, never at the cost of the mount.
 *
 * The tier pays where a read from SOURCE is a network round trip, which is
 * what shared mode says (fuse/shared.c): on a shared SOURCE auto keeps
 * entries in /var/cache/accelfs (root) or $XDG_CACHE_HOME/accelfs, else
 * ~/.cache/accelfs (any other user), made mode 0700 if missing (and so is
 * a user's cache directory; /var/cache never: a system without it gets no
 * tier). On a local SOURCE a re-read costs what a tier hit costs, so auto
 * is off there.
 *
 * Its size is disk_cache_size when given; otherwise the default (1 GiB), but
 * at most a tenth of the file system that holds the directory, so a small
 * /var or home is never filled by a cache nobody sized. Anything in the way
 * (no HOME, an unsafe directory, no pool) leaves the mount without the tier
 * and says why in one line: auto asked for nothing by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "disk.h"
#include "disk_auto.h"

#define AUTO_SHARE 10 /* at most 1/AUTO_SHARE of the file system holding DIR */

/* mkdir DIR 0700 unless it exists; the tier's own checks judge what is there */
static int make_dir(const char *dir)
{
	return mkdir(dir, 0700) && errno != EEXIST ? -errno : 0;
}

/* The directory auto uses for the daemon's user, made if missing. */
static int auto_dir(char *dir, size_t len, char *why, size_t wlen)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char parent[4096];
	bool root = geteuid() == 0;
	int ret;

	if (root)
		snprintf(parent, sizeof(parent), "%s", DISK_AUTO_ROOT_PARENT);
	else if (xdg && xdg[0] == '/')
		snprintf(parent, sizeof(parent), "%s", xdg);
	else if (home && home[0] == '/')
		snprintf(parent, sizeof(parent), "%s/.cache", home);
	else {
		snprintf(why, wlen, "no HOME to keep it in");
		return -ENOENT;
	}
	if ((size_t)snprintf(dir, len, "%s/accelfs", parent) >= len) {
		snprintf(why, wlen, "%s: path too long", parent);
		return -ENAMETOOLONG;
	}
	/* A user's cache directory is made as XDG says (0700); the system's
	 * /var/cache belongs to the distribution: never made here. */
	if ((!root && (ret = make_dir(parent)) != 0) || (ret = make_dir(dir)) != 0)
		snprintf(why, wlen, "%s: %s", ret == -ENOENT ? parent : dir, strerror(-ret));
	return ret;
}

/* The default size, capped at a tenth of DIR's file system. */
static uint64_t auto_size(const struct accelfs_opts *o, const char *dir)
{
	struct statvfs sv;
	uint64_t cap;

	if (opts_given(o, "disk_cache_size") || statvfs(dir, &sv))
		return o->disk_cache_size;
	cap = (uint64_t)sv.f_blocks * sv.f_frsize / AUTO_SHARE;
	return cap < o->disk_cache_size ? cap : o->disk_cache_size;
}

int disk_auto_setup(struct accelfs *fs, char *why, size_t len)
{
	struct accelfs_opts *o = &fs->opts;
	char dir[4096], err[8400];
	int ret;

	if (!fs->shared) {
		log_msg(LOG_INFO,
			"disk_cache=auto: off (%s: a re-read costs what a tier hit would)",
			fs->shared_why);
		return 0;
	}
	if ((ret = auto_dir(dir, sizeof(dir), err, sizeof(err))) != 0)
		goto off;
	o->disk_cache_size = auto_size(o, dir);
	if (o->disk_cache_size < DISK_MIN_SIZE) {
		snprintf(err, sizeof(err), "%s: a tenth of its file system is under 1M", dir);
		ret = -ENOSPC;
		goto off;
	}
	if (!(o->disk_cache = strdup(dir)))
		return -ENOMEM;
	if ((ret = cache_io_disk_init(fs, err, sizeof(err))) != 0) {
		free(o->disk_cache);
		o->disk_cache = NULL;
		goto off;
	}
	log_msg(LOG_INFO, "disk_cache=auto: %s, %llu bytes (%s)", dir,
		(unsigned long long)o->disk_cache_size, fs->shared_why);
	return 0;
off:
	snprintf(why, len, "disk_cache=auto: running without the disk tier: %s", err);
	return ret == -ENOMEM ? ret : 1;
}
