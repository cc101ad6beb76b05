// SPDX-License-Identifier: MIT
/*
 * cmd_report.c - `accel report [--pool NAME] [--file PATH] [--json]
 * [--budget SIZE] [--apply | --dry-run]`: what each file and the pool used,
 * their miss-ratio curves (cache/mrc.h, kept by the daemons in the pool),
 * and the settings that would serve them best, like z/OS LE's RPTSTG report
 * with its "suggested initial size". --apply writes the suggested per-file
 * attributes through cache/tuning.c, exactly as `accel set` does.
 *
 * Reads the pool read-only and without locks, like accel stat. The
 * arithmetic of the suggestions is in report.c (unit-tested).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "fiemap.h"
#include "fslimit.h"
#include "json.h"
#include "monstat.h"
#include "mountres.h"
#include "poolsnap.h"
#include "progress.h"
#include "report.h"
#include "tuning.h"
#include "util.h"

struct report_opts {
	bool json, apply, dry_run, budget_given;
	uint64_t budget; /* bytes */
	const char *pool, *file;
	uint64_t dev, ino; /* of --file */
};

/* The attributes --apply may write. */
static const enum tuning_key applied_keys[] = { TUNING_GLOBAL_BUFFERS, TUNING_LOCAL_BUFFERS,
						TUNING_DEFERRED_WRITE };
#define N_APPLIED (sizeof(applied_keys) / sizeof(applied_keys[0]))

struct rfile {
	const struct pool_stats_file *st;
	struct mrc_curve *curve; /* NULL: none (not tracked, or the pool has no curves) */
	char backing[PATH_MAX];	 /* "" when the file cannot be found by its path */
	uint64_t size;
	bool have_fiemap;
	struct fiemap_stats fs;
	char cur[TUNING_N][TUNING_VALUE_LEN]; /* stored form; "" absent */
	uint64_t knee, global;
	unsigned int local;
	bool candidate, curve_ok;
	struct report_verdict ra, dw, defrag;
	char sug[TUNING_N][TUNING_VALUE_LEN]; /* suggested stored form */
	bool change[TUNING_N];
};

struct report {
	const char *name;
	struct poolsnap snap;
	struct mrc_curve *pool_curve;
	uint64_t budget; /* buffers */
	struct rfile *f;
	size_t n;
	unsigned int changes;
};

static void help(void)
{
	printf("Usage: accel report [--pool NAME] [--file PATH] [--json] [--budget SIZE]\n"
	       "                    [--apply | --dry-run]\n\n"
	       "What each file cached in an accelfs pool used (attempts, hits per level,\n"
	       "backend I/O, working set, read share, deferred-write and read-ahead counters),\n"
	       "its miss-ratio curve (the hit %% it would get with N global buffers, estimated\n"
	       "by the daemons with SHARDS sampling) and suggested settings: global buffers at\n"
	       "the knee of the curve within a memory budget split by marginal gain, local\n"
	       "buffers, deferred write, read-ahead, defragmentation; the same for the pool.\n\n"
	       "  --pool NAME    the pool, \"name\" or \"/name\" (default: the pool of the\n"
	       "                 mount --file is in; else this user's daemons' default pool)\n"
	       "  --file PATH    only the file PATH (inside an accelfs mount: its backing file)\n"
	       "  --budget SIZE  memory for global-buffer quotas, e.g. 48M (default: 7/8 of\n"
	       "                 the pool, the most quotas may reserve)\n"
	       "  --json         one JSON object, schema \"accelfs-report/1\"\n"
	       "  --apply        write the suggested attributes (as accel set) to the files\n"
	       "                 the pool knows, never through a symbolic link; print each\n"
	       "  --dry-run      only show them (the default when stdout is not a terminal;\n"
	       "                 on a terminal, accel report asks before writing)\n"
	       "  -h, --help\n\n"
	       "See accel-report(1) and docs/tuning.md.\n"
	       "Exit status: 0 done, 1 pool, file or attribute unavailable, 2 usage error.\n");
}

