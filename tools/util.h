/* SPDX-License-Identifier: MIT */
/*
 * util.h - the few things every accel subcommand needs: one-line error
 * messages in the form "accel CMD: PATH: reason", human-readable sizes, a
 * monotonic clock, and the signal flags that let a long run stop cleanly.
 *
 * Signals never kill accel in the middle of a file: SIGINT, SIGTERM and SIGHUP
 * only set util_stop_sig, which the copy loops poll, so the command removes
 * its temporary file, leaves the original untouched and exits 128+signal.
 * SIGIO is the kernel telling us a file lease was broken (someone opened the
 * file for writing); it sets util_lease_broken.
 */
#ifndef ACCELFS_TOOLS_UTIL_H
#define ACCELFS_TOOLS_UTIL_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>

extern volatile sig_atomic_t util_stop_sig;
extern volatile sig_atomic_t util_lease_broken;

/* Install the handlers described above (without SA_RESTART). */
void util_signals_install(void);

/* "accel CMD: PATH: message\n" on stderr; PATH may be NULL. */
void util_err(const char *cmd, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Format @bytes as "12.3 MiB" into @buf; returns @buf. */
char *util_bytes(uint64_t bytes, char *buf, size_t len);

/* Seconds from an arbitrary fixed point (CLOCK_MONOTONIC). */
double util_now(void);

/* Parse a non-negative decimal integer; returns 0 or -EINVAL/-ERANGE. */
int util_parse_u64(const char *s, uint64_t *out);

/*
 * Parse @arg, the value of option --@opt of command @cmd, as a number of
 * seconds from @min to @max into *@out: 0, or -EINVAL after one line
 * "accel CMD: --OPT 'ARG': need seconds from MIN to MAX".
 */
int util_parse_seconds(const char *cmd, const char *opt, const char *arg, double min, double max,
		       double *out);

/*
 * Open the directory holding @path (O_RDONLY | O_DIRECTORY) and copy the last
 * component into @name. Returns the directory fd or -errno.
 */
int util_open_parent(const char *path, char *name, size_t len);

/* A test hook: true when environment variable @name is set to "1". */
int util_test_flag(const char *name);

/*
 * A test hook: sleep for the seconds environment variable @name holds, so a
 * test can change or kill us there; ends early on a stop signal or a broken
 * lease.
 */
void util_test_pause(const char *name);

#endif
