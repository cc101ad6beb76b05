// SPDX-License-Identifier: MIT
/*
 * mstate.c - per-mount state files (see mstate.h for the contract).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mstate.h"
#include "pool.h"

#define MSTATE_MAX_FILES 256 /* daemons listed per directory */
#define PT_SUFFIX ".passthrough" /* the passthrough list beside mount-PID */

/* The state directory for euid @uid into @buf; 0 or -errno (-ENOENT: none). */
static int mstate_dir(unsigned int uid, char *buf, size_t len)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");

	if (uid == 0)
		return snprintf(buf, len, "%s", MSTATE_DIR_ROOT) < (int)len ? 0 : -ENAMETOOLONG;
	if (!rt || rt[0] != '/')
		return -ENOENT;
	return snprintf(buf, len, "%s/accelfs", rt) < (int)len ? 0 : -ENAMETOOLONG;
}

static void write_req(FILE *f, const struct mstate_req *r)
{
	fprintf(f, "req %s %" PRIu64 " %" PRIu64 " %" PRIu64, r->name, r->count, r->errors,
		r->time_us);
	for (int b = 0; b < MSTATE_HIST; b++)
		fprintf(f, " %" PRIu64, r->hist[b]);
	fputc('\n', f);
}

/* The whole file into @fd (closed); 0 or -EIO. */
static int write_all(int fd, const struct mstate *m)
{
	FILE *f = fdopen(fd, "w");
	int bad;

	if (!f) {
		close(fd);
		return -EIO;
	}
	fprintf(f,
		"pid %" PRIu32 "\nmountpoint %s\nsource %s\nwatch %s\n"
		"watch_events %" PRIu64 "\nwatch_invalidations %" PRIu64
		"\nwatch_overflows %" PRIu64 "\nwatch_unwatched %" PRIu64 "\nshared %s\nlocks %s\n",
		m->pid, m->mountpoint, m->source, m->watch, m->watch_events, m->watch_invalidations,
		m->watch_overflows, m->watch_unwatched, m->shared, m->locks);
	fprintf(f, "pool %s\nread_bytes %" PRIu64 "\nwrite_bytes %" PRIu64 "\nparked %" PRIu64 "\n",
		m->pool, m->read_bytes, m->write_bytes, m->parked);
	fprintf(f,
		"disk %s\ndisk_hits %" PRIu64 "\ndisk_misses %" PRIu64 "\ndisk_puts %" PRIu64
		"\ndisk_put_errors %" PRIu64 "\ndisk_corrupt %" PRIu64 "\ndisk_evicted %" PRIu64
		"\ndisk_used %" PRIu64 "\ndisk_limit %" PRIu64 "\n",
		m->disk, m->ds.hits, m->ds.misses, m->ds.puts, m->ds.put_errors, m->ds.corrupt,
		m->ds.evicted, m->ds.used, m->ds.limit);
	fprintf(f, "passthrough_files %" PRIu64 "\npassthrough_learned %" PRIu64 "\n", m->pt_files,
		m->pt_learned);
	fprintf(f, "readahead_delay_us %" PRIu64 "\n", m->ra_delay_us);
	for (int c = 0; c < POOL_C_POOL_MAX; c++)
		fprintf(f, "pool_%s %" PRIu64 "\n", pool_stats_counter_name((enum pool_counter)c),
			m->c[c]);
	for (unsigned int i = 0; i < m->nreq && i < MSTATE_REQ_MAX; i++)
		write_req(f, &m->req[i]);
	bad = ferror(f);
	return fclose(f) || bad ? -EIO : 0;
}

