// SPDX-License-Identifier: MIT
/*
 * mountstat.c - one mount's statistics for people and scripts (see
 * mountstat.h). Latency percentiles come from the daemon's log2 histogram
 * (mstate_req_quantile_us): each is the upper bound of its bucket, so "p99
 * 128" means 99 % of the requests took under 128 us.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "monstat.h"
#include "mountinfo.h"
#include "mountstat.h"
#include "pool.h"
#include "util.h"

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

const char *mountstat_printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

int mountstat_find(const char *cmd, const char *path, struct mstate *m)
{
	int ret = mstate_find((unsigned int)geteuid(), path, m);

	if (ret == -ESRCH)
		util_err(cmd, path,
			 "not an accelfs mount point (no running accelfs daemon you can see serves "
			 "it)");
	else if (ret)
		util_err(cmd, path, "%s", strerror(-ret));
	return ret ? -1 : 0;
}

double mountstat_hit_pct(const struct mstate *m)
{
	uint64_t r = monstat_reads(m->c);

	if (!r)
		return -1;
	return monstat_pct(m->c[POOL_C_LOCAL_HITS] + m->c[POOL_C_GLOBAL_HITS], r);
}

static const char *pct_text(double pct, char *buf, size_t len)
{
	if (pct < 0)
		return "-";
	snprintf(buf, len, "%.1f", pct);
	return buf;
}

void mountstat_row(const struct mstate *m)
{
	char mnt[256], hit[16], rb[32], wb[32];
	uint64_t n, err;

	if (!m) {
		printf("  %7s %-8s %9s %7s %9s %9s %6s %6s %9s %9s  %s\n", "PID", "WATCH", "EVENTS",
		       "INVAL", "OVERFLOWS", "REQUESTS", "ERRORS", "HIT%", "READ", "WRITTEN",
		       "MOUNTPOINT");
		return;
	}
	mstate_req_totals(m, &n, &err);
	printf("  %7u %-8s %9llu %7llu %9llu %9llu %6llu %6s %9s %9s  %s\n", m->pid, m->watch,
	       ull(m->watch_events), ull(m->watch_invalidations), ull(m->watch_overflows), ull(n),
	       ull(err), pct_text(mountstat_hit_pct(m), hit, sizeof(hit)),
	       util_bytes(m->read_bytes, rb, sizeof(rb)),
	       util_bytes(m->write_bytes, wb, sizeof(wb)),
	       mountstat_printable(m->mountpoint, mnt, sizeof(mnt)));
	/* the mode a mount runs in, and why (docs/shared.md) */
	if (m->shared[0])
		printf("  %7s shared mode %s; locks %s\n", "",
		       mountstat_printable(m->shared, mnt, sizeof(mnt)),
		       m->locks[0] ? m->locks : "-");
}

void mountstat_req_line(const struct mstate_req *r, char *buf, size_t len)
{
	if (!r) {
		snprintf(buf, len, "%-14s %9s %7s %8s %8s %8s %8s", "REQUEST", "COUNT", "ERRORS",
			 "AVG us", "P50 us", "P90 us", "P99 us");
		return;
	}
	snprintf(buf, len, "%-14s %9llu %7llu %8llu %8llu %8llu %8llu", r->name, ull(r->count),
		 ull(r->errors), ull(r->count ? r->time_us / r->count : 0),
		 ull(mstate_req_quantile_us(r, 0.5)), ull(mstate_req_quantile_us(r, 0.9)),
		 ull(mstate_req_quantile_us(r, 0.99)));
}

