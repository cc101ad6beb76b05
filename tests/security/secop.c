// SPDX-License-Identifier: MIT
/*
 * secop.c - one file system operation, its outcome as one line.
 *
 * The security suite runs each operation as an unprivileged user twice, on
 * the mount and on a plain directory laid out the same way, and compares the
 * lines: "ok" (with what was found) or the errno's name. Nothing in the
 * output names the path, so the two lines are equal when the answers are.
 *
 *   secop open PATH FLAGS [MODE]   FLAGS: comma list of rdonly, wronly, rdwr,
 *                                  creat, excl, trunc, nonblock, nofollow
 *                                  (prints the type of what was opened)
 *   secop read PATH                the first bytes
 *   secop write PATH [direct]      4096 bytes at offset 0 (O_DIRECT: aligned)
 *   secop truncate PATH            truncate(2) to 1 byte
 *   secop ftruncate PATH           open write-only, ftruncate(2) to 1 byte
 *   secop mknod PATH c|p   secop mkdir PATH   secop rmdir PATH
 *   secop symlink PATH TARGET   secop link OLD NEW
 *   secop unlink PATH   secop rename OLD NEW   secop chmod PATH OCTAL
 *   secop chown PATH UID GID   secop utime PATH (explicit times)
 *   secop utimenow PATH   secop getxattr PATH NAME
 *   secop setxattr PATH NAME VALUE   secop listxattr PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static int result(int ret)
{
	if (ret < 0) {
		const char *name = strerrorname_np(errno);

		printf("%s\n", name ? name : "E?");
		return 0;
	}
	printf("ok\n");
	return 0;
}

static int parse_flags(const char *s)
{
	static const struct {
		const char *name;
		int flag;
	} tab[] = { { "rdonly", O_RDONLY },	{ "wronly", O_WRONLY },	   { "rdwr", O_RDWR },
		    { "creat", O_CREAT },	{ "excl", O_EXCL },	   { "trunc", O_TRUNC },
		    { "nonblock", O_NONBLOCK }, { "nofollow", O_NOFOLLOW } };
	char *dup = strdup(s), *tok, *save = NULL;
	int flags = 0;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(tab) / sizeof(tab[0]) && strcmp(tab[i].name, tok); i++)
			;
		if (i == sizeof(tab) / sizeof(tab[0])) {
			fprintf(stderr, "secop: unknown flag %s\n", tok);
			exit(2);
		}
		flags |= tab[i].flag;
	}
	free(dup);
	return flags;
}

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "reg" : S_ISFIFO(m) ? "fifo" : S_ISDIR(m) ? "dir" : "other";
}

static int do_open(const char *path, const char *flags, const char *mode)
{
	int fd = open(path, parse_flags(flags), mode ? (mode_t)strtol(mode, NULL, 8) : 0644);
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return result(-1);
	printf("ok %s\n", type_name(st.st_mode));
	return 0;
}

static int do_read(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (n < 0)
		return result(-1);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("ok %s\n", buf);
	return 0;
}

static int do_write(const char *path, int direct)
{
	void *buf;
	int fd = open(path, O_WRONLY | (direct ? O_DIRECT : 0));

	if (fd < 0)
		return result(-1);
	if (posix_memalign(&buf, 4096, 4096))
		return 1;
	memset(buf, 'w', 4096);
	return result(pwrite(fd, buf, 4096, 0) == 4096 ? 0 : -1);
}

static int do_ftruncate(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return result(-1);
	return result(ftruncate(fd, 1));
}

static int do_listxattr(const char *path)
{
	char buf[4096];
	ssize_t n = listxattr(path, buf, sizeof(buf)), i;
	ssize_t size = listxattr(path, NULL, 0);

	if (n < 0)
		return result(-1);
	if (size != n) { /* the size alone must agree with the list */
		printf("size %zd != list %zd\n", size, n);
		return 0;
	}
	printf("ok");
	for (i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strncmp(buf + i, "security.", 9)) /* SELinux labels differ per fs */
			printf(" %s", buf + i);
	printf("\n");
	return 0;
}

static int do_utime(const char *path, int now)
{
	struct timespec tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	return result(utimensat(AT_FDCWD, path, now ? NULL : tv, 0));
}

static int do_getxattr(const char *path, const char *name)
{
	char buf[256];
	ssize_t n = getxattr(path, name, buf, sizeof(buf) - 1);

	if (n < 0)
		return result(-1);
	buf[n] = '\0';
	printf("ok %s\n", buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *op = argc > 2 ? argv[1] : "", *p = argc > 2 ? argv[2] : "";
	const char *a3 = argc > 3 ? argv[3] : NULL, *a4 = argc > 4 ? argv[4] : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(op, "open") && a3)
		return do_open(p, a3, a4);
	if (!strcmp(op, "read"))
		return do_read(p);
	if (!strcmp(op, "write"))
		return do_write(p, a3 && !strcmp(a3, "direct"));
	if (!strcmp(op, "truncate"))
		return result(truncate(p, 1));
	if (!strcmp(op, "ftruncate"))
		return do_ftruncate(p);
	if (!strcmp(op, "mknod") && a3)
		return result(mknod(p, (*a3 == 'c' ? S_IFCHR : S_IFIFO) | 0644, makedev(1, 3)));
	if (!strcmp(op, "mkdir"))
		return result(mkdir(p, 0755));
	if (!strcmp(op, "link") && a3)
		return result(link(p, a3));
	if (!strcmp(op, "unlink"))
		return result(unlink(p));
	if (!strcmp(op, "rmdir"))
		return result(rmdir(p));
	if (!strcmp(op, "symlink") && a3)
		return result(symlink(a3, p));
	if (!strcmp(op, "rename") && a3)
		return result(rename(p, a3));
	if (!strcmp(op, "chmod") && a3)
		return result(chmod(p, (mode_t)strtol(a3, NULL, 8)));
	if (!strcmp(op, "chown") && a4)
		return result(chown(p, (uid_t)atol(a3), (gid_t)atol(a4)));
	if (!strcmp(op, "utime") || !strcmp(op, "utimenow"))
		return do_utime(p, !strcmp(op, "utimenow"));
	if (!strcmp(op, "getxattr") && a3)
		return do_getxattr(p, a3);
	if (!strcmp(op, "setxattr") && a4)
		return result(setxattr(p, a3, a4, strlen(a4), 0));
	if (!strcmp(op, "listxattr"))
		return do_listxattr(p);
	fprintf(stderr, "usage: secop OP PATH [ARGS] (see secop.c)\n");
	return 2;
}
