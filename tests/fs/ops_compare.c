// SPDX-License-Identifier: MIT
/*
 * ops_compare: runs every file-system operation the accelfs daemon serves on
 * MOUNT and on a plain reference directory REF and compares the outcomes.
 *
 *   ops_compare [-t case[,case...]] [-x case[,case...]] [-l] MOUNT REF
 *
 * Each case runs in a fresh directory ops-<case> below MOUNT, then below REF;
 * everything it observes goes into a text trace (see ops.h) and the traces
 * must match line by line.  Exit status: 0 all equal, 1 a difference or a case
 * that recorded nothing, 2 usage, 77 when a requested case needs root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ops.h"

struct trace {
	char **line;
	size_t n, cap;
};

struct ops_case {
	const char *name;
	void (*fn)(void);
};

static const struct ops_case cases[] = {
	{ "lookup", ops_case_lookup },
	{ "setattr", ops_case_setattr },
	{ "times", ops_case_times },
	{ "symlink", ops_case_symlink },
	{ "mknod", ops_case_mknod },
	{ "mkdir", ops_case_mkdir },
	{ "unlink", ops_case_unlink },
	{ "rename", ops_case_rename },
	{ "link", ops_case_link },
	{ "open", ops_case_open },
	{ "rw", ops_case_rw },
	{ "fsync", ops_case_fsync },
	{ "readdir", ops_case_readdir },
	{ "hugedir", ops_case_hugedir },
	{ "statfs", ops_case_statfs },
	{ "xattr", ops_case_xattr },
	{ "acl", ops_case_acl },
	{ "access", ops_case_access },
	{ "fallocate", ops_case_fallocate },
	{ "copy_range", ops_case_copy_range },
	{ "lseek", ops_case_lseek },
	{ "bigfile", ops_case_bigfile },
	{ "names", ops_case_names },
	{ "errno", ops_case_errno },
	{ "locks", ops_case_locks },
	{ "nobody", ops_case_nobody },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The trace being written: the current case on the current side. */
static struct trace *cur;

void ops_rec(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	if (cur->n == cur->cap) {
		cur->cap = cur->cap ? 2 * cur->cap : 64;
		cur->line = realloc(cur->line, cur->cap * sizeof(*cur->line));
		if (!cur->line)
			abort();
	}
	cur->line[cur->n++] = s;
}

const char *ops_errname(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "E?";
}

long ops_ret(const char *label, long ret)
{
	if (ret < 0)
		ops_rec("%s = -1 %s", label, ops_errname(errno));
	else
		ops_rec("%s = %ld", label, ret);
	return ret;
}

static void rec_st(const char *label, const struct stat *st)
{
	char size[32] = "";

	if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
		snprintf(size, sizeof(size), " size=%lld", (long long)st->st_size);
	else if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		snprintf(size, sizeof(size), " rdev=%u:%u", major(st->st_rdev), minor(st->st_rdev));
	ops_rec("%s: type=%o mode=%04o nlink=%lu uid=%u gid=%u%s", label,
		(unsigned)(st->st_mode & S_IFMT), (unsigned)(st->st_mode & 07777),
		(unsigned long)st->st_nlink, st->st_uid, st->st_gid, size);
}

void ops_stat(const char *label, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		ops_rec("%s: lstat = -1 %s", label, ops_errname(errno));
	else
		rec_st(label, &st);
}

void ops_fstat(const char *label, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		ops_rec("%s: fstat = -1 %s", label, ops_errname(errno));
	else
		rec_st(label, &st);
}

