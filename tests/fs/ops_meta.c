// SPDX-License-Identifier: MIT
/*
 * ops_meta.c: ops_compare cases for attributes and directories: setattr
 * (mode, owner, size, times with UTIME_NOW/UTIME_OMIT), readdir with
 * telldir/seekdir and a 5,000-entry directory, statfs, extended attributes,
 * POSIX ACLs and access(2).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "ops.h"

void ops_case_setattr(void)
{
	int fd;

	ops_mkfile("f", 100, 70);
	OPS_CHK("chmod 0600", chmod("f", 0600));
	ops_stat("0600", "f");
	OPS_CHK("chmod 04755", chmod("f", 04755));
	ops_stat("04755", "f");
	OPS_CHK("chmod 07777", chmod("f", 07777));
	ops_stat("07777", "f");
	fd = open("f", O_RDWR);
	OPS_CHK("fchmod 0640", fchmod(fd, 0640));
	ops_fstat("after fchmod", fd);
	OPS_CHK("chown nobody", chown("f", OPS_NOBODY, OPS_NOBODY));
	ops_stat("owned by nobody", "f");
	OPS_CHK("fchown root:nobody", fchown(fd, 0, OPS_NOBODY));
	ops_fstat("after fchown", fd);
	OPS_CHK("fchown -1 -1", fchown(fd, -1, -1));
	OPS_CHK("chmod 06755", chmod("f", 06755));
	OPS_CHK("chown clears setuid", chown("f", 0, 0));
	ops_stat("after chown", "f");
	OPS_CHK("ftruncate 10", ftruncate(fd, 10));
	ops_fstat("size 10", fd);
	close(fd);
	OPS_CHK("symlink", symlink("f", "l"));
	OPS_CHK("lchown link", lchown("l", OPS_NOBODY, OPS_NOBODY));
	ops_stat("link owner", "l");
	ops_stat("target untouched", "f");
	OPS_CHK("chmod through link", chmod("l", 0444));
	ops_stat("target mode", "f");
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("chmod dir 02711", chmod("d", 02711));
	OPS_CHK("chown dir", chown("d", 1, 2));
	ops_stat("dir attrs", "d");
	OPS_CHK("chmod missing", chmod("missing", 0644));
}

static void rec_times(const char *label, const char *path, int flags)
{
	struct stat st;

	if (fstatat(AT_FDCWD, path, &st, flags) < 0) {
		ops_rec("%s: stat = -1 %s", label, ops_errname(errno));
		return;
	}
	ops_rec("%s: atime=%lld.%09ld mtime=%lld.%09ld", label, (long long)st.st_atim.tv_sec,
		st.st_atim.tv_nsec, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* Records whether path's mtime/atime lie within [t0, now]. */
static void rec_now(const char *label, const char *path, const struct timespec *t0)
{
	struct timespec t1;
	struct stat st;

	clock_gettime(CLOCK_REALTIME, &t1);
	if (stat(path, &st) < 0) {
		ops_rec("%s: stat = -1 %s", label, ops_errname(errno));
		return;
	}
	/* One second of slack: file systems may use a coarser clock. */
	ops_rec("%s: atime_now=%d mtime_now=%d", label,
		st.st_atim.tv_sec >= t0->tv_sec - 1 && st.st_atim.tv_sec <= t1.tv_sec,
		st.st_mtim.tv_sec >= t0->tv_sec - 1 && st.st_mtim.tv_sec <= t1.tv_sec);
}

