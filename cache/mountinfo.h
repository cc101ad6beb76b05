/* SPDX-License-Identifier: MIT */
/*
 * mountinfo.h - the one parser of /proc/PID/mountinfo lines, for the daemon
 * (is an accelfs already mounted here? which bdi is ours?) and the tools
 * (`accel` resolving a path inside a mount to its backing file, `accel
 * sysgen` finding accelfs mounts). It lives in cache/, the lowest directory
 * both sides use; it knows nothing of pools.
 *
 * A line (proc_pid_mountinfo(5)):
 *   ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER
 * ROOT, POINT and SOURCE have space, tab, newline and backslash escaped as
 * \ooo (\040, \011, \012, \134); they are unescaped here.
 */
#ifndef ACCELFS_CACHE_MOUNTINFO_H
#define ACCELFS_CACHE_MOUNTINFO_H

/* Pointers into the parsed line, which must outlive them. */
struct mountinfo_line {
	unsigned int major, minor; /* st_dev of the mount's file system */
	char *root;		   /* root of the mount within its file system */
	char *point;		   /* mount point */
	char *fstype;		   /* "fuse.accelfs", "ext4", ... */
	char *source;		   /* "/srv/data", "/dev/sda1", "none" */
	char *super;		   /* super-block options, "" if the line has none */
};

/*
 * mountinfo_parse - split @line (modified in place: fields cut, escapes
 * undone) into @m. Returns 0, or -EINVAL if it is not a mountinfo line.
 */
int mountinfo_parse(char *line, struct mountinfo_line *m);

/* mountinfo_unescape - undo the \ooo escapes of a mountinfo field, in place. */
void mountinfo_unescape(char *s);

/* What mountinfo_find() copies out of the newest line for a mount point. */
struct mountinfo_entry {
	char devno[32];	 /* "MAJ:MIN" */
	char fstype[64]; /* "fuse.accelfs", "ext4", ... */
	char point[4096];
	char source[4096];
};

/*
 * mountinfo_find - the newest mount at @mnt (an absolute, canonical path) in
 * mount table @table (NULL: /proc/self/mountinfo): the last line for it,
 * since a later mount sits on top. Returns 0, -ENOENT (none), or -errno.
 */
int mountinfo_find(const char *table, const char *mnt, struct mountinfo_entry *out);

#endif
