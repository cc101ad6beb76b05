/* SPDX-License-Identifier: MIT */
/*
 * fdl.h - the File Definition Language of OpenVMS RMS, for what applies to
 * a Linux file: how it should be laid out and what metadata it should
 * carry. `accel analyze --fdl` writes one from an existing file, a person
 * edits it, `accel convert --fdl` builds a new file from it, as ANALYZE/RMS/FDL
 * and CONVERT/FDL do. The syntax (primary and secondary attributes, what
 * each means here, what is refused and why) is specified in docs/defrag.md;
 * this module is its only reader and writer, and reports every error with
 * its line, column and keyword.
 *
 * The older accelfs INI form ([file], [allocation], [ownership], [accelfs])
 * is still read, recognised by its first line; fdl->legacy says so.
 */
#ifndef ACCELFS_TOOLS_FDL_H
#define ACCELFS_TOOLS_FDL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define FDL_BLOCK 512			/* RMS's block: ALLOCATION and EXTENSION count them */
#define FDL_RECORD_MAX 32767		/* RECORD SIZE, as RMS bounds it */
#define FDL_EXTENSION_MAX 65535		/* EXTENSION, as RMS bounds it */
#define FDL_ALLOCATION_MAX (1ULL << 53) /* blocks: 4 EiB, far past any file */

enum fdl_holes {
	FDL_HOLES_KEEP = 0, /* holes stay unallocated (default) */
	FDL_HOLES_ALLOCATE, /* the whole range is reserved, holes become unwritten extents */
};

enum fdl_format {
	FDL_FORMAT_STREAM_LF = 0, /* a byte stream, as every Linux file (default) */
	FDL_FORMAT_VARIABLE,	  /* records of up to SIZE bytes (0: any) */
	FDL_FORMAT_FIXED,	  /* records of exactly SIZE bytes: the size is a multiple */
};

/* One user.accelfs.<name> attribute (cache/tuning.h); @value may hold any bytes. */
struct fdl_attr {
	char *name;
	char *value;
	size_t len;
};

struct fdl {
	bool legacy; /* read from the older INI form */
	char *name;  /* FILE NAME: informational */
	bool has_preallocate;
	uint64_t preallocate;	  /* FILE ALLOCATION in bytes: to reserve; default the size */
	bool contiguous;	  /* FILE BEST_TRY_CONTIGUOUS; default yes */
	bool contiguous_required; /* FILE CONTIGUOUS: fail unless at the ideal extent count */
	uint64_t extension;	  /* FILE EXTENSION in bytes: reserved past the end */
	enum fdl_format format;	  /* RECORD FORMAT */
	unsigned int record_size; /* RECORD SIZE; 0 none */
	enum fdl_holes holes;	  /* LINUX HOLES; default keep */
	bool has_uid, has_gid, has_mode;
	uid_t uid; /* LINUX OWNER, GROUP, MODE */
	gid_t gid;
	mode_t mode;
	bool has_accelfs; /* an ACCELFS section exists: exactly these attrs */
	struct fdl_attr *attrs;
	size_t nattrs;
};

struct fdl_error {
	unsigned int line; /* 1-based */
	unsigned int col;  /* 1-based byte column */
	char msg[200];
};

void fdl_init(struct fdl *fdl);
void fdl_free(struct fdl *fdl);

/* Add or replace attribute @name. Returns 0, -EINVAL (bad name) or -ENOMEM. */
int fdl_attr_set(struct fdl *fdl, const char *name, const void *value, size_t len);

/* True when @name may be an attribute name: [A-Za-z0-9_.-]+. */
bool fdl_key_valid(const char *name);

/*
 * fdl_parse - parse @len bytes of @text into @fdl (initialised by the caller).
 * Returns 0, or -EINVAL with @err filled in (-ENOMEM without position).
 */
int fdl_parse(const char *text, size_t len, struct fdl *fdl, struct fdl_error *err);

/* fdl_load - read and parse file @path. -errno from open/read, or as fdl_parse. */
int fdl_load(const char *path, struct fdl *fdl, struct fdl_error *err);

/*
 * fdl_write - write @fdl as FDL, after the comment lines @comment (each
 * starting with '!'), with @ident as IDENT. An attribute that is not a
 * tuning attribute accel knows, or holds a value the daemon would not
 * take, is written as a comment only. -errno.
 */
int fdl_write(FILE *f, const struct fdl *fdl, const char *comment, const char *ident);

#endif
