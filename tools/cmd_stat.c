// SPDX-License-Identifier: MIT
/*
 * cmd_stat.c - `accel stat [--json | --prometheus [--textfile DIR [--interval
 * S]]] [--file PATH] [--pool NAME]`: one-shot counters of a global buffer
 * pool, of the files it caches and of the mounts (mountstat.c); with
 * --mount MNT, of that one mount alone, for people (aligned tables) and for
 * scripts and monitoring systems (--json, schema "accelfs-stat/1",
 * documented field by field in docs/monitoring.md; --prometheus, the text
 * exposition format of prom.c, on stdout or into node_exporter's textfile
 * directory, once or every S seconds until SIGTERM or SIGINT).
 *
 * It maps the pool read-only and takes no lock, so it never slows a daemon.
 * Percentages and the read share come from monstat.c, like accel monitor's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "json.h"
#include "monstat.h"
#include "mountstat.h"
#include "mstate.h"
#include "outfile.h"
#include "poolsnap.h"
#include "prom.h"
#include "tmpname.h"
#include "util.h"

#define PROM_FILE "accelfs.prom" /* in --textfile DIR: node_exporter reads *.prom */

struct stat_opts {
	bool json, prometheus;
	const char *file;
	const char *pool;
	const char *mount;    /* MNT: that mount alone */
	const char *textfile; /* DIR */
	double interval;      /* 0: write once */
	uint64_t dev, ino;    /* of --file */
};

/*
 * The JSON names of the counters. They are part of schema accelfs-stat/1:
 * never rename one; a new counter gets a new key (consumers ignore unknown
 * keys).
 */
static const struct {
	enum pool_counter c;
	const char *key;
} counter_keys[] = {
	{ POOL_C_LOCAL_ATTEMPTS, "local_attempts" },
	{ POOL_C_LOCAL_HITS, "local_hits" },
	{ POOL_C_GLOBAL_ATTEMPTS, "global_attempts" },
	{ POOL_C_GLOBAL_HITS, "global_hits" },
	{ POOL_C_BACKEND_READS, "backend_reads" },
	{ POOL_C_BACKEND_READ_BYTES, "backend_read_bytes" },
	{ POOL_C_BACKEND_WRITES, "backend_writes" },
	{ POOL_C_BACKEND_WRITE_BYTES, "backend_write_bytes" },
	{ POOL_C_GBUF_READ_IOS, "global_buf_read_ios" },
	{ POOL_C_GBUF_WRITE_IOS, "global_buf_write_ios" },
	{ POOL_C_LBUF_READ_IOS, "local_buf_read_ios" },
	{ POOL_C_LBUF_WRITE_IOS, "local_buf_write_ios" },
	{ POOL_C_EVICTIONS, "evictions" },
	{ POOL_C_FILL_DROPS, "fill_drops" },
	{ POOL_C_INVALIDATIONS, "invalidations" },
	{ POOL_C_RECOVERIES, "recoveries" },
	{ POOL_C_DEFERRED_WRITES, "deferred_writes" },
	{ POOL_C_FLUSH_WRITES, "flush_writes" },
	{ POOL_C_FLUSH_ERRORS, "flush_errors" },
	{ POOL_C_RA_ISSUED, "readahead_issued" },
	{ POOL_C_RA_USED, "readahead_used" },
	{ POOL_C_RA_WASTED, "readahead_wasted" },
	{ POOL_C_DIRTY_LOST, "dirty_lost" },
	{ POOL_C_DIRTY_RECOVERED, "dirty_recovered" },
	{ POOL_C_LOCK_TIMEOUTS, "lock_timeouts" },
	{ POOL_C_PT_OPENS, "opens_passthrough" },
	{ POOL_C_PT_FALLBACKS, "passthrough_fallbacks" },
};

#define N_KEYS (sizeof(counter_keys) / sizeof(counter_keys[0]))