static void text_head(const struct mstate *m)
{
	char b1[256], b2[32], b3[32];
	uint64_t n, err;

	printf("Mount %s (daemon pid %u)\n", mountstat_printable(m->mountpoint, b1, sizeof(b1)),
	       m->pid);
	printf("  source        %s\n", mountstat_printable(m->source, b1, sizeof(b1)));
	printf("  pool          %s\n", m->pool[0] ? m->pool : "- (caching off)");
	printf("  watch         %s: %llu events, %llu invalidations, %llu overflows\n", m->watch,
	       ull(m->watch_events), ull(m->watch_invalidations), ull(m->watch_overflows));
	printf("  shared mode   %s; locks %s\n", mountstat_printable(m->shared, b1, sizeof(b1)),
	       m->locks[0] ? m->locks : "-");
	mstate_req_totals(m, &n, &err);
	printf("  requests      %llu, %llu answered with an error; %s read, %s written; "
	       "%llu waited for their user's share\n",
	       ull(n), ull(err), util_bytes(m->read_bytes, b2, sizeof(b2)),
	       util_bytes(m->write_bytes, b3, sizeof(b3)), ull(m->parked));
	if (m->disk[0])
		printf("  disk tier     %s: %llu hits, %llu misses, %llu kept, %llu corrupt "
		       "removed, %llu evicted; %s of %s\n",
		       mountstat_printable(m->disk, b1, sizeof(b1)), ull(m->ds.hits),
		       ull(m->ds.misses), ull(m->ds.puts), ull(m->ds.corrupt), ull(m->ds.evicted),
		       util_bytes(m->ds.used, b2, sizeof(b2)),
		       util_bytes(m->ds.limit, b3, sizeof(b3)));
}

/*
 * The daemon's list of files in passthrough mode (cache/mstate.h), one
 * @fn(why, path, arg) per line; 0, or -errno when it cannot be read
 * (-EACCES: another user's daemon; -ENOENT: none written).
 */
static int pt_each(const struct mstate *m, void (*fn)(const char *why, const char *path, void *),
		   void *arg)
{
	FILE *f = mstate_pt_open(m->pid, (unsigned int)geteuid());
	char line[MSTATE_PATH_LEN * 4 + 64];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			continue;
		*tab++ = '\0';
		tab[strcspn(tab, "\n")] = '\0';
		mountinfo_unescape(tab);
		fn(line, tab, arg);
	}
	fclose(f);
	return 0;
}

static void pt_text(const char *why, const char *path, void *arg)
{
	char b[512];

	(void)arg;
	printf("    %-36s %s\n", why, mountstat_printable(path, b, sizeof(b)));
}

static void pt_json(const char *why, const char *path, void *arg)
{
	bool *first = arg;

	printf("%s{\"why\": ", *first ? "" : ", ");
	json_string(why);
	printf(", \"path\": ");
	json_string(path);
	printf("}");
	*first = false;
}

/* "passthrough" and the files, for people. */
static void text_pt(const struct mstate *m)
{
	int ret;

	printf("  passthrough   %llu file%s now; %llu open%s passed through by observed use\n",
	       ull(m->pt_files), m->pt_files == 1 ? "" : "s", ull(m->pt_learned),
	       m->pt_learned == 1 ? "" : "s");
	if (!m->pt_files)
		return;
	ret = pt_each(m, pt_text, NULL);
	if (ret == -EACCES || ret == -EPERM)
		printf("    (which: only the daemon's user may read that list)\n");
	else if (ret)
		printf("    (which: %s)\n", strerror(-ret));
}

void mountstat_text(const struct mstate *m)
{
	const uint64_t *c = m->c;
	char line[128], hit[16];

	text_head(m);
	printf("  pool use      %llu bucket reads, %s %% hits: %llu local, %llu global; %llu "
	       "misses; %llu backend reads\n",
	       ull(monstat_reads(c)), pct_text(mountstat_hit_pct(m), hit, sizeof(hit)),
	       ull(c[POOL_C_LOCAL_HITS]), ull(c[POOL_C_GLOBAL_HITS]),
	       ull(c[POOL_C_GLOBAL_ATTEMPTS] > c[POOL_C_GLOBAL_HITS]
		       ? c[POOL_C_GLOBAL_ATTEMPTS] - c[POOL_C_GLOBAL_HITS]
		       : 0),
	       ull(c[POOL_C_BACKEND_READS]));
	printf("  write-back    %llu deferred writes, %llu flush writes, %llu flush errors, "
	       "%llu buffers lost\n",
	       ull(c[POOL_C_DEFERRED_WRITES]), ull(c[POOL_C_FLUSH_WRITES]),
	       ull(c[POOL_C_FLUSH_ERRORS]), ull(c[POOL_C_DIRTY_LOST]));
	printf("  read-ahead    %llu issued, %llu used, %llu wasted", ull(c[POOL_C_RA_ISSUED]),
	       ull(c[POOL_C_RA_USED]), ull(c[POOL_C_RA_WASTED]));
	if (m->ra_delay_us)
		printf("; SOURCE's delay %.3f ms a read", (double)m->ra_delay_us / 1000);
	printf("\n");
	text_pt(m);
	printf("\n");
	mountstat_req_line(NULL, line, sizeof(line));
	printf("  %s\n", line);
	for (unsigned int i = 0; i < m->nreq; i++) {
		mountstat_req_line(&m->req[i], line, sizeof(line));
		printf("  %s\n", line);
	}
	if (!m->nreq)
		printf("  (no requests yet)\n");
}

