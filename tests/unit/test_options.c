// SPDX-License-Identifier: MIT
/*
 * test_options.c - the accelfs command line: defaults, every option, and
 * the typos and out-of-range values that must be refused before mounting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "options_i.h"

static int parse(struct accelfs_opts *o, const char *const *args)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = "accelfs";
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	return opts_parse(argc, argv, o);
}

static void test_defaults(void)
{
	struct accelfs_opts o;
	const char *args[] = { "/src", "/mnt", NULL };

	CU_ASSERT_EQUAL(parse(&o, args), 0);
	CU_ASSERT_STRING_EQUAL(o.source, "/src");
	CU_ASSERT_STRING_EQUAL(o.mountpoint, "/mnt");
	CU_ASSERT_EQUAL(o.threads, 4);
	CU_ASSERT_EQUAL(o.backend, BACKEND_AUTO);
	CU_ASSERT_EQUAL(o.kernel_cache, KERNEL_CACHE_AUTO);
	CU_ASSERT_TRUE(o.writeback);
	CU_ASSERT_TRUE(o.clone_fd);
	CU_ASSERT_FALSE(o.foreground);
	CU_ASSERT_FALSE(o.read_only);
	CU_ASSERT_PTR_NULL(o.mount_opts);
	opts_free(&o);
}

static void test_all_options(void)
{
	struct accelfs_opts o;
	const char *args[] = { "-o",   "backend=sync,threads=8,queue_depth=128,kernel_cache=never",
			       "/src", "-oattr_timeout=2.5,entry_timeout=0,negative_timeout=7",
			       "-o",   "writeback=off,clone_fd=no,allow_other,ro,nosuid,noatime",
			       "/mnt", "-f",
			       "-s",   NULL };

	CU_ASSERT_EQUAL_FATAL(parse(&o, args), 0);
	CU_ASSERT_EQUAL(o.backend, BACKEND_SYNC);
	CU_ASSERT_EQUAL(o.threads, 8);
	CU_ASSERT_EQUAL(o.queue_depth, 128);
	CU_ASSERT_EQUAL(o.kernel_cache, KERNEL_CACHE_NEVER);
	CU_ASSERT_DOUBLE_EQUAL(o.attr_timeout, 2.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(o.entry_timeout, 0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(o.negative_timeout, 7, 1e-9);
	CU_ASSERT_FALSE(o.writeback);
	CU_ASSERT_FALSE(o.clone_fd);
	CU_ASSERT_TRUE(o.allow_other);
	CU_ASSERT_TRUE(o.read_only);
	CU_ASSERT_TRUE(o.foreground);
	CU_ASSERT_TRUE(o.single_thread);
	CU_ASSERT_STRING_EQUAL(o.mount_opts, "nosuid,noatime");
	opts_free(&o);
}

/* watch=: the words, the default, and which timeouts the user set (watch.c keeps those). */
static void test_watch(void)
{
	struct accelfs_opts o;
	const char *def[] = { "/s", "/m", NULL };
	const char *off[] = { "/s", "/m", "-o", "watch=off,attr_timeout=1", NULL };
	const char *fan[] = { "/s", "/m", "-o", "watch=fanotify", NULL };
	const char *bad[] = { "/s", "/m", "-o", "watch=dnotify", NULL };
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(parse(&o, def), 0);
	CU_ASSERT_EQUAL(o.watch, WATCH_AUTO);
	CU_ASSERT_FALSE(opts_given(&o, "attr_timeout"));
	CU_ASSERT_FALSE(opts_given(&o, "watch"));
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, off), 0);
	CU_ASSERT_EQUAL(o.watch, WATCH_OFF);
	CU_ASSERT_TRUE(opts_given(&o, "attr_timeout"));
	CU_ASSERT_FALSE(opts_given(&o, "entry_timeout"));
	CU_ASSERT_FALSE(opts_given(&o, "no_such_option"));
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, fan), 0);
	CU_ASSERT_EQUAL(o.watch, WATCH_FANOTIFY);
	opts_free(&o);
	CU_ASSERT_EQUAL(parse(&o, bad), -EINVAL);
	opts_free(&o);
	/* opts_given has a bit per table row */
	while (opt_table[n].name)
		n++;
	CU_ASSERT(n <= 64);
}

