// SPDX-License-Identifier: MIT
/*
 * test_fdl.c - the FDL reader and writer: every attribute of the OpenVMS
 * syntax accelfs reads, the defaults, a write/parse/write round trip, the
 * older INI form, and that each kind of error names the right line, column
 * and keyword.
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
	const char *text = "! written by hand\n"
			   "TITLE \"sales master\"\n"
			   "IDENT\t\"27-NOV-2026 18:55:42   OpenVMS ANALYZE/RMS_FILE Utility\"\n"
			   "\nSYSTEM\n\tSOURCE \"OpenVMS\"\n"
			   "FILE\n\tNAME \"a b\\\"c\"  ! the name\n"
			   "\tORGANIZATION sequential\n"
			   "\tALLOCATION 4096\n\tbest_try_contiguous no\n\tCONTIGUOUS yes\n"
			   "\tEXTENSION = 128\n"
			   "RECORD\n\tFORMAT fixed\n\tSIZE 120\n"
			   "Area 0\n\tALLOCATION 4096\n"
			   "LINUX\n\tOWNER 1000\n\tGROUP 100\n\tMODE 0640\n\tHOLES allocate\n"
			   "ACCELFS\n\tGLOBAL_BUFFERS 64\n\treadahead_max \"4M\"\n\tSYNC default\n";
	struct fdl_error err;
	struct fdl fdl;

	CU_ASSERT_EQUAL_FATAL(parse(text, &fdl, &err), 0);
	if (err.line)
		printf("\n  %u:%u %s\n", err.line, err.col, err.msg);
	CU_ASSERT_FALSE(fdl.legacy);
	CU_ASSERT_STRING_EQUAL(fdl.name, "a b\"c");
	CU_ASSERT(fdl.has_preallocate && fdl.preallocate == 4096 * 512);
	CU_ASSERT_FALSE(fdl.contiguous);
	CU_ASSERT_TRUE(fdl.contiguous_required);
	CU_ASSERT_EQUAL(fdl.extension, 128 * 512);
	CU_ASSERT(fdl.format == FDL_FORMAT_FIXED && fdl.record_size == 120);
	CU_ASSERT_EQUAL(fdl.holes, FDL_HOLES_ALLOCATE);
	CU_ASSERT(fdl.has_uid && fdl.uid == 1000 && fdl.gid == 100 && fdl.mode == 0640);
	CU_ASSERT(fdl.has_accelfs);
	CU_ASSERT_EQUAL_FATAL(fdl.nattrs, 2); /* SYNC default: not set */
	CU_ASSERT_STRING_EQUAL(fdl.attrs[0].name, "global_buffers");
	CU_ASSERT_STRING_EQUAL(fdl.attrs[0].value, "64");
	CU_ASSERT_STRING_EQUAL(fdl.attrs[1].name, "readahead_max");
	CU_ASSERT_STRING_EQUAL(fdl.attrs[1].value, "4M"); /* as written */
	fdl_free(&fdl);
}

static void test_defaults(void)
{
	struct fdl_error err;
	struct fdl fdl;

	CU_ASSERT_EQUAL_FATAL(parse("", &fdl, &err), 0);
	CU_ASSERT_TRUE(fdl.contiguous);
	CU_ASSERT_FALSE(fdl.contiguous_required);
	CU_ASSERT_EQUAL(fdl.holes, FDL_HOLES_KEEP);
	CU_ASSERT_EQUAL(fdl.format, FDL_FORMAT_STREAM_LF);
	CU_ASSERT_FALSE(fdl.has_preallocate || fdl.has_uid || fdl.has_mode || fdl.has_accelfs);
	fdl_free(&fdl);
	/* an empty ACCELFS section: exactly no attributes */
	CU_ASSERT_EQUAL_FATAL(parse("FILE\nACCELFS\n", &fdl, &err), 0);
	CU_ASSERT(fdl.has_accelfs && fdl.nattrs == 0);
	fdl_free(&fdl);
}

static char *written(const struct fdl *fdl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_EQUAL(fdl_write(f, fdl, "! hi\n", "27-NOV-2026 18:55:42   test"), 0);
	fclose(f);
	return buf;
}

