// SPDX-License-Identifier: MIT
/*
 * cmd_monitor_none.c - `accel monitor` in a build without ncurses: say so.
 */
#include "cmd.h"
#include "util.h"

int cmd_monitor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	util_err("monitor", NULL, "built without ncurses; use 'accel stat' instead");
	return EXIT_FAIL;
}
