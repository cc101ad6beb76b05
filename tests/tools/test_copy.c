// SPDX-License-Identifier: MIT
/*
 * test_copy.c - the checksum is independent of how a range is split and
 * of holes versus written zeros, yet sensitive to content and position; and
 * copy_data() reproduces a sparse file with its holes (on whatever file
 * system holds /tmp; hole checks are skipped where SEEK_HOLE reports none).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "copy.h"
#include "cunit_main.h"

static void test_sum_split(void)
{
	unsigned char buf[4096];
	uint64_t whole = 0, parts = 0, zeros = 0, moved = 0;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	copy_sum_update(&whole, 8192, buf, sizeof(buf));
	copy_sum_update(&parts, 8192 + 1024, buf + 1024, 3072);
	copy_sum_update(&parts, 8192, buf, 1024);
	CU_ASSERT_EQUAL(whole, parts);
	memset(buf, 0, sizeof(buf));
	copy_sum_update(&zeros, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(zeros, 0); /* written zeros sum like a hole */
	buf[5] = 1;
	copy_sum_update(&zeros, 0, buf, sizeof(buf));
	copy_sum_update(&moved, 8, buf, sizeof(buf) - 8);
	CU_ASSERT_NOT_EQUAL(zeros, 0);
	CU_ASSERT_NOT_EQUAL(zeros, moved); /* same bytes elsewhere: different sum */
}

static void test_copy_sparse(void)
{
	char in_name[] = "/tmp/test_copy_in.XXXXXX", out_name[] = "/tmp/test_copy_out.XXXXXX";
	struct copy_ctl ctl = { 0 };
	char data[65536];
	uint64_t a, b;
	struct stat st;
	int in, out;

	in = mkstemp(in_name);
	out = mkstemp(out_name);
	CU_ASSERT_FATAL(in >= 0 && out >= 0);
	memset(data, 'x', sizeof(data));
	CU_ASSERT_EQUAL(pwrite(in, data, sizeof(data), 1 << 20), (ssize_t)sizeof(data));
	CU_ASSERT_EQUAL(pwrite(in, data, 100, 3 << 20), 100);
	CU_ASSERT_EQUAL(ftruncate(in, 4 << 20), 0);
	CU_ASSERT_EQUAL(copy_data(in, out, 4 << 20, &ctl), 0);
	CU_ASSERT(fstat(out, &st) == 0 && st.st_size == 4 << 20);
	CU_ASSERT(copy_checksum(in, 4 << 20, &a, NULL) == 0 &&
		  copy_checksum(out, 4 << 20, &b, NULL) == 0);
	CU_ASSERT_EQUAL(a, b);
	CU_ASSERT_NOT_EQUAL(a, 0);
	if (lseek(in, 0, SEEK_HOLE) < (4 << 20)) /* the file system reports holes */
		CU_ASSERT(ctl.bytes < (1 << 20) && st.st_blocks * 512 < (1 << 20));
	close(in);
	close(out);
	unlink(in_name);
	unlink(out_name);
}

int main(void)
{
	CU_pSuite s;
	char why[128];

	if (backend_init(BACKEND_AUTO, 0, why, sizeof(why)) < 0 ||
	    CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("copy", NULL, NULL);
	CU_add_test(s, "checksum split and zeros", test_sum_split);
	CU_add_test(s, "sparse copy", test_copy_sparse);
	return cunit_run();
}
