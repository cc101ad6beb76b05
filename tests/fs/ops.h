/* SPDX-License-Identifier: MIT */
/*
 * ops.h: the small framework behind ops_compare.
 *
 * ops_compare runs every case twice, once with the working directory inside
 * the accelfs mount and once inside a plain reference directory, and records
 * what each step returned (value or errno name, data checksums, metadata) as
 * lines of text.  The two traces must be identical.  A case therefore never
 * records anything that legitimately differs between two directories (inode
 * numbers, ctime, free blocks); it records relations instead ("same inode").
 */
#ifndef ACCELFS_TESTS_FS_OPS_H
#define ACCELFS_TESTS_FS_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Appends one formatted line to the trace of the side being run. */
void ops_rec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Records "label = ret", or "label = -1 ENAME" when ret < 0; returns ret. */
long ops_ret(const char *label, long ret);

/* Evaluates expr with errno cleared and records its result under label. */
#define OPS_CHK(label, expr) ops_ret((label), (errno = 0, (long)(expr)))

/* Records type, permission bits, nlink, owner and (files, links) size of path (lstat). */
void ops_stat(const char *label, const char *path);

/* Same as ops_stat for an open descriptor. */
void ops_fstat(const char *label, int fd);

/* Records length and FNV-1a checksum of the whole content of path. */
void ops_sum(const char *label, const char *path);

/* Records the sorted names and d_types of directory path, one line per entry. */
void ops_list(const char *label, const char *path);

/* Fills buf with bytes that depend on seed and position; deterministic. */
void ops_pattern(void *buf, size_t len, uint64_t seed);

/* Creates path (mode 0644, truncated) holding len pattern bytes; returns 0 or -errno. */
int ops_mkfile(const char *path, size_t len, uint64_t seed);

/* Opens path and closes it again; returns 0, or -1 with open's errno. */
int ops_open_close(const char *path, int flags, mode_t mode);

/* FNV-1a over len bytes, continuing from h (start with OPS_FNV_INIT). */
#define OPS_FNV_INIT 0xcbf29ce484222325ULL
uint64_t ops_fnv(uint64_t h, const void *buf, size_t len);

/* Name of an errno value, for messages. */
const char *ops_errname(int err);

/* uid/gid of the unprivileged user for permission cases. */
#define OPS_NOBODY 65534

/* The cases, grouped by object; see the ops_*.c files. */
void ops_case_lookup(void);
void ops_case_setattr(void);
void ops_case_times(void);
void ops_case_symlink(void);
void ops_case_mknod(void);
void ops_case_mkdir(void);
void ops_case_unlink(void);
void ops_case_rename(void);
void ops_case_link(void);
void ops_case_open(void);
void ops_case_rw(void);
void ops_case_fsync(void);
void ops_case_readdir(void);
void ops_case_hugedir(void);
void ops_case_statfs(void);
void ops_case_xattr(void);
void ops_case_acl(void);
void ops_case_access(void);
void ops_case_fallocate(void);
void ops_case_copy_range(void);
void ops_case_lseek(void);
void ops_case_bigfile(void);
void ops_case_names(void);
void ops_case_errno(void);
void ops_case_locks(void);
void ops_case_nobody(void);

#endif