/* disk_cache=off|auto|DIR: the last one given wins, a relative path is refused */
static void test_disk_cache(void)
{
	struct accelfs_opts o;
	const char *def[] = { "/s", "/m", NULL };
	const char *aut[] = { "/s", "/m", "-o", "disk_cache=/c,disk_cache=auto", NULL };
	const char *dir[] = { "/s", "/m", "-o", "disk_cache=auto,disk_cache=/c", NULL };
	const char *off[] = { "/s", "/m", "-o", "disk_cache=auto,disk_cache=off", NULL };
	const char *rel[] = { "/s", "/m", "-o", "disk_cache=cache", NULL };

	CU_ASSERT_EQUAL_FATAL(parse(&o, def), 0);
	CU_ASSERT_PTR_NULL(o.disk_cache);
	CU_ASSERT_FALSE(o.disk_cache_auto);
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, aut), 0);
	CU_ASSERT_PTR_NULL(o.disk_cache);
	CU_ASSERT_TRUE(o.disk_cache_auto);
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, dir), 0);
	CU_ASSERT_STRING_EQUAL(o.disk_cache ? o.disk_cache : "", "/c");
	CU_ASSERT_FALSE(o.disk_cache_auto);
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, off), 0);
	CU_ASSERT_PTR_NULL(o.disk_cache);
	CU_ASSERT_FALSE(o.disk_cache_auto);
	opts_free(&o);
	CU_ASSERT_EQUAL(parse(&o, rel), -EINVAL);
	opts_free(&o);
}

static void test_fstab_words_ignored(void)
{
	struct accelfs_opts o;
	const char *args[] = { "/src", "/mnt", "-o",
			       "defaults,rw,auto,_netdev,nofail,x-systemd.automount,comment=x,"
			       "subtype=accelfs,dev,suid",
			       NULL };

	CU_ASSERT_EQUAL_FATAL(parse(&o, args), 0);
	CU_ASSERT_FALSE(o.read_only);
	CU_ASSERT_STRING_EQUAL(o.mount_opts, "dev,suid");
	opts_free(&o);
}

static void expect_usage_error(const char *const *args)
{
	struct accelfs_opts o;

	CU_ASSERT_EQUAL(parse(&o, args), -EINVAL);
	opts_free(&o);
}

static void test_rejects(void)
{
	const char *typo[] = { "/s", "/m", "-o", "writeback_cach=on", NULL };
	const char *unknown_flag[] = { "/s", "/m", "--frobnicate", NULL };
	const char *threads0[] = { "/s", "/m", "-o", "threads=0", NULL };
	const char *threads_big[] = { "/s", "/m", "-o", "threads=65", NULL };
	const char *threads_junk[] = { "/s", "/m", "-o", "threads=4x", NULL };
	const char *threads_neg[] = { "/s", "/m", "-o", "threads=-1", NULL };
	const char *backend[] = { "/s", "/m", "-o", "backend=aio", NULL };
	const char *cache[] = { "/s", "/m", "-o", "kernel_cache=sometimes", NULL };
	const char *timeout[] = { "/s", "/m", "-o", "attr_timeout=nan", NULL };
	const char *timeout_neg[] = { "/s", "/m", "-o", "attr_timeout=-1", NULL };
	const char *boolean[] = { "/s", "/m", "-o", "writeback=maybe", NULL };
	const char *one_arg[] = { "/s", NULL };
	const char *three_args[] = { "/s", "/m", "/x", NULL };
	const char *dangling_o[] = { "/s", "/m", "-o", NULL };

	expect_usage_error(typo);
	expect_usage_error(unknown_flag);
	expect_usage_error(threads0);
	expect_usage_error(threads_big);
	expect_usage_error(threads_junk);
	expect_usage_error(threads_neg);
	expect_usage_error(backend);
	expect_usage_error(cache);
	expect_usage_error(timeout);
	expect_usage_error(timeout_neg);
	expect_usage_error(boolean);
	expect_usage_error(one_arg);
	expect_usage_error(three_args);
	expect_usage_error(dangling_o);
}

