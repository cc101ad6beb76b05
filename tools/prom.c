// SPDX-License-Identifier: MIT
/*
 * prom.c - the Prometheus text exposition of a pool snapshot (see prom.h).
 *
 * The format wants each metric family once, its samples together, so the
 * writer goes family by family over the files and the mounts rather than
 * object by object. Label values are escaped as the format says (\\, \",
 * \n); a path is any bytes but NUL and '/' runs, so nothing else needs it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mstate.h"
#include "prom.h"

#define MAX_LABELS 6

/* What each counter of cache/ counts (its name is pool_stats_counter_name()). */
static const char *const counter_help[POOL_C_POOL_MAX] = {
	[POOL_C_LOCAL_ATTEMPTS] = "Bucket lookups in a stream's local buffers.",
	[POOL_C_LOCAL_HITS] = "Bucket lookups served by a stream's local buffers.",
	[POOL_C_GLOBAL_ATTEMPTS] = "Bucket lookups in the global pool.",
	[POOL_C_GLOBAL_HITS] = "Bucket lookups served by the global pool.",
	[POOL_C_BACKEND_READS] = "Bucket reads from backing files.",
	[POOL_C_BACKEND_READ_BYTES] = "Bytes read from backing files.",
	[POOL_C_BACKEND_WRITES] = "Writes that reached backing files.",
	[POOL_C_BACKEND_WRITE_BYTES] = "Bytes written to backing files.",
	[POOL_C_GBUF_READ_IOS] = "Backend reads that filled a global buffer.",
	[POOL_C_GBUF_WRITE_IOS] = "Writes that dropped a cached global buffer.",
	[POOL_C_LBUF_READ_IOS] = "Backend reads that filled a local buffer.",
	[POOL_C_LBUF_WRITE_IOS] = "Writes that dropped a local buffer.",
	[POOL_C_DEFERRED_WRITES] = "Writes kept in dirty pool buffers (deferred write).",
	[POOL_C_FLUSH_WRITES] = "Backend writes that put dirty buffers on their file.",
	[POOL_C_FLUSH_ERRORS] = "Writes of dirty buffers that failed.",
	[POOL_C_RA_ISSUED] = "Buckets read ahead into the pool.",
	[POOL_C_RA_USED] = "Buckets read ahead and later read.",
	[POOL_C_RA_WASTED] = "Buckets read ahead and dropped unread.",
	[POOL_C_EVICTIONS] = "Cached buffers reused for other data.",
	[POOL_C_FILL_DROPS] = "Buffer fills refused (file changed, or every buffer reserved).",
	[POOL_C_RECOVERIES] = "Pool locks recovered from a process that died holding them.",
	[POOL_C_INVALIDATIONS] = "Buffers dropped by truncation or invalidation.",
	[POOL_C_DIRTY_LOST] = "Dirty buffers dropped: acknowledged data that never reached SOURCE.",
	[POOL_C_DIRTY_RECOVERED] = "Dirty buffers of a dead daemon written back.",
	[POOL_C_LOCK_TIMEOUTS] = "Waits for a pool lock given up.",
	[POOL_C_PT_OPENS] = "Opens handed to kernel passthrough.",
	[POOL_C_PT_FALLBACKS] = "Opens chosen for passthrough but served by a daemon.",
};

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* name{k="v",...} — @labels: key, value, ..., NULL. The value follows. */
static void series(FILE *f, const char *name, const char *const *labels)
{
	fputs(name, f);
	for (size_t i = 0; labels[i]; i += 2) {
		fprintf(f, "%s%s=\"", i ? "," : "{", labels[i]);
		label_value(f, labels[i + 1]);
		fputc('"', f);
	}
	fputs(labels[0] ? "} " : " ", f);
}

static void sample(FILE *f, const char *name, const char *const *labels, uint64_t v)
{
	series(f, name, labels);
	fprintf(f, "%llu\n", (unsigned long long)v);
}

static void sample_signed(FILE *f, const char *name, const char *const *labels, int64_t v)
{
	series(f, name, labels);
	fprintf(f, "%lld\n", (long long)v);
}

