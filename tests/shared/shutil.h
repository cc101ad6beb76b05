// SPDX-License-Identifier: MIT
/*
 * shutil.h - what the shared-storage test helpers (tests/shared) have in
 * common: dying with a message, clocks, numbers from the command line, whole
 * reads and writes, and one fcntl lock call for the three kinds of lock.
 */
#ifndef SHUTIL_H
#define SHUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* milliseconds on CLOCK_MONOTONIC (intervals) and CLOCK_REALTIME (a start
 * time two processes agree on) */
double mono_ms(void);
double wall_ms(void);
void sleep_ms(double ms);

/* a non-negative number from argv, or die naming @what */
long arg_long(const char *s, const char *what);

/* "DIR/NAME" into @buf (PATH_MAX bytes), or die */
char *path_in(char *buf, const char *dir, const char *name);

/* write or read exactly @len bytes at @off (fewer only at end of file for
 * the read); the count, or -errno */
ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off);
ssize_t pread_all(int fd, void *buf, size_t len, off_t off);

/* a file of @len bytes of @c (created or truncated, then closed); 0 or -errno */
int file_fill(const char *path, size_t len, char c);

/* the errno's name ("EAGAIN"), for output a script compares */
const char *err_name(int err);

/*
 * Locks. kind: "fcntl" (POSIX record locks, per process), "ofd" (per open
 * file description) or "flock" (whole file; @start and @len ignored).
 * lock_set: @type F_WRLCK, F_RDLCK or F_UNLCK; @wait blocks until granted.
 * lock_test: 1 if another owner's lock conflicts with a write lock, 0 if not
 * (F_GETLK, F_OFD_GETLK; -ENOTSUP for flock). Both return -errno on failure.
 */
bool lock_kind_ok(const char *kind);
int lock_set(int fd, const char *kind, short type, off_t start, off_t len, bool wait);
int lock_test(int fd, const char *kind, off_t start, off_t len);

#endif