static const struct cli_cmd cli = { .name = "report", .help = help, .own_operands = true };

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* Index of the counter named @name, or -1 when this pool has no such counter. */
static int counter_index(const char *name, int limit)
{
	for (int c = 0; c < limit; c++)
		if (!strcmp(pool_stats_counter_name((enum pool_counter)c), name))
			return c;
	return -1;
}

static uint64_t counter(const uint64_t *c, const char *name)
{
	int i = counter_index(name, POOL_C_FILE_MAX);

	return i < 0 ? 0 : c[i];
}

/* --- gathering --------------------------------------------------------------- */

static bool wanted(const struct report_opts *o, const struct pool_stats_file *st)
{
	return !o->file || (st->dev == o->dev && st->ino == o->ino);
}

/*
 * The backing file's path, if --file (its target, resolved here: the user
 * named it) or else the pool's record still names it. The record is a name
 * the mount's users control; --apply checks it again (apply_file()).
 */
static void find_backing(const struct report_opts *o, struct rfile *rf)
{
	struct mountres r;
	struct stat st;
	const char *p = o->file ? rf->backing : rf->st->path;

	if (o->file && (mountres_resolve(o->file, &r) < 0 || !realpath(r.path, rf->backing)))
		rf->backing[0] = '\0';
	if (stat(p, &st) || (uint64_t)st.st_dev != rf->st->dev ||
	    (uint64_t)st.st_ino != rf->st->ino || !S_ISREG(st.st_mode)) {
		rf->backing[0] = '\0';
		return;
	}
	if (p != rf->backing)
		snprintf(rf->backing, sizeof(rf->backing), "%s", p);
	rf->size = (uint64_t)st.st_size;
}

static void measure_layout(struct rfile *rf, struct fslimit *lim)
{
	char why[96];
	struct fiemap_map map;
	int fd = cmd_open_source(rf->backing, O_RDONLY);

	if (fd < 0)
		return;
	if (fiemap_read(fd, &map) == 0) {
		fiemap_stats(&map, rf->size, fslimit_unit(fd, lim, why, sizeof(why)), &rf->fs);
		rf->have_fiemap = true;
		fiemap_free(&map);
	}
	close(fd);
}

static void read_attrs(struct rfile *rf)
{
	for (int k = 0; k < TUNING_N; k++)
		if (!rf->backing[0] || tuning_get(rf->backing, (enum tuning_key)k, rf->cur[k]) <= 0)
			rf->cur[k][0] = '\0';
}

static struct mrc_curve *file_curve(struct pool *pool, const struct pool_stats_file *st)
{
	size_t size = 0;
	void *region = pool_stats_mrc_region(pool, &size);
	struct mrc_curve *c = region ? malloc(sizeof(*c)) : NULL;

	if (c && mrc_slot_curve(region, size, st->slot, c)) {
		free(c);
		c = NULL;
	}
	return c;
}

/* What @rf's file is and holds: its curve, backing file, layout and attributes. */
static void gather_file(struct pool *pool, const struct report_opts *o, struct rfile *rf,
			uint32_t bucket, struct fslimit *lim)
{
	rf->curve = file_curve(pool, rf->st);
	find_backing(o, rf);
	if (rf->curve && rf->size)
		report_clamp(rf->curve, (rf->size + bucket - 1) / bucket);
	if (rf->backing[0])
		measure_layout(rf, lim);
	read_attrs(rf);
}

