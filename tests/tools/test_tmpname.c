// SPDX-License-Identifier: MIT
/*
 * test_tmpname.c - temporary names: made, recognised, long names shortened,
 * foreign names ignored, and only dead processes' files cleaned.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "tmpname.h"

static void test_make_parse(void)
{
	char name[NAME_MAX + 1], longname[300];
	pid_t pid = 0;

	CU_ASSERT_EQUAL(tmpname_make(name, sizeof(name), "defrag", "data.bin", 1234), 0);
	CU_ASSERT_STRING_EQUAL(name, ".accel-defrag.data.bin.1234.tmp");
	CU_ASSERT_TRUE(tmpname_parse(name, &pid));
	CU_ASSERT_EQUAL(pid, 1234);
	memset(longname, 'x', 255);
	longname[255] = '\0';
	CU_ASSERT_EQUAL(tmpname_make(name, sizeof(name), "convert", longname, 99), 0);
	CU_ASSERT(strlen(name) <= NAME_MAX);
	CU_ASSERT_TRUE(tmpname_parse(name, &pid) && pid == 99);
	CU_ASSERT_TRUE(tmpname_parse(".accel-defrag-old.f.7.tmp", &pid) && pid == 7);
	CU_ASSERT_TRUE(tmpname_parse(".accel-fdl.data.bin.fdl.8.tmp", &pid) && pid == 8);
}

static void test_foreign(void)
{
	static const char *const names[] = {
		"data.tmp",
		".accel-defrag..12.tmp",
		".accel-defrag.f.tmp",
		".accel-defrag.f.x1.tmp",
		".accel-other.f.12.tmp",
		".accel-defrag.f.12.tmpx",
		".accel-defrag.f.0.tmp",
		"accel-defrag.f.12.tmp",
	};
	unsigned int i;
	pid_t pid;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CU_ASSERT_FALSE(tmpname_parse(names[i], &pid));
		if (tmpname_parse(names[i], &pid))
			printf("\n  wrongly accepted %s\n", names[i]);
	}
}

static int touch(int dir, const char *name)
{
	int fd = openat(dir, name, O_CREAT | O_WRONLY, 0600);

	return fd < 0 ? -1 : close(fd);
}

static void test_clean(void)
{
	char tmpl[] = "/tmp/test_tmpname.XXXXXX", dead_name[64], live_name[64];
	pid_t dead;
	int dir;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpl));
	dir = open(tmpl, O_RDONLY | O_DIRECTORY);
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0); /* now certainly dead (and reaped) */
	tmpname_make(dead_name, sizeof(dead_name), "defrag", "f", dead);
	tmpname_make(live_name, sizeof(live_name), "defrag", "f", getppid());
	CU_ASSERT_EQUAL(touch(dir, dead_name), 0);
	CU_ASSERT_EQUAL(touch(dir, live_name), 0);
	CU_ASSERT_EQUAL(touch(dir, "f"), 0);
	CU_ASSERT_EQUAL(mkdirat(dir, ".accel-defrag.d.1999999999.tmp", 0700), 0);
	CU_ASSERT_EQUAL(tmpname_clean(dir, NULL, NULL), 1);
	CU_ASSERT_NOT_EQUAL(faccessat(dir, dead_name, F_OK, 0), 0);
	CU_ASSERT_EQUAL(faccessat(dir, live_name, F_OK, 0), 0);
	CU_ASSERT_EQUAL(faccessat(dir, "f", F_OK, 0), 0);
	unlinkat(dir, live_name, 0);
	unlinkat(dir, "f", 0);
	unlinkat(dir, ".accel-defrag.d.1999999999.tmp", AT_REMOVEDIR);
	close(dir);
	rmdir(tmpl);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("tmpname", NULL, NULL);
	CU_add_test(s, "make and parse", test_make_parse);
	CU_add_test(s, "foreign names", test_foreign);
	CU_add_test(s, "clean only dead pids", test_clean);
	return cunit_run();
}