/* The daemon's directory into @dir, made if missing and checked ours alone; 0 or -errno. */
static int own_dir(char *dir, size_t len)
{
	struct stat st;
	int ret = mstate_dir(geteuid(), dir, len);

	if (ret)
		return ret;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	/* ours alone, not a symlink or a directory someone else may write */
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/*
 * Replace the file @name of pid @pid ("mount-PID@suffix") with what
 * @fill writes into the open descriptor (which it closes), created @mode.
 */
static int replace(uint32_t pid, const char *suffix, mode_t mode,
		   int (*fill)(int fd, const void *arg), const void *arg)
{
	char dir[MSTATE_PATH_LEN], tmp[MSTATE_PATH_LEN + 64], path[MSTATE_PATH_LEN + 64];
	int fd, ret = own_dir(dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s/.mount-%" PRIu32 "%s.tmp", dir, pid, suffix);
	snprintf(path, sizeof(path), "%s/mount-%" PRIu32 "%s", dir, pid, suffix);
	unlink(tmp); /* a temporary a killed daemon of this pid left */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	ret = fill(fd, arg);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static int fill_state(int fd, const void *arg)
{
	return write_all(fd, arg);
}

int mstate_write(const struct mstate *m)
{
	return replace(m->pid, "", 0644, fill_state, m);
}

struct text {
	const char *p;
	size_t len;
};

static int fill_text(int fd, const void *arg)
{
	const struct text *t = arg;
	size_t done = 0;

	while (done < t->len) {
		ssize_t n = write(fd, t->p + done, t->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		done += (size_t)n;
	}
	return close(fd) ? -EIO : 0;
}

int mstate_pt_write(uint32_t pid, const char *text, size_t len)
{
	struct text t = { text, len };

	return replace(pid, PT_SUFFIX, 0600, fill_text, &t);
}

FILE *mstate_pt_open(uint32_t pid, unsigned int uid)
{
	char dir[MSTATE_PATH_LEN], path[MSTATE_PATH_LEN + 64];
	unsigned int uids[2] = { 0, uid };
	int err = ENOENT;

	for (int i = 0; i < (uid ? 2 : 1); i++) {
		FILE *f;

		if (mstate_dir(uids[i], dir, sizeof(dir)))
			continue;
		snprintf(path, sizeof(path), "%s/mount-%" PRIu32 PT_SUFFIX, dir, pid);
		f = fopen(path, "re");
		if (f)
			return f;
		if (errno != ENOENT)
			err = errno;
	}
	errno = err;
	return NULL;
}

/* Remove pid @pid's files in @dir. */
static void remove_in(const char *dir, uint32_t pid)
{
	char path[MSTATE_PATH_LEN + 64];

	snprintf(path, sizeof(path), "%s/mount-%" PRIu32, dir, pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/mount-%" PRIu32 PT_SUFFIX, dir, pid);
	unlink(path);
}

void mstate_remove(uint32_t pid)
{
	char dir[MSTATE_PATH_LEN];

	if (mstate_dir(geteuid(), dir, sizeof(dir)))
		return;
	remove_in(dir, pid);
}

/* "KIND COUNT ERRORS TIME_US H0 ..." into the next request kind of @m. */
static void parse_req(char *v, struct mstate *m)
{
	struct mstate_req *r = &m->req[m->nreq];
	char *p = strchr(v, ' ');

	if (m->nreq >= MSTATE_REQ_MAX || !p || p - v >= MSTATE_REQ_NAME)
		return;
	memset(r, 0, sizeof(*r));
	memcpy(r->name, v, (size_t)(p - v));
	r->count = strtoull(p, &p, 10);
	r->errors = strtoull(p, &p, 10);
	r->time_us = strtoull(p, &p, 10);
	for (int b = 0; b < MSTATE_HIST; b++)
		r->hist[b] = strtoull(p, &p, 10);
	m->nreq++;
}

/* "pool_COUNTER N": true if @key is one. */
static bool parse_counter(const char *key, const char *v, struct mstate *m)
{
	if (strncmp(key, "pool_", 5))
		return false;
	for (int c = 0; c < POOL_C_POOL_MAX; c++) {
		if (!strcmp(key + 5, pool_stats_counter_name((enum pool_counter)c))) {
			m->c[c] = strtoull(v, NULL, 10);
			return true;
		}
	}
	return false;
}

/* One "key value" line into @m; unknown keys are ignored. */
/* "disk_NAME N" lines: NAME is a field of struct disk_stats. */
static void parse_disk(const char *name, uint64_t v, struct disk_stats *d)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
		{ "hits", offsetof(struct disk_stats, hits) },
		{ "misses", offsetof(struct disk_stats, misses) },
		{ "puts", offsetof(struct disk_stats, puts) },
		{ "put_errors", offsetof(struct disk_stats, put_errors) },
		{ "corrupt", offsetof(struct disk_stats, corrupt) },
		{ "evicted", offsetof(struct disk_stats, evicted) },
		{ "used", offsetof(struct disk_stats, used) },
		{ "limit", offsetof(struct disk_stats, limit) },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(name, f[i].name))
			*(uint64_t *)((char *)d + f[i].off) = v;
}

static void parse_line(char *line, struct mstate *m)
{
	char *v = strchr(line, ' ');

	if (!v)
		return;
	*v++ = '\0';
	v[strcspn(v, "\n")] = '\0';
	if (parse_counter(line, v, m))
		return;
	if (!strcmp(line, "req"))
		parse_req(v, m);
	else if (!strcmp(line, "pool"))
		snprintf(m->pool, sizeof(m->pool), "%s", v);
	else if (!strcmp(line, "read_bytes"))
		m->read_bytes = strtoull(v, NULL, 10);
	else if (!strcmp(line, "write_bytes"))
		m->write_bytes = strtoull(v, NULL, 10);
	else if (!strcmp(line, "parked"))
		m->parked = strtoull(v, NULL, 10);
	else if (!strcmp(line, "passthrough_files"))
		m->pt_files = strtoull(v, NULL, 10);
	else if (!strcmp(line, "passthrough_learned"))
		m->pt_learned = strtoull(v, NULL, 10);
	else if (!strcmp(line, "readahead_delay_us"))
		m->ra_delay_us = strtoull(v, NULL, 10);
	else if (!strcmp(line, "disk"))
		snprintf(m->disk, sizeof(m->disk), "%s", v);
	else if (!strncmp(line, "disk_", 5))
		parse_disk(line + 5, strtoull(v, NULL, 10), &m->ds);
	else if (!strcmp(line, "pid"))
		m->pid = (uint32_t)strtoul(v, NULL, 10);
	else if (!strcmp(line, "mountpoint"))
		snprintf(m->mountpoint, sizeof(m->mountpoint), "%s", v);
	else if (!strcmp(line, "source"))
		snprintf(m->source, sizeof(m->source), "%s", v);
	else if (!strcmp(line, "watch"))
		snprintf(m->watch, sizeof(m->watch), "%s", v);
	else if (!strcmp(line, "watch_events"))
		m->watch_events = strtoull(v, NULL, 10);
	else if (!strcmp(line, "watch_invalidations"))
		m->watch_invalidations = strtoull(v, NULL, 10);
	else if (!strcmp(line, "watch_overflows"))
		m->watch_overflows = strtoull(v, NULL, 10);
	else if (!strcmp(line, "watch_unwatched"))
		m->watch_unwatched = strtoull(v, NULL, 10);
	else if (!strcmp(line, "shared"))
		snprintf(m->shared, sizeof(m->shared), "%s", v);
	else if (!strcmp(line, "locks"))
		snprintf(m->locks, sizeof(m->locks), "%s", v);
}

int mstate_read(const char *path, struct mstate *m)
{
	char line[MSTATE_PATH_LEN + 32];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f))
		parse_line(line, m);
	fclose(f);
	return m->pid ? 0 : -EINVAL;
}

static int pid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The pids of the state files in @dir, sorted; their count. */
static size_t list_pids(const char *dir, uint32_t *pids)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < MSTATE_MAX_FILES) {
		char *end;
		unsigned long pid;

		if (strncmp(de->d_name, "mount-", 6))
			continue;
		pid = strtoul(de->d_name + 6, &end, 10);
		if (!*end && pid && pid <= UINT32_MAX)
			pids[n++] = (uint32_t)pid;
	}
	closedir(d);
	qsort(pids, n, sizeof(*pids), pid_cmp);
	return n;
}

