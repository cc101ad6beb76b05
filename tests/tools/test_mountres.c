// SPDX-License-Identifier: MIT
/*
 * test_mountres.c - the mapping MOUNTPOINT/rel -> SOURCE/rel, innermost
 * mount winning, names with escapes included (the parser itself is
 * cache/mountinfo.c, tested in tests/cache/test_mountinfo.c).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
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

static void resolve(const char *path, int want_ret, const char *want)
{
	char out[PATH_MAX];

	CU_ASSERT_EQUAL(mountres_resolve_in(table, path, out, sizeof(out)), want_ret);
	CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_resolve(void)
{
	resolve("/mnt/acc/dir/file", 1, "/srv/backing/dir/file");
	resolve("/mnt/acc", 1, "/srv/backing");
	resolve("/mnt/acc/../acc/./f", 1, "/srv/backing/f");
	resolve("/mnt/accx/f", 0, "/mnt/accx/f");	/* prefix of a name is not a match */
	resolve("/mnt/acc/tmp/f", 0, "/mnt/acc/tmp/f"); /* nested tmpfs wins */
	resolve("/mnt/other/f", 0, "/mnt/other/f");	/* other FUSE fs */
	resolve("/mnt/rel/f", 0, "/mnt/rel/f");		/* source not a path */
	resolve("/mnt/a b/f", 1, "/srv/c d/f");		/* escaped names (cache/mountinfo.c) */
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
	ret = cunit_run();
	unlink(table);
	return ret;
}