static void test_roundtrip(void)
{
	struct fdl a, b;
	struct fdl_error err;
	char *one, *two;

	fdl_init(&a);
	a.name = strdup("n\x01 \"x\"");
	a.has_preallocate = a.has_mode = a.has_uid = true;
	a.preallocate = 65536 + 1; /* written in whole blocks */
	a.mode = 04755;
	a.uid = 7;
	a.contiguous_required = true;
	a.extension = 8 * 512;
	a.format = FDL_FORMAT_VARIABLE;
	a.record_size = 512;
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "readahead_max", "1M", 2), 0);
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "passthrough", "never", 5), 0);
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "future_knob", "1\"\\\xff", 4), 0);
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "global_buffers", "lots", 4), 0);
	CU_ASSERT_EQUAL(fdl_attr_set(&a, "bad name", "1", 1), -EINVAL);
	one = written(&a);
	CU_ASSERT_PTR_NOT_NULL(strstr(one, "\tALLOCATION              129\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(one, "\tREADAHEAD_MAX           1M\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(one, "! user.accelfs.future_knob \"1\\\"\\\\\\xff\": not a "));
	CU_ASSERT_PTR_NOT_NULL(strstr(one, "! user.accelfs.global_buffers \"lots\": a value the "));
	CU_ASSERT_EQUAL_FATAL(parse(one, &b, &err), 0);
	if (err.line)
		printf("\n  %u:%u %s\n%s", err.line, err.col, err.msg, one);
	CU_ASSERT_STRING_EQUAL(b.name, "n\x01 \"x\"");
	CU_ASSERT(b.preallocate == 129 * 512 && b.mode == 04755 && b.uid == 7 && !b.has_gid);
	CU_ASSERT(b.contiguous && b.contiguous_required && b.extension == 8 * 512);
	CU_ASSERT(b.format == FDL_FORMAT_VARIABLE && b.record_size == 512);
	CU_ASSERT_EQUAL_FATAL(b.nattrs, 2); /* the unknown and the invalid are comments */
	CU_ASSERT_STRING_EQUAL(b.attrs[0].value, "1M");
	CU_ASSERT_STRING_EQUAL(b.attrs[1].value, "never");
	/* what analyze --fdl writes converts back to the same definition */
	fdl_free(&a);
	two = written(&b);
	fdl_free(&b);
	CU_ASSERT_EQUAL_FATAL(parse(two, &a, &err), 0);
	free(two);
	two = written(&a);
	CU_ASSERT_PTR_NOT_NULL(strstr(two, "\tREADAHEAD_MAX"));
	CU_ASSERT_PTR_NULL(strstr(two, "future_knob"));
	free(two);
	fdl_free(&a);
	free(one);
}