static void json_req(const struct mstate_req *r, const char *sep)
{
	printf("%s\"%s\": {\"count\": %llu, \"errors\": %llu, \"time_us\": %llu, \"p50_us\": %llu, "
	       "\"p90_us\": %llu, \"p99_us\": %llu}",
	       sep, r->name, ull(r->count), ull(r->errors), ull(r->time_us),
	       ull(mstate_req_quantile_us(r, 0.5)), ull(mstate_req_quantile_us(r, 0.9)),
	       ull(mstate_req_quantile_us(r, 0.99)));
}

/* What mstate.h's keys say, past the watcher's. */
static void json_served(const struct mstate *m)
{
	uint64_t n, err;
	double hit = mountstat_hit_pct(m);

	mstate_req_totals(m, &n, &err);
	printf(", \"pool\": ");
	json_string(m->pool);
	printf(", \"requests\": %llu, \"errors\": %llu, \"read_bytes\": %llu, "
	       "\"write_bytes\": %llu, \"parked\": %llu",
	       ull(n), ull(err), ull(m->read_bytes), ull(m->write_bytes), ull(m->parked));
	printf(", \"disk\": ");
	if (m->disk[0]) {
		json_string(m->disk);
		printf(", \"disk_hits\": %llu, \"disk_misses\": %llu, \"disk_puts\": %llu, "
		       "\"disk_put_errors\": %llu, \"disk_corrupt\": %llu, \"disk_evicted\": %llu, "
		       "\"disk_used\": %llu, \"disk_limit\": %llu",
		       ull(m->ds.hits), ull(m->ds.misses), ull(m->ds.puts), ull(m->ds.put_errors),
		       ull(m->ds.corrupt), ull(m->ds.evicted), ull(m->ds.used), ull(m->ds.limit));
	} else {
		printf("null");
	}
	printf(", \"readahead_delay_us\": %llu", ull(m->ra_delay_us));
	printf(", \"passthrough_files\": %llu, \"passthrough_learned\": %llu, "
	       "\"passthrough\": [",
	       ull(m->pt_files), ull(m->pt_learned));
	bool first = true;

	if (pt_each(m, pt_json, &first) && m->pt_files)
		printf("], \"passthrough_unreadable\": true");
	else
		printf("]");
	if (hit < 0)
		printf(", \"hit_pct\": null");
	else
		printf(", \"hit_pct\": %.2f", hit);
	printf(", \"counters\": {");
	for (int c = 0; c < POOL_C_POOL_MAX; c++)
		printf("%s\"%s\": %llu", c ? ", " : "",
		       pool_stats_counter_name((enum pool_counter)c), ull(m->c[c]));
	printf("}, \"request_kinds\": {");
	for (unsigned int i = 0; i < m->nreq; i++)
		json_req(&m->req[i], i ? ", " : "");
	printf("}");
}

void mountstat_json(const struct mstate *m)
{
	printf("{\"pid\": %u, \"mountpoint\": ", m->pid);
	json_string(m->mountpoint);
	printf(", \"source\": ");
	json_string(m->source);
	printf(", \"watch\": ");
	json_string(m->watch);
	printf(", \"watch_events\": %llu, \"watch_invalidations\": %llu, "
	       "\"watch_overflows\": %llu, \"watch_unwatched\": %llu, \"shared\": ",
	       ull(m->watch_events), ull(m->watch_invalidations), ull(m->watch_overflows),
	       ull(m->watch_unwatched));
	json_string(m->shared);
	printf(", \"locks\": ");
	json_string(m->locks);
	json_served(m);
	printf("}");
}