static void help(void)
{
	printf("Usage: accel stat [--json | --prometheus] [--file PATH] [--pool NAME]\n"
	       "       accel stat [--json | --prometheus] --mount MNT\n"
	       "       accel stat --prometheus --textfile DIR [--interval S] [--pool NAME]\n\n"
	       "Print the counters of an accelfs global buffer pool once: its geometry,\n"
	       "cache attempts and hits (local and global), backend and buffer I/O,\n"
	       "evictions, invalidations, recoveries, active streams, resident buffers;\n"
	       "then the same per file, with each file's read share and whether it is a\n"
	       "global buffering candidate (>= 75 %% of its I/O are reads); then each\n"
	       "mount's daemon on one line: its requests, errors, hit %% and bytes.\n\n"
	       "  --file PATH   only the file PATH (inside an accelfs mount: its backing file)\n"
	       "  --pool NAME   the pool, \"name\" or \"/name\" (default: the pool of the mount\n"
	       "                --file is in; else the one this user's daemons use, %s\n"
	       "                for root, %s-UID for others)\n"
	       "  --mount MNT   only the mount at MNT, in detail: requests by kind (count,\n"
	       "                errors, latency percentiles), bytes, the pool hits and\n"
	       "                misses and the write-back its daemon caused\n"
	       "  --json        one JSON object, schema \"accelfs-stat/1\" (docs/monitoring.md)\n"
	       "  --prometheus  the Prometheus text exposition format: pool, file and mount\n"
	       "                metrics (accelfs_*), with HELP and TYPE lines\n"
	       "  --textfile DIR  write them to DIR/" PROM_FILE " instead (node_exporter's\n"
	       "                textfile directory), replaced atomically\n"
	       "  --interval S  with --textfile: again every S seconds (0.1 to 86400) until\n"
	       "                SIGTERM or SIGINT, which end it with status 0\n"
	       "  -h, --help\n\n"
	       "Reads the pool without locking; never slows the daemons.\n"
	       "Exit status: 0 printed, 1 pool, file or mount unavailable, 2 usage error.\n",
	       POOL_DEFAULT_NAME, POOL_DEFAULT_NAME);
}

static const struct cli_cmd cli = { .name = "stat", .help = help };

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* A percentage, or null when there was nothing to divide by. */
static void json_pct(const char *key, uint64_t num, uint64_t den)
{
	json_percent(", ", key, monstat_pct(num, den), den != 0);
}

static void json_counters(const uint64_t *c, enum pool_counter limit)
{
	const char *sep = "";

	printf(", \"counters\": {");
	for (size_t i = 0; i < N_KEYS; i++) {
		if (counter_keys[i].c >= limit)
			continue;
		json_u64(sep, counter_keys[i].key, c[counter_keys[i].c]);
		sep = ", ";
	}
	printf("}");
}

/* Hit percentages, reads, writes and read share: the same for pool and file. */
static void json_derived(const uint64_t *c)
{
	uint64_t r = monstat_reads(c), w = monstat_writes(c);

	json_pct("local_hit_pct", c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS]);
	json_pct("global_hit_pct", c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS]);
	printf(", \"reads\": %llu, \"writes\": %llu", ull(r), ull(w));
	json_pct("read_share_pct", r, r + w);
	printf(", \"global_buffer_candidate\": %s", monstat_candidate(c) ? "true" : "false");
}

static void json_pool(const struct poolsnap *s, const char *name)
{
	const struct pool_info *in = &s->info;

	printf("  \"pool\": {\"name\": ");
	json_string(name);
	printf(", \"time\": %lld.%03lld", (long long)(s->realtime_ns / 1000000000LL),
	       (long long)(s->realtime_ns % 1000000000LL / 1000000));
	printf(", \"bucket_size\": %u, \"buffers\": %u, \"shards\": %u, \"file_slots\": %u, "
	       "\"file_slots_used\": %u, \"reserved_buffers\": %u, \"data_bytes\": %llu, "
	       "\"meta_bytes\": %llu, \"total_bytes\": %llu, \"active_streams\": %llu, "
	       "\"resident_buffers\": %llu",
	       in->bucket_size, in->nbufs, in->nshards, in->nfiles, in->files_used, in->reserved,
	       ull(in->data_size), ull(in->meta_size), ull(in->total_size), ull(s->st.opens),
	       ull(s->st.resident));
	json_counters(s->st.c, POOL_C_POOL_MAX);
	json_derived(s->st.c);
	printf("}");
}

