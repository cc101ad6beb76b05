// SPDX-License-Identifier: MIT
/*
 * ops_misc.c: ops_compare cases that need a second process: POSIX (fcntl),
 * OFD and BSD (flock) locks held by one process and tested by another, and
 * permission checks made by a child that switched to the user nobody.
 *
 * The child reports each result as a text line on a pipe; the parent records
 * the lines, so the child's view lands in the same trace as the parent's.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ops.h"

/* The child's end of the report pipe. */
static int report_fd = -1;

static void child_rec(const char *label, long ret)
{
	char line[256];
	int len;

	if (ret < 0)
		len = snprintf(line, sizeof(line), "child %s = -1 %s\n", label, ops_errname(errno));
	else
		len = snprintf(line, sizeof(line), "child %s = %ld\n", label, ret);
	if (write(report_fd, line, len) != len)
		_exit(3);
}

#define CHILD_CHK(label, expr) child_rec((label), (errno = 0, (long)(expr)))

/* Reads the child's report lines into the trace until EOF. */
static void collect(int fd)
{
	char buf[65536], *p, *nl;
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = 0;
		ops_rec("%s", p);
	}
}

static int lock(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

/* Child side of the lock case: tries the locks the parent holds. */
static void locks_child(int go, pid_t parent)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 100 };
	int fd = open("posix", O_RDWR), bfd = open("bsd", O_RDWR), ofd = open("ofd", O_RDWR);
	char c;

	CHILD_CHK("setlk overlapping", lock(fd, F_SETLK, F_WRLCK, 50, 100));
	CHILD_CHK("setlk read overlapping", lock(fd, F_SETLK, F_RDLCK, 0, 10));
	CHILD_CHK("getlk", fcntl(fd, F_GETLK, &fl));
	CHILD_CHK("getlk type is write", fl.l_type == F_WRLCK);
	CHILD_CHK("getlk range", fl.l_start * 1000 + fl.l_len);
	CHILD_CHK("getlk pid is parent", fl.l_pid == parent);
	CHILD_CHK("setlk disjoint", lock(fd, F_SETLK, F_WRLCK, 100, 100));
	CHILD_CHK("flock ex nb", flock(bfd, LOCK_EX | LOCK_NB));
	CHILD_CHK("flock sh nb", flock(bfd, LOCK_SH | LOCK_NB));
	CHILD_CHK("ofd setlk", lock(ofd, F_OFD_SETLK, F_WRLCK, 0, 1));
	CHILD_CHK("tell parent", write(go, "r", 1));
	CHILD_CHK("wait for parent", read(go, &c, 1));
	CHILD_CHK("setlk after unlock", lock(fd, F_SETLK, F_WRLCK, 50, 100));
	CHILD_CHK("flock after unlock", flock(bfd, LOCK_EX | LOCK_NB));
	CHILD_CHK("ofd after unlock", lock(ofd, F_OFD_SETLK, F_WRLCK, 0, 1));
	CHILD_CHK("setlkw blocks until parent closes", lock(fd, F_SETLKW, F_WRLCK, 0, 0));
}

static pid_t fork_child(int *rd, int *go_wr, void (*fn)(int, pid_t))
{
	int rep[2], go[2];
	pid_t parent = getpid(), pid;

	/* rep: the child's report lines; go: a two-way channel to take turns. */
	if (pipe(rep) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, go) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(rep[0]);
		close(go[1]);
		report_fd = rep[1];
		fn(go[0], parent);
		_exit(0);
	}
	close(rep[1]);
	close(go[0]);
	*rd = rep[0];
	*go_wr = go[1];
	return pid;
}

