/* SPDX-License-Identifier: MIT */
/*
 * mountres.h - find the backing file behind a path inside an accelfs mount.
 *
 * accelfs mounts show in /proc/self/mountinfo with file system type
 * "fuse.accelfs" and the SOURCE directory as mount source. Layout tools must
 * work on the backing file (FIEMAP, EXT4_IOC_MOVE_EXT and rename are not
 * passed through FUSE), so MOUNTPOINT/rel is mapped to SOURCE/rel. The path
 * is made absolute lexically, without touching the mount, so this works
 * even when the daemon is busy. ACCEL_TEST_MOUNTINFO names another file to
 * read instead of /proc/self/mountinfo (for tests). Lines are parsed by
 * cache/'s mountinfo_parse(), the daemon's parser too.
 */
#ifndef ACCELFS_TOOLS_MOUNTRES_H
#define ACCELFS_TOOLS_MOUNTRES_H

#include <stddef.h>

/* Make @path absolute and drop ".", ".." and repeated '/'; 0 or -errno. */
int mountres_normalize(const char *path, char *out, size_t len);

/*
 * mountres_resolve_in - with mount table file @mountinfo, write to @out the
 * path to operate on for @path. Returns 1 when @path was inside an accelfs
 * mount (and @out is the backing path), 0 when not (@out = @path), -errno.
 */
int mountres_resolve_in(const char *mountinfo, const char *path, char *out, size_t len);

/* As above with the process's own mount table. */
int mountres_resolve(const char *path, char *out, size_t len);

#endif