static int gather(struct pool *pool, const struct report_opts *o, struct report *r)
{
	struct fslimit lim = { 0 };
	struct progress prog;
	size_t size = 0;
	void *region;
	int ret = poolsnap_take(pool, &r->snap);

	if (ret)
		return ret;
	r->f = calloc(r->snap.nfiles ? r->snap.nfiles : 1, sizeof(*r->f));
	r->pool_curve = malloc(sizeof(*r->pool_curve));
	if (!r->f || !r->pool_curve)
		return -ENOMEM;
	region = pool_stats_mrc_region(pool, &size);
	if (!region || mrc_pool_curve(region, size, r->pool_curve)) {
		free(r->pool_curve);
		r->pool_curve = NULL;
	}
	progress_init(&prog, "report", "files", r->snap.nfiles, 0, true);
	for (size_t i = 0; i < r->snap.nfiles; i++) {
		struct rfile *rf = &r->f[r->n];

		progress_done(&prog, 1, 0);
		if (!wanted(o, &r->snap.files[i]))
			continue;
		rf->st = &r->snap.files[i];
		gather_file(pool, o, rf, r->snap.info.bucket_size, &lim);
		r->n++;
	}
	progress_clear(&prog);
	return 0;
}

/* --- suggestions ----------------------------------------------------------- */

static void suggest_file(struct rfile *rf, uint32_t bucket)
{
	const uint64_t *c = rf->st->c;
	uint64_t fb = rf->size ? (rf->size + bucket - 1) / bucket : 0;

	rf->candidate = monstat_candidate(c);
	rf->curve_ok = rf->curve && rf->curve->accesses >= REPORT_MIN_ACCESSES;
	rf->knee = rf->curve_ok ? report_knee(rf->curve, fb) : 0;
	rf->local = rf->curve_ok ? report_local(rf->curve) : REPORT_LOCAL_DEFAULT;
	rf->ra = report_readahead(counter(c, "readahead_issued"), counter(c, "readahead_used"),
				  counter(c, "readahead_wasted"), rf->curve_ok ? rf->curve : NULL);
	rf->dw = report_deferred(monstat_reads(c), monstat_writes(c), c[POOL_C_BACKEND_WRITES],
				 c[POOL_C_BACKEND_WRITE_BYTES], bucket);
	rf->defrag = rf->have_fiemap ? report_defrag(rf->fs.extents, rf->fs.ideal, rf->fs.score)
				     : (struct report_verdict){ false, false, "layout unknown" };
}

/* The fraction of its reads a file gets from buffers now, sharing the pool
 * (the curve counts every reference, local hits included); 0 when it has a
 * quota (what it gets is then the quota's doing: it competes afresh). */
static double base_hit(const struct pool_stats_file *st)
{
	const uint64_t *c = st->c;
	uint64_t reads = monstat_reads(c);

	if (st->quota || !reads)
		return 0;
	return (double)(c[POOL_C_LOCAL_HITS] + c[POOL_C_GLOBAL_HITS]) / (double)reads;
}

/* Split the budget among candidates with a curve, then fill in the values. */
static void suggest_all(struct report *r)
{
	struct report_alloc *a = calloc(r->n ? r->n : 1, sizeof(*a));

	for (size_t i = 0; i < r->n; i++) {
		suggest_file(&r->f[i], r->snap.info.bucket_size);
		if (a && r->f[i].candidate && r->f[i].knee)
			a[i] = (struct report_alloc){ .curve = r->f[i].curve,
						      .weight = (double)r->f[i].curve->accesses,
						      .cap = r->f[i].knee,
						      .base = base_hit(r->f[i].st) };
	}
	if (a)
		report_split(a, r->n, r->budget);
	for (size_t i = 0; i < r->n; i++)
		r->f[i].global = a ? a[i].buffers : 0;
	free(a);
}

/* Does the suggestion cover the whole file (so a stored "all" already says it)? */
static bool all_of(const struct rfile *rf, uint32_t bucket)
{
	return rf->size && rf->global >= (rf->size + bucket - 1) / bucket;
}

