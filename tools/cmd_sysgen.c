// SPDX-License-Identifier: MIT
/*
 * cmd_sysgen.c - `accel sysgen [--apply] [--json]`: the Linux settings that
 * play the part of SYSGEN parameters for accelfs, as a table of parameter,
 * current value, needed value, status and reason (tools/sysgen.c), with
 * --apply raising what can be raised at run time. Exit status 0 when every
 * minimum is met (after --apply, if given), 1 otherwise: usable as a gate in
 * provisioning scripts. The reasoning is in docs/tuning.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "json.h"
#include "sysgen.h"
#include "tuning.h"
#include "util.h"

struct sysgen_opts {
	struct sysgen_config cfg;
	bool apply;
	bool json;
};

/* What --apply did to one row. */
struct sysgen_change {
	const struct sysgen_row *row;
	int ret; /* sysgen_apply_row(): 1 written, 0 by hand, -errno */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel sysgen [--apply] [--json] [--probes] [--io-uring] [--halt-poll]\n"
		"                    [--write-burst SIZE]\n\n"
		"Check the kernel, FUSE and shared-memory limits accelfs depends on against the\n"
		"pools in /dev/shm and the mounted accelfs file systems.\n\n"
		"  --apply             raise, as root, what can be set at run time (sysctls,\n"
		"                      FUSE connection and BDI knobs); print what needs a\n"
		"                      reboot, fstab or modprobe change\n"
		"  --json              one JSON object, schema \"accelfs-sysgen/1\"\n"
		"  --probes            bpftrace and uprobes are required, not informational\n"
		"  --io-uring          FUSE over io_uring is required (for -o io_uring=auto|on):\n"
		"                      the fuse module's enable_uring, which --apply sets\n"
		"  --halt-poll         in a KVM guest, idle vCPUs must poll before halting\n"
		"                      (haltpoll.guest_halt_poll_ns, which --apply sets to\n"
		"                      200000): a FUSE wake-up then rarely exits to the host\n"
		"  --write-burst SIZE  bytes a writer dirties at once, for the BDI max_ratio\n"
		"                      (default 64M: max_background x 1 MiB requests)\n"
		"  --root-proc DIR, --root-sys DIR, --root-shm DIR\n"
		"                      read (and --apply write) a copy of /proc, /sys, /dev/shm\n"
		"                      instead (testing aids; also ACCEL_SYSGEN_ROOT=DIR for\n"
		"                      DIR/proc, DIR/sys, DIR/dev/shm)\n\n"
		"Exit status: 0 every minimum met, 1 some parameter LOW, 2 usage error.\n"
		"See accel-sysgen(1) and docs/tuning.md.\n");
}

static void json_kv(const char *key, const char *val, bool comma)
{
	json_key("", key);
	json_string(val);
	if (comma)
		fputs(", ", stdout);
}

static void json_rows(const struct sysgen_report *rep)
{
	size_t i;

	fputs("\"rows\": [", stdout);
	for (i = 0; i < rep->nrows; i++) {
		const struct sysgen_row *r = rep->rows[i];

		fputs(i ? ",\n  {" : "\n  {", stdout);
		json_kv("parameter", r->param, true);
		json_kv("mount", r->mount, true);
		json_kv("current", r->current, true);
		json_kv("needed", r->needed, true);
		json_kv("status", sysgen_status_name(r->status), true);
		json_kv("why", r->why, true);
		json_kv("fix", r->status == SYSGEN_LOW ? r->manual : "", false);
		putchar('}');
	}
	fputs("\n]", stdout);
}

static void json_mounts(const struct sysgen_report *rep)
{
	size_t i;

	fputs("\"mounts\": [", stdout);
	for (i = 0; i < rep->nmounts; i++) {
		const struct sysgen_mount *m = &rep->mounts[i];

		printf("%s{", i ? ", " : "");
		json_kv("mountpoint", m->mountpoint, true);
		printf("\"connection\": %u, \"bdi\": \"%u:%u\", \"uid\": %ld}", m->minor, m->major,
		       m->minor, m->uid);
	}
	fputs("]", stdout);
}

