// SPDX-License-Identifier: MIT
/*
 * fh_export.c MNT: handles exported from a mount outlive the kernel's inodes
 * (issue 28; xfstests generic/426). Makes a small tree through MNT, takes
 * name_to_handle_at() handles of its files and directories, drops the
 * kernel's dentry and inode caches, and opens every handle again with
 * open_by_handle_at(): the same object (inode number, bytes, a directory's
 * entries), a deleted file's handle ESTALE; then the same with a lookup by
 * name between the drop and the open, and a second drop. Needs
 * CAP_DAC_READ_SEARCH (root). Exit 0 pass, 1 a wrong answer, 2 a setup
 * failure, 77 no handles on the mount.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct obj {
	const char *path;
	const char *data;  /* a file's bytes, or NULL: a directory */
	const char *child; /* a directory: an entry it must list */
	struct {
		struct file_handle h;
		unsigned char b[MAX_HANDLE_SZ];
	} fh;
	ino_t ino;
};

static struct obj objs[] = {
	{ .path = "f", .data = "the file f\n" },	{ .path = "d", .child = "g" },
	{ .path = "d/g", .data = "g in d\n" },		{ .path = "d/e", .child = "deep" },
	{ .path = "d/e/deep", .data = "three down\n" },
};
#define NOBJ (sizeof(objs) / sizeof(objs[0]))

static int failures;

static void bad(const char *what, const char *path, int err)
{
	fprintf(stderr, "FAIL: %s: %s%s%s\n", path, what, err ? ": " : "",
		err ? strerror(err) : "");
	failures++;
}

static int setup_fail(const char *what, const char *path)
{
	fprintf(stderr, "fh_export: %s %s: %s\n", what, path, strerror(errno));
	return 2;
}

static int write_file(int dir, const char *path, const char *data)
{
	int fd = openat(dir, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data) || close(fd))
		return -1;
	return 0;
}

/* The kernel forgets every node nothing holds (FORGET reaches the daemon). */
static int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd < 0 || write(fd, "3", 1) != 1)
		return -1;
	close(fd);
	usleep(200 * 1000); /* FORGETs are queued: let the daemon take them */
	return 0;
}

static bool dir_lists(int fd, const char *name)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		found = found || !strcmp(e->d_name, name);
	closedir(d);
	return found;
}

/* Every handle opens its object again; @gone's is stale. */
static void check_all(int mnt, const char *round, const struct obj *gone)
{
	for (size_t i = 0; i < NOBJ; i++) {
		const struct obj *o = &objs[i];
		int fd = open_by_handle_at(mnt, (struct file_handle *)&o->fh,
					   O_RDONLY | (o->data ? 0 : O_DIRECTORY));
		char buf[256];
		struct stat st;
		ssize_t r;

		fprintf(stderr, "%s: %s: %s\n", round, o->path,
			fd < 0 ? strerror(errno) : "opened");
		if (fd < 0) {
			bad("open_by_handle_at after the caches were dropped", o->path, errno);
			continue;
		}
		if (fstat(fd, &st) || st.st_ino != o->ino)
			bad("another inode", o->path, 0);
		if (o->data) {
			r = pread(fd, buf, sizeof(buf) - 1, 0);
			buf[r > 0 ? r : 0] = 0;
			if (strcmp(buf, o->data))
				bad("other bytes", o->path, 0);
			close(fd);
		} else if (!dir_lists(fd, o->child)) {
			bad("the directory does not list its entry", o->path, 0);
		}
	}
	if (gone) {
		int fd = open_by_handle_at(mnt, (struct file_handle *)&gone->fh, O_RDONLY);

		if (fd >= 0 || errno != ESTALE)
			bad("a deleted file's handle is not ESTALE", gone->path,
			    fd >= 0 ? 0 : errno);
		if (fd >= 0)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	static struct obj gone = { .path = "gone", .data = "deleted\n" };
	struct stat st;
	int mnt, mid;

	if (argc != 2) {
		fprintf(stderr, "usage: fh_export MNT\n");
		return 2;
	}
	mnt = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (mnt < 0)
		return setup_fail("open", argv[1]);
	if (mkdirat(mnt, "d", 0755) || mkdirat(mnt, "d/e", 0755))
		return setup_fail("mkdir in", argv[1]);
	for (size_t i = 0; i < NOBJ; i++)
		if (objs[i].data && write_file(mnt, objs[i].path, objs[i].data))
			return setup_fail("write", objs[i].path);
	if (write_file(mnt, gone.path, gone.data))
		return setup_fail("write", gone.path);
	for (size_t i = 0; i <= NOBJ; i++) {
		struct obj *o = i < NOBJ ? &objs[i] : &gone;

		o->fh.h.handle_bytes = MAX_HANDLE_SZ;
		if (name_to_handle_at(mnt, o->path, &o->fh.h, &mid, 0)) {
			if (errno == EOPNOTSUPP)
				return fprintf(stderr, "SKIP: no file handles on %s\n", argv[1]),
				       77;
			return setup_fail("name_to_handle_at", o->path);
		}
		if (fstatat(mnt, o->path, &st, 0))
			return setup_fail("stat", o->path);
		o->ino = st.st_ino;
	}
	if (unlinkat(mnt, gone.path, 0))
		return setup_fail("unlink", gone.path);

	/* 1: nothing but the handles after the drop */
	if (drop_caches())
		return setup_fail("drop caches", "/proc/sys/vm/drop_caches");
	check_all(mnt, "after a drop", &gone);
	/* 2: the names looked up first, then the handles */
	if (drop_caches())
		return setup_fail("drop caches", "/proc/sys/vm/drop_caches");
	for (size_t i = 0; i < NOBJ; i++)
		if (fstatat(mnt, objs[i].path, &st, 0) || st.st_ino != objs[i].ino)
			bad("stat by name after a drop", objs[i].path, errno);
	check_all(mnt, "names first", NULL);
	/* 3: the handles first, then the names: one node per file */
	if (drop_caches())
		return setup_fail("drop caches", "/proc/sys/vm/drop_caches");
	check_all(mnt, "handles first", NULL);
	for (size_t i = 0; i < NOBJ; i++)
		if (fstatat(mnt, objs[i].path, &st, 0) || st.st_ino != objs[i].ino)
			bad("stat by name after the handle", objs[i].path, errno);
	close(mnt);
	if (failures)
		fprintf(stderr, "fh_export: %d wrong answers\n", failures);
	return failures ? 1 : 0;
}
