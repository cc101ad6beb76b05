/* SPDX-License-Identifier: MIT */
/*
 * mountres.h - the one path resolver of the accel commands: find the
 * backing file behind a path inside an accelfs mount.
 *
 * accelfs mounts show in /proc/self/mountinfo with file system type
 * "fuse.accelfs" and the SOURCE directory as mount source. Layout tools must
 * work on the backing file (FIEMAP, EXT4_IOC_MOVE_EXT and rename are not
 * passed through FUSE), and the pool knows a file by the backing file's
 * device and inode, so MOUNTPOINT/rel is mapped to SOURCE/rel. The path is
 * made absolute lexically, without touching the mount, so this works even
 * when the daemon is busy. ACCEL_TEST_MOUNTINFO names another file to read
 * instead of /proc/self/mountinfo (for tests). Lines are parsed by cache/'s
 * mountinfo_parse(), the daemon's parser too.
 *
 * Every command checks the result the same way: a negative return is an
 * error for that path; otherwise r->path is the file to work on, and
 * r->mountpoint says whether (and in which mount) it was found.
 */
#ifndef ACCELFS_TOOLS_MOUNTRES_H
#define ACCELFS_TOOLS_MOUNTRES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mountres {
	char path[PATH_MAX];	   /* SOURCE/rel inside an accelfs mount, else the path as given */
	char mountpoint[PATH_MAX]; /* the accelfs mount the path is in, "" when none */
};

/* Make @path absolute and drop ".", ".." and repeated '/'; 0 or -errno. */
int mountres_normalize(const char *path, char *out, size_t len);

/*
 * mountres_resolve_in - resolve @path with mount table file @mountinfo into
 * @r (see above). Returns 0, or -errno (-ENAMETOOLONG, getcwd()'s error).
 */
int mountres_resolve_in(const char *mountinfo, const char *path, struct mountres *r);

/* As above with the process's own mount table. */
int mountres_resolve(const char *path, struct mountres *r);

/*
 * mountres_dev_accelfs - is @dev (a st_dev) the device of an accelfs mount?
 * A file opened through a name the resolver could not see into (a symlink
 * into a mount) has it; the pool would know it by that device, never hit.
 */
bool mountres_dev_accelfs(dev_t dev);

#endif
