/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - write a file a command produces (`accel analyze --fdl`'s
 * FILE.fdl) without following a name someone else controls.
 *
 * The output often lands in a directory other users can write (beside the
 * data file it describes), where a symbolic link or a hard link planted
 * under the output's name would make a plain fopen("w") by root overwrite
 * whatever the link names. So the bytes go to a temporary created beside
 * the target with O_CREAT | O_EXCL | O_NOFOLLOW (".accel-<kind>.<name>.<pid>.tmp",
 * tmpname.h), written through its descriptor, and renamed over the target:
 * rename replaces the name itself and never follows it. A symbolic link or
 * anything but a regular file at the target is refused and left untouched;
 * an existing regular file is replaced, as documented for the command.
 */
#ifndef ACCELFS_TOOLS_OUTFILE_H
#define ACCELFS_TOOLS_OUTFILE_H

#include <limits.h>
#include <stdio.h>

struct outfile {
	int dir_fd;		  /* the directory of the target */
	char name[NAME_MAX + 1];  /* the target in it */
	char tmp[NAME_MAX + 1];	  /* the temporary, "" when there is none */
	char taken[NAME_MAX + 1]; /* the temporary's name, when something else had it */
	FILE *f;		  /* write here, between open and commit */
};

/*
 * outfile_open - begin writing @path for a file of kind @kind ("fdl").
 * Returns 0 with @o->f open on the temporary, or -errno: -ELOOP for a
 * symbolic link at @path, -EEXIST for anything else but a regular file, the
 * error of creating the temporary (-EEXIST too when its name is taken).
 */
int outfile_open(struct outfile *o, const char *path, const char *kind);

/*
 * outfile_commit - flush and fsync the temporary, check the target again as
 * outfile_open() did, and rename it into place. Returns 0, or -errno with
 * the temporary removed and the target untouched.
 */
int outfile_commit(struct outfile *o);

/* Remove the temporary and close everything (after an error; no-op after commit). */
void outfile_discard(struct outfile *o);

/*
 * outfile_why - the cause, for "accel CMD: PATH: <cause>", of @err from
 * outfile_open() or outfile_commit() on @o: "is a symbolic link, not
 * written", ... Returns @buf.
 */
const char *outfile_why(const struct outfile *o, int err, char *buf, size_t len);

#endif
