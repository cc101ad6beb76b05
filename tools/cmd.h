/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - the accel subcommands. Each is one file tools/cmd_<name>.c with
 * one entry point, listed once in the table in tools/accel.c.
 *
 * Exit codes shared by all subcommands (documented in accel(1)):
 *   0  everything asked for was done
 *   1  at least one file failed (the message says which and why)
 *   2  usage error (bad option or arguments)
 *   128+N  stopped by signal N (SIGINT: 130) after cleaning up
 */
#ifndef ACCELFS_TOOLS_CMD_H
#define ACCELFS_TOOLS_CMD_H

#define EXIT_FAIL 1
#define EXIT_USAGE 2

int cmd_analyze(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_defrag(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_pool(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_sysgen(int argc, char **argv);
int cmd_warm(int argc, char **argv);
int cmd_report(int argc, char **argv);

/*
 * Open regular file @path without updating its atime where we may, and
 * without blocking: a FIFO or device given by mistake is refused, never
 * waited on. Returns the descriptor, -errno, or -CMD_ENOTREG for anything
 * but a regular file (-EISDIR for a directory); cmd_strerror() words both.
 */
#define CMD_ENOTREG 4096 /* beyond every errno */
int cmd_open_source(const char *path, int flags);
const char *cmd_strerror(int err);

/* The exit code after a signal stopped the run, or 0 when none did. */
int cmd_signal_exit(void);

#endif