static void json_file(const struct pool_stats_file *f, bool first)
{
	printf("%s\n    {\"path\": ", first ? "" : ",");
	json_string(f->path);
	printf(", \"dev\": %llu, \"dev_major\": %u, \"dev_minor\": %u, \"ino\": %llu, "
	       "\"slot\": %u, \"active_streams\": %u, \"quota\": %lld, \"resident_buffers\": %u",
	       ull(f->dev), major(f->dev), minor(f->dev), ull(f->ino), f->slot, f->opens,
	       f->quota == POOL_QUOTA_ALL ? -1LL : (long long)f->quota, f->resident);
	printf(", \"dirty_buffers\": %u, \"sync_relaxed\": %s", f->ndirty,
	       f->flags & POOL_FILE_F_RELAXED ? "true" : "false");
	json_counters(f->c, POOL_C_FILE_MAX);
	json_derived(f->c);
	printf("}");
}

static bool wanted(const struct stat_opts *o, const struct pool_stats_file *f)
{
	return !o->file || (f->dev == o->dev && f->ino == o->ino);
}

/* One mount (cache/mstate.h), for --json's "mounts" array. */
static int json_mount(const struct mstate *m, void *arg)
{
	bool *first = arg;

	printf("%s\n    ", *first ? "" : ",");
	mountstat_json(m);
	*first = false;
	return 0;
}

static int text_mount(const struct mstate *m, void *arg)
{
	(void)arg;
	mountstat_row(m);
	return 0;
}

static void print_json(const struct poolsnap *s, const struct stat_opts *o, const char *name)
{
	bool first = true;

	printf("{\n  \"schema\": \"accelfs-stat/1\",\n");
	json_pool(s, name);
	printf(",\n  \"files\": [");
	for (size_t i = 0; i < s->nfiles; i++) {
		if (!wanted(o, &s->files[i]))
			continue;
		json_file(&s->files[i], first);
		first = false;
	}
	printf("%s],\n  \"mounts\": [", first ? "" : "\n  ");
	first = true;
	mstate_foreach((unsigned int)geteuid(), json_mount, &first);
	printf("%s]\n}\n", first ? "" : "\n  ");
}

/* "50.00", or "-" when there were no attempts. */
static const char *pct_text(uint64_t num, uint64_t den, char *buf, size_t len)
{
	if (!den)
		return "-";
	snprintf(buf, len, "%.2f", monstat_pct(num, den));
	return buf;
}

static void text_pool_head(const struct poolsnap *s, const char *name)
{
	const struct pool_info *in = &s->info;
	char b1[32], b2[32], b3[32];

	printf("Pool %s\n", name);
	printf("  geometry      %u buffers x %s = %s data + %s metadata, %u shards\n", in->nbufs,
	       util_bytes(in->bucket_size, b1, sizeof(b1)),
	       util_bytes(in->data_size, b2, sizeof(b2)), util_bytes(in->meta_size, b3, sizeof(b3)),
	       in->nshards);
	printf("  file slots    %u of %u in use, %u buffers reserved by quotas\n", in->files_used,
	       in->nfiles, in->reserved);
	printf("  now           %llu active streams, %llu resident buffers (%.1f %%)\n\n",
	       ull(s->st.opens), ull(s->st.resident),
	       monstat_pct(s->st.resident, in->nbufs ? in->nbufs : 1));
}