/* Decide which attributes change: only where the advice differs from now. */
static void plan_changes(struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct rfile *rf = &r->f[i];

		if (!rf->backing[0])
			continue; /* cannot be written: shown, not planned */
		if (rf->global)
			snprintf(rf->sug[TUNING_GLOBAL_BUFFERS], TUNING_VALUE_LEN, "%llu",
				 ull(rf->global));
		rf->change[TUNING_GLOBAL_BUFFERS] =
		    rf->candidate && rf->curve_ok && rf->global &&
		    strcmp(rf->sug[TUNING_GLOBAL_BUFFERS], rf->cur[TUNING_GLOBAL_BUFFERS]) &&
		    !(all_of(rf, r->snap.info.bucket_size) &&
		      !strcmp(rf->cur[TUNING_GLOBAL_BUFFERS], "all"));
		if (rf->curve_ok && rf->local != REPORT_LOCAL_DEFAULT)
			snprintf(rf->sug[TUNING_LOCAL_BUFFERS], TUNING_VALUE_LEN, "%u", rf->local);
		rf->change[TUNING_LOCAL_BUFFERS] =
		    rf->sug[TUNING_LOCAL_BUFFERS][0] &&
		    strcmp(rf->sug[TUNING_LOCAL_BUFFERS], rf->cur[TUNING_LOCAL_BUFFERS]);
		if (rf->dw.yes)
			snprintf(rf->sug[TUNING_DEFERRED_WRITE], TUNING_VALUE_LEN, "on");
		rf->change[TUNING_DEFERRED_WRITE] =
		    rf->dw.yes && strcmp(rf->cur[TUNING_DEFERRED_WRITE], "on");
		for (size_t k = 0; k < N_APPLIED; k++)
			r->changes += rf->change[applied_keys[k]];
	}
}

/* --- text ------------------------------------------------------------------ */

static const char *shown_path(const struct rfile *rf)
{
	return rf->backing[0] ? rf->backing : rf->st->path;
}

static void text_curve(const struct mrc_curve *c, uint64_t mark)
{
	printf("  curve      buffers");
	for (uint32_t i = 0; i < c->npoints; i++)
		printf(" %7llu", ull(c->buffers[i]));
	printf("\n             hit %%  ");
	for (uint32_t i = 0; i < c->npoints; i++)
		printf(" %7.1f", 100 * c->hit[i]);
	printf(
	    "\n             (%llu lookups, %llu sampled at R = %.4f; working set ~%llu buckets)\n",
	    ull(c->accesses), ull(c->sampled), c->rate, ull(c->working_set));
	if (mark)
		printf("             with %llu buffers: %.1f %%\n", ull(mark),
		       100 * mrc_curve_hit(c, mark));
}

static void text_used(const uint64_t *c, int limit)
{
	char b1[32];
	double rs = monstat_read_share(c);

	printf("  used       local %llu/%llu hits (%.1f %%), global %llu/%llu hits (%.1f %%)\n",
	       ull(c[POOL_C_LOCAL_HITS]), ull(c[POOL_C_LOCAL_ATTEMPTS]),
	       monstat_pct(c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS]),
	       ull(c[POOL_C_GLOBAL_HITS]), ull(c[POOL_C_GLOBAL_ATTEMPTS]),
	       monstat_pct(c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS]));
	printf("             backend %llu reads (%s), %llu writes; reads %llu, writes %llu",
	       ull(c[POOL_C_BACKEND_READS]), util_bytes(c[POOL_C_BACKEND_READ_BYTES], b1, 32),
	       ull(c[POOL_C_BACKEND_WRITES]), ull(monstat_reads(c)), ull(monstat_writes(c)));
	if (rs >= 0)
		printf(" (%.1f %% reads)", rs);
	printf("\n");
	for (int i = 0; i < limit; i++) { /* the newer counters, when this pool has them */
		const char *n = pool_stats_counter_name((enum pool_counter)i);

		if ((strstr(n, "deferred") || strstr(n, "flush") || strstr(n, "readahead")) && c[i])
			printf("             %s %llu\n", n, ull(c[i]));
	}
}

static const char *verdict_word(struct report_verdict v)
{
	return !v.known ? "?" : v.yes ? "yes" : "no";
}

