/* SPDX-License-Identifier: MIT */
/*
 * options_i.h - the option table shared by the parser (options.c) and the
 * table itself (options_table.c). Private to fuse/options*.
 */
#ifndef ACCELFS_FUSE_OPTIONS_I_H
#define ACCELFS_FUSE_OPTIONS_I_H

#include "options.h"

#define OPTS_MAX_TIMEOUT (365.0 * 86400.0) /* the longest timeout in seconds: a year */

enum opt_type {
	OPT_BOOL,    /* bool; on/off (yes/no, true/false, 1/0), or .words mapping to 1/0 */
	OPT_UINT,    /* unsigned int in [min, max] */
	OPT_SIZE,    /* uint64_t, or unsigned int when max < 2^32: a size in [min, max] */
	OPT_SECONDS, /* double in [dmin, dmax] */
	OPT_ENUM,    /* int (an enum): one of .words */
	OPT_CUSTOM,  /* .parse does it all */
};

enum opt_section { OPT_SEC_GENERAL, OPT_SEC_CACHE, OPT_SEC_WRITEBACK, OPT_SEC_N };

struct opt_word {
	const char *word;
	int value;
};

struct opt_def {
	const char *name;
	enum opt_type type;
	size_t offset;	    /* of the field in struct accelfs_opts */
	uint64_t min, max;  /* OPT_UINT, OPT_SIZE */
	double dmin, dmax;  /* OPT_SECONDS */
	bool pow2;	    /* OPT_SIZE: a power of two */
	const struct opt_word *words; /* OPT_ENUM, OPT_BOOL (NULL: on/off...) */
	/* OPT_CUSTOM: store @val, or print the error and return -EINVAL */
	int (*parse)(struct accelfs_opts *o, const char *key, const char *val);
	const char *def;    /* the default, as a user would write it; NULL: none */
	const char *syntax; /* "N", "SIZE", "auto|uring|sync": for the help */
	enum opt_section section;
	const char *help; /* lines separated by '\n' */
};

extern const struct opt_def opt_table[]; /* ends with a NULL name */

int opts_parse_deferred(struct accelfs_opts *o, const char *key, const char *val);
int opts_parse_disk_cache(struct accelfs_opts *o, const char *key, const char *val);
int opts_parse_log(struct accelfs_opts *o, const char *key, const char *val);
int opts_parse_pool(struct accelfs_opts *o, const char *key, const char *val);
int opts_parse_pool_mode(struct accelfs_opts *o, const char *key, const char *val);

#endif
