// SPDX-License-Identifier: MIT
/*
 * ops_entries.c: ops_compare cases for the name space: lookup, symlink and
 * readlink, mknod, mkdir/rmdir, unlink, rename (with RENAME_NOREPLACE and
 * RENAME_EXCHANGE), hard links, unusual names and the errno of bad paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ops.h"

static void same_ino(const char *label, const char *a, const char *b)
{
	struct stat sa, sb;

	if (lstat(a, &sa) < 0 || lstat(b, &sb) < 0) {
		ops_rec("%s: lstat = -1 %s", label, ops_errname(errno));
		return;
	}
	ops_rec("%s: same_ino=%d same_dev=%d", label, sa.st_ino == sb.st_ino,
		sa.st_dev == sb.st_dev);
}

void ops_case_lookup(void)
{
	struct stat a, b;
	int fd;

	ops_mkfile("f", 1000, 1);
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("symlink l", symlink("f", "l"));
	ops_stat("stat f", "f");
	ops_stat("stat d", "d");
	ops_stat("lstat l", "l");
	ops_stat("stat missing", "missing");
	ops_stat("stat f/x", "f/x");
	ops_stat("stat d/../f", "d/../f");
	OPS_CHK("stat l (follows)", stat("l", &a));
	ops_rec("stat l is regular: %d size=%lld", S_ISREG(a.st_mode), (long long)a.st_size);
	fd = OPS_CHK("open f", open("f", O_RDONLY));
	OPS_CHK("fstat", fstat(fd, &a));
	OPS_CHK("stat", stat("f", &b));
	ops_rec("fstat==stat: ino=%d mode=%d size=%d mtime=%d", a.st_ino == b.st_ino,
		a.st_mode == b.st_mode, a.st_size == b.st_size,
		a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
	close(fd);
	same_ino("f vs d/../f", "f", "d/../f");
	OPS_CHK("fstatat AT_SYMLINK_NOFOLLOW",
		fstatat(AT_FDCWD, "l", &a, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(a.st_mode));
}

void ops_case_symlink(void)
{
	char buf[8192], target[4096];
	ssize_t n;

	OPS_CHK("symlink rel", symlink("some/where/else", "l1"));
	n = OPS_CHK("readlink", readlink("l1", buf, sizeof(buf)));
	ops_rec("readlink text: %.*s", (int)(n > 0 ? n : 0), buf);
	OPS_CHK("readlink short buffer", readlink("l1", buf, 4));
	ops_stat("lstat l1", "l1");
	OPS_CHK("symlink abs", symlink("/etc/passwd", "l2"));
	ops_stat("lstat l2", "l2");
	OPS_CHK("symlink exists", symlink("x", "l1"));
	memset(target, 'x', 4095);
	target[4095] = 0;
	OPS_CHK("symlink 4095-byte target", symlink(target, "long"));
	n = OPS_CHK("readlink long", readlink("long", buf, sizeof(buf)));
	ops_rec("readlink long equal: %d", n == 4095 && !memcmp(buf, target, 4095));
	ops_mkfile("f", 10, 2);
	OPS_CHK("readlink regular", readlink("f", buf, sizeof(buf)));
	OPS_CHK("readlink missing", readlink("missing", buf, sizeof(buf)));
	OPS_CHK("symlink to f", symlink("f", "tof"));
	ops_sum("read through symlink", "tof");
	OPS_CHK("symlink dangling", symlink("nowhere", "dang"));
	OPS_CHK("open dangling", open("dang", O_RDONLY));
	OPS_CHK("create through dangling", ops_open_close("dang", O_WRONLY | O_CREAT, 0644));
	ops_stat("target created", "nowhere");
	OPS_CHK("unlink symlink", unlink("tof"));
	ops_stat("target stays", "f");
}

void ops_case_mknod(void)
{
	int fd;

	OPS_CHK("mkfifo", mkfifo("p", 0640));
	ops_stat("stat fifo", "p");
	fd = OPS_CHK("open fifo rd nonblock", open("p", O_RDONLY | O_NONBLOCK));
	OPS_CHK("open fifo wr nonblock", ops_open_close("p", O_WRONLY | O_NONBLOCK, 0));
	OPS_CHK("write fifo", write(open("p", O_WRONLY | O_NONBLOCK), "abc", 3));
	if (fd >= 0)
		close(fd);
	OPS_CHK("open fifo wr no reader", open("p", O_WRONLY | O_NONBLOCK));
	OPS_CHK("mknod reg", mknod("r", S_IFREG | 0600, 0));
	ops_stat("stat reg", "r");
	OPS_CHK("mknod chr", mknod("c", S_IFCHR | 0644, makedev(1, 3)));
	ops_stat("stat chr", "c");
	OPS_CHK("mknod sock", mknod("s", S_IFSOCK | 0755, 0));
	ops_stat("stat sock", "s");
	OPS_CHK("mknod exists", mknod("p", S_IFIFO | 0644, 0));
	OPS_CHK("mknodat fifo in subdir",
		mkdir("d", 0755) || mknodat(AT_FDCWD, "d/q", S_IFIFO | 0600, 0));
	ops_list("list", ".");
	OPS_CHK("unlink fifo", unlink("p"));
	ops_stat("fifo gone", "p");
}

void ops_case_mkdir(void)
{
	OPS_CHK("mkdir", mkdir("d", 0750));
	ops_stat("stat d", "d");
	OPS_CHK("mkdir exists", mkdir("d", 0755));
	OPS_CHK("mkdir missing parent", mkdir("nope/x", 0755));
	OPS_CHK("mkdir sub1", mkdir("d/s1", 0700));
	OPS_CHK("mkdir sub2", mkdir("d/s2", 0777));
	ops_stat("stat d nlink", "d");
	ops_stat("stat d/s2 (umask)", "d/s2");
	OPS_CHK("mkdir sticky", mkdir("t", 01777) || chmod("t", 01777));
	ops_stat("stat sticky", "t");
	ops_mkfile("d/s1/f", 1, 3);
	OPS_CHK("rmdir not empty", rmdir("d/s1"));
	OPS_CHK("mkdir under file", mkdir("d/s1/f/x", 0755));
	OPS_CHK("rmdir file", rmdir("d/s1/f"));
	OPS_CHK("unlink f", unlink("d/s1/f"));
	OPS_CHK("rmdir s1", rmdir("d/s1"));
	OPS_CHK("rmdir dot", rmdir("d/s2/."));
	OPS_CHK("rmdir missing", rmdir("d/s1"));
	ops_stat("stat d after rmdir", "d");
	ops_list("list d", "d");
}

void ops_case_unlink(void)
{
	char buf[64];
	struct stat st;
	int fd;

	ops_mkfile("f", 5000, 4);
	fd = OPS_CHK("open", open("f", O_RDWR));
	OPS_CHK("unlink open file", unlink("f"));
	ops_stat("stat unlinked", "f");
	OPS_CHK("read unlinked open file", pread(fd, buf, sizeof(buf), 100));
	OPS_CHK("write unlinked open file", pwrite(fd, "zz", 2, 6000));
	OPS_CHK("fstat unlinked", fstat(fd, &st));
	ops_rec("fstat: nlink=%lu size=%lld", (unsigned long)st.st_nlink, (long long)st.st_size);
	close(fd);
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("unlink dir", unlink("d"));
	OPS_CHK("unlink missing", unlink("missing"));
	OPS_CHK("unlink through file", unlink("d/../missing/x"));
	ops_list("list", ".");
}

static void rename_files(void)
{
	ops_mkfile("a", 100, 10);
	ops_mkfile("b", 200, 11);
	OPS_CHK("rename a c", rename("a", "c"));
	ops_stat("a gone", "a");
	ops_sum("c has a", "c");
	OPS_CHK("rename c over b", rename("c", "b"));
	ops_sum("b has a", "b");
	OPS_CHK("mkdir x", mkdir("x", 0755));
	OPS_CHK("mkdir y", mkdir("y", 0755));
	OPS_CHK("rename across dirs", rename("b", "x/moved"));
	OPS_CHK("rename across dirs again", rename("x/moved", "y/moved2"));
	ops_sum("moved content", "y/moved2");
	OPS_CHK("rename same name", rename("y/moved2", "y/moved2"));
	OPS_CHK("rename missing", rename("nothing", "z"));
}

static void rename_dirs(void)
{
	OPS_CHK("mkdir full", mkdir("full", 0755));
	ops_mkfile("full/f", 1, 12);
	OPS_CHK("mkdir empty", mkdir("empty", 0755));
	OPS_CHK("rename dir over nonempty", rename("empty", "full"));
	OPS_CHK("rename dir over file", rename("empty", "full/f"));
	OPS_CHK("rename file over dir", rename("full/f", "empty"));
	OPS_CHK("rename dir into itself", rename("full", "full/sub"));
	OPS_CHK("rename nonempty over empty", rename("full", "empty"));
	ops_list("after dir renames", ".");
	ops_stat("empty nlink", "empty");
}

static void rename_flags(void)
{
	ops_mkfile("p", 300, 13);
	ops_mkfile("q", 400, 14);
	OPS_CHK("mkdir dir", mkdir("dir", 0700));
	OPS_CHK("noreplace existing", renameat2(AT_FDCWD, "p", AT_FDCWD, "q", RENAME_NOREPLACE));
	OPS_CHK("noreplace new", renameat2(AT_FDCWD, "p", AT_FDCWD, "p2", RENAME_NOREPLACE));
	ops_sum("p2", "p2");
	OPS_CHK("exchange", renameat2(AT_FDCWD, "p2", AT_FDCWD, "q", RENAME_EXCHANGE));
	ops_sum("p2 after exchange", "p2");
	ops_sum("q after exchange", "q");
	OPS_CHK("exchange file and dir",
		renameat2(AT_FDCWD, "q", AT_FDCWD, "dir", RENAME_EXCHANGE));
	ops_stat("q is dir", "q");
	ops_stat("dir is file", "dir");
	OPS_CHK("exchange with missing",
		renameat2(AT_FDCWD, "q", AT_FDCWD, "none", RENAME_EXCHANGE));
	OPS_CHK("exchange|noreplace",
		renameat2(AT_FDCWD, "q", AT_FDCWD, "dir", RENAME_EXCHANGE | RENAME_NOREPLACE));
}

void ops_case_rename(void)
{
	char buf[8];
	int fd;

	rename_files();
	rename_dirs();
	rename_flags();
	ops_mkfile("open", 8, 15);
	fd = open("open", O_RDONLY);
	OPS_CHK("rename open file", rename("open", "renamed"));
	OPS_CHK("read after rename", pread(fd, buf, 8, 0));
	close(fd);
	ops_list("final", ".");
}

void ops_case_link(void)
{
	char buf[16];
	int fd;

	ops_mkfile("f", 4096, 20);
	OPS_CHK("link f g", link("f", "g"));
	ops_stat("f nlink 2", "f");
	ops_stat("g nlink 2", "g");
	same_ino("f vs g", "f", "g");
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("link into subdir", link("f", "d/h"));
	ops_stat("f nlink 3", "f");
	same_ino("f vs d/h", "f", "d/h");
	fd = open("g", O_WRONLY);
	OPS_CHK("write via g", pwrite(fd, "HELLO", 5, 10));
	close(fd);
	fd = open("d/h", O_RDONLY);
	OPS_CHK("read via d/h", pread(fd, buf, 5, 10));
	ops_rec("content via d/h: %.5s", buf);
	close(fd);
	OPS_CHK("unlink f", unlink("f"));
	ops_stat("g nlink 2 after unlink", "g");
	same_ino("g vs d/h", "g", "d/h");
	OPS_CHK("link exists", link("g", "d/h"));
	OPS_CHK("link dir", link("d", "d2"));
	OPS_CHK("link missing", link("missing", "m"));
	OPS_CHK("symlink s", symlink("g", "s"));
	OPS_CHK("link symlink itself", link("s", "s2"));
	ops_stat("s2 is link", "s2");
	same_ino("s vs s2", "s", "s2");
	OPS_CHK("rename over own link", rename("g", "d/h"));
	ops_stat("g still there", "g");
}

/* A name of every byte except '/' and NUL, and friends. */
static void names_make(char names[][300], int *n)
{
	int i, j = 0;

	for (i = 1; i < 256; i++)
		if (i != '/')
			names[0][j++] = (char)i;
	names[0][j] = 0;
	strcpy(names[1], "new\nline");
	strcpy(names[2], "\xff");
	strcpy(names[3], " spaces  everywhere ");
	memset(names[4], 'n', 255);
	names[4][255] = 0;
	strcpy(names[5], "*?[]\\'\"$`;|&<>");
	strcpy(names[6], "\xc3\xa9t\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80");
	strcpy(names[7], "...");
	strcpy(names[8], "-");
	strcpy(names[9], "\t\r\x1b[0m");
	*n = 10;
}

