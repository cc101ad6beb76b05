/* SPDX-License-Identifier: MIT */
/*
 * fdl.h - the File Definition Language: a small text file that says how a
 * file should be laid out and what metadata it should carry. `accel analyze
 * --fdl` writes one from an existing file, a person edits it, `accel convert
 * --fdl` builds a new file from it. The format (sections, keys, types,
 * defaults) is specified in docs/defrag.md; this module is its only reader
 * and writer, and reports every error with its line and column.
 */
#ifndef ACCELFS_TOOLS_FDL_H
#define ACCELFS_TOOLS_FDL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define FDL_XATTR_PREFIX "user.accelfs."

enum fdl_holes {
	FDL_HOLES_KEEP = 0, /* holes stay unallocated (default) */
	FDL_HOLES_ALLOCATE, /* the whole range is reserved, holes become unwritten extents */
};

/* One user.accelfs.<name> attribute; @value may hold any bytes. */
struct fdl_attr {
	char *name;
	char *value;
	size_t len;
};

struct fdl {
	char *name; /* [file] name: informational */
	bool has_size;
	uint64_t size; /* [file] size: informational */
	bool has_preallocate;
	uint64_t preallocate; /* [allocation] bytes to reserve; default: file size */
	bool contiguous;      /* [allocation] best_try_contiguous; default yes */
	enum fdl_holes holes; /* [allocation] holes; default keep */
	bool has_uid, has_gid, has_mode;
	uid_t uid; /* [ownership] */
	gid_t gid;
	mode_t mode;
	bool has_accelfs; /* an [accelfs] section exists: exactly these attrs */
	struct fdl_attr *attrs;
	size_t nattrs;
};

struct fdl_error {
	unsigned int line; /* 1-based */
	unsigned int col;  /* 1-based byte column */
	char msg[160];
};

void fdl_init(struct fdl *fdl);
void fdl_free(struct fdl *fdl);

/* Add or replace attribute @name. Returns 0, -EINVAL (bad name) or -ENOMEM. */
int fdl_attr_set(struct fdl *fdl, const char *name, const void *value, size_t len);

/* True when @name may be an FDL key: [A-Za-z0-9_.-]+. */
bool fdl_key_valid(const char *name);

/*
 * fdl_parse - parse @len bytes of @text into @fdl (initialised by the caller).
 * Returns 0, or -EINVAL with @err filled in (-ENOMEM without position).
 */
int fdl_parse(const char *text, size_t len, struct fdl *fdl, struct fdl_error *err);

/* fdl_load - read and parse file @path. -errno from open/read, or as fdl_parse. */
int fdl_load(const char *path, struct fdl *fdl, struct fdl_error *err);

/* fdl_write - write @fdl in canonical form, preceded by @comment lines. -errno. */
int fdl_write(FILE *f, const struct fdl *fdl, const char *comment);

#endif
