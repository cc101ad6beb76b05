/* SPDX-License-Identifier: MIT */
/*
 * replace.h - build a new copy of a file beside its destination and move it
 * into place only when it is proven good: CONVERT, then RENAME, as one step.
 *
 * replace_build() creates ".accel-<kind>.<name>.<pid>.tmp" in the target's
 * directory, reserves space as the FDL asks, copies the data with its holes,
 * fsyncs, drops the new file from the page cache and re-reads it to compare
 * checksums with the source, checks that the source did not change, then
 * applies metadata and fsyncs again. Any failure removes the temporary.
 * replace_commit() renames it over the target (after an optional last check
 * that the target is still the unchanged source) and fsyncs the directory.
 * Until that rename the target is never modified; after it, it is complete.
 */
#ifndef ACCELFS_TOOLS_REPLACE_H
#define ACCELFS_TOOLS_REPLACE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "copy.h"
#include "fdl.h"

/* The passes over the data replace_build() makes: the copy, then reading both files. */
#define REPLACE_PASSES 3

struct replace_job {
	/* in */
	const char *kind;	      /* "defrag" or "convert": part of the temporary's name */
	int in_fd;		      /* the source, open for reading */
	struct stat in_st;	      /* the source as it was before we started */
	int dir_fd;		      /* directory holding the target */
	const char *target;	      /* name of the target in dir_fd */
	const struct fdl *fdl;	      /* layout and metadata; NULL means "like the source" */
	bool owner_best_effort;	      /* not being able to chown is not an error */
	bool target_is_source;	      /* commit re-checks that target == unchanged source */
	bool noreplace;		      /* commit fails with -EEXIST if the target exists */
	volatile sig_atomic_t *guard; /* set by a broken lease: undo the rename, see commit */
	struct copy_ctl copy;	      /* progress callback, told the copy's bytes and then the
				       * verification's (REPLACE_PASSES x the size in all);
				       * bytes copied (out) */
	/* out */
	char tmp[NAME_MAX + 1];	  /* temporary's name, "" when none exists */
	char taken[NAME_MAX + 1]; /* the temporary's name when something else had it */
	int tmp_fd;
	const char *failed; /* the step that failed, for the message */
};

/* Returns 0 with the temporary complete, or -errno with it removed. */
int replace_build(struct replace_job *job);

/*
 * replace_commit - rename into place. With @guard, the old file is first
 * linked under a second temporary name (kind "defrag-old"); if *@guard is set once the rename is
 * done (a writer opened the old file just before it, and is blocked on our lease), the old file is
 * renamed back and -EBUSY returned, so the writer's data lands in the file
 * that keeps the name. Returns 0; 1 when the rename was done but the directory
 * fsync failed (job->failed says so); or -errno with the temporary removed.
 */
int replace_commit(struct replace_job *job);

/* Close and remove the temporary (no-op when there is none). */
void replace_discard(struct replace_job *job);

/* -ESTALE when @now differs from @then in identity, size, mtime, ctime or links. */
int replace_same_file(const struct stat *then, const struct stat *now);

#endif