static void json_changes(const struct sysgen_change *ch, size_t n)
{
	size_t i;

	fputs("\"changes\": [", stdout);
	for (i = 0; i < n; i++) {
		const struct sysgen_row *r = ch[i].row;

		fputs(i ? ",\n  {" : "\n  {", stdout);
		json_kv("parameter", r->param, true);
		json_kv("path", r->set_path, true);
		json_kv("old", r->current, true);
		printf("\"new\": %llu, \"result\": ", (unsigned long long)r->set_value);
		json_string(ch[i].ret > 0 ? "changed"
			    : ch[i].ret	  ? strerror(-ch[i].ret)
					  : "by hand");
		fputs(", ", stdout);
		json_kv("fix", r->manual, false);
		putchar('}');
	}
	fputs("]", stdout);
}

static void print_json(const struct sysgen_report *rep, const struct sysgen_change *ch, size_t n,
		       bool applied)
{
	printf("{\"schema\": \"accelfs-sysgen/1\", \"low\": %zu, \"applied\": %s,\n",
	       sysgen_low_count(rep), applied ? "true" : "false");
	json_mounts(rep);
	fputs(",\n", stdout);
	json_rows(rep);
	fputs(",\n", stdout);
	json_changes(ch, n);
	fputs("}\n", stdout);
}

static int width(const struct sysgen_report *rep, size_t off, int min)
{
	size_t i;
	int w = min;

	for (i = 0; i < rep->nrows; i++) {
		int len = (int)strlen((const char *)rep->rows[i] + off);

		w = len > w ? len : w;
	}
	return w;
}

static void print_table(const struct sysgen_report *rep)
{
	int wp = width(rep, offsetof(struct sysgen_row, param), 9);
	int wc = width(rep, offsetof(struct sysgen_row, current), 7);
	int wn = width(rep, offsetof(struct sysgen_row, needed), 6);
	size_t i;

	for (i = 0; i < rep->nmounts; i++)
		printf("accelfs mount %s: FUSE connection %u, BDI %u:%u, daemon uid %ld\n",
		       rep->mounts[i].mountpoint, rep->mounts[i].minor, rep->mounts[i].major,
		       rep->mounts[i].minor, rep->mounts[i].uid);
	printf("%-*s  %-*s  %-*s  %-6s %s\n", wp, "PARAMETER", wc, "CURRENT", wn, "NEEDED",
	       "STATUS", "WHY");
	for (i = 0; i < rep->nrows; i++) {
		const struct sysgen_row *r = rep->rows[i];

		printf("%-*s  %-*s  %-*s  %-6s %s\n", wp, r->param, wc, r->current, wn, r->needed,
		       sysgen_status_name(r->status), r->why);
	}
}

/* The changes --apply made and the fixes left to a person, one line each. */
static void print_changes(const struct sysgen_change *ch, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sysgen_row *r = ch[i].row;

		if (ch[i].ret > 0)
			printf("changed %s: %s -> %llu (%s)%s%s\n", r->param, r->current,
			       (unsigned long long)r->set_value, r->set_path,
			       r->manual[0] ? "; " : "", r->manual);
		else if (ch[i].ret < 0)
			printf("failed  %s: writing %llu to %s: %s\n", r->param,
			       (unsigned long long)r->set_value, r->set_path,
			       ch[i].ret == -ELOOP ? "is a symbolic link, not written"
						   : strerror(-ch[i].ret));
		else
			printf("by hand %s: %s\n", r->param,
			       r->manual[0] ? r->manual : "no known fix");
	}
}

/* Apply every LOW row of @rep; @ch gets one entry per LOW row. */
static size_t apply_all(const struct sysgen_report *rep, struct sysgen_change *ch)
{
	size_t i, n = 0;

	for (i = 0; i < rep->nrows; i++) {
		if (rep->rows[i]->status != SYSGEN_LOW)
			continue;
		ch[n].row = rep->rows[i];
		ch[n++].ret = sysgen_apply_row(rep->rows[i]);
	}
	return n;
}