/* Deferred write and read-ahead (issue 4): defaults, values, and that "sync"
 * alone is still the kernel flag while "sync=relaxed" is ours. */
static void test_writeback_options(void)
{
	struct accelfs_opts o;
	const char *defaults[] = { "/s", "/m", NULL };
	const char *set[] = {
		"/s", "/m", "-o",
		"deferred_write=off,flush_interval=0.25,sync=relaxed,readahead_max=4M,sync", NULL
	};
	const char *bad_sync[] = { "/s", "/m", "-o", "sync=lazy", NULL };
	const char *bad_interval[] = { "/s", "/m", "-o", "flush_interval=0.001", NULL };
	const char *big_interval[] = { "/s", "/m", "-o", "flush_interval=3601", NULL };
	const char *bad_ra[] = { "/s", "/m", "-o", "readahead_max=2G", NULL };
	const char *bad_dw[] = { "/s", "/m", "-o", "deferred_write=sometimes", NULL };
	const char *dw_on[] = { "/s", "/m", "-o", "deferred_write=yes", NULL };

	/* auto: on until INIT settles it against the writeback cache (fuse/ops.c) */
	CU_ASSERT_EQUAL_FATAL(parse(&o, defaults), 0);
	CU_ASSERT_EQUAL(o.deferred_mode, DEFERRED_AUTO);
	CU_ASSERT_TRUE(o.deferred_write);
	CU_ASSERT_DOUBLE_EQUAL(o.flush_interval, 1.0, 1e-9);
	CU_ASSERT_FALSE(o.sync_relaxed);
	CU_ASSERT_EQUAL(o.readahead_max, 1U << 20);
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, dw_on), 0); /* every boolean spelling, as before auto */
	CU_ASSERT_EQUAL(o.deferred_mode, DEFERRED_ON);
	CU_ASSERT_TRUE(o.deferred_write);
	opts_free(&o);
	CU_ASSERT_EQUAL_FATAL(parse(&o, set), 0);
	CU_ASSERT_EQUAL(o.deferred_mode, DEFERRED_OFF);
	CU_ASSERT_FALSE(o.deferred_write);
	CU_ASSERT_DOUBLE_EQUAL(o.flush_interval, 0.25, 1e-9);
	CU_ASSERT_TRUE(o.sync_relaxed);
	CU_ASSERT_EQUAL(o.readahead_max, 4U << 20);
	CU_ASSERT_STRING_EQUAL(o.mount_opts, "sync");
	opts_free(&o);
	expect_usage_error(bad_sync);
	expect_usage_error(bad_interval);
	expect_usage_error(big_interval);
	expect_usage_error(bad_ra);
	expect_usage_error(bad_dw);
}

/* Everything opts_print_help() prints. */
static char *help_text(void)
{
	FILE *f = tmpfile();
	int saved = dup(1);
	char *buf = calloc(1, 65536);

	if (!f || saved < 0 || !buf)
		return buf;
	fflush(stdout);
	dup2(fileno(f), 1);
	opts_print_help("accelfs");
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	buf[fread(buf, 1, 65535, f)] = '\0';
	fclose(f);
	return buf;
}

static char *file_text(const char *path)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	char *buf = calloc(1, 1 << 20);

	if (f && buf)
		buf[fread(buf, 1, (1 << 20) - 1, f)] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/* The option table is the one source: --help, defaults and accelfs(8) follow it. */