static void pool_gauges(FILE *f, const char *const *lab, const struct poolsnap *s)
{
	const struct pool_info *in = &s->info;
	const struct {
		const char *name, *help;
		uint64_t v;
	} g[] = {
		{ "accelfs_pool_bucket_size_bytes", "Bytes per buffer and per bucket of a file.",
		  in->bucket_size },
		{ "accelfs_pool_buffers", "Global buffers in the pool.", in->nbufs },
		{ "accelfs_pool_data_bytes", "Shared memory for buffer data.", in->data_size },
		{ "accelfs_pool_meta_bytes", "Shared memory for the pool's metadata.",
		  in->meta_size },
		{ "accelfs_pool_file_slots", "File slots in the pool.", in->nfiles },
		{ "accelfs_pool_file_slots_used", "File slots in use.", in->files_used },
		{ "accelfs_pool_reserved_buffers", "Buffers reserved by file quotas.",
		  in->reserved },
		{ "accelfs_pool_active_streams", "Open handles on all files.", s->st.opens },
		{ "accelfs_pool_resident_buffers", "Buffers holding cached data.", s->st.resident },
	};

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		head(f, g[i].name, "gauge", g[i].help);
		sample(f, g[i].name, lab, g[i].v);
	}
}

static void pool_counters(FILE *f, const char *const *lab, const uint64_t *c)
{
	char name[96];

	for (int i = 0; i < POOL_C_POOL_MAX; i++) {
		snprintf(name, sizeof(name), "accelfs_pool_%s_total",
			 pool_stats_counter_name((enum pool_counter)i));
		head(f, name, "counter", counter_help[i]);
		sample(f, name, lab, c[i]);
	}
}

/* The labels of file @fs in @lab, with its dev and ino spelt into @dev and @ino. */
static void file_labels(const char *pool, const struct pool_stats_file *fs, const char **lab,
			char *dev, char *ino)
{
	sprintf(dev, "%u:%u", major(fs->dev), minor(fs->dev));
	sprintf(ino, "%llu", (unsigned long long)fs->ino);
	lab[0] = "pool", lab[1] = pool, lab[2] = "dev", lab[3] = dev;
	lab[4] = "ino", lab[5] = ino, lab[6] = "path", lab[7] = fs->path, lab[8] = NULL;
}

enum file_value { FV_STREAMS, FV_RESIDENT, FV_DIRTY, FV_QUOTA, FV_N };

static int64_t file_value(const struct pool_stats_file *fs, int k)
{
	switch (k) {
	case FV_STREAMS:
		return fs->opens;
	case FV_RESIDENT:
		return fs->resident;
	case FV_DIRTY:
		return fs->ndirty;
	default:
		return fs->quota == POOL_QUOTA_ALL ? -1 : (int64_t)fs->quota;
	}
}

/* One family over the files; @k < FV_N a gauge, else counter k - FV_N. */
static void file_family(FILE *f, const char *pool, const struct poolsnap *s,
			const struct pool_stats_file *only, int k)
{
	static const char *const gauge[FV_N][2] = {
		{ "accelfs_file_active_streams", "Open handles on the file." },
		{ "accelfs_file_resident_buffers", "The file's buffers now cached." },
		{ "accelfs_file_dirty_buffers", "The file's buffers holding deferred writes." },
		{ "accelfs_file_quota_buffers",
		  "Buffers reserved for the file; -1 the whole file." },
	};
	const char *lab[2 * MAX_LABELS + 1];
	char name[96], dev[24], ino[24];

	if (k < FV_N)
		snprintf(name, sizeof(name), "%s", gauge[k][0]);
	else
		snprintf(name, sizeof(name), "accelfs_file_%s_total",
			 pool_stats_counter_name((enum pool_counter)(k - FV_N)));
	head(f, name, k < FV_N ? "gauge" : "counter",
	     k < FV_N ? gauge[k][1] : counter_help[k - FV_N]);
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct pool_stats_file *fs = &s->files[i];

		if (only && fs != only)
			continue;
		file_labels(pool, fs, lab, dev, ino);
		if (k < FV_N)
			sample_signed(f, name, lab, file_value(fs, k));
		else
			sample(f, name, lab, fs->c[k - FV_N]);
	}
}

static void mount_info(FILE *f, const struct mstate *ms, size_t n)
{
	char pid[16];

	head(f, "accelfs_mount_info", "gauge",
	     "A running accelfs daemon and its mount (always 1).");
	for (size_t i = 0; i < n; i++) {
		const struct mstate *m = &ms[i];
		const char *lab[] = { "pid",	 pid,	  "mountpoint", m->mountpoint, "source",
				      m->source, "watch", m->watch,	"locks",       m->locks,
				      "pool",	 m->pool, NULL };

		sprintf(pid, "%u", m->pid);
		sample(f, "accelfs_mount_info", lab, 1);
	}
}

