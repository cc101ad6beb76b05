// SPDX-License-Identifier: MIT
/*
 * hot.c - per-file I/O counts for --hot-first. A stub that returns 0 until
 * the buffer-pool statistics exist: filled in by the buffer-pool work.
 */
#include "hot.h"

uint64_t hot_score(const char *path)
{
	(void)path;
	return 0;
}