/* The older INI form: still read, the same meaning. */
static void test_legacy(void)
{
	const char *text = "# comment\n[file]\nname = \"a b\\\"c\"\nsize = 4K\n\n"
			   "[allocation]\n  preallocate = 2MiB   # inline comment\n"
			   "best_try_contiguous = no\nholes = allocate\n"
			   "[ownership]\nuid = 1000\ngid=100\nmode = 0640\n"
			   "[accelfs]\nglobal_buffers = 64\nsync = \"relaxed\"\n";
	struct fdl_error err;
	struct fdl fdl;

	CU_ASSERT_EQUAL_FATAL(parse(text, &fdl, &err), 0);
	CU_ASSERT_TRUE(fdl.legacy);
	CU_ASSERT_STRING_EQUAL(fdl.name, "a b\"c");
	CU_ASSERT(fdl.has_preallocate && fdl.preallocate == 2 << 20);
	CU_ASSERT_FALSE(fdl.contiguous);
	CU_ASSERT_EQUAL(fdl.holes, FDL_HOLES_ALLOCATE);
	CU_ASSERT(fdl.has_uid && fdl.uid == 1000 && fdl.gid == 100 && fdl.mode == 0640);
	CU_ASSERT(fdl.has_accelfs && fdl.nattrs == 2);
	fdl_free(&fdl);
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
	expect_error("ALLOCATION 10\n", 1, 1, "ALLOCATION before any section");
	expect_error("FILE\n\tCLUSTER_SIZE 3\n", 2, 2, "FILE CLUSTER_SIZE: not an attribute");
	expect_error("FILE\n\tBEST_TRY_CONTIGOUS yes\n", 2, 2, "FILE BEST_TRY_CONTIGOUS");
	expect_error("FILE\n\tBEST_TRY_CONTIGUOUS maybe\n", 2, 22, "not yes or no");
	expect_error("FILE\n\tORGANIZATION indexed\n", 2, 15,
		     "ORGANIZATION indexed: accelfs "
		     "converts sequential files only");
	expect_error("FILE\n\tORGANIZATION relative\n", 2, 15, "relative files need RMS");
	expect_error("FILE\n\tORGANIZATION heap\n", 2, 15, "not one of sequential");
	expect_error("FILE\n\tALLOCATION lots\n", 2, 13, "FILE ALLOCATION: 'lots' is not a");
	expect_error("FILE\n\tALLOCATION -1\n", 2, 13, "FILE ALLOCATION");
	expect_error("FILE\n\tEXTENSION 65536\n", 2, 12, "EXTENSION: 65536 is out of range");
	expect_error("FILE\n\tALLOCATION 1\n\tALLOCATION 2\n", 3, 2,
		     "FILE ALLOCATION appears twice");
	expect_error("FILE\n\tALLOCATION\n", 2, 12, "missing value for FILE ALLOCATION");
	expect_error("FILE\n\tALLOCATION 1 2\n", 2, 15, "unexpected text");
	expect_error("FILE\nFILE\n", 2, 1, "FILE appears twice");
	expect_error("FILE\n\tALLOCATION 100\nAREA 0\n\tALLOCATION 200\n", 4, 13,
		     "AREA 0 ALLOCATION 200 disagrees with FILE ALLOCATION");
	expect_error("AREA 1\n", 1, 6, "AREA 1: a sequential file has one area");
	expect_error("AREA\n", 1, 5, "missing value for AREA");
	expect_error("KEY 0\n", 1, 1, "KEY describes an index");
	expect_error("FILE\nANALYSIS_OF_AREA 0\n", 2, 1, "ANALYSIS_OF_AREA");
	expect_error("RECORD\n\tFORMAT vfc\n", 2, 9, "RECORD FORMAT vfc");
	expect_error("RECORD\n\tFORMAT fixed\n", 2, 9, "RECORD FORMAT fixed needs RECORD SIZE");
	expect_error("RECORD\n\tSIZE 40000\n", 2, 7, "RECORD SIZE: 40000 is out of range");
	expect_error("LINUX\n\tMODE 0789\n", 2, 7, "LINUX MODE: '0789' is not an octal");
	expect_error("LINUX\n\tMODE 017777\n", 2, 7, "range");
	expect_error("LINUX\n\tOWNER -1\n", 2, 8, "LINUX OWNER");
	expect_error("LINUX\n\tHOLES some\n", 2, 8, "LINUX HOLES: 'some' is not one of keep");
	expect_error("ACCELFS\n\tGLOBAL_BUFERS 4\n", 2, 2, "ACCELFS GLOBAL_BUFERS: not a tuning");
	expect_error("ACCELFS\n\tGLOBAL_BUFFERS many\n", 2, 17, "ACCELFS GLOBAL_BUFFERS: 'many'");
	expect_error("ACCELFS\n\tLOCAL_BUFFERS 5000\n", 2, 16, "out of range");
	expect_error("ACCELFS\n\tSYNC relaxed\n\tsync strict\n", 3, 2,
		     "ACCELFS SYNC appears twice");
	expect_error("FILE\n\tNAME \"abc\n", 2, 7, "unterminated");
	expect_error("FILE\n\tNAME \"a\\q\"\n", 2, 9, "escape");
	expect_error("FILE\n\t= 3\n", 2, 2, "expected an FDL keyword");
	/* the older INI form keeps its own messages */
	expect_error("[file]\n[bogus]\n", 2, 2, "unknown section");
	expect_error("[allocation]\nbest_try_contigous = yes\n", 2, 1, "unknown key");
	expect_error("[allocation]\n\tpreallocate = 12Q\n", 2, 18, "suffix");
	expect_error("[ownership]\nmode = 0789\n", 2, 8, "octal");
	expect_error("[accelfs]\nglobal_buffers = lots\n", 2, 18, "[accelfs] global_buffers");
	expect_error("[accelfs]\nsome_knob = 1\n", 2, 1, "not a tuning attribute");
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
	CU_add_test(s, "older INI form", test_legacy);
	CU_add_test(s, "errors with line, column and keyword", test_errors);
	return cunit_run();
}
