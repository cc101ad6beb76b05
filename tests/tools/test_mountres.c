// SPDX-License-Identifier: MIT
/*
 * test_mountres.c - the mapping MOUNTPOINT/rel -> SOURCE/rel, innermost
 * mount winning, names with escapes included (the parser itself is
 * cache/mountinfo.c, tested in tests/cache/test_mountinfo.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cunit_main.h"
#include "mountres.h"

static char table[] = "/tmp/test_mountres.XXXXXX";

static void test_normalize(void)
{
	char out[PATH_MAX], cwd[PATH_MAX], want[PATH_MAX + 8];

	CU_ASSERT_EQUAL(mountres_normalize("/a//b/./c/../d/", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/a/b/d");
	CU_ASSERT_EQUAL(mountres_normalize("/../..", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/");
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "%s/x", strcmp(cwd, "/") ? cwd : "");
	CU_ASSERT_EQUAL(mountres_normalize("x", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, want);
}

/* Resolve @path: 0 with @want to work on, inside mount @mnt ("" for none). */
static void resolve(const char *path, const char *want, const char *mnt)
{
	struct mountres r;

	CU_ASSERT_EQUAL(mountres_resolve_in(table, path, &r), 0);
	CU_ASSERT_STRING_EQUAL(r.path, want);
	CU_ASSERT_STRING_EQUAL(r.mountpoint, mnt);
}

static void test_resolve(void)
{
	resolve("/mnt/acc/dir/file", "/srv/backing/dir/file", "/mnt/acc");
	resolve("/mnt/acc", "/srv/backing", "/mnt/acc");
	resolve("/mnt/acc/../acc/./f", "/srv/backing/f", "/mnt/acc");
	resolve("/mnt/accx/f", "/mnt/accx/f", "");	 /* prefix of a name is not a match */
	resolve("/mnt/acc/tmp/f", "/mnt/acc/tmp/f", ""); /* nested tmpfs wins */
	resolve("/mnt/other/f", "/mnt/other/f", "");	 /* other FUSE fs */
	resolve("/mnt/rel/f", "/mnt/rel/f", "");	 /* source not a path */
	resolve("/mnt/a b/f", "/srv/c d/f", "/mnt/a b"); /* escaped names (cache/mountinfo.c) */
}

/* A path too long for the result is an error, never a half path. */
static void test_too_long(void)
{
	static char path[PATH_MAX + 16];
	struct mountres r;

	memset(path, 'x', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	CU_ASSERT_EQUAL(mountres_resolve_in(table, path, &r), -ENAMETOOLONG);
}

/* The device test reads the same table (ACCEL_TEST_MOUNTINFO). */
static void test_dev(void)
{
	setenv("ACCEL_TEST_MOUNTINFO", table, 1);
	CU_ASSERT_TRUE(mountres_dev_accelfs(makedev(0, 50)));
	CU_ASSERT_TRUE(mountres_dev_accelfs(makedev(0, 53))); /* accelfs, even with a bad source */
	CU_ASSERT_FALSE(mountres_dev_accelfs(makedev(0, 51)));
	CU_ASSERT_FALSE(mountres_dev_accelfs(makedev(8, 1)));
	unsetenv("ACCEL_TEST_MOUNTINFO");
}

int main(void)
{
	static const char content[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
				      "2 1 0:50 / /mnt/acc rw - fuse.accelfs /srv/backing rw\n"
				      "3 2 0:51 / /mnt/acc/tmp rw - tmpfs tmpfs rw\n"
				      "4 1 0:52 / /mnt/other rw - fuse.sshfs host:/x rw\n"
				      "5 1 0:53 / /mnt/rel rw - fuse.accelfs accelfs rw\n"
				      "6 1 0:54 / /mnt/a\\040b rw - fuse.accelfs /srv/c\\040d rw\n";
	int ret;
	CU_pSuite s;
	int fd;

	fd = mkstemp(table);
	if (fd < 0 || write(fd, content, sizeof(content) - 1) < 0)
		return 1;
	close(fd);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("mountres", NULL, NULL);
	CU_add_test(s, "normalize", test_normalize);
	CU_add_test(s, "resolve", test_resolve);
	CU_add_test(s, "too long", test_too_long);
	CU_add_test(s, "accelfs device", test_dev);
	ret = cunit_run();
	unlink(table);
	return ret;
}