static void test_table_documented(void)
{
	char *help = help_text(), *man = file_text(getenv("ACCELFS_MAN")), key[80];

	CU_ASSERT_PTR_NOT_NULL_FATAL(help);
	CU_ASSERT_PTR_NOT_NULL_FATAL(man);
	CU_ASSERT_TRUE_FATAL(strlen(man) > 1000); /* ACCELFS_MAN names docs/man/accelfs.8 */
	for (const struct opt_def *d = opt_table; d->name; d++) {
		snprintf(key, sizeof(key), "    %s=", d->name);
		if (!strstr(help, key))
			printf("\n--help lacks %s\n", d->name);
		CU_ASSERT_PTR_NOT_NULL(strstr(help, key));
		snprintf(key, sizeof(key), "%s=", d->name);
		if (!strstr(man, key))
			printf("\naccelfs.8 lacks %s\n", d->name);
		CU_ASSERT_PTR_NOT_NULL(strstr(man, key));
		if (d->def) { /* the default is shown, and is a value the parser takes */
			snprintf(key, sizeof(key), "(default: %s)", d->def);
			CU_ASSERT_PTR_NOT_NULL(strstr(help, key));
		}
	}
	free(help);
	free(man);
}

static void test_help_version(void)
{
	struct accelfs_opts o;
	const char *help[] = { "--help", NULL };
	const char *version[] = { "-V", NULL };

	CU_ASSERT_EQUAL(parse(&o, help), 1);
	CU_ASSERT_TRUE(o.show_help);
	opts_free(&o);
	CU_ASSERT_EQUAL(parse(&o, version), 1);
	CU_ASSERT_TRUE(o.show_version);
	opts_free(&o);
}

static void test_helpers(void)
{
	unsigned int u = 0;
	double d = 0;
	bool b = false;

	CU_ASSERT_EQUAL(opts_parse_uint("17", 1, 20, &u), 0);
	CU_ASSERT_EQUAL(u, 17);
	CU_ASSERT_EQUAL(opts_parse_uint("21", 1, 20, &u), -ERANGE);
	CU_ASSERT_EQUAL(opts_parse_uint("", 1, 20, &u), -EINVAL);
	CU_ASSERT_EQUAL(opts_parse_uint("99999999999999999999", 0, 20, &u), -ERANGE);
	CU_ASSERT_EQUAL(opts_parse_seconds("0.25", &d), 0);
	CU_ASSERT_DOUBLE_EQUAL(d, 0.25, 1e-12);
	CU_ASSERT_EQUAL(opts_parse_seconds("1e99", &d), -ERANGE);
	CU_ASSERT_EQUAL(opts_parse_seconds("1s", &d), -EINVAL);
	CU_ASSERT_EQUAL(opts_parse_bool("yes", &b), 0);
	CU_ASSERT_TRUE(b);
	CU_ASSERT_EQUAL(opts_parse_bool("off", &b), 0);
	CU_ASSERT_FALSE(b);
	CU_ASSERT_EQUAL(opts_parse_bool("2", &b), -EINVAL);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("options", NULL, NULL);
	CU_add_test(s, "defaults", test_defaults);
	CU_add_test(s, "all options", test_all_options);
	CU_add_test(s, "fstab words ignored", test_fstab_words_ignored);
	CU_add_test(s, "watch and the timeouts given", test_watch);
	CU_add_test(s, "disk_cache off, auto or a directory", test_disk_cache);
	CU_add_test(s, "bad input rejected", test_rejects);
	CU_add_test(s, "deferred write and read-ahead options", test_writeback_options);
	CU_add_test(s, "help and version", test_help_version);
	CU_add_test(s, "value parsers", test_helpers);
	CU_add_test(s, "every option in --help and accelfs(8)", test_table_documented);
	return cunit_run();
}