static void text_pool_counters(const uint64_t *c)
{
	char p1[16], p2[16], b1[32], b2[32];

	printf("  %-16s %12s %12s %8s\n", "Cache", "attempts", "hits", "hit %");
	printf("  %-16s %12llu %12llu %8s\n", "local", ull(c[POOL_C_LOCAL_ATTEMPTS]),
	       ull(c[POOL_C_LOCAL_HITS]),
	       pct_text(c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS], p1, sizeof(p1)));
	printf("  %-16s %12llu %12llu %8s\n\n", "global", ull(c[POOL_C_GLOBAL_ATTEMPTS]),
	       ull(c[POOL_C_GLOBAL_HITS]),
	       pct_text(c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS], p2, sizeof(p2)));
	printf("  %-16s %12s %12s %12s %12s\n", "I/O", "reads", "writes", "read bytes",
	       "write bytes");
	printf("  %-16s %12llu %12llu %12s %12s\n", "backend", ull(c[POOL_C_BACKEND_READS]),
	       ull(c[POOL_C_BACKEND_WRITES]), util_bytes(c[POOL_C_BACKEND_READ_BYTES], b1, 32),
	       util_bytes(c[POOL_C_BACKEND_WRITE_BYTES], b2, 32));
	printf("  %-16s %12llu %12llu\n", "global buffers", ull(c[POOL_C_GBUF_READ_IOS]),
	       ull(c[POOL_C_GBUF_WRITE_IOS]));
	printf("  %-16s %12llu %12llu\n\n", "local buffers", ull(c[POOL_C_LBUF_READ_IOS]),
	       ull(c[POOL_C_LBUF_WRITE_IOS]));
	printf("  evictions %llu, fill drops %llu, invalidations %llu, recoveries %llu, "
	       "lock timeouts %llu\n",
	       ull(c[POOL_C_EVICTIONS]), ull(c[POOL_C_FILL_DROPS]), ull(c[POOL_C_INVALIDATIONS]),
	       ull(c[POOL_C_RECOVERIES]), ull(c[POOL_C_LOCK_TIMEOUTS]));
	/* What deferred write did, and what it could not do: a dropped byte must show. */
	printf("  write-back    %llu deferred writes, %llu flush writes, %llu flush errors, "
	       "%llu buffers recovered, %llu buffers lost\n",
	       ull(c[POOL_C_DEFERRED_WRITES]), ull(c[POOL_C_FLUSH_WRITES]),
	       ull(c[POOL_C_FLUSH_ERRORS]), ull(c[POOL_C_DIRTY_RECOVERED]),
	       ull(c[POOL_C_DIRTY_LOST]));
	printf("  read-ahead    %llu issued, %llu used, %llu wasted\n", ull(c[POOL_C_RA_ISSUED]),
	       ull(c[POOL_C_RA_USED]), ull(c[POOL_C_RA_WASTED]));
	/* Opens whose data the kernel moves itself, and those it refused (served here). */
	printf("  passthrough   %llu opens, %llu fallbacks\n", ull(c[POOL_C_PT_OPENS]),
	       ull(c[POOL_C_PT_FALLBACKS]));
}

/* The row functions print their table's header when @f is NULL. */
static void text_file_ident(const struct pool_stats_file *f)
{
	char devino[48], quota[16], share[16], flags[4], path[POOL_PATH_LEN];
	double rs;

	if (!f) {
		printf("  %5s %-18s %5s %6s %7s %6s %1s %s\n", "SLOT", "DEV:INO", "STRM", "QUOTA",
		       "RES", "READ%", "G", "PATH");
		return;
	}
	rs = monstat_read_share(f->c);
	snprintf(flags, sizeof(flags), "%s%s", monstat_candidate(f->c) ? "*" : "",
		 f->flags & POOL_FILE_F_RELAXED ? "R" : "");
	snprintf(devino, sizeof(devino), "%u:%u/%llu", major(f->dev), minor(f->dev), ull(f->ino));
	if (f->quota == POOL_QUOTA_ALL)
		snprintf(quota, sizeof(quota), "all");
	else
		snprintf(quota, sizeof(quota), "%u", f->quota);
	if (rs < 0)
		snprintf(share, sizeof(share), "-");
	else
		snprintf(share, sizeof(share), "%.1f", rs);
	printf("  %5u %-18s %5u %6s %7u %6s %1s %s\n", f->slot, devino, f->opens, quota,
	       f->resident, share, flags, mountstat_printable(f->path, path, sizeof(path)));
}