/* The labels every mount metric has, for @m (@pid spelt there); @lab ends after them. */
static void mount_labels(const struct mstate *m, const char **lab, char *pid)
{
	sprintf(pid, "%u", m->pid);
	lab[0] = "pid", lab[1] = pid, lab[2] = "mountpoint", lab[3] = m->mountpoint;
	lab[4] = NULL;
}

enum mount_value {
	MV_EVENTS,
	MV_INVAL,
	MV_OVERFLOWS,
	MV_UNWATCHED,
	MV_RBYTES,
	MV_WBYTES,
	MV_PARKED,
	MV_DISK_HITS,
	MV_DISK_MISSES,
	MV_DISK_PUTS,
	MV_DISK_CORRUPT,
	MV_DISK_EVICTED,
	MV_DISK_USED,
	MV_PT_FILES,
	MV_PT_LEARNED,
	MV_RA_DELAY,
	MV_N
};

static uint64_t mount_value(const struct mstate *m, int k)
{
	const uint64_t v[MV_N] = { m->watch_events,    m->watch_invalidations,
				   m->watch_overflows, m->watch_unwatched,
				   m->read_bytes,      m->write_bytes,
				   m->parked,	       m->ds.hits,
				   m->ds.misses,       m->ds.puts,
				   m->ds.corrupt,      m->ds.evicted,
				   m->ds.used,	       m->pt_files,
				   m->pt_learned,      m->ra_delay_us };

	return v[k];
}

/* One family over the mounts; @k < MV_N a value above, else pool counter k - MV_N. */
static void mount_family(FILE *f, const struct mstate *ms, size_t n, int k)
{
	static const struct {
		const char *name, *type, *help;
	} fam[MV_N] = {
		{ "accelfs_mount_watch_events_total", "counter",
		  "Changes made behind the mount that concerned it." },
		{ "accelfs_mount_watch_invalidations_total", "counter",
		  "Notifications sent to the kernel about changes behind the mount." },
		{ "accelfs_mount_watch_overflows_total", "counter",
		  "Watcher event queue overflows (everything cached was invalidated)." },
		{ "accelfs_mount_watch_unwatched_directories", "gauge",
		  "inotify: directories held by the kernel that could not be watched." },
		{ "accelfs_mount_read_bytes_total", "counter",
		  "Bytes the daemon's READ replies carried." },
		{ "accelfs_mount_written_bytes_total", "counter",
		  "Bytes the daemon's WRITE replies acknowledged." },
		{ "accelfs_mount_parked_requests_total", "counter",
		  "Requests that waited for their user's share of the workers." },
		{ "accelfs_mount_disk_hits_total", "counter",
		  "Bucket reads the disk tier answered (disk_cache=)." },
		{ "accelfs_mount_disk_misses_total", "counter",
		  "Bucket reads the disk tier could not answer." },
		{ "accelfs_mount_disk_puts_total", "counter",
		  "Buckets read from SOURCE and kept in the disk tier." },
		{ "accelfs_mount_disk_corrupt_total", "counter",
		  "Damaged disk tier buckets found (checksum) and punched out, never served." },
		{ "accelfs_mount_disk_evicted_total", "counter",
		  "Disk tier entries removed or trimmed to keep its size bound." },
		{ "accelfs_mount_disk_used_bytes", "gauge",
		  "Bytes the disk tier's entries take, as of its last scan plus puts since." },
		{ "accelfs_mount_passthrough_files", "gauge",
		  "Files in kernel passthrough mode now." },
		{ "accelfs_mount_passthrough_learned_total", "counter",
		  "Opens passed through by observed use (bulk sequential reads)." },
		{ "accelfs_mount_readahead_delay_seconds", "gauge",
		  "SOURCE's delay per read as read-ahead measured it (the window grows by it)." },
	};
	const char *lab[2 * MAX_LABELS + 1];
	char name[96], help[160], pid[16];

	if (k < MV_N) {
		head(f, fam[k].name, fam[k].type, fam[k].help);
		snprintf(name, sizeof(name), "%s", fam[k].name);
	} else {
		snprintf(name, sizeof(name), "accelfs_mount_pool_%s_total",
			 pool_stats_counter_name((enum pool_counter)(k - MV_N)));
		snprintf(help, sizeof(help), "%s Caused by this mount's daemon.",
			 counter_help[k - MV_N]);
		head(f, name, "counter", help);
	}
	for (size_t i = 0; i < n; i++) {
		mount_labels(&ms[i], lab, pid);
		if (k == MV_RA_DELAY) { /* kept in microseconds, shown in seconds */
			series(f, name, lab);
			fprintf(f, "%.6f\n", (double)ms[i].ra_delay_us / 1e6);
			continue;
		}
		sample(f, name, lab, k < MV_N ? mount_value(&ms[i], k) : ms[i].c[k - MV_N]);
	}
}