void ops_case_times(void)
{
	struct timespec ts[2] = { { 1000000000, 123456789 }, { 1100000000, 500000000 } };
	struct timespec t0;
	int fd;

	ops_mkfile("f", 10, 71);
	OPS_CHK("utimensat explicit", utimensat(AT_FDCWD, "f", ts, 0));
	rec_times("explicit", "f", 0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = 1200000000;
	ts[1].tv_nsec = 1;
	OPS_CHK("atime OMIT", utimensat(AT_FDCWD, "f", ts, 0));
	rec_times("atime kept", "f", 0);
	clock_gettime(CLOCK_REALTIME, &t0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_nsec = UTIME_NOW;
	OPS_CHK("mtime NOW", utimensat(AT_FDCWD, "f", ts, 0));
	rec_now("mtime now, atime old", "f", &t0);
	ts[0].tv_nsec = UTIME_NOW;
	ts[1].tv_nsec = UTIME_OMIT;
	OPS_CHK("atime NOW", utimensat(AT_FDCWD, "f", ts, 0));
	rec_now("both now", "f", &t0);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_nsec = UTIME_OMIT;
	OPS_CHK("both OMIT", utimensat(AT_FDCWD, "f", ts, 0));
	fd = open("f", O_RDWR);
	ts[0] = (struct timespec){ 5, 6 };
	ts[1] = (struct timespec){ 7, 8 };
	OPS_CHK("futimens", futimens(fd, ts));
	rec_times("futimens", "f", 0);
	OPS_CHK("write bumps mtime", write(fd, "x", 1) + fsync(fd));
	rec_now("after write", "f", &t0);
	close(fd);
	OPS_CHK("utimensat NULL", utimensat(AT_FDCWD, "f", NULL, 0));
	rec_now("NULL means now", "f", &t0);
	OPS_CHK("symlink", symlink("f", "l"));
	ts[0] = (struct timespec){ 300000000, 0 };
	ts[1] = (struct timespec){ 400000000, 0 };
	OPS_CHK("utimensat nofollow", utimensat(AT_FDCWD, "l", ts, AT_SYMLINK_NOFOLLOW));
	rec_times("link times", "l", AT_SYMLINK_NOFOLLOW);
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("utimensat dir", utimensat(AT_FDCWD, "d", ts, 0));
	rec_times("dir times", "d", 0);
	ts[1].tv_nsec = 1000000000;
	OPS_CHK("bad nsec", utimensat(AT_FDCWD, "f", ts, 0));
	ts[0] = (struct timespec){ -1000, 0 };
	ts[1] = (struct timespec){ 4102444800LL, 999999999 };
	OPS_CHK("pre-1970 and 2100", utimensat(AT_FDCWD, "d", ts, 0));
	rec_times("extreme times", "d", 0);
}

/* Reads the whole stream, checks telldir/seekdir positions and rewinddir. */
static void walk_dir(const char *label, const char *path, long step)
{
	struct dirent *de;
	char **name = NULL;
	long *pos = NULL, n = 0, i, bad = 0;
	DIR *d = opendir(path);

	if (!d) {
		ops_rec("%s: opendir = -1 %s", label, ops_errname(errno));
		return;
	}
	for (;;) {
		long p = telldir(d);

		if (!(de = readdir(d)))
			break;
		name = realloc(name, (n + 1) * sizeof(*name));
		pos = realloc(pos, (n + 1) * sizeof(*pos));
		name[n] = strdup(de->d_name);
		pos[n++] = p;
	}
	for (i = n - 1; i >= 0; i -= step) {
		seekdir(d, pos[i]);
		de = readdir(d);
		bad += !de || strcmp(de->d_name, name[i]);
	}
	rewinddir(d);
	de = readdir(d);
	ops_rec("%s: entries=%ld seekdir_mismatch=%ld rewind_ok=%d", label, n, bad,
		n && de && !strcmp(de->d_name, name[0]));
	ops_rec("%s: fsyncdir = %d", label, fsync(dirfd(d)));
	closedir(d);
	for (i = 0; i < n; i++)
		free(name[i]);
	free(name);
	free(pos);
}

void ops_case_readdir(void)
{
	DIR *d;

	ops_mkfile("file", 1, 80);
	OPS_CHK("mkdir", mkdir("dir", 0755));
	OPS_CHK("symlink", symlink("file", "link"));
	OPS_CHK("mkfifo", mkfifo("fifo", 0644));
	ops_list("types", ".");
	walk_dir("walk", ".", 1);
	ops_list("empty dir", "dir");
	d = opendir(".");
	ops_rec("read first: %d", readdir(d) != NULL);
	ops_mkfile("late", 1, 81);
	rewinddir(d);
	{
		struct dirent *de;
		int seen = 0;

		while ((de = readdir(d)))
			seen |= !strcmp(de->d_name, "late");
		ops_rec("new entry visible after rewinddir: %d", seen);
	}
	closedir(d);
	OPS_CHK("opendir file", opendir("file") != NULL ? 0 : -1);
	OPS_CHK("opendir missing", opendir("missing") != NULL ? 0 : -1);
}

void ops_case_hugedir(void)
{
	char name[64];
	int i, fd;

	OPS_CHK("mkdir", mkdir("h", 0755));
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "h/entry-%05d-%.*s", i, i % 40,
			 "padding-padding-padding-padding-padding-");
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			ops_rec("create %s = -1 %s", name, ops_errname(errno));
			break;
		}
		close(fd);
	}
	ops_list("list 5000", "h");
	walk_dir("walk 5000", "h", 97);
	for (i = 0; i < 5000; i += 2) {
		snprintf(name, sizeof(name), "h/entry-%05d-%.*s", i, i % 40,
			 "padding-padding-padding-padding-padding-");
		if (unlink(name) < 0)
			ops_rec("unlink %s = -1 %s", name, ops_errname(errno));
	}
	walk_dir("walk 2500", "h", 31);
	ops_stat("dir", "h");
}