uint64_t ops_fnv(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

void ops_sum(const char *label, const char *path)
{
	static char buf[1 << 16];
	uint64_t h = OPS_FNV_INIT;
	long long total = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		ops_rec("%s: open = -1 %s", label, ops_errname(errno));
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		h = ops_fnv(h, buf, n);
		total += n;
	}
	if (n < 0)
		ops_rec("%s: read = -1 %s", label, ops_errname(errno));
	else
		ops_rec("%s: len=%lld fnv=%016llx", label, total, (unsigned long long)h);
	close(fd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ops_list(const char *label, const char *path)
{
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, i;
	DIR *d;

	d = opendir(path);
	if (!d) {
		ops_rec("%s: opendir = -1 %s", label, ops_errname(errno));
		return;
	}
	while ((de = readdir(d))) {
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names || asprintf(&names[n++], "%s type=%u", de->d_name, de->d_type) < 0)
			abort();
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	ops_rec("%s: %zu entries", label, n);
	for (i = 0; i < n; i++) {
		ops_rec("%s: %s", label, names[i]);
		free(names[i]);
	}
	free(names);
}

void ops_pattern(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0) {
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
		}
		p[i] = (unsigned char)((x * 0x2545f4914f6cdd1dULL) >> (8 * (i % 8)));
	}
}

int ops_mkfile(const char *path, size_t len, uint64_t seed)
{
	char *buf = malloc(len ? len : 1);
	int fd, ret = 0;

	if (!buf)
		return -ENOMEM;
	ops_pattern(buf, len, seed);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		ret = -errno;
	} else {
		if (write(fd, buf, len) != (ssize_t)len)
			ret = -EIO;
		if (close(fd) < 0 && !ret)
			ret = -errno;
	}
	free(buf);
	return ret;
}

int ops_open_close(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Runs one case below root into t; returns 0, or -1 if its directory is unusable. */
static int run_case(const struct ops_case *c, const char *root, struct trace *t)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/ops-%s", root, c->name);
	if (mkdir(dir, 0755) < 0 || chdir(dir) < 0) {
		fprintf(stderr, "ops_compare: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	cur = t;
	c->fn();
	cur = NULL;
	if (chdir("/") < 0)
		return -1;
	return 0;
}

/* Prints the differences of one case; returns the number of differing lines. */
static int diff_case(const char *name, const struct trace *m, const struct trace *r)
{
	size_t i, n = m->n > r->n ? m->n : r->n;
	int bad = 0;

	for (i = 0; i < n; i++) {
		const char *a = i < m->n ? m->line[i] : "(nothing)";
		const char *b = i < r->n ? r->line[i] : "(nothing)";

		if (!strcmp(a, b))
			continue;
		if (bad++ < 10)
			printf("  DIFF %s #%zu\n    mount: %s\n    ref:   %s\n", name, i, a, b);
	}
	return bad;
}

static void trace_dump(const char *name, const struct trace *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		printf("  %s: %s\n", name, t->line[i]);
}

static void trace_free(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->line[i]);
	free(t->line);
}

static int selected(const char *name, const char *list)
{
	size_t len = strlen(name);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: ops_compare [-t cases] [-x cases] [-v] MOUNT REF\ncases:");
	for (i = 0; i < NCASES; i++)
		fprintf(stderr, " %s", cases[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only = NULL, *skip = NULL;
	int opt, verbose = 0, failed = 0, run = 0;
	size_t i;

	while ((opt = getopt(argc, argv, "t:x:v")) != -1) {
		if (opt == 't')
			only = optarg;
		else if (opt == 'x')
			skip = optarg;
		else if (opt == 'v')
			verbose = 1;
		else
			usage();
	}
	if (argc - optind != 2)
		usage();
	umask(022);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < NCASES; i++) {
		const struct ops_case *c = &cases[i];
		struct trace m = { 0 }, r = { 0 };
		int bad;

		if ((only && !selected(c->name, only)) || selected(c->name, skip))
			continue;
		if (run_case(c, argv[optind], &m) || run_case(c, argv[optind + 1], &r)) {
			failed++;
			continue;
		}
		run++;
		bad = diff_case(c->name, &m, &r);
		if (!r.n) {
			printf("FAIL %s: recorded nothing\n", c->name);
			bad = 1;
		}
		if (verbose)
			trace_dump(c->name, &r);
		printf("%s %s (%zu checks, %d differ)\n", bad ? "FAIL" : "ok", c->name, r.n, bad);
		failed += bad != 0;
		trace_free(&m);
		trace_free(&r);
	}
	printf("ops_compare: %d cases, %d failed\n", run, failed);
	return failed || !run ? 1 : 0;
}