/* --pool-size: the one size grammar (cache/tuning.h), 1 byte to 1 TiB. */
static int parse_size(const char *s, uint64_t *out)
{
	uint64_t v;

	if (tuning_parse_size(s, &v) || v == 0 || v > (1ULL << 40))
		return -EINVAL;
	*out = v;
	return 0;
}

/* ACCEL_SYSGEN_ROOT=DIR: DIR/proc, DIR/sys and DIR/dev/shm (kept for the run). */
static void env_roots(struct sysgen_config *cfg, char bufs[3][PATH_MAX])
{
	const char *root = getenv("ACCEL_SYSGEN_ROOT");

	if (!root || !*root)
		return;
	snprintf(bufs[0], PATH_MAX, "%s/proc", root);
	snprintf(bufs[1], PATH_MAX, "%s/sys", root);
	snprintf(bufs[2], PATH_MAX, "%s/dev/shm", root);
	cfg->root_proc = bufs[0];
	cfg->root_sys = bufs[1];
	cfg->root_shm = bufs[2];
}

static void help(void)
{
	usage(stdout);
}

static void bad_option(void)
{
	usage(stderr);
}

static const struct cli_cmd cli = {
	.name = "sysgen", .help = help, .bad_option = bad_option, .own_operands = true
};

static int take_write_burst(const struct cli_opt *opt, const char *arg)
{
	if (parse_size(arg, opt->to) == 0)
		return 0;
	util_err("sysgen", NULL, "--write-burst '%s': expected a size from 1 to 1T", arg);
	return -EINVAL;
}

/* Returns CLI_GO_ON to run, or the exit status. */
static int parse_args(int argc, char **argv, struct sysgen_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "apply", .flag = &o->apply },
		{ .name = "json", .flag = &o->json },
		{ .name = "probes", .flag = &o->cfg.probes },
		{ .name = "io-uring", .flag = &o->cfg.io_uring },
		{ .name = "halt-poll", .flag = &o->cfg.halt_poll },
		{ .name = "write-burst", .take = take_write_burst, .to = &o->cfg.write_burst },
		{ .name = "root-proc", .string = &o->cfg.root_proc },
		{ .name = "root-sys", .string = &o->cfg.root_sys },
		{ .name = "root-shm", .string = &o->cfg.root_shm },
		{ NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);

	if (ret == CLI_GO_ON && optind < argc) {
		util_err("sysgen", NULL, "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return ret;
}

static int run(struct sysgen_opts *o)
{
	struct sysgen_report rep = { 0 }, after = { 0 };
	struct sysgen_change *ch = NULL;
	size_t n = 0, low;
	int ret = sysgen_check(&o->cfg, &rep);

	if (!ret && o->apply) {
		ch = calloc(rep.nrows + 1, sizeof(*ch));
		ret = ch ? 0 : -ENOMEM;
	}
	if (!ret && o->apply) {
		n = apply_all(&rep, ch);
		ret = sysgen_check(&o->cfg, &after);
	}
	if (ret) {
		util_err("sysgen", NULL, "%s", strerror(-ret));
	} else if (o->json) {
		print_json(o->apply ? &after : &rep, ch, n, o->apply);
	} else {
		print_table(&rep);
		print_changes(ch, n);
	}
	low = sysgen_low_count(o->apply ? &after : &rep);
	if (!ret && !o->json && low)
		printf("%s%zu parameter%s LOW\n", o->apply ? "after --apply: " : "", low,
		       low == 1 ? "" : "s");
	else if (!ret && !o->json)
		printf("%severy minimum met\n", o->apply ? "after --apply: " : "");
	free(ch);
	sysgen_report_free(&after);
	sysgen_report_free(&rep);
	return ret || low ? EXIT_FAIL : 0;
}

int cmd_sysgen(int argc, char **argv)
{
	char roots[3][PATH_MAX];
	struct sysgen_opts o = { 0 };
	int ret;

	env_roots(&o.cfg, roots);
	ret = parse_args(argc, argv, &o);
	if (ret != CLI_GO_ON)
		return ret;
	return run(&o);
}