static void text_file_cache(const struct pool_stats_file *f)
{
	const uint64_t *c = f ? f->c : NULL;
	char p1[16], p2[16];

	if (!f) {
		printf("  %5s %10s %10s %7s %10s %10s %7s\n", "SLOT", "L-ATTEMPT", "L-HITS",
		       "L-HIT%", "G-ATTEMPT", "G-HITS", "G-HIT%");
		return;
	}
	printf("  %5u %10llu %10llu %7s %10llu %10llu %7s\n", f->slot,
	       ull(c[POOL_C_LOCAL_ATTEMPTS]), ull(c[POOL_C_LOCAL_HITS]),
	       pct_text(c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS], p1, sizeof(p1)),
	       ull(c[POOL_C_GLOBAL_ATTEMPTS]), ull(c[POOL_C_GLOBAL_HITS]),
	       pct_text(c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS], p2, sizeof(p2)));
}

static void text_file_io(const struct pool_stats_file *f)
{
	const uint64_t *c = f ? f->c : NULL;
	char b1[32], b2[32];

	if (!f) {
		printf("  %5s %8s %10s %8s %10s %8s %8s %8s %8s\n", "SLOT", "BE-READ", "BE-RBYTES",
		       "BE-WRITE", "BE-WBYTES", "GB-READ", "GB-WRITE", "LB-READ", "LB-WRITE");
		return;
	}
	printf("  %5u %8llu %10s %8llu %10s %8llu %8llu %8llu %8llu\n", f->slot,
	       ull(c[POOL_C_BACKEND_READS]), util_bytes(c[POOL_C_BACKEND_READ_BYTES], b1, 32),
	       ull(c[POOL_C_BACKEND_WRITES]), util_bytes(c[POOL_C_BACKEND_WRITE_BYTES], b2, 32),
	       ull(c[POOL_C_GBUF_READ_IOS]), ull(c[POOL_C_GBUF_WRITE_IOS]),
	       ull(c[POOL_C_LBUF_READ_IOS]), ull(c[POOL_C_LBUF_WRITE_IOS]));
}

/* One table of all wanted files, one line each, drawn by @row. */
static void text_table(const struct poolsnap *s, const struct stat_opts *o,
		       void (*row)(const struct pool_stats_file *f))
{
	putchar('\n');
	row(NULL);
	for (size_t i = 0; i < s->nfiles; i++) {
		if (wanted(o, &s->files[i]))
			row(&s->files[i]);
	}
}

static void print_text(const struct poolsnap *s, const struct stat_opts *o, const char *name)
{
	size_t n = 0;

	text_pool_head(s, name);
	text_pool_counters(s->st.c);
	printf("\nMounts (every accelfs daemon visible to you; one in detail: --mount MNT)\n");
	mountstat_row(NULL);
	mstate_foreach((unsigned int)geteuid(), text_mount, NULL);
	for (size_t i = 0; i < s->nfiles; i++)
		n += wanted(o, &s->files[i]);
	printf("\nFiles: %zu%s\n", n, o->file ? " (--file)" : "");
	if (!n)
		return;
	text_table(s, o, text_file_ident);
	printf("  (G: * marks a global buffering candidate, >= 75 %% of its I/O reads;"
	       " R: open with sync=relaxed)\n");
	text_table(s, o, text_file_cache);
	text_table(s, o, text_file_io);
}

static int take_interval(const struct cli_opt *opt, const char *arg)
{
	return util_parse_seconds("stat", opt->name, arg, 0.1, 86400, opt->to);
}