static int foreach_in(const char *dir, int (*fn)(const struct mstate *, void *), void *arg)
{
	uint32_t pids[MSTATE_MAX_FILES];
	size_t n = list_pids(dir, pids);
	char path[MSTATE_PATH_LEN + 64];
	struct mstate *m = malloc(sizeof(*m));
	int ret = 0;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++) {
		if (kill((pid_t)pids[i], 0) && errno == ESRCH)
			continue; /* its daemon is gone */
		snprintf(path, sizeof(path), "%s/mount-%" PRIu32, dir, pids[i]);
		if (!mstate_read(path, m) && m->pid == pids[i])
			ret = fn(m, arg);
	}
	free(m);
	return ret;
}

void mstate_sweep(void)
{
	uint32_t pids[MSTATE_MAX_FILES];
	char dir[MSTATE_PATH_LEN];
	size_t n;

	if (mstate_dir(geteuid(), dir, sizeof(dir)))
		return;
	n = list_pids(dir, pids);
	for (size_t i = 0; i < n; i++) {
		if (!kill((pid_t)pids[i], 0) || errno != ESRCH)
			continue;
		remove_in(dir, pids[i]);
	}
}

int mstate_foreach(unsigned int uid, int (*fn)(const struct mstate *m, void *arg), void *arg)
{
	char dir[MSTATE_PATH_LEN];
	int ret = foreach_in(MSTATE_DIR_ROOT, fn, arg);

	if (!ret && uid != 0 && !mstate_dir(uid, dir, sizeof(dir)))
		ret = foreach_in(dir, fn, arg);
	return ret;
}