static void hexname(char *out, const char *name)
{
	for (; *name; name++, out += 2)
		sprintf(out, "%02x", (unsigned char)*name);
}

void ops_case_names(void)
{
	static char names[10][300];
	char hex[700], other[320], buf[320];
	int i, n, fd;

	names_make(names, &n);
	for (i = 0; i < n; i++) {
		hexname(hex, names[i]);
		fd = open(names[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
		ops_ret(hex, fd);
		if (fd >= 0) {
			OPS_CHK("write name as data", write(fd, names[i], strlen(names[i])));
			close(fd);
		}
		ops_sum(hex, names[i]);
	}
	ops_list("list hex-free", ".");
	memset(buf, 'm', 256);
	buf[256] = 0;
	OPS_CHK("create 256-byte name", open(buf, O_WRONLY | O_CREAT, 0644));
	OPS_CHK("mkdir 256-byte name", mkdir(buf, 0755));
	OPS_CHK("stat 256-byte name", access(buf, F_OK));
	snprintf(other, sizeof(other), "%s.renamed", names[1]);
	OPS_CHK("rename newline name", rename(names[1], other));
	OPS_CHK("mkdir 0xff dir", mkdir("\xfe\xff", 0755));
	OPS_CHK("rename 254-byte name into dir",
		rename(names[0], (snprintf(buf, sizeof(buf), "\xfe\xff/%s", names[2]), buf)));
	ops_sum("moved", buf);
	OPS_CHK("symlink to odd name", symlink(names[3], "\n"));
	OPS_CHK("readlink odd", readlink("\n", buf, sizeof(buf)));
	for (i = 2; i < n; i++)
		ops_ret("unlink", unlink(names[i]));
	ops_list("after unlink", ".");
}

void ops_case_errno(void)
{
	char path[5000];
	int i;

	OPS_CHK("symlink a->b", symlink("b", "a"));
	OPS_CHK("symlink b->a", symlink("a", "b"));
	OPS_CHK("open loop", open("a", O_RDONLY));
	OPS_CHK("stat loop", access("a", F_OK));
	OPS_CHK("mkdir through loop", mkdir("a/x", 0755));
	ops_mkfile("f", 10, 30);
	OPS_CHK("symlink l->f", symlink("f", "l"));
	OPS_CHK("open O_NOFOLLOW symlink", open("l", O_RDONLY | O_NOFOLLOW));
	OPS_CHK("chain0", symlink("f", "c0"));
	for (i = 1; i <= 41; i++) {
		char from[16], to[16];

		snprintf(from, sizeof(from), "c%d", i - 1);
		snprintf(to, sizeof(to), "c%d", i);
		if (symlink(from, to) < 0)
			ops_rec("chain symlink failed %s", ops_errname(errno));
	}
	OPS_CHK("open 40-deep chain", ops_open_close("c40", O_RDONLY, 0));
	OPS_CHK("open 41-deep chain", open("c41", O_RDONLY));
	OPS_CHK("open f/", open("f/", O_RDONLY));
	OPS_CHK("open f/x", open("f/x", O_RDONLY));
	OPS_CHK("creat f/x", open("f/x", O_CREAT | O_WRONLY, 0644));
	OPS_CHK("open dir O_WRONLY", open(".", O_WRONLY));
	OPS_CHK("open dir O_RDWR", open(".", O_RDWR));
	OPS_CHK("open dir O_CREAT", open(".", O_CREAT | O_RDONLY, 0644));
	OPS_CHK("opendir file", open("f", O_RDONLY | O_DIRECTORY));
	OPS_CHK("open missing", open("missing", O_RDONLY));
	OPS_CHK("open missing/x", open("missing/x", O_RDONLY));
	memset(path, 'a', 300);
	path[300] = 0;
	OPS_CHK("open long component", open(path, O_RDONLY));
	for (i = 0; i < 4200; i += 2) {
		path[i] = 'd';
		path[i + 1] = '/';
	}
	path[4200] = 0;
	OPS_CHK("open path > PATH_MAX", open(path, O_RDONLY));
	OPS_CHK("rmdir .", rmdir("."));
	OPS_CHK("rmdir ..", rmdir(".."));
	OPS_CHK("mkdir .", mkdir(".", 0755));
	OPS_CHK("link to dir target", link("f", "."));
	OPS_CHK("open empty path", open("", O_RDONLY));
}