static void wait_child(pid_t pid, int rd)
{
	int status = 0;

	collect(rd);
	close(rd);
	waitpid(pid, &status, 0);
	ops_rec("child exit: %s %d", WIFEXITED(status) ? "status" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

void ops_case_locks(void)
{
	int fd, bfd, ofd, rd = -1, go = -1;
	pid_t pid;
	char c;

	ops_mkfile("posix", 4096, 100);
	ops_mkfile("bsd", 1, 101);
	ops_mkfile("ofd", 1, 102);
	fd = open("posix", O_RDWR);
	bfd = open("bsd", O_RDWR);
	ofd = open("ofd", O_RDWR);
	OPS_CHK("parent setlk 0-99", lock(fd, F_SETLK, F_WRLCK, 0, 100));
	OPS_CHK("parent flock ex", flock(bfd, LOCK_EX));
	OPS_CHK("parent ofd lock", lock(ofd, F_OFD_SETLK, F_WRLCK, 0, 10));
	pid = fork_child(&rd, &go, locks_child);
	OPS_CHK("child tried the held locks", read(go, &c, 1));
	OPS_CHK("parent unlock", lock(fd, F_SETLK, F_UNLCK, 0, 100));
	OPS_CHK("parent flock un", flock(bfd, LOCK_UN));
	OPS_CHK("parent ofd unlock", lock(ofd, F_OFD_SETLK, F_UNLCK, 0, 10));
	OPS_CHK("parent relock before child", lock(fd, F_SETLK, F_RDLCK, 1000, 1));
	OPS_CHK("go", write(go, "g", 1));
	usleep(300000);
	close(fd);
	close(go);
	wait_child(pid, rd);
	close(bfd);
	close(ofd);
}

/* Child side of the permission case: runs as nobody:nogroup. */
static void nobody_child(int go, pid_t parent)
{
	int fd;

	(void)go;
	(void)parent;
	if (setgroups(0, NULL) < 0 || setgid(OPS_NOBODY) < 0 || setuid(OPS_NOBODY) < 0)
		_exit(4);
	CHILD_CHK("read 0644", ops_open_close("pub", O_RDONLY, 0));
	CHILD_CHK("write 0644", open("pub", O_WRONLY));
	CHILD_CHK("read 0600", open("priv", O_RDONLY));
	CHILD_CHK("read via ACL user:nobody:r", ops_open_close("acl", O_RDONLY, 0));
	CHILD_CHK("write via ACL", open("acl", O_WRONLY));
	CHILD_CHK("create in 0755 root dir", open("ro/new", O_WRONLY | O_CREAT, 0644));
	CHILD_CHK("mkdir in 0755 root dir", mkdir("ro/newd", 0755));
	CHILD_CHK("unlink in 0755 root dir", unlink("ro/f"));
	CHILD_CHK("create in sticky", ops_open_close("sticky/mine", O_WRONLY | O_CREAT, 0640));
	CHILD_CHK("unlink other's in sticky", unlink("sticky/rootf"));
	CHILD_CHK("rename other's in sticky", rename("sticky/rootf", "sticky/x"));
	CHILD_CHK("stat in 0700 dir", access("closed/f", F_OK));
	CHILD_CHK("list 0700 dir", open("closed", O_RDONLY | O_DIRECTORY));
	CHILD_CHK("chmod root's file", chmod("pub", 0666));
	CHILD_CHK("chown own file to root", chown("sticky/mine", 0, 0));
	CHILD_CHK("utimes NULL not owner", utimensat(AT_FDCWD, "pub", NULL, 0));
	CHILD_CHK("truncate 0644", truncate("pub", 0));
	CHILD_CHK("setxattr on 0644", setxattr("pub", "user.x", "v", 1, 0));
	CHILD_CHK("access W_OK", access("pub", W_OK));
	CHILD_CHK("access R_OK 0600", access("priv", R_OK));
	CHILD_CHK("access R_OK 0644", access("pub", R_OK));
	CHILD_CHK("mkdir in own dir", mkdir("mine/sub", 0700));
	fd = open("mine/f", O_RDWR | O_CREAT, 0600);
	CHILD_CHK("create in own dir", fd);
	CHILD_CHK("write own", write(fd, "nobody", 6));
	CHILD_CHK("read own", pread(fd, (char[8]){ 0 }, 8, 0));
	CHILD_CHK("chmod own", fchmod(fd, 0604));
	CHILD_CHK("chown own to nobody:root (not member)", fchown(fd, -1, 0));
	CHILD_CHK("link to root file (protected_hardlinks)", link("pub", "mine/pub"));
	CHILD_CHK("symlink in own dir", symlink("../pub", "mine/l"));
	CHILD_CHK("read through own symlink", ops_open_close("mine/l", O_RDONLY, 0));
	CHILD_CHK("rename own across own dirs", rename("mine/f", "mine/sub/f"));
	CHILD_CHK("rename own into root dir", rename("mine/sub/f", "ro/f2"));
	close(fd);
}

static void nobody_setup(void)
{
	char acl[4 + 5 * 8];
	const uint32_t version = 2;
	const struct {
		uint16_t tag, perm;
		uint32_t id;
	} e[] = { { 1, 6, ~0u },
		  { 2, 4, OPS_NOBODY },
		  { 4, 0, ~0u },
		  { 0x10, 4, ~0u },
		  { 0x20, 0, ~0u } };

	ops_mkfile("pub", 100, 110);
	ops_mkfile("priv", 100, 111);
	ops_mkfile("acl", 100, 112);
	chmod("priv", 0600);
	memcpy(acl, &version, 4);
	memcpy(acl + 4, e, sizeof(e));
	OPS_CHK("chmod acl 0600", chmod("acl", 0600));
	OPS_CHK("set acl", setxattr("acl", "system.posix_acl_access", acl, sizeof(acl), 0));
	OPS_CHK("mkdir ro", mkdir("ro", 0755));
	ops_mkfile("ro/f", 1, 113);
	OPS_CHK("mkdir sticky", mkdir("sticky", 0777) || chmod("sticky", 01777));
	ops_mkfile("sticky/rootf", 1, 114);
	chmod("sticky/rootf", 0666);
	OPS_CHK("mkdir closed", mkdir("closed", 0700));
	ops_mkfile("closed/f", 1, 115);
	OPS_CHK("mkdir mine", mkdir("mine", 0755) || chown("mine", OPS_NOBODY, OPS_NOBODY));
}

void ops_case_nobody(void)
{
	int rd, go;
	pid_t pid;

	if (geteuid() != 0) {
		ops_rec("not root: permission case not run");
		return;
	}
	nobody_setup();
	pid = fork_child(&rd, &go, nobody_child);
	close(go);
	wait_child(pid, rd);
	ops_stat("own file owner", "mine/sub");
	ops_stat("created in sticky", "sticky/mine");
	ops_stat("symlink owner", "mine/l");
	ops_stat("moved file", "ro/f2");
	ops_sum("pub intact", "pub");
	ops_list("ro", "ro");
}
