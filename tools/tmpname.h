/* SPDX-License-Identifier: MIT */
/*
 * tmpname.h - names of accel's temporary files, and cleaning up after a run
 * that was killed.
 *
 * A temporary is created beside the file it will replace, named
 * ".accel-<kind>.<name>.<pid>.tmp" (kind is "defrag", "convert", or
 * "defrag-old" for the extra link that guards a swap, see replace.h; "fdl" for
 * analyze --fdl's output and "prom" for stat --textfile's, see outfile.h). The name
 * alone lets a later run recognise the file as accel's own and see whether
 * the process that made it is still alive; only files whose pid is dead on
 * this machine are removed. (A pid from another machine sharing the
 * directory, or a reused pid, makes us keep a stale file: the safe mistake.)
 */
#ifndef ACCELFS_TOOLS_TMPNAME_H
#define ACCELFS_TOOLS_TMPNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Build the name for @base (a file name, no '/'); long names are shortened. */
int tmpname_make(char *buf, size_t len, const char *kind, const char *base, pid_t pid);

/* If @name is one of ours, return true and its pid. */
bool tmpname_parse(const char *name, pid_t *pid);

/*
 * tmpname_clean - remove stale temporaries in directory @dir_fd: ours by
 * name, regular files, made by a pid that no longer exists. @report is
 * called for each removed name. Returns the number removed or -errno.
 */
int tmpname_clean(int dir_fd, void (*report)(const char *name, void *arg), void *arg);

#endif
