// SPDX-License-Identifier: MIT
/*
 * cmd_monitor.c - `accel monitor`: live cache statistics (work in progress:
 * only the checks that come before the screen are here yet).
 */
#include <unistd.h>

#include "cmd.h"
#include "util.h"

int cmd_monitor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!isatty(STDOUT_FILENO)) {
		util_err("monitor", NULL,
			 "not a terminal; use 'accel stat' (or 'accel stat --json') instead");
		return EXIT_USAGE;
	}
	util_err("monitor", NULL, "not implemented yet; use 'accel stat'");
	return EXIT_FAIL;
}