/* Options, and the combinations that make sense; CLI_GO_ON or the exit status. */
static int parse(int argc, char **argv, struct stat_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "json", .flag = &o->json },
		{ .name = "prometheus", .flag = &o->prometheus },
		{ .name = "textfile", .string = &o->textfile },
		{ .name = "interval", .take = take_interval, .to = &o->interval },
		{ .name = "file", .string = &o->file },
		{ .name = "pool", .string = &o->pool },
		{ .name = "mount", .string = &o->mount },
		{ NULL },
	};
	const char *bad = NULL;
	int ret = cli_parse(&cli, opts, argc, argv);

	if (ret != CLI_GO_ON)
		return ret;
	if (o->json && o->prometheus)
		bad = "--json and --prometheus are two formats: choose one";
	else if (o->textfile && !o->prometheus)
		bad = "--textfile writes the Prometheus format: add --prometheus";
	else if (o->interval > 0 && !o->textfile)
		bad = "--interval goes with --textfile DIR";
	else if (o->mount && (o->file || o->pool || o->textfile))
		bad = "--mount shows one mount alone: not with --file, --pool or --textfile";
	if (bad) {
		util_err("stat", NULL, "%s (see 'accel stat --help')", bad);
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

/* Snapshot the open pool and print it; the exit status. */
static int report(struct pool *pool, const struct stat_opts *o, const char *name)
{
	struct poolsnap s = { 0 };
	int ret = poolsnap_take(pool, &s);

	if (ret) {
		util_err("stat", NULL, "pool %s: %s", name, strerror(-ret));
		return EXIT_FAIL;
	}
	if (o->file && !poolsnap_find(&s, o->dev, o->ino)) {
		util_err("stat", o->file,
			 "not in pool %s (not opened through accelfs since the "
			 "pool was created, or its slot was reused)",
			 name);
		poolsnap_free(&s);
		return EXIT_FAIL;
	}
	if (o->json)
		print_json(&s, o, name);
	else
		print_text(&s, o, name);
	poolsnap_free(&s);
	return fflush(stdout) ? EXIT_FAIL : 0;
}

/*
 * The metrics of the pool @name now into @f (prom.h): 0, or -errno with one
 * line in @msg, after writing what could be known (accelfs_pool_up 0 when
 * the pool could not be read). Used for stdout and for the textfile.
 */
static int prom_once(const struct stat_opts *o, const char *name, FILE *f, char *msg, size_t len)
{
	const struct pool_stats_file *only = NULL;
	struct poolsnap s = { 0 };
	struct pool *pool;
	int ret = poolsnap_open(name, &pool, msg, len), wret;
	bool read = false;

	if (ret == 0) {
		ret = poolsnap_take(pool, &s);
		if (ret)
			snprintf(msg, len, "pool %s: %s", name, strerror(-ret));
		read = ret == 0;
		pool_close(pool);
	}
	if (read && o->file && !(only = poolsnap_find(&s, o->dev, o->ino))) {
		snprintf(msg, len,
			 "%s: not in pool %s (not opened through accelfs since the pool "
			 "was created, or its slot was reused)",
			 o->file, name);
		s.nfiles = 0; /* the pool's metrics, no file's */
		ret = -ENOENT;
	}
	wret = prom_write(f, name, read ? &s : NULL, only);
	poolsnap_free(&s);
	if (ret == 0 && wret)
		snprintf(msg, len, "cannot write the metrics: %s", strerror(-wret));
	return ret ? ret : wret;
}

/* DIR/accelfs.prom replaced through a temporary beside it (outfile.h). 0 or -errno. */
static int textfile_once(const struct stat_opts *o, const char *name, const char *path, char *msg,
			 size_t len)
{
	struct outfile out = { .dir_fd = -1 };
	char why[NAME_MAX + 96];
	int ret = outfile_open(&out, path, "prom"), pret = 0;

	if (ret == 0) {
		pret = prom_once(o, name, out.f, msg, len);
		ret = pret == -EIO ? pret : outfile_commit(&out);
		if (pret == -EIO)
			outfile_discard(&out);
	}
	if (ret < 0) {
		snprintf(msg, len, "%.300s: %s", path, outfile_why(&out, ret, why, sizeof(why)));
		return ret;
	}
	return pret;
}

/* Sleep until @until (util_now() time), or a stop signal. */
static void nap_until(double until)
{
	double left;
	struct timespec ts;

	while (!util_stop_sig && (left = until - util_now()) > 0) {
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL); /* a signal cuts it short: no SA_RESTART */
	}
}

