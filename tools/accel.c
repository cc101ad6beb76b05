// SPDX-License-Identifier: MIT
/*
 * accel.c - the `accel` command: dispatch to a subcommand from one table.
 * Adding a subcommand is one file tools/cmd_<name>.c plus one line below.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

struct accel_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

static const struct accel_cmd commands[] = {
	{ "analyze", "show a file's on-disk layout; write its FDL", cmd_analyze },
	{ "convert", "rebuild a file as an FDL describes, verified, optionally in place",
	  cmd_convert },
	{ "defrag", "rewrite fragmented files contiguously, keeping all metadata", cmd_defrag },
	{ "warm", "load files into the global buffer pool in on-disk order", cmd_warm },
	{ "stat", "print the pool's, its files' and mounts' counters (--json, --prometheus)",
	  cmd_stat },
	{ "monitor", "live cache statistics of a file and the hot files (ncurses)", cmd_monitor },
	{ "set", "store per-file tuning (global/local buffers...) in the file's xattrs", cmd_set },
	{ "show", "a file's tuning attributes and its entry in the buffer pool", cmd_show },
	{ "pool", "show, list or remove (--reset) global buffer pools", cmd_pool },
	{ "trace", "bpftrace scripts on the running daemons (cache-stats...)", cmd_trace },
	{ "sysgen", "check (--apply: raise) the kernel limits accelfs needs", cmd_sysgen },
	{ "report", "usage, miss-ratio curves and suggested tuning (--apply: set it)", cmd_report },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: accel COMMAND [OPTION]... [ARG]...\n"
		   "       accel help COMMAND | --help | --version\n\n"
		   "Layout and tuning tools for accelfs.\n\nCommands:\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'accel COMMAND --help' for a command's options. Exit status: 0 done,\n"
		   "1 some file failed, 2 usage error, 128+N stopped by signal N.\n"
		   "See accel(1), docs/defrag.md and docs/monitoring.md.\n");
}

static const struct accel_cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	}
	return NULL;
}

static int run_help(int argc, char **argv)
{
	const struct accel_cmd *cmd;
	char *args[] = { NULL, "--help", NULL };

	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	cmd = find(argv[2]);
	if (!cmd) {
		util_err("help", NULL, "unknown command '%s'", argv[2]);
		return EXIT_USAGE;
	}
	args[0] = argv[2];
	return cmd->run(2, args);
}

int main(int argc, char **argv)
{
	const struct accel_cmd *cmd;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("accel (accelfs) %s\n", ACCELFS_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0)
		return run_help(argc, argv);
	cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "accel: unknown command '%s' (see 'accel --help')\n", argv[1]);
		return EXIT_USAGE;
	}
	util_signals_install();
	return cmd->run(argc - 1, argv + 1);
}
