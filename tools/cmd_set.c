// SPDX-License-Identifier: MIT
/*
 * cmd_set.c - `accel set FILE... --global-buffers=N ...`: per-file tuning
 * that persists with the file, as RMS's SET FILE/GLOBAL_BUFFERS=N. Writes
 * the backing file's user.accelfs.* attributes (tuning.h); the daemon reads
 * them at the file's next open. A path inside an accelfs mount is resolved
 * to its backing file first (mountres.h), so the attribute lands on SOURCE's
 * file directly and the command works even while the daemon is busy.
 *
 * Every value is checked before any file is touched: a bad value changes
 * nothing and exits 2. Then each file gets every attribute asked for; a file
 * that fails gets one line saying why, and the others still get theirs.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmd.h"
#include "mountres.h"
#include "tuning.h"
#include "util.h"

struct set_opts {
	bool quiet;
	bool given[TUNING_N];
	char val[TUNING_N][TUNING_VALUE_LEN]; /* stored form; "" removes */
};

static void help(void)
{
	printf("Usage: accel set FILE... [OPTION]...\n\n"
	       "Store per-file tuning in each FILE's extended attributes (user.accelfs.*),\n"
	       "like SET FILE/GLOBAL_BUFFERS=N on OpenVMS. The daemon reads them when the\n"
	       "file is next opened; handles already open keep their settings. A FILE\n"
	       "inside an accelfs mount is resolved to its backing file in SOURCE.\n"
	       "'default' removes the attribute: the file gets the mount's default again.\n\n"
	       "  --global-buffers=N|all|default  global buffers reserved for the file in\n"
	       "                           the pool (0..268435456); all: the whole file\n"
	       "  --local-buffers=N|default       private buffers per open handle (0..1024)\n"
	       "  --stats=on|off|default          on: the daemon sees the file's I/O (keeps it\n"
	       "                           off kernel passthrough under passthrough=auto)\n"
	       "  --deferred-write=on|off|default deferred (write-back) writes of the file\n"
	       "  --sync=strict|relaxed|default   relaxed: fsync/O_SYNC mean \"on SOURCE within\n"
	       "                           flush_interval\" (opt-in; see accelfs(8))\n"
	       "  --readahead-max=SIZE|default    read-ahead limit, 0..1G (K, M, G); the daemon\n"
	       "                           caps it at max(readahead_max, 1M)\n"
	       "  --passthrough=auto|always|never|on|off|default\n"
	       "                           kernel passthrough of the file's data (on =\n"
	       "                           always, off = never); see accel show\n"
	       "  --disk-cache=on|off|default     the file's buckets in the mount's disk tier\n"
	       "                           (disk_cache=DIR) or not\n"
	       "  -q, --quiet              print nothing; by default each change is printed\n"
	       "                           as 'FILE: NAME OLD -> NEW'\n"
	       "  -h, --help\n\n"
	       "Statistics are always collected in the pool, as on OpenVMS.\n"
	       "See accel-set(1), docs/tuning.md.\n"
	       "Exit status: 0 done, 1 some file failed, 2 bad option or value.\n");
}

static const struct cli_cmd cli = { .name = "set", .help = help, .operands = "FILE" };

/*
 * The options: one per attribute, in key order (take_value() finds the key
 * by the entry's place), then --quiet. Filled in by parse().
 */
static struct cli_opt options[TUNING_N + 2];

/* Check one attribute option's value and keep its stored form. */
static int take_value(const struct cli_opt *opt, const char *arg)
{
	enum tuning_key k = (enum tuning_key)(opt - options);
	const struct tuning_attr *a = tuning_attr(k);
	struct set_opts *o = opt->to;
	int ret = tuning_parse(k, arg, o->val[k]);

	if (ret) {
		util_err("set", NULL, "--%s=%s: %s; expected %s", a->option, arg,
			 ret == -ERANGE ? "out of range" : "invalid value", a->syntax);
		return ret;
	}
	o->given[k] = true;
	return 0;
}

/* Returns CLI_GO_ON to go on, or the exit status. */
static int parse(int argc, char **argv, struct set_opts *o)
{
	bool any = false;
	int k, ret;

	for (k = 0; k < TUNING_N; k++)
		options[k] =
		    (struct cli_opt){ .name = tuning_attr(k)->option, .take = take_value, .to = o };
	options[TUNING_N] = (struct cli_opt){ .name = "quiet", .letter = 'q', .flag = &o->quiet };
	options[TUNING_N + 1] = (struct cli_opt){ NULL };
	ret = cli_parse(&cli, options, argc, argv);
	if (ret != CLI_GO_ON)
		return ret;
	for (k = 0; k < TUNING_N; k++)
		any |= o->given[k];
	if (!any) {
		util_err("set", NULL, "nothing to set (see 'accel set --help')");
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

/* One line for the user: why @path could not be tuned. */
static void set_error(const char *path, int err)
{
	if (err == -ENOENT)
		util_err("set", path, "no such file");
	else if (err == -ENOTSUP)
		util_err("set", path,
			 "the file system does not support user extended attributes "
			 "(mount it with user_xattr?)");
	else if (err == -EACCES || err == -EPERM)
		util_err("set", path, "permission denied");
	else if (err == -EROFS)
		util_err("set", path, "read-only file system");
	else if (err == -ENOSPC || err == -EDQUOT)
		util_err("set", path, "no space left for the attribute");
	else
		util_err("set", path, "%s", strerror(-err));
}

/* Apply attribute @k to @backing; print the change as @path's. 0 or -errno. */
static int set_one(const struct set_opts *o, enum tuning_key k, const char *path,
		   const char *backing)
{
	char old[TUNING_VALUE_LEN];
	int ret = tuning_get(backing, k, old);

	if (ret == -ERANGE) /* too long to be ours: overwrite it */
		snprintf(old, sizeof(old), "(invalid)");
	else if (ret < 0)
		return ret;
	if (!strcmp(old, o->val[k]))
		return 0;
	ret = tuning_put(backing, k, o->val[k]);
	if (ret)
		return ret;
	if (!o->quiet)
		printf("%s: %s %s -> %s\n", path, tuning_attr(k)->name, old[0] ? old : "default",
		       o->val[k][0] ? o->val[k] : "default");
	return 0;
}

static int set_file(const struct set_opts *o, const char *path)
{
	struct mountres r;
	const char *backing = r.path;
	struct stat st;
	int ret;

	ret = mountres_resolve(path, &r);
	if (ret == 0 && stat(backing, &st))
		ret = -errno;
	if (ret) {
		set_error(path, ret);
		return EXIT_FAIL;
	}
	if (!S_ISREG(st.st_mode)) {
		util_err("set", path, "not a regular file");
		return EXIT_FAIL;
	}
	for (int k = 0; k < TUNING_N; k++) {
		if (!o->given[k])
			continue;
		ret = set_one(o, k, path, backing);
		if (ret) {
			set_error(path, ret);
			return EXIT_FAIL;
		}
	}
	return 0;
}

int cmd_set(int argc, char **argv)
{
	struct set_opts o = { 0 };
	int ret = parse(argc, argv, &o), status = 0;

	if (ret >= 0)
		return ret;
	for (int i = optind; i < argc && !util_stop_sig; i++) {
		if (set_file(&o, argv[i]))
			status = EXIT_FAIL;
	}
	if (fflush(stdout))
		status = EXIT_FAIL;
	return cmd_signal_exit() ? cmd_signal_exit() : status;
}