static void text_suggest(const struct rfile *rf, uint32_t bucket)
{
	char b1[32];

	printf("  suggest    global_buffers ");
	if (!rf->curve_ok)
		printf("- (no curve yet: too few lookups, or the file is not tracked)\n");
	else if (!rf->candidate)
		printf("- (not a candidate: < 75 %% of its I/O are reads)\n");
	else if (!rf->knee)
		printf("- (no reuse: buffers would not help)\n");
	else if (!rf->global)
		printf(
		    "- (knee %llu = %s; the budget serves other files better; it gets %.1f %% "
		    "now)\n",
		    ull(rf->knee), util_bytes(rf->knee * bucket, b1, sizeof(b1)),
		    monstat_pct(rf->st->c[POOL_C_GLOBAL_HITS], rf->st->c[POOL_C_GLOBAL_ATTEMPTS]));
	else
		printf("%llu (%s; knee %llu; predicted hit %.1f %%)\n", ull(rf->global),
		       util_bytes(rf->global * bucket, b1, sizeof(b1)), ull(rf->knee),
		       100 * mrc_curve_hit(rf->curve, rf->global));
	printf("             local_buffers %u%s\n", rf->local,
	       rf->local == REPORT_LOCAL_DEFAULT ? " (the default)" : "");
	printf("             global buffering candidate: %s\n", rf->candidate ? "yes" : "no");
	printf("             deferred write: %s (%s)\n", verdict_word(rf->dw), rf->dw.why);
	printf("             read-ahead: %s (%s)\n", verdict_word(rf->ra), rf->ra.why);
	if (rf->have_fiemap)
		printf("             defragment: %s (%llu extent%s, ideal %llu, score %.1f: %s)\n",
		       verdict_word(rf->defrag), ull(rf->fs.extents),
		       rf->fs.extents == 1 ? "" : "s", ull(rf->fs.ideal), rf->fs.score,
		       rf->defrag.why);
	else
		printf("             defragment: ? (layout unknown)\n");
}

static void text_file(const struct rfile *rf, uint32_t bucket)
{
	char b1[32];

	printf("\nFile %s (slot %u", shown_path(rf), rf->st->slot);
	if (rf->size)
		printf(", %s", util_bytes(rf->size, b1, sizeof(b1)));
	if (rf->st->quota == POOL_QUOTA_ALL)
		snprintf(b1, sizeof(b1), "all");
	else if (rf->st->quota)
		snprintf(b1, sizeof(b1), "%u", rf->st->quota);
	else
		snprintf(b1, sizeof(b1), "none");
	printf(", quota %s, %u resident)\n", b1, rf->st->resident);
	text_used(rf->st->c, POOL_C_FILE_MAX);
	if (rf->curve)
		text_curve(rf->curve, 0);
	else
		printf("  curve      none (not among the files the pool keeps curves for)\n");
	text_suggest(rf, bucket);
}

static void text_pool(const struct report *r)
{
	const struct pool_info *in = &r->snap.info;
	char b1[32], b2[32];

	printf("Pool %s: %u buffers x %s; budget for quotas %llu buffers (%s)\n", r->name,
	       in->nbufs, util_bytes(in->bucket_size, b1, sizeof(b1)), ull(r->budget),
	       util_bytes(r->budget * in->bucket_size, b2, sizeof(b2)));
	text_used(r->snap.st.c, POOL_C_POOL_MAX);
	if (!r->pool_curve) {
		printf("  curve      none (this pool keeps no miss-ratio curves)\n");
		return;
	}
	if (!r->pool_curve->accesses) {
		printf("  curve      no lookups recorded yet\n");
		return;
	}
	text_curve(r->pool_curve, in->nbufs);
	if (r->pool_curve->accesses >= REPORT_MIN_ACCESSES) {
		uint64_t k = report_knee(r->pool_curve, 0);

		printf("  suggest    a pool of %llu buffers (%s, global_cache=) reaches %.1f %%\n",
		       ull(k), util_bytes(k * in->bucket_size, b1, sizeof(b1)),
		       100 * mrc_curve_hit(r->pool_curve, k));
	}
}

