/* SPDX-License-Identifier: MIT */
/*
 * options.h - the accelfs command line: what can be set, defaults, checks.
 *
 * Parsing is kept apart from the daemon so it can be unit tested without a
 * mount, and so that every option, its default and its meaning live in one
 * table (options.c) that also prints --help.
 */
#ifndef ACCELFS_FUSE_OPTIONS_H
#define ACCELFS_FUSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

enum kernel_cache_mode {
	KERNEL_CACHE_AUTO,   /* keep the page cache while the backing file is unchanged */
	KERNEL_CACHE_ALWAYS, /* always keep it (SOURCE is never changed behind our back) */
	KERNEL_CACHE_NEVER,  /* direct I/O: every read and write reaches the daemon */
};

struct accelfs_opts {
	char *source;	  /* as given */
	char *mountpoint; /* as given */
	bool foreground;
	bool debug;
	bool single_thread;
	bool show_help;
	bool show_version;
	unsigned int threads; /* worker threads of the session loop */
	bool clone_fd;	      /* one /dev/fuse fd per worker */
	enum backend_kind backend;
	unsigned int queue_depth; /* io_uring entries per worker ring */
	double attr_timeout;
	double entry_timeout;
	double negative_timeout;
	enum kernel_cache_mode kernel_cache;
	bool writeback; /* kernel writeback cache */
	bool allow_other;
	bool default_permissions;
	bool read_only;
	char *mount_opts; /* options passed through to the kernel mount, comma list */
};

#define OPTS_EXIT_OK 0	  /* --help/--version printed */
#define OPTS_EXIT_USAGE 2 /* bad command line */

/*
 * opts_parse - fill @opts from argv.
 * Returns 0 when the daemon should run, 1 when --help or --version was
 * handled (exit 0), or -EINVAL after printing one "accelfs: ..." line to
 * stderr (exit OPTS_EXIT_USAGE).
 */
int opts_parse(int argc, char **argv, struct accelfs_opts *opts);

void opts_free(struct accelfs_opts *opts);

void opts_print_help(const char *prog);

/* Parse helpers, exported for unit tests: return 0 or -EINVAL / -ERANGE. */
int opts_parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out);
int opts_parse_seconds(const char *s, double *out);
int opts_parse_bool(const char *s, bool *out);

#endif