/*
 * --textfile: write once (the exit status says how it went), or every
 * --interval until SIGTERM/SIGINT (status 0), saying each new trouble once
 * and going on: a scraper must keep its file while a pool comes and goes.
 */
static int textfile(const struct stat_opts *o, const char *name)
{
	char path[PATH_MAX], msg[512], last[512] = "";
	double next = util_now();
	int dir = open(o->textfile, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	if (dir < 0) {
		util_err("stat", o->textfile, "%s", strerror(errno));
		return EXIT_FAIL;
	}
	tmpname_clean(dir, NULL, NULL); /* a killed run's temporary */
	close(dir);
	snprintf(path, sizeof(path), "%s/%s", o->textfile, PROM_FILE);
	do {
		msg[0] = '\0';
		ret = textfile_once(o, name, path, msg, sizeof(msg));
		if (ret && strcmp(msg, last))
			util_err("stat", NULL, "%s", msg);
		snprintf(last, sizeof(last), "%s", ret ? msg : "");
		next += o->interval;
		nap_until(next);
	} while (o->interval > 0 && !util_stop_sig);
	if (o->interval > 0)
		return 0;
	return ret == -EINVAL ? EXIT_USAGE : ret ? EXIT_FAIL : 0;
}

/* --prometheus on stdout: nothing printed unless the pool (and --file) could be read. */
static int prom_stdout(const struct stat_opts *o, const char *name)
{
	char *buf = NULL, msg[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = f ? prom_once(o, name, f, msg, sizeof(msg)) : -ENOMEM;

	if (f)
		fclose(f);
	if (ret == 0)
		fwrite(buf, 1, len, stdout);
	else
		util_err("stat", NULL, "%s", f ? msg : strerror(ENOMEM));
	free(buf);
	if (ret)
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	return fflush(stdout) ? EXIT_FAIL : 0;
}

/* Mount @m in the format asked; 0 or -errno (said). */
static int mount_print(const struct stat_opts *o, const struct mstate *m)
{
	int ret;

	if (o->prometheus) {
		ret = prom_write_mounts(stdout, m, 1);
		if (ret)
			util_err("stat", NULL, "cannot write the metrics: %s", strerror(-ret));
		return ret;
	}
	if (o->json) {
		printf("{\n  \"schema\": \"accelfs-stat/1\",\n  \"mounts\": [\n    ");
		mountstat_json(m);
		printf("\n  ]\n}\n");
	} else {
		mountstat_text(m);
	}
	return 0;
}

/* --mount MNT: that mount's daemon alone; the exit status. */
static int mount_report(const struct stat_opts *o)
{
	struct mstate *m = malloc(sizeof(*m)); /* 24 KiB: paths and request kinds */
	int ret;

	if (!m) {
		util_err("stat", NULL, "%s", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	ret = mountstat_find("stat", o->mount, m);
	if (!ret)
		ret = mount_print(o, m);
	free(m);
	if (ret)
		return EXIT_FAIL;
	return fflush(stdout) ? EXIT_FAIL : 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { 0 };
	char msg[512], name[POOL_NAME_LEN];
	struct pool *pool;
	int ret = parse(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.mount)
		return mount_report(&o);
	ret = poolsnap_target(o.pool, o.file, name, &o.dev, &o.ino, msg, sizeof(msg));
	if (ret) {
		util_err("stat", NULL, "%s", msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	if (o.textfile)
		return textfile(&o, name);
	if (o.prometheus)
		return prom_stdout(&o, name);
	ret = poolsnap_open(name, &pool, msg, sizeof(msg));
	if (ret) {
		util_err("stat", NULL, "%s", msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	ret = report(pool, &o, name);
	pool_close(pool);
	return ret;
}
