// SPDX-License-Identifier: MIT
/*
 * mountinfo.c - parsing /proc/PID/mountinfo (see mountinfo.h): one
 * tokenizer and one unescaper for the daemon and the tools.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"

#define MAX_FIELDS 64 /* 6 fixed + optional fields + 4 after the separator */

void mountinfo_unescape(char *s)
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

int mountinfo_parse(char *line, struct mountinfo_line *m)
{
	char *field[MAX_FIELDS], *save = NULL, *tok, end;
	int n = 0, sep = -1;

	for (tok = strtok_r(line, " \t\n", &save); tok && n < MAX_FIELDS;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (sep < 0 && n >= 6 && !strcmp(tok, "-"))
			sep = n;
		field[n++] = tok;
	}
	if (sep < 0 || n < sep + 3 || sscanf(field[2], "%u:%u%c", &m->major, &m->minor, &end) != 2)
		return -EINVAL;
	m->root = field[3];
	m->point = field[4];
	m->fstype = field[sep + 1];
	m->source = field[sep + 2];
	m->super = n > sep + 3 ? field[sep + 3] : "";
	mountinfo_unescape(m->root);
	mountinfo_unescape(m->point);
	mountinfo_unescape(m->source);
	return 0;
}

static void entry_set(struct mountinfo_entry *e, const struct mountinfo_line *m)
{
	snprintf(e->devno, sizeof(e->devno), "%u:%u", m->major, m->minor);
	snprintf(e->fstype, sizeof(e->fstype), "%s", m->fstype);
	snprintf(e->point, sizeof(e->point), "%s", m->point);
	snprintf(e->source, sizeof(e->source), "%s", m->source);
}

int mountinfo_find(const char *table, const char *mnt, struct mountinfo_entry *out)
{
	FILE *f = fopen(table ? table : "/proc/self/mountinfo", "re");
	struct mountinfo_line m;
	char *line = NULL;
	size_t cap = 0;
	int ret = f ? -ENOENT : -errno;

	while (f && getline(&line, &cap, f) > 0) {
		if (!mountinfo_parse(line, &m) && !strcmp(m.point, mnt)) {
			entry_set(out, &m);
			ret = 0; /* keep going: a later line is a mount on top */
		}
	}
	free(line);
	if (f)
		fclose(f);
	return ret;
}