static void print_change(const struct rfile *rf, enum tuning_key k)
{
	printf("%s: %s %s -> %s\n", shown_path(rf), tuning_attr(k)->name,
	       rf->cur[k][0] ? rf->cur[k] : "default", rf->sug[k]);
}

static void text_changes(const struct report *r)
{
	printf("\nSuggested changes: %u\n", r->changes);
	for (size_t i = 0; i < r->n; i++)
		for (size_t k = 0; k < N_APPLIED; k++)
			if (r->f[i].change[applied_keys[k]])
				print_change(&r->f[i], applied_keys[k]);
}

/* --- JSON ------------------------------------------------------------------ */

static void json_verdict(const char *key, struct report_verdict v)
{
	json_key(", ", key);
	printf("{\"pays\": %s, \"why\": ", !v.known ? "null" : v.yes ? "true" : "false");
	json_string(v.why);
	printf("}");
}

static void json_curve(const struct mrc_curve *c)
{
	if (!c) {
		printf(", \"curve\": null");
		return;
	}
	printf(", \"curve\": {\"lookups\": %llu, \"sampled\": %llu, \"sampling_rate\": %.6f, "
	       "\"working_set_buckets\": %llu, \"points\": [",
	       ull(c->accesses), ull(c->sampled), c->rate, ull(c->working_set));
	for (uint32_t i = 0; i < c->npoints; i++)
		printf("%s{\"buffers\": %llu, \"hit_pct\": %.2f}", i ? ", " : "",
		       ull(c->buffers[i]), 100 * c->hit[i]);
	printf("]}");
}

static void json_used(const uint64_t *c, int limit)
{
	double rs = monstat_read_share(c);

	printf(", \"counters\": {");
	for (int i = 0; i < limit; i++)
		json_u64(i ? ", " : "", pool_stats_counter_name((enum pool_counter)i), c[i]);
	printf("}, \"reads\": %llu, \"writes\": %llu", ull(monstat_reads(c)),
	       ull(monstat_writes(c)));
	json_percent(", ", "read_share_pct", rs, rs >= 0);
	printf(", \"local_hit_pct\": %.2f, \"global_hit_pct\": %.2f",
	       monstat_pct(c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS]),
	       monstat_pct(c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS]));
}

static void json_attrs(const char *key, const char (*v)[TUNING_VALUE_LEN])
{
	json_key(", ", key);
	printf("{");
	for (size_t k = 0; k < N_APPLIED; k++) {
		const char *val = v[applied_keys[k]];

		json_key(k ? ", " : "", tuning_attr(applied_keys[k])->name);
		json_string_or_null(val[0] ? val : NULL);
	}
	printf("}");
}

static void json_file(const struct rfile *rf, bool first)
{
	printf("%s\n    {\"path\": ", first ? "" : ",");
	json_string(shown_path(rf));
	printf(", \"slot\": %u, \"dev\": %llu, \"ino\": %llu, \"size\": %llu, \"quota\": %lld, "
	       "\"resident_buffers\": %u",
	       rf->st->slot, ull(rf->st->dev), ull(rf->st->ino), ull(rf->size),
	       rf->st->quota == POOL_QUOTA_ALL ? -1LL : (long long)rf->st->quota, rf->st->resident);
	json_used(rf->st->c, POOL_C_FILE_MAX);
	json_curve(rf->curve);
	printf(", \"global_buffer_candidate\": %s, \"knee_buffers\": %llu, "
	       "\"suggested_global_buffers\": %llu",
	       rf->candidate ? "true" : "false", ull(rf->knee), ull(rf->global));
	json_percent(", ", "predicted_hit_pct",
		     rf->curve_ok ? 100 * mrc_curve_hit(rf->curve, rf->global) : 0, rf->curve_ok);
	printf(", \"suggested_local_buffers\": %u", rf->local);
	json_verdict("deferred_write", rf->dw);
	json_verdict("readahead", rf->ra);
	json_verdict("defragment", rf->defrag);
	if (rf->have_fiemap)
		printf(", \"extents\": %llu, \"ideal_extents\": %llu, \"fragmentation\": %.1f",
		       ull(rf->fs.extents), ull(rf->fs.ideal), rf->fs.score);
	json_attrs("attributes", rf->cur);
	printf("}");
}

