// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c - `accel trace SCRIPT [--file PATH] [--interval S] [--duration S]
 * [--pid PID] [--dry-run]`: run one of the bpftrace scripts shipped with
 * accelfs (scripts/bpftrace, docs/probes.md) against the running daemons.
 *
 * It finds the daemons by the name of their executable in /proc, picks the
 * script from the installed directory or, in a build tree, the source tree,
 * and execs bpftrace with the positional parameters every script takes:
 * BINARY INTERVAL DURATION INO NAME HOST. Tracing changes nothing in the
 * daemons; a probe site costs one nop while no tracer is attached.
 * bpftrace sets its probes up through tracefs: where it is not mounted,
 * trace mounts it at /sys/kernel/tracing, or says in one line why it cannot,
 * rather than leaving bpftrace to print its own errors.
 * ACCEL_TEST_PROC names another directory to scan instead of /proc, and
 * ACCEL_TEST_TRACEFS another mount point for tracefs (tests).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "mountres.h"
#include "poolsnap.h"
#include "util.h"

#ifndef ACCEL_BPFTRACE_DIR
#define ACCEL_BPFTRACE_DIR "/usr/local/share/accelfs/bpftrace"
#endif

#define MAX_DAEMONS 64
#define TRACEFS_DIR "/sys/kernel/tracing"
#define TRACEFS_OLD_DIR "/sys/kernel/debug/tracing" /* before Linux 4.1, and still found */
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

struct trace_opts {
	const char *script;
	const char *file;
	uint64_t interval, duration, pid;
	bool interval_set, dry_run;
};

/* The scripts; the default interval 6 s is MONITOR's, 0 means "at the end". */
static const struct {
	const char *name;
	uint64_t interval;
	bool needs_interval;
} scripts[] = {
	{ "cache-stats", 6, true },
	{ "backend-latency", 0, false },
	{ "hot-files", 6, true },
};

#define N_SCRIPTS (sizeof(scripts) / sizeof(scripts[0]))

struct daemon {
	long pid;
	char exe[PATH_MAX];
};

static void help(void)
{
	printf(
	    "Usage: accel trace SCRIPT [--file PATH] [--interval S] [--duration S] [--pid PID]\n\n"
	    "Run a bpftrace script against the running accelfs daemons (root or CAP_BPF\n"
	    "and CAP_PERFMON). Scripts:\n"
	    "  cache-stats      local/global cache hit %% and buffer I/O rates, CUR AVE MIN MAX\n"
	    "                   (MONITOR RMS/ITEM=CACHE), every interval (default 6 s)\n"
	    "  backend-latency  histograms of backend I/O latency by operation, every\n"
	    "                   interval or at Ctrl-C (default)\n"
	    "  hot-files        the busiest files of each interval with their read share\n\n"
	    "  --file PATH      only this file (inside an accelfs mount: its backing file)\n"
	    "  --interval S     seconds between reports\n"
	    "  --duration S     stop after S seconds (at the first report at or after S)\n"
	    "  --pid PID        only this daemon (needed when daemons of different\n"
	    "                   binaries run)\n"
	    "  -n, --dry-run    print the bpftrace command instead of running it\n"
	    "  -h, --help\n\n"
	    "See accel-trace(1) and docs/probes.md.\n");
}

static const struct cli_cmd cli = {
	.name = "trace", .help = help, .own_operands = true, .keep_going = true
};

static int parse_num(const char *name, const char *s, uint64_t *out)
{
	if (util_parse_u64(s, out) == 0)
		return 0;
	util_err("trace", NULL, "--%s: '%s' is not a number", name, s);
	return -EINVAL;
}

static int take_num(const struct cli_opt *opt, const char *arg)
{
	return parse_num(opt->name, arg, opt->to);
}

static int take_interval(const struct cli_opt *opt, const char *arg)
{
	struct trace_opts *o = opt->to;

	o->interval_set = true;
	return parse_num(opt->name, arg, &o->interval);
}

/* Options into @o; -1 to go on, else the exit status. Reports every bad number. */
static int parse(int argc, char **argv, struct trace_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "file", .string = &o->file },
		{ .name = "interval", .take = take_interval, .to = o },
		{ .name = "duration", .take = take_num, .to = &o->duration },
		{ .name = "pid", .take = take_num, .to = &o->pid },
		{ .name = "dry-run", .letter = 'n', .flag = &o->dry_run },
		{ NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);

	if (ret != CLI_GO_ON)
		return ret;
	if (optind + 1 != argc) {
		util_err("trace", NULL, "%s (see 'accel trace --help')",
			 optind < argc ? "one SCRIPT only" : "which SCRIPT?");
		return EXIT_USAGE;
	}
	o->script = argv[optind];
	return -1;
}

/* The index of script @name, or -1 after saying so. */
static int script_find(const char *name)
{
	for (size_t i = 0; i < N_SCRIPTS; i++) {
		if (!strcmp(scripts[i].name, name))
			return (int)i;
	}
	util_err("trace", NULL, "unknown script '%s' (cache-stats, backend-latency, hot-files)",
		 name);
	return -1;
}

/* The script's file: installed first, then the source tree. 0 or -ENOENT. */
static int script_path(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = {
		ACCEL_BPFTRACE_DIR,
#ifdef ACCEL_SOURCE_BPFTRACE_DIR
		ACCEL_SOURCE_BPFTRACE_DIR,
#endif
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(out, len, "%s/%s.bt", dirs[i], name);
		if (access(out, R_OK) == 0)
			return 0;
	}
	util_err("trace", NULL, "script %s.bt not found in %s", name, ACCEL_BPFTRACE_DIR);
	return -ENOENT;
}

/* bpftrace in $PATH into @out; 0 or -ENOENT. */
static int find_bpftrace(char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL;
	int ret = -ENOENT;

	dirs = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!dirs)
		return -ENOMEM;
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/bpftrace", *dir ? dir : ".");
		if (access(out, X_OK) == 0) {
			ret = 0;
			break;
		}
	}
	free(dirs);
	return ret;
}

/* Root, or the capabilities bpftrace needs: CAP_SYS_ADMIN, or CAP_BPF + CAP_PERFMON. */
static bool may_trace(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	}
	fclose(f);
	return (eff >> 21 & 1) || ((eff >> 39 & 1) && (eff >> 38 & 1));
}

static const char *proc_dir(void)
{
	const char *p = getenv("ACCEL_TEST_PROC");

	return p && *p ? p : "/proc";
}

/* Is process @pid an accelfs daemon? Its executable into @d. */
static bool daemon_read(long pid, struct daemon *d)
{
	char link[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(link, sizeof(link), "%s/%ld/exe", proc_dir(), pid);
	n = readlink(link, d->exe, sizeof(d->exe) - 1);
	if (n <= 0)
		return false;
	d->exe[n] = '\0';
	d->pid = pid;
	base = strrchr(d->exe, '/');
	base = base ? base + 1 : d->exe;
	return !strcmp(base, "accelfs") || !strcmp(base, "accelfs (deleted)");
}

/* The running daemons into @d (at most MAX_DAEMONS); their number. */
static size_t daemons_find(struct daemon *d)
{
	DIR *dir = opendir(proc_dir());
	struct dirent *de;
	size_t n = 0;
	char *end;
	long pid;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < MAX_DAEMONS) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		n += daemon_read(pid, &d[n]);
	}
	closedir(dir);
	return n;
}

/*
 * The daemon binary to trace into @exe, and the pid for -p (0: all processes
 * of that binary). Returns 0, or an exit status after saying why not.
 */
static int pick_daemon(const struct trace_opts *o, char *exe, size_t len, long *pid)
{
	static struct daemon d[MAX_DAEMONS];
	size_t n, i;

	if (o->pid) {
		if (!daemon_read((long)o->pid, &d[0])) {
			util_err("trace", NULL, "pid %llu is not an accelfs daemon",
				 (unsigned long long)o->pid);
			return EXIT_FAIL;
		}
		n = 1;
	} else if (!(n = daemons_find(d))) {
		util_err("trace", NULL, "no accelfs daemon running");
		return EXIT_FAIL;
	}
	for (i = 1; i < n; i++) {
		if (strcmp(d[i].exe, d[0].exe)) {
			util_err("trace", NULL,
				 "daemons of different binaries run (%s, pid %ld; %s, pid %ld): "
				 "choose one with --pid",
				 d[0].exe, d[0].pid, d[i].exe, d[i].pid);
			return EXIT_USAGE;
		}
	}
	if (strstr(d[0].exe, " (deleted)")) {
		util_err("trace", NULL, "the binary of daemon %ld was replaced (%s): restart it",
			 d[0].pid, d[0].exe);
		return EXIT_FAIL;
	}
	snprintf(exe, len, "%s", d[0].exe);
	*pid = n == 1 ? d[0].pid : 0;
	return 0;
}

/* The positional parameters for --file: the backing file's inode and path. */
static int file_params(const struct trace_opts *o, char *ino, char *name, size_t len)
{
	struct mountres r;
	uint64_t dev, i = 0;
	int ret;

	snprintf(name, len, "all");
	if (o->file) {
		ret = poolsnap_file_id(o->file, &r, &dev, &i);
		if (ret < 0) {
			util_err("trace", o->file, "%s", strerror(-ret));
			return EXIT_FAIL;
		}
		snprintf(name, len, "%s", r.path);
	}
	snprintf(ino, 32, "%llu", (unsigned long long)i);
	return 0;
}

static void print_argv(char **argv)
{
	for (; *argv; argv++) {
		bool plain = **argv && strspn(*argv, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
						     "TUVWXYZ0123456789-_./=:,+") == strlen(*argv);

		printf(plain ? "%s%s" : "%s'%s'", *argv, argv[1] ? " " : "\n");
	}
}

static bool is_tracefs(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && sf.f_type == TRACEFS_MAGIC;
}

/* tracefs mounted (by us if need be); 0, or an exit status after one line why not. */
static int tracefs_ready(void)
{
	const char *dir = getenv("ACCEL_TEST_TRACEFS");
	int err;

	if (!dir || !*dir) {
		dir = TRACEFS_DIR;
		if (is_tracefs(TRACEFS_OLD_DIR))
			return 0;
	}
	if (is_tracefs(dir))
		return 0;
	if (mount("nodev", dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
		return 0;
	err = errno;
	util_err("trace", NULL,
		 "tracefs is not mounted at %s and mounting it failed: %s%s (bpftrace needs it: "
		 "mount -t tracefs nodev %s)",
		 dir, strerror(err),
		 err == ENODEV ? ", the kernel has no tracefs (CONFIG_TRACING)" : "", dir);
	return EXIT_FAIL;
}

/* Build the bpftrace command line and run it (or print it); the exit status. */
static int run(const struct trace_opts *o, const char *bpftrace, const char *script,
	       uint64_t interval)
{
	char exe[PATH_MAX], name[PATH_MAX], host[256] = "localhost";
	char iv[32], dur[32], ino[32], pidarg[32];
	char *argv[16];
	long pid;
	int n = 0, ret;

	ret = pick_daemon(o, exe, sizeof(exe), &pid);
	if (!ret)
		ret = file_params(o, ino, name, sizeof(name));
	if (!ret && !o->dry_run)
		ret = tracefs_ready();
	if (ret)
		return ret;
	gethostname(host, sizeof(host) - 1);
	snprintf(iv, sizeof(iv), "%llu", (unsigned long long)interval);
	snprintf(dur, sizeof(dur), "%llu", (unsigned long long)o->duration);
	snprintf(pidarg, sizeof(pidarg), "%ld", pid);
	argv[n++] = (char *)bpftrace;
	if (pid) {
		argv[n++] = "-p";
		argv[n++] = pidarg;
	}
	argv[n++] = (char *)script;
	argv[n++] = exe;
	argv[n++] = iv;
	argv[n++] = dur;
	argv[n++] = ino;
	argv[n++] = name;
	argv[n++] = host;
	argv[n] = NULL;
	if (o->dry_run) {
		print_argv(argv);
		return fflush(stdout) ? EXIT_FAIL : 0;
	}
	fflush(stdout);
	execv(bpftrace, argv);
	util_err("trace", bpftrace, "%s", strerror(errno));
	return EXIT_FAIL;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	char script[PATH_MAX], bpftrace[PATH_MAX] = "bpftrace";
	int ret = parse(argc, argv, &o), i;

	if (ret >= 0)
		return ret;
	i = script_find(o.script);
	if (i < 0)
		return EXIT_USAGE;
	if (!o.interval_set)
		o.interval = scripts[i].interval;
	if (scripts[i].needs_interval && !o.interval) {
		util_err("trace", NULL, "%s needs --interval of at least 1 s", o.script);
		return EXIT_USAGE;
	}
	if (script_path(o.script, script, sizeof(script)))
		return EXIT_FAIL;
	if (find_bpftrace(bpftrace, sizeof(bpftrace)) && !o.dry_run) {
		util_err("trace", NULL,
			 "bpftrace not found: install bpftrace "
			 "(Debian: apt-get install bpftrace)");
		return EXIT_FAIL;
	}
	if (!o.dry_run && !may_trace()) {
		util_err("trace", NULL,
			 "not permitted: tracing needs root (or CAP_BPF and "
			 "CAP_PERFMON); try sudo accel trace ...");
		return EXIT_FAIL;
	}
	return run(&o, bpftrace, script, o.interval);
}
