// SPDX-License-Identifier: MIT
/*
 * mountres.c - map paths inside accelfs mounts to their backing files by
 * reading the mount table (see mountres.h). The innermost mount containing
 * the path decides: a path under a non-accelfs mount nested inside an
 * accelfs mount is left alone.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mountinfo.h"
#include "mountres.h"

#define ACCELFS_FSTYPE "fuse.accelfs"

/* Append component @c (length @n) to the absolute path in @out. */
static int push_component(char *out, size_t len, const char *c, size_t n)
{
	size_t used = strlen(out);
	char *slash;

	if (n == 0 || (n == 1 && c[0] == '.'))
		return 0;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		slash = strrchr(out, '/');
		slash[slash == out ? 1 : 0] = '\0';
		return 0;
	}
	if (used + n + 2 > len)
		return -ENAMETOOLONG;
	if (used > 1)
		out[used++] = '/';
	memcpy(out + used, c, n);
	out[used + n] = '\0';
	return 0;
}

static int push_path(char *out, size_t len, const char *p)
{
	const char *end;
	int ret = 0;

	while (*p && ret == 0) {
		end = strchrnul(p, '/');
		ret = push_component(out, len, p, (size_t)(end - p));
		p = *end ? end + 1 : end;
	}
	return ret;
}

int mountres_normalize(const char *path, char *out, size_t len)
{
	char cwd[PATH_MAX];
	int ret;

	if (len < 2)
		return -ENAMETOOLONG;
	strcpy(out, "/");
	if (path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		ret = push_path(out, len, cwd);
		if (ret < 0)
			return ret;
	}
	return push_path(out, len, path);
}

/* Length of mount point @mnt if it contains @abs, else 0 ("/" counts as 1). */
static size_t covers(const char *mnt, const char *abs)
{
	size_t n = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return 1;
	if (strncmp(abs, mnt, n) == 0 && (abs[n] == '\0' || abs[n] == '/'))
		return n;
	return 0;
}

struct best {
	size_t len;
	int accelfs;
	char point[PATH_MAX];
	char source[PATH_MAX];
	char rel[PATH_MAX];
};

static void consider(struct best *b, char *line, const char *abs)
{
	struct mountinfo_line m;
	size_t n;

	if (mountinfo_parse(line, &m) < 0)
		return;
	n = covers(m.point, abs);
	if (n == 0 || n < b->len)
		return;
	b->len = n;
	b->accelfs = strcmp(m.fstype, ACCELFS_FSTYPE) == 0 && m.source[0] == '/';
	snprintf(b->point, sizeof(b->point), "%s", m.point);
	snprintf(b->source, sizeof(b->source), "%s", m.source);
	snprintf(b->rel, sizeof(b->rel), "%s", n == 1 ? abs + 1 : abs + n + (abs[n] == '/'));
}

static FILE *open_table(const char *mountinfo)
{
	const char *table = getenv("ACCEL_TEST_MOUNTINFO");

	return fopen(mountinfo ? mountinfo : table ? table : "/proc/self/mountinfo", "re");
}

/* Read the table and return the innermost mount containing @abs (NULL: none/ENOMEM). */
static struct best *innermost(const char *mountinfo, const char *abs)
{
	char line[3 * PATH_MAX];
	struct best *b;
	FILE *f;

	f = open_table(mountinfo);
	if (!f)
		return NULL;
	b = calloc(1, sizeof(*b));
	while (b && fgets(line, sizeof(line), f))
		consider(b, line, abs);
	fclose(f);
	return b;
}

int mountres_resolve_in(const char *mountinfo, const char *path, struct mountres *r)
{
	char abs[PATH_MAX];
	struct best *b;
	int n, ret;

	r->mountpoint[0] = '\0';
	ret = mountres_normalize(path, abs, sizeof(abs));
	if (ret < 0)
		return ret;
	b = innermost(mountinfo, abs);
	if (b && b->accelfs) {
		n = snprintf(r->path, sizeof(r->path), "%s%s%s", b->source, b->rel[0] ? "/" : "",
			     b->rel);
		snprintf(r->mountpoint, sizeof(r->mountpoint), "%s", b->point);
	} else {
		n = snprintf(r->path, sizeof(r->path), "%s", path);
	}
	free(b);
	return n < 0 || (size_t)n >= sizeof(r->path) ? -ENAMETOOLONG : 0;
}

int mountres_resolve(const char *path, struct mountres *r)
{
	return mountres_resolve_in(NULL, path, r);
}

bool mountres_dev_accelfs(dev_t dev)
{
	char line[3 * PATH_MAX];
	struct mountinfo_line m;
	bool found = false;
	FILE *f = open_table(NULL);

	while (f && !found && fgets(line, sizeof(line), f))
		found = mountinfo_parse(line, &m) == 0 && !strcmp(m.fstype, ACCELFS_FSTYPE) &&
			makedev(m.major, m.minor) == dev;
	if (f)
		fclose(f);
	return found;
}