static void json_changes(const struct report *r, bool applied)
{
	bool first = true;

	printf(",\n  \"applied\": %s,\n  \"changes\": [", applied ? "true" : "false");
	for (size_t i = 0; i < r->n; i++)
		for (size_t k = 0; k < N_APPLIED; k++) {
			const struct rfile *rf = &r->f[i];
			enum tuning_key key = applied_keys[k];

			if (!rf->change[key])
				continue;
			printf("%s\n    {\"path\": ", first ? "" : ",");
			json_string(shown_path(rf));
			printf(", \"attribute\": \"%s\", \"from\": ", tuning_attr(key)->name);
			json_string_or_null(rf->cur[key][0] ? rf->cur[key] : NULL);
			printf(", \"to\": ");
			json_string(rf->sug[key]);
			printf("}");
			first = false;
		}
	printf("%s]\n}\n", first ? "" : "\n  ");
}

static void print_json(const struct report *r, bool applied)
{
	const struct pool_info *in = &r->snap.info;

	printf("{\n  \"schema\": \"accelfs-report/1\",\n  \"pool\": {\"name\": ");
	json_string(r->name);
	printf(", \"bucket_size\": %u, \"buffers\": %u, \"budget_buffers\": %llu", in->bucket_size,
	       in->nbufs, ull(r->budget));
	json_used(r->snap.st.c, POOL_C_POOL_MAX);
	json_curve(r->pool_curve);
	if (r->pool_curve && r->pool_curve->accesses >= REPORT_MIN_ACCESSES) {
		uint64_t k = report_knee(r->pool_curve, 0);

		printf(", \"predicted_hit_pct\": %.2f, \"suggested_buffers\": %llu, "
		       "\"suggested_hit_pct\": %.2f",
		       100 * mrc_curve_hit(r->pool_curve, in->nbufs), ull(k),
		       100 * mrc_curve_hit(r->pool_curve, k));
	}
	printf("},\n  \"files\": [");
	for (size_t i = 0; i < r->n; i++)
		json_file(&r->f[i], i == 0);
	printf("%s]", r->n ? "\n  " : "");
	json_changes(r, applied);
}

/* --- apply ------------------------------------------------------------------ */

/*
 * Open the file @rf's changes go to: the one the pool knows, by its
 * descriptor. Its path is a name someone else may control: a symbolic link
 * or another file now there is refused. The descriptor or -errno (-ESTALE).
 */
