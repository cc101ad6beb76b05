/* SPDX-License-Identifier: MIT */
/*
 * sysgen_i.h - shared internals of sysgen.c (report, shared memory, io_uring,
 * probes), sysgen_mount.c (FUSE connections, BDIs, dirty pages) and
 * sysgen_cpu.c (idle vCPUs).
 */
#ifndef ACCELFS_TOOLS_SYSGEN_I_H
#define ACCELFS_TOOLS_SYSGEN_I_H

#include <stdarg.h>

#include "sysgen.h"

/* The roots with defaults filled in, and what both halves derive. */
struct sysgen_ctx {
	const struct sysgen_config *cfg;
	const char *proc, *sys, *shm;
	struct sysgen_report *rep;
	uint64_t dirty_limit; /* bytes at which writers are throttled, 0 unknown */
};

/* Append a row; returns it zeroed but for param, or NULL (-ENOMEM). */
struct sysgen_row *sysgen_row_add(struct sysgen_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* snprintf into a fixed array field. */
#define sysgen_set(field, ...) snprintf((field), sizeof(field), __VA_ARGS__)

/* "@root/@rel" into @buf. */
void sysgen_path(char *buf, size_t len, const char *root, const char *rel);

/* The first line of a file, without its newline. 0 or -errno. */
int sysgen_read_line(const char *path, char *buf, size_t len);

/* A file holding one unsigned decimal (the first field). 0, -errno, -EINVAL. */
int sysgen_read_u64(const char *path, uint64_t *v);

/*
 * Judge a numeric knob at @path against @min: fills current/needed/status
 * and, when low, set_path/set_value = @min. An absent file gives "absent"
 * and status @absent. Returns 0 when read, -errno otherwise.
 */
int sysgen_judge_min(struct sysgen_row *row, const char *path, uint64_t min,
		     enum sysgen_status absent, uint64_t *out);

int sysgen_mount_rows(struct sysgen_ctx *ctx);
int sysgen_dirty_rows(struct sysgen_ctx *ctx);
int sysgen_cpu_rows(struct sysgen_ctx *ctx); /* sysgen_cpu.c: idle vCPUs */

#endif
