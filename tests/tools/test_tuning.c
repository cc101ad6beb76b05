// SPDX-License-Identifier: MIT
/*
 * test_tuning.c - the tuning attributes' values: every accepted form gives
 * the stored form the daemon parses, every bad one is refused with the
 * right error, and sizes take K/M/G suffixes without overflowing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cunit_main.h"
#include "tuning.h"

static const char *parsed(enum tuning_key k, const char *in)
{
	static char out[TUNING_VALUE_LEN];

	return tuning_parse(k, in, out) ? "ERROR" : out;
}

static void test_counts(void)
{
	char out[TUNING_VALUE_LEN];

	CU_ASSERT_STRING_EQUAL(parsed(TUNING_GLOBAL_BUFFERS, "30"), "30");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_GLOBAL_BUFFERS, "all"), "all");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_GLOBAL_BUFFERS, "0"), "0");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_GLOBAL_BUFFERS, "268435456"), "268435456");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_GLOBAL_BUFFERS, "007"), "7");
	CU_ASSERT_EQUAL(tuning_parse(TUNING_GLOBAL_BUFFERS, "268435457", out), -ERANGE);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_GLOBAL_BUFFERS, "-1", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_GLOBAL_BUFFERS, "ALL", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_GLOBAL_BUFFERS, "", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_GLOBAL_BUFFERS, "3x", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_GLOBAL_BUFFERS, "99999999999999999999999", out),
			-ERANGE);
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_LOCAL_BUFFERS, "1024"), "1024");
	CU_ASSERT_EQUAL(tuning_parse(TUNING_LOCAL_BUFFERS, "1025", out), -ERANGE);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_LOCAL_BUFFERS, "all", out), -EINVAL);
}

static void test_words(void)
{
	char out[TUNING_VALUE_LEN], opt[32];

	CU_ASSERT_STRING_EQUAL(parsed(TUNING_STATS, "on"), "on");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_DEFERRED_WRITE, "off"), "off");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_SYNC, "relaxed"), "relaxed");
	CU_ASSERT_EQUAL(tuning_parse(TUNING_STATS, "yes", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_SYNC, "on", out), -EINVAL);
	for (int k = 0; k < TUNING_N; k++) {
		CU_ASSERT_EQUAL(tuning_parse(k, "default", out), 0);
		CU_ASSERT_STRING_EQUAL(out, ""); /* "" means remove */
		/* the option is the attribute's name with '-' for '_' */
		snprintf(opt, sizeof(opt), "%s", tuning_attr(k)->name);
		for (char *p = opt; *p; p++)
			*p = *p == '_' ? '-' : *p;
		CU_ASSERT_STRING_EQUAL(opt, tuning_attr(k)->option);
	}
}

static void test_sizes(void)
{
	char out[TUNING_VALUE_LEN];
	uint64_t v = 0;

	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "4M"), "4194304");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "512k"), "524288");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "1G"), "1073741824");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "2MiB"), "2097152");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "4096"), "4096");
	CU_ASSERT_EQUAL(tuning_parse(TUNING_READAHEAD_MAX, "2G", out), -ERANGE);
	/* one grammar for every size: T is a suffix here too, 4T is just too large */
	CU_ASSERT_EQUAL(tuning_parse(TUNING_READAHEAD_MAX, "4T", out), -ERANGE);
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "1g"), "1073741824");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_READAHEAD_MAX, "64kb"), "65536");
	CU_ASSERT_EQUAL(tuning_parse(TUNING_READAHEAD_MAX, "4P", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_READAHEAD_MAX, "M", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse(TUNING_READAHEAD_MAX, "4Mx", out), -EINVAL);
	CU_ASSERT_EQUAL(tuning_parse_size("9999999999999G", &v), -ERANGE);
	CU_ASSERT_EQUAL(tuning_parse_size("3K", &v), 0);
	CU_ASSERT_EQUAL(v, 3072);
}

/* passthrough's words, and the rule of passthrough=auto (cache/tuning.c) */
static void test_passthrough(void)
{
	char out[TUNING_VALUE_LEN];
	struct tuning_values t = { -1, -1, -1, -1, -1, TUNING_PT_AUTO, -1, -1 }, u;
	struct tuning_mount plain = { false, false }, defer = { true, false },
			    relax = { false, true };

	CU_ASSERT_STRING_EQUAL(parsed(TUNING_PASSTHROUGH, "on"), "always");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_PASSTHROUGH, "off"), "never");
	CU_ASSERT_STRING_EQUAL(parsed(TUNING_PASSTHROUGH, "auto"), "auto");
	CU_ASSERT_EQUAL(tuning_parse(TUNING_PASSTHROUGH, "yes", out), -EINVAL);
	CU_ASSERT_PTR_NULL(tuning_passthrough_need(&t, &plain));
	CU_ASSERT_PTR_NULL(tuning_passthrough_need(&t, NULL));
	CU_ASSERT_STRING_EQUAL(tuning_passthrough_need(&t, &defer), "deferred_write");
	CU_ASSERT_STRING_EQUAL(tuning_passthrough_need(&t, &relax), "sync=relaxed");
	u = t;
	u.deferred_write = 0; /* the file's own off beats the mount's on */
	CU_ASSERT_PTR_NULL(tuning_passthrough_need(&u, &defer));
	u.global_buffers = 0; /* explicitly none: nothing asked */
	CU_ASSERT_PTR_NULL(tuning_passthrough_need(&u, &plain));
	u.global_buffers = 30;
	CU_ASSERT_STRING_EQUAL(tuning_passthrough_need(&u, &plain), "global_buffers");
	u = t;
	u.stats = 1;
	CU_ASSERT_STRING_EQUAL(tuning_passthrough_need(&u, &plain), "stats");
	u = t;
	u.readahead_max = 1 << 20;
	CU_ASSERT_STRING_EQUAL(tuning_passthrough_need(&u, &plain), "readahead_max");
	u = t;
	u.local_buffers = 4;
	CU_ASSERT_STRING_EQUAL(tuning_passthrough_need(&u, &plain), "local_buffers");
}

