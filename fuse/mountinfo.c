// SPDX-License-Identifier: MIT
/*
 * mountinfo.c - find the newest mount at a path in /proc/self/mountinfo.
 *
 * Used before mounting (is an accelfs already there?) and after (the bdi's
 * device number): stat() of a fresh mount would ask this very daemon for
 * the root's attributes before its session loop runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accelfs_i.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* One line: "ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER". */
static bool parse_line(const char *line, struct mountinfo_entry *e)
{
	const char *sep = strstr(line, " - ");

	if (sscanf(line, "%*u %*u %31s %*s %4095s", e->devno, e->point) != 2 || !sep ||
	    sscanf(sep + 3, "%63s %4095s", e->fstype, e->source) != 2)
		return false;
	unescape(e->point);
	unescape(e->source);
	return true;
}

int mountinfo_find(const char *mnt, struct mountinfo_entry *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct mountinfo_entry *e = malloc(sizeof(*e));
	char *line = NULL;
	size_t cap = 0;
	int ret = -ENOENT;

	if (!f || !e) {
		ret = f ? -ENOMEM : -errno;
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		if (parse_line(line, e) && !strcmp(e->point, mnt)) {
			*out = *e;
			ret = 0; /* keep going: a later line is a mount on top */
		}
	}
out:
	free(line);
	free(e);
	if (f)
		fclose(f);
	return ret;
}