static int apply_open(const struct rfile *rf)
{
	int fd = open(rf->backing, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != rf->st->dev ||
	    (uint64_t)st.st_ino != rf->st->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Write @rf's planned changes; print each unless @quiet. 0 or EXIT_FAIL. */
static int apply_file(const struct rfile *rf, bool quiet)
{
	char self[32];
	int status = 0, fd = apply_open(rf);

	if (fd < 0) {
		util_err("report", shown_path(rf), "%s",
			 fd == -ELOOP	 ? "is a symbolic link, not written"
			 : fd == -ESTALE ? "is no longer the file the pool knows, not written"
					 : strerror(-fd));
		return EXIT_FAIL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd); /* the file, not a name */
	for (size_t k = 0; k < N_APPLIED; k++) {
		enum tuning_key key = applied_keys[k];
		int ret;

		if (!rf->change[key])
			continue;
		ret = tuning_put(self, key, rf->sug[key]);
		if (ret) {
			util_err("report", shown_path(rf), "%s: %s", tuning_attr(key)->name,
				 strerror(-ret));
			status = EXIT_FAIL;
		} else if (!quiet) {
			print_change(rf, key);
		}
	}
	close(fd);
	return status;
}

/* Write every planned change; print each unless @quiet. */
static int apply(const struct report *r, bool quiet)
{
	int status = 0;

	for (size_t i = 0; i < r->n; i++) {
		bool any = false;

		for (size_t k = 0; k < N_APPLIED; k++)
			any |= r->f[i].change[applied_keys[k]];
		if (any && apply_file(&r->f[i], quiet))
			status = EXIT_FAIL;
	}
	return status;
}

/* On a terminal without --apply/--dry-run: ask. */
static bool confirm(unsigned int changes)
{
	char line[16];

	if (!isatty(STDIN_FILENO))
		return false;
	if (changes == 1)
		printf("Apply this change? [y/N] ");
	else
		printf("Apply these %u changes? [y/N] ", changes);
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y');
}

/* --- command ---------------------------------------------------------------- */

static int take_budget(const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = opt->to;

	if (tuning_parse_size(arg, &o->budget)) {
		util_err("report", NULL, "--budget=%s: expected a size (48M, 1G...)", arg);
		return -EINVAL;
	}
	o->budget_given = true;
	return 0;
}

static int parse(int argc, char **argv, struct report_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "json", .flag = &o->json },
		{ .name = "file", .string = &o->file },
		{ .name = "pool", .string = &o->pool },
		{ .name = "budget", .take = take_budget, .to = o },
		{ .name = "apply", .flag = &o->apply },
		{ .name = "dry-run", .flag = &o->dry_run },
		{ NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);

	if (ret == CLI_GO_ON && (optind < argc || (o->apply && o->dry_run))) {
		util_err("report", NULL, "%s (see 'accel report --help')",
			 optind < argc ? "unexpected argument" : "--apply and --dry-run conflict");
		return EXIT_USAGE;
	}
	return ret;
}

static void release(struct report *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i].curve);
	free(r->f);
	free(r->pool_curve);
	poolsnap_free(&r->snap);
}

/* Print the report, then apply, ask, or say how to. The exit status. */
static int output(const struct report_opts *o, const struct report *r)
{
	int status = 0;

	if (o->json) {
		if (o->apply)
			status = apply(r, true);
		print_json(r, o->apply);
		return status;
	}
	text_pool(r);
	for (size_t i = 0; i < r->n; i++)
		text_file(&r->f[i], r->snap.info.bucket_size);
	text_changes(r);
	if (!r->changes)
		return 0;
	if (o->apply || (!o->dry_run && isatty(STDOUT_FILENO) && confirm(r->changes))) {
		printf("\nApplied:\n");
		return apply(r, false);
	}
	printf("(dry run: 'accel report --apply' writes these; they apply at each file's next "
	       "open)\n");
	return 0;
}

static int run(struct pool *pool, const struct report_opts *o, struct report *r)
{
	const struct pool_info *in = &r->snap.info;
	int ret = gather(pool, o, r);

	if (ret) {
		util_err("report", NULL, "pool %s: %s", r->name, strerror(-ret));
		return EXIT_FAIL;
	}
	if (o->file && !r->n) {
		util_err("report", o->file,
			 "not in pool %s (not opened through accelfs since the pool was created, "
			 "or its slot was reused)",
			 r->name);
		return EXIT_FAIL;
	}
	r->budget = o->budget_given ? o->budget / in->bucket_size : (uint64_t)in->nbufs * 7 / 8;
	suggest_all(r);
	plan_changes(r);
	ret = output(o, r);
	return fflush(stdout) ? EXIT_FAIL : ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct report r = { 0 };
	char msg[512], name[POOL_NAME_LEN];
	struct pool *pool;
	int ret = parse(argc, argv, &o);

	if (ret >= 0)
		return ret;
	r.name = name;
	ret = poolsnap_target(o.pool, o.file, name, &o.dev, &o.ino, msg, sizeof(msg));
	if (ret) {
		util_err("report", NULL, "%s", msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	ret = poolsnap_open(name, &pool, msg, sizeof(msg));
	if (ret) {
		util_err("report", NULL, "%s", msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	ret = run(pool, &o, &r);
	release(&r);
	pool_close(pool);
	return ret;
}
