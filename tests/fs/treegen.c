// SPDX-License-Identifier: MIT
/*
 * treegen.c - make a tree of about N entries quickly, for tests that need
 * more names than the daemon has descriptors: directories of 100 entries
 * holding small files (a few with data), hard links, symbolic links and
 * user.* extended attributes, all fixed by N so two runs make equal trees.
 *
 * usage: treegen DIR N     exit 0, or 1 with a message
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define PER_DIR 100

static int die(const char *what, const char *name)
{
	fprintf(stderr, "treegen: %s %s: %s\n", what, name, strerror(errno));
	exit(1);
}

/* Entry @i in directory @dir: every 10th a hard link, every 10th + 5 a symlink. */
static void make_entry(int dir, long i)
{
	char name[48], prev[64], val[32];
	int fd;

	snprintf(name, sizeof(name), "e%05ld", i);
	if (i % 10 == 9) {
		snprintf(prev, sizeof(prev), "e%05ld", i - 1);
		if (linkat(dir, prev, dir, name, 0))
			die("link", name);
		return;
	}
	if (i % 10 == 5) {
		snprintf(prev, sizeof(prev), "../d%03ld/e%05ld", i / PER_DIR, i - 1);
		if (symlinkat(prev, dir, name))
			die("symlink", name);
		return;
	}
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640 | (i % 3 ? 4 : 0));
	if (fd < 0)
		die("create", name);
	if (i % 4 == 0)
		dprintf(fd, "entry %ld of the tree\n", i);
	if (i % 7 == 0) {
		snprintf(val, sizeof(val), "v%ld", i);
		if (fsetxattr(fd, "user.treegen", val, strlen(val), 0))
			die("setxattr", name);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	long n, i;
	int top, dir = -1;
	char name[48];

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: treegen DIR N\n");
		return 2;
	}
	top = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		die("open", argv[1]);
	for (i = 0; i < n; i++) {
		if (i % PER_DIR == 0) {
			if (dir >= 0)
				close(dir);
			snprintf(name, sizeof(name), "d%03ld", i / PER_DIR);
			if (mkdirat(top, name, 0755) && errno != EEXIST)
				die("mkdir", name);
			dir = openat(top, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dir < 0)
				die("open", name);
		}
		make_entry(dir, i);
	}
	return 0;
}
