// SPDX-License-Identifier: MIT
/*
 * test_mountinfo.c - cache/mountinfo.c, the one mountinfo parser of the
 * daemon and the tools: fields around optional tags, the \ooo escapes of
 * names with spaces, tabs, newlines and backslashes, malformed lines, and
 * the newest of several mounts at one point.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_test.h"
#include "mountinfo.h"

static void test_fields(void)
{
	char line[] = "36 35 98:7 /sub /mnt/a\\040b rw,noatime master:1 shared:2 - fuse.accelfs "
		      "/srv/data\\134x rw,user_id=0,group_id=0\n";
	struct mountinfo_line m;

	CU_ASSERT_EQUAL_FATAL(mountinfo_parse(line, &m), 0);
	CU_ASSERT_EQUAL(m.major, 98);
	CU_ASSERT_EQUAL(m.minor, 7);
	CU_ASSERT_STRING_EQUAL(m.root, "/sub");
	CU_ASSERT_STRING_EQUAL(m.point, "/mnt/a b");
	CU_ASSERT_STRING_EQUAL(m.fstype, "fuse.accelfs");
	CU_ASSERT_STRING_EQUAL(m.source, "/srv/data\\x");
	CU_ASSERT_STRING_EQUAL(m.super, "rw,user_id=0,group_id=0");
}

static void test_escapes(void)
{
	char line[] = "1 0 0:5 / /m/tab\\011nl\\012sp\\040bs\\134\\134end rw - ext4 "
		      "/dev/x\\040y rw\n";
	char lone[] = "a\\04b\\9999\\400c\\";
	struct mountinfo_line m;

	CU_ASSERT_EQUAL_FATAL(mountinfo_parse(line, &m), 0);
	CU_ASSERT_STRING_EQUAL(m.point, "/m/tab\tnl\nsp bs\\\\end");
	CU_ASSERT_STRING_EQUAL(m.source, "/dev/x y");
	mountinfo_unescape(lone); /* not escapes: kept as they are */
	CU_ASSERT_STRING_EQUAL(lone, "a\\04b\\9999\\400c\\");
}

static void test_malformed(void)
{
	char garbage[] = "garbage line\n", nosep[] = "1 0 0:5 / /m rw shared:1 ext4 /dev/x rw\n";
	char short_[] = "1 0 0:5 / /m rw - ext4\n", baddev[] = "1 0 x:y / /m rw - ext4 /d rw\n";
	char nosuper[] = "1 0 0:5 / /m rw - tmpfs tmpfs\n";
	struct mountinfo_line m;

	CU_ASSERT_EQUAL(mountinfo_parse(garbage, &m), -EINVAL);
	CU_ASSERT_EQUAL(mountinfo_parse(nosep, &m), -EINVAL);
	CU_ASSERT_EQUAL(mountinfo_parse(short_, &m), -EINVAL);
	CU_ASSERT_EQUAL(mountinfo_parse(baddev, &m), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(mountinfo_parse(nosuper, &m), 0);
	CU_ASSERT_STRING_EQUAL(m.super, "");
}

/* The last line for a point wins (a later mount sits on top); escaped points match. */
static void test_find(void)
{
	static const char content[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
				      "2 1 0:50 / /mnt/a\\040b rw - ext4 /dev/sdb rw\n"
				      "3 2 0:51 / /mnt/a\\040b rw - fuse.accelfs /srv/s\\040t rw\n";
	char table[] = "/tmp/test_mountinfo.XXXXXX";
	struct mountinfo_entry *e = malloc(sizeof(*e));
	int fd = mkstemp(table);

	CU_ASSERT_FATAL(e && fd >= 0 && write(fd, content, sizeof(content) - 1) > 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(mountinfo_find(table, "/mnt/a b", e), 0);
	CU_ASSERT_STRING_EQUAL(e->devno, "0:51");
	CU_ASSERT_STRING_EQUAL(e->fstype, "fuse.accelfs");
	CU_ASSERT_STRING_EQUAL(e->source, "/srv/s t");
	CU_ASSERT_EQUAL(mountinfo_find(table, "/mnt/a\\040b", e), -ENOENT);
	CU_ASSERT_EQUAL(mountinfo_find(table, "/mnt", e), -ENOENT);
	CU_ASSERT_EQUAL(mountinfo_find("/nonexistent/mountinfo", "/", e), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(mountinfo_find(NULL, "/", e), 0); /* this process's own table */
	unlink(table);
	free(e);
}

int main(void)
{
	CU_pSuite s = ct_suite("mountinfo");

	if (!s)
		return 2;
	CU_add_test(s, "fields around optional tags", test_fields);
	CU_add_test(s, "escaped names", test_escapes);
	CU_add_test(s, "malformed lines", test_malformed);
	CU_add_test(s, "newest mount at a point", test_find);
	return ct_run();
}