/* The request families: by kind, their errors, and the time histogram (seconds). */
static void mount_requests(FILE *f, const struct mstate *ms, size_t n, int k)
{
	static const char *const fam[2][2] = {
		{ "accelfs_mount_requests_total", "Requests the daemon served, by kind." },
		{ "accelfs_mount_request_errors_total",
		  "Requests answered with an error, by kind." },
	};
	const char *lab[2 * MAX_LABELS + 1];
	char pid[16];

	head(f, fam[k][0], "counter", fam[k][1]);
	for (size_t i = 0; i < n; i++) {
		mount_labels(&ms[i], lab, pid);
		lab[4] = "op", lab[6] = NULL;
		for (unsigned int r = 0; r < ms[i].nreq; r++) {
			lab[5] = ms[i].req[r].name;
			sample(f, fam[k][0], lab, k ? ms[i].req[r].errors : ms[i].req[r].count);
		}
	}
}

/* One kind's histogram: cumulative buckets up to +Inf, its sum and count. */
static void request_histogram(FILE *f, const char **lab, const struct mstate_req *r)
{
	uint64_t cum = 0;
	char le[32];

	lab[4] = "op", lab[5] = r->name, lab[6] = "le", lab[7] = le, lab[8] = NULL;
	for (unsigned int b = 0; b < MSTATE_HIST; b++) {
		cum += r->hist[b];
		if (mstate_hist_le_us(b))
			snprintf(le, sizeof(le), "%g", (double)mstate_hist_le_us(b) / 1e6);
		else
			snprintf(le, sizeof(le), "+Inf");
		series(f, "accelfs_mount_request_duration_seconds_bucket", lab);
		fprintf(f, "%llu\n", (unsigned long long)cum);
	}
	lab[6] = NULL;
	series(f, "accelfs_mount_request_duration_seconds_sum", lab);
	fprintf(f, "%.6f\n", (double)r->time_us / 1e6);
	sample(f, "accelfs_mount_request_duration_seconds_count", lab, cum);
}

static void mount_durations(FILE *f, const struct mstate *ms, size_t n)
{
	const char *lab[2 * MAX_LABELS + 1];
	char pid[16];

	head(f, "accelfs_mount_request_duration_seconds", "histogram",
	     "Time requests spent in the daemon's handler, by kind.");
	for (size_t i = 0; i < n; i++) {
		mount_labels(&ms[i], lab, pid);
		for (unsigned int r = 0; r < ms[i].nreq; r++)
			request_histogram(f, lab, &ms[i].req[r]);
	}
}

int prom_write_mounts(FILE *f, const struct mstate *ms, size_t n)
{
	mount_info(f, ms, n);
	for (int k = 0; k < MV_N + POOL_C_POOL_MAX; k++)
		mount_family(f, ms, n, k);
	mount_requests(f, ms, n, 0);
	mount_requests(f, ms, n, 1);
	mount_durations(f, ms, n);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

int prom_write(FILE *f, const char *name, const struct poolsnap *s,
	       const struct pool_stats_file *only)
{
	const char *lab[] = { "pool", name, NULL };
	struct mstate *ms;
	size_t n;
	int ret;

	head(f, "accelfs_pool_up", "gauge", "1 if the pool could be read, else 0.");
	sample(f, "accelfs_pool_up", lab, s != NULL);
	if (s) {
		pool_gauges(f, lab, s);
		pool_counters(f, lab, s->st.c);
		for (int k = 0; k < FV_N + POOL_C_FILE_MAX; k++)
			file_family(f, name, s, only, k);
	}
	if (mstate_list((unsigned int)geteuid(), &ms, &n))
		return -ENOMEM;
	ret = prom_write_mounts(f, ms, n);
	free(ms);
	return ret;
}