struct mlist {
	struct mstate *m;
	size_t n;
};

static int collect(const struct mstate *m, void *arg)
{
	struct mlist *l = arg;
	struct mstate *n = realloc(l->m, (l->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	l->m = n;
	l->m[l->n++] = *m;
	return 0;
}

int mstate_list(unsigned int uid, struct mstate **out, size_t *n)
{
	struct mlist l = { NULL, 0 };
	int ret = mstate_foreach(uid, collect, &l);

	if (ret) {
		free(l.m);
		l.m = NULL, l.n = 0;
	}
	*out = l.m;
	*n = l.n;
	return ret;
}

struct find {
	const char *real;
	struct mstate *m;
};

static int match(const struct mstate *m, void *arg)
{
	struct find *f = arg;

	if (strcmp(m->mountpoint, f->real))
		return 0;
	*f->m = *m;
	return 1;
}

int mstate_find(unsigned int uid, const char *path, struct mstate *m)
{
	char real[PATH_MAX];
	struct find f = { real, m };
	int ret;

	if (!realpath(path, real))
		return -errno;
	ret = mstate_foreach(uid, match, &f);
	return ret == 1 ? 0 : ret < 0 ? ret : -ESRCH;
}

uint64_t mstate_hist_le_us(unsigned int b)
{
	return b < MSTATE_HIST - 1 ? 1ULL << b : 0;
}

uint64_t mstate_req_quantile_us(const struct mstate_req *r, double q)
{
	uint64_t total = 0, seen = 0, want;

	for (int b = 0; b < MSTATE_HIST; b++)
		total += r->hist[b];
	if (!total)
		return 0;
	want = (uint64_t)(q * (double)total + 0.999999);
	for (unsigned int b = 0; b < MSTATE_HIST - 1; b++) {
		seen += r->hist[b];
		if (seen >= want)
			return 1ULL << b;
	}
	return 1ULL << (MSTATE_HIST - 2);
}

void mstate_req_totals(const struct mstate *m, uint64_t *count, uint64_t *errors)
{
	*count = *errors = 0;
	for (unsigned int i = 0; i < m->nreq; i++) {
		*count += m->req[i].count;
		*errors += m->req[i].errors;
	}
}