void ops_case_statfs(void)
{
	struct statvfs a, b;

	OPS_CHK("statvfs", statvfs(".", &a));
	ops_rec("bsize=%lu frsize=%lu namemax=%lu blocks=%llu files=%llu", a.f_bsize, a.f_frsize,
		a.f_namemax, (unsigned long long)a.f_blocks, (unsigned long long)a.f_files);
	ops_rec("bavail<=bfree: %d ffree<=files: %d", a.f_bavail <= a.f_bfree,
		a.f_ffree <= a.f_files);
	ops_mkfile("f", 1, 90);
	OPS_CHK("fstatvfs", fstatvfs(open("f", O_RDONLY), &b));
	ops_rec("same via file: %d", a.f_blocks == b.f_blocks && a.f_bsize == b.f_bsize);
	OPS_CHK("statvfs missing", statvfs("missing", &b));
}

static void rec_get(const char *label, const char *path, const char *name)
{
	char buf[8192];
	ssize_t n = getxattr(path, name, buf, sizeof(buf));

	if (n < 0)
		ops_rec("%s: getxattr = -1 %s", label, ops_errname(errno));
	else
		ops_rec("%s: len=%zd fnv=%016llx", label, n,
			(unsigned long long)ops_fnv(OPS_FNV_INIT, buf, n));
}

static void rec_list(const char *label, const char *path)
{
	char buf[8192], *p, *names[64];
	ssize_t n = listxattr(path, buf, sizeof(buf));
	int i, k = 0;

	if (n < 0) {
		ops_rec("%s: listxattr = -1 %s", label, ops_errname(errno));
		return;
	}
	for (p = buf; p < buf + n && k < 64; p += strlen(p) + 1)
		names[k++] = p;
	qsort(names, k, sizeof(*names), (int (*)(const void *, const void *))strcmp);
	for (i = 0; i < k; i++)
		ops_rec("%s: %s", label, names[i]);
	ops_rec("%s: %d names, size query=%zd", label, k, listxattr(path, NULL, 0));
}

void ops_case_xattr(void)
{
	char big[4000], bin[256], small[2];
	int i;

	ops_mkfile("f", 1, 91);
	for (i = 0; i < 256; i++)
		bin[i] = (char)i;
	ops_pattern(big, sizeof(big), 92);
	OPS_CHK("set user.a", setxattr("f", "user.a", "v1", 2, 0));
	rec_get("get user.a", "f", "user.a");
	OPS_CHK("size query", getxattr("f", "user.a", NULL, 0));
	OPS_CHK("ERANGE", getxattr("f", "user.a", small, 1));
	OPS_CHK("create existing", setxattr("f", "user.a", "v2", 2, XATTR_CREATE));
	OPS_CHK("replace missing", setxattr("f", "user.b", "v2", 2, XATTR_REPLACE));
	OPS_CHK("replace existing", setxattr("f", "user.a", "value-2", 7, XATTR_REPLACE));
	rec_get("replaced", "f", "user.a");
	OPS_CHK("set binary", setxattr("f", "user.bin", bin, sizeof(bin), 0));
	rec_get("binary", "f", "user.bin");
	OPS_CHK("set empty", setxattr("f", "user.empty", "", 0, 0));
	rec_get("empty", "f", "user.empty");
	OPS_CHK("set 4000 bytes", setxattr("f", "user.big", big, sizeof(big), 0));
	rec_get("big", "f", "user.big");
	rec_list("list", "f");
	OPS_CHK("list ERANGE", listxattr("f", small, 1));
	rec_get("missing", "f", "user.none");
	OPS_CHK("remove", removexattr("f", "user.a"));
	OPS_CHK("remove again", removexattr("f", "user.a"));
	rec_get("removed", "f", "user.a");
	OPS_CHK("bad namespace", setxattr("f", "bogus.x", "v", 1, 0));
	OPS_CHK("mkdir d", mkdir("d", 0755));
	OPS_CHK("set on dir", setxattr("d", "user.d", "dir", 3, 0));
	rec_list("dir list", "d");
	OPS_CHK("symlink", symlink("f", "l"));
	OPS_CHK("lset user on symlink", lsetxattr("l", "user.x", "v", 1, 0));
	OPS_CHK("set through symlink", setxattr("l", "user.via", "v", 1, 0));
	rec_get("via link", "f", "user.via");
	OPS_CHK("fsetxattr", fsetxattr(open("f", O_RDONLY), "user.fd", "fd", 2, 0));
	rec_get("via fd", "f", "user.fd");
	OPS_CHK("set on missing", setxattr("missing", "user.a", "v", 1, 0));
}

struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

/* user::rw- user:nobody:r-- group::r-- mask::r-- other::--- */
static size_t acl_make(char *buf, unsigned mask)
{
	const struct acl_entry e[] = {
		{ 0x01, 6, ~0u },    { 0x02, 4, OPS_NOBODY }, { 0x04, 4, ~0u },
		{ 0x10, mask, ~0u }, { 0x20, 0, ~0u },
	};
	uint32_t version = 2;

	memcpy(buf, &version, 4);
	memcpy(buf + 4, e, sizeof(e));
	return 4 + sizeof(e);
}

static void rec_acl(const char *label, const char *path)
{
	char buf[256];
	ssize_t i, n = getxattr(path, "system.posix_acl_access", buf, sizeof(buf));
	char hex[520] = "";

	if (n < 0) {
		ops_rec("%s: getxattr = -1 %s", label, ops_errname(errno));
		return;
	}
	for (i = 0; i < n && i < 256; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)buf[i]);
	ops_rec("%s: %s", label, hex);
}

void ops_case_acl(void)
{
	char buf[256];
	size_t len;

	ops_mkfile("f", 10, 93);
	OPS_CHK("chmod 0600", chmod("f", 0600));
	rec_acl("no acl", "f");
	len = acl_make(buf, 4);
	OPS_CHK("set acl", setxattr("f", "system.posix_acl_access", buf, len, 0));
	ops_stat("mode follows mask", "f");
	rec_acl("acl", "f");
	rec_list("list with acl", "f");
	OPS_CHK("chmod 0670 rewrites mask", chmod("f", 0670));
	rec_acl("acl after chmod", "f");
	len = acl_make(buf, 7);
	OPS_CHK("set acl rwx mask", setxattr("f", "system.posix_acl_access", buf, len, 0));
	ops_stat("mode after second acl", "f");
	OPS_CHK("set malformed acl", setxattr("f", "system.posix_acl_access", "xyz", 3, 0));
	OPS_CHK("remove acl", removexattr("f", "system.posix_acl_access"));
	ops_stat("mode after remove", "f");
	rec_acl("removed", "f");
	OPS_CHK("mkdir d", mkdir("d", 0755));
	len = acl_make(buf, 5);
	OPS_CHK("set default acl", setxattr("d", "system.posix_acl_default", buf, len, 0));
	ops_mkfile("d/inherit", 1, 94);
	ops_stat("inherited mode", "d/inherit");
	rec_acl("inherited acl", "d/inherit");
}

void ops_case_access(void)
{
	ops_mkfile("rw", 1, 95);
	ops_mkfile("x", 1, 96);
	ops_mkfile("none", 1, 97);
	chmod("x", 0755);
	chmod("none", 0);
	OPS_CHK("F_OK", access("rw", F_OK));
	OPS_CHK("R_OK|W_OK", access("rw", R_OK | W_OK));
	OPS_CHK("X_OK on 0644 (root too)", access("rw", X_OK));
	OPS_CHK("X_OK on 0755", access("x", X_OK));
	OPS_CHK("R_OK|W_OK on 0000 as root", access("none", R_OK | W_OK));
	OPS_CHK("X_OK on 0000 as root", access("none", X_OK));
	OPS_CHK("missing", access("missing", F_OK));
	OPS_CHK("through file", access("rw/x", F_OK));
	OPS_CHK("AT_EACCESS", faccessat(AT_FDCWD, "x", X_OK, AT_EACCESS));
	OPS_CHK("dir X_OK", access(".", X_OK | W_OK | R_OK));
	OPS_CHK("symlink", symlink("none", "l"));
	OPS_CHK("access via link", access("l", X_OK));
	OPS_CHK("nofollow", faccessat(AT_FDCWD, "l", X_OK, AT_SYMLINK_NOFOLLOW));
}
