// SPDX-License-Identifier: MIT
/*
 * test_fdl.c - the FDL parser and writer: every type, the defaults, a
 * write/parse round trip, and that each kind of error names the right line
 * and column.
 */
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "fdl.h"

static int parse(const char *text, struct fdl *fdl, struct fdl_error *err)
{
	fdl_init(fdl);
	return fdl_parse(text, strlen(text), fdl, err);
}

static void test_full(void)
{
	const char *text = "# comment\n[file]\nname = \"a b\\\"c\"\nsize = 4K\n\n"
			   "[allocation]\n  preallocate = 2MiB   # inline comment\n"
			   "best_try_contiguous = no\nholes = allocate\n"
			   "[ownership]\nuid = 1000\ngid=100\nmode = 0640\n"
			   "[accelfs]\nglobal_buffers = 64\nx = \"\\x00\\n\"\n";
	struct fdl_error err;
	struct fdl fdl;

	CU_ASSERT_EQUAL_FATAL(parse(text, &fdl, &err), 0);
	CU_ASSERT_STRING_EQUAL(fdl.name, "a b\"c");
	CU_ASSERT(fdl.has_size && fdl.size == 4096);
	CU_ASSERT(fdl.has_preallocate && fdl.preallocate == 2 << 20);
	CU_ASSERT_FALSE(fdl.contiguous);
	CU_ASSERT_EQUAL(fdl.holes, FDL_HOLES_ALLOCATE);
	CU_ASSERT(fdl.has_uid && fdl.uid == 1000 && fdl.gid == 100 && fdl.mode == 0640);
	CU_ASSERT(fdl.has_accelfs);
	CU_ASSERT_EQUAL_FATAL(fdl.nattrs, 2);
	CU_ASSERT_STRING_EQUAL(fdl.attrs[0].name, "global_buffers");
	CU_ASSERT_STRING_EQUAL(fdl.attrs[0].value, "64");
	CU_ASSERT_EQUAL(fdl.attrs[1].len, 2);
	CU_ASSERT(memcmp(fdl.attrs[1].value, "\0\n", 2) == 0);
	fdl_free(&fdl);
	/* the one size grammar (cache/tuning.h): lower-case suffixes work here too */
	CU_ASSERT_EQUAL_FATAL(parse("[file]\nsize = 1g\n", &fdl, &err), 0);
	CU_ASSERT_EQUAL(fdl.size, 1ULL << 30);
	fdl_free(&fdl);
}

static void test_defaults(void)
{
	struct fdl_error err;
	struct fdl fdl;

	CU_ASSERT_EQUAL_FATAL(parse("", &fdl, &err), 0);
	CU_ASSERT_TRUE(fdl.contiguous);
	CU_ASSERT_EQUAL(fdl.holes, FDL_HOLES_KEEP);
	CU_ASSERT_FALSE(fdl.has_preallocate || fdl.has_uid || fdl.has_mode || fdl.has_accelfs);
	fdl_free(&fdl);
}

static void test_roundtrip(void)
{
	struct fdl a, b;
	struct fdl_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fdl_init(&a);
	a.name = strdup("n\x01");
	a.has_size = a.has_preallocate = a.has_mode = true;
	a.size = 12345;
	a.preallocate = 65536;
	a.mode = 04755;
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "readahead_max", "1\"\\\xff", 4), 0);
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "bad name", "1", 1), -EINVAL);
	f = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(fdl_write(f, &a, "# hi\n"), 0);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(parse(buf, &b, &err), 0);
	CU_ASSERT_STRING_EQUAL(b.name, "n\x01");
	CU_ASSERT(b.size == 12345 && b.preallocate == 65536 && b.mode == 04755);
	CU_ASSERT_EQUAL_FATAL(b.nattrs, 1);
	CU_ASSERT(b.attrs[0].len == 4 && memcmp(b.attrs[0].value, "1\"\\\xff", 4) == 0);
	fdl_free(&a);
	fdl_free(&b);
	free(buf);
}

/* Each bad input, with the line and column the message must point at. */
static void expect_error(const char *text, unsigned int line, unsigned int col, const char *word)
{
	struct fdl_error err;
	struct fdl fdl;

	CU_ASSERT_EQUAL(parse(text, &fdl, &err), -EINVAL);
	CU_ASSERT_EQUAL(err.line, line);
	CU_ASSERT_EQUAL(err.col, col);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, word));
	if (err.line != line || err.col != col || !strstr(err.msg, word))
		printf("\n  input %s -> %u:%u %s\n", text, err.line, err.col, err.msg);
	fdl_free(&fdl);
}

static void test_errors(void)
{
	expect_error("size = 1\n", 1, 1, "before any [section]");
	expect_error("[file]\n[bogus]\n", 2, 2, "unknown section");
	expect_error("[file\n", 1, 6, "']'");
	expect_error("[allocation]\nbest_try_contigous = yes\n", 2, 1, "unknown key");
	expect_error("[allocation]\nbest_try_contiguous = maybe\n", 2, 23, "not a boolean");
	expect_error("[allocation]\n\tpreallocate = 12Q\n", 2, 18, "suffix");
	expect_error("[ownership]\nmode = 0789\n", 2, 8, "octal");
	expect_error("[ownership]\nmode = 017777\n", 2, 8, "range");
	expect_error("[ownership]\nuid = -1\n", 2, 7, "decimal");
	expect_error("[file]\nname = \"abc\n", 2, 8, "unterminated");
	expect_error("[file]\nname = \"a\\q\"\n", 2, 10, "escape");
	expect_error("[file]\nname \"x\"\n", 2, 6, "'='");
	expect_error("[file]\nname =\n", 2, 7, "missing value");
	expect_error("[file]\nsize = 1 2\n", 2, 10, "unexpected text");
	expect_error("[file]\nsize = 1\nsize = 2\n", 3, 1, "twice");
	expect_error("[accelfs]\na = 1\na = 2\n", 3, 1, "twice");
	expect_error("[file]\n[file]\n", 2, 2, "twice");
	expect_error("[allocation]\nholes = some\n", 2, 9, "keep");
	expect_error("[file]\n= 3\n", 2, 1, "expected a key");
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("fdl", NULL, NULL);
	CU_add_test(s, "full", test_full);
	CU_add_test(s, "defaults", test_defaults);
	CU_add_test(s, "roundtrip", test_roundtrip);
	CU_add_test(s, "errors with line and column", test_errors);
	return cunit_run();
}