/* the observed half of passthrough=auto: bulk sequential reading only */
static void test_use_bulk(void)
{
	struct tuning_use u = { .reads = 16, .read_bytes = 16 * TUNING_BULK_REQUEST };

	CU_ASSERT_TRUE(tuning_use_bulk(&u)); /* 1 MiB in 64 KiB requests */
	u.wrote = true;
	CU_ASSERT_FALSE(tuning_use_bulk(&u)); /* a writer is no bulk reader */
	u = (struct tuning_use){ .reads = 17, .read_bytes = 16 * TUNING_BULK_REQUEST };
	CU_ASSERT_FALSE(tuning_use_bulk(&u)); /* requests below 64 KiB on average */
	u = (struct tuning_use){ .reads = 4, .read_bytes = TUNING_BULK_BYTES - 1 };
	CU_ASSERT_FALSE(tuning_use_bulk(&u)); /* too little to tell */
	u = (struct tuning_use){ .reads = 0, .read_bytes = 0 };
	CU_ASSERT_FALSE(tuning_use_bulk(&u)); /* read nothing: says nothing */
	u = (struct tuning_use){ .reads = 262144, .read_bytes = 262144ULL * 4096 };
	CU_ASSERT_FALSE(tuning_use_bulk(&u)); /* 1 GiB of random pages */
}

/* read-ahead window: base plus a byte per ns of delay, within [base, cap] */
static void test_readahead_window(void)
{
	/* 1 MiB in 0.5 ms: faster than 1 GB/s, no delay; in 5.2 ms: about 4 ms of it */
	CU_ASSERT_EQUAL(tuning_readahead_delay(500000, 1 << 20), 0);
	CU_ASSERT_EQUAL(tuning_readahead_delay(5200000, 1 << 20), 5200000 - (1 << 20));
	CU_ASSERT_EQUAL(tuning_readahead_delay(0, 0), 0);
	/* under a base's worth of delay: the base; 4 ms: base + 3 MiB; a long one: the cap */
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, 0, 8 << 20), 1 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, (1 << 20) - 1, 8 << 20), 1 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, 1 << 20, 8 << 20), 2 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, 4000000, 8 << 20), 4 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, 7000000, 8 << 20), 7 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, 900000000, 8 << 20), 8 << 20);
	/* a cap that is no whole number of bases is still the most */
	CU_ASSERT_EQUAL(tuning_readahead_window(3 << 20, 900000000, 8 << 20), 8 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(3 << 20, 3 << 20, 8 << 20), 6 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(3 << 20, 1, 8 << 20), 3 << 20);
	/* a cap below the base (readahead_latency_max=0) keeps the base; so does base 0 */
	CU_ASSERT_EQUAL(tuning_readahead_window(1 << 20, 4000000, 0), 1 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(2 << 20, 4000000, 1 << 20), 2 << 20);
	CU_ASSERT_EQUAL(tuning_readahead_window(0, 4000000, 8 << 20), 0);
	/* no wrap */
	CU_ASSERT_EQUAL(tuning_readahead_window(UINT64_MAX - 1, UINT64_MAX, UINT64_MAX),
			UINT64_MAX);
	CU_ASSERT_EQUAL(tuning_readahead_window(1, UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

static void test_stored(void)
{
	CU_ASSERT_TRUE(tuning_stored_valid(TUNING_GLOBAL_BUFFERS, "all"));
	CU_ASSERT_TRUE(tuning_stored_valid(TUNING_READAHEAD_MAX, "4M"));
	CU_ASSERT_FALSE(tuning_stored_valid(TUNING_GLOBAL_BUFFERS, "default"));
	CU_ASSERT_FALSE(tuning_stored_valid(TUNING_GLOBAL_BUFFERS, "lots"));
	CU_ASSERT_FALSE(tuning_stored_valid(TUNING_STATS, ""));
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("tuning", NULL, NULL);
	CU_add_test(s, "counts", test_counts);
	CU_add_test(s, "words and default", test_words);
	CU_add_test(s, "sizes", test_sizes);
	CU_add_test(s, "stored values", test_stored);
	CU_add_test(s, "passthrough", test_passthrough);
	CU_add_test(s, "bulk use", test_use_bulk);
	CU_add_test(s, "read-ahead window", test_readahead_window);
	return cunit_run();
}
