// SPDX-License-Identifier: MIT
/*
 * cmd_warm.c - `accel warm PATH...`: load files into the global buffer pool
 * in the order their blocks lie on the device.
 *
 * The PxPlus seed measured that reading a file in physical rather than key
 * order cut its I/O requests tenfold. A cold cache warmed bucket by bucket in
 * logical order makes the disk seek between every fragment; here every
 * extent of every named file is sorted by physical address first (FIEMAP),
 * and each bucket goes through the same stream front the daemon uses
 * (local -> global -> backend), so what is already cached costs nothing and
 * what is read lands in the pool the mounts share.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd.h"
#include "fiemap.h"
#include "mountres.h"
#include "pool.h"
#include "poolseg.h"
#include "stream.h"
#include "util.h"

struct warm_file {
	char path[PATH_MAX];
	int fd;
	struct stream *st;
	uint64_t size;
	uint8_t *done; /* a bit per bucket: already warmed in this run */
	uint64_t reads_before;
};

/* One extent of one file, to be visited in physical order. */
struct warm_item {
	uint64_t physical;
	uint64_t logical;
	uint64_t length;
	size_t file;
};

struct warm_run {
	struct pool *pool;
	uint32_t bsize;
	struct warm_file *files;
	size_t nfiles;
	struct warm_item *items;
	size_t nitems, cap;
	bool quiet;
	int status;
};

static void help(void)
{
	printf("Usage: accel warm [--pool NAME] [-q] PATH...\n"
	       "\n"
	       "Load files into an accelfs global buffer pool, reading their extents in\n"
	       "the order they lie on disk (FIEMAP), so that a cold start costs one\n"
	       "sequential pass instead of a seek per fragment. Buckets already in the\n"
	       "pool are not read again. Paths inside an accelfs mount are read from the\n"
	       "backing file. The pool is created with the default size if it does not\n"
	       "exist; name the pool your mounts use (-o pool=).\n"
	       "\n"
	       "  --pool NAME   the pool (default: /accelfs-default for root,\n"
	       "                /accelfs-default-UID for other users)\n"
	       "  -q, --quiet   print only errors\n"
	       "  -h, --help\n"
	       "\n"
	       "Exit status: 0 all files warmed, 1 a file or the pool failed, 2 usage error.\n");
}

static const struct cli_cmd cli = { .name = "warm", .help = help, .operands = "PATH" };

static ssize_t read_fd(void *arg, void *buf, size_t len, uint64_t off)
{
	return backend_pread(*(int *)arg, buf, len, (off_t)off);
}

static int push_item(struct warm_run *r, const struct warm_item *it)
{
	if (r->nitems == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct warm_item *p = realloc(r->items, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->items = p;
		r->cap = cap;
	}
	r->items[r->nitems++] = *it;
	return 0;
}

/* The extents of file @i, or one logical-order run where FIEMAP is missing. */
static int add_extents(struct warm_run *r, size_t i)
{
	struct warm_file *f = &r->files[i];
	struct fiemap_map map = { 0 };
	struct warm_item it = { .file = i };
	int ret = fiemap_read(f->fd, &map);

	if (ret == -EOPNOTSUPP) {
		it.length = f->size;
		return push_item(r, &it);
	}
	for (size_t k = 0; !ret && k < map.n; k++) {
		it.physical = map.ext[k].physical;
		it.logical = map.ext[k].logical;
		it.length = map.ext[k].length;
		ret = push_item(r, &it);
	}
	fiemap_free(&map);
	return ret;
}

static int open_file(struct warm_run *r, const char *arg, struct warm_file *f)
{
	struct pool_file_id id;
	struct mountres res;
	struct stat st;
	int ret;

	/* the backing file's device and inode: what the mount's daemon looks up */
	ret = mountres_resolve(arg, &res);
	if (ret < 0)
		return ret;
	snprintf(f->path, sizeof(f->path), "%s", res.path);
	f->fd = cmd_open_source(f->path, O_RDONLY);
	if (f->fd < 0)
		return f->fd;
	if (fstat(f->fd, &st))
		return -errno;
	f->size = (uint64_t)st.st_size;
	id = (struct pool_file_id){ .dev = st.st_dev,
				    .ino = st.st_ino,
				    .size = f->size,
				    .mtime_ns =
					st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
				    .ctime_ns =
					st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec };
	f->done = calloc(f->size / r->bsize / 8 + 1, 1);
	if (!f->done)
		return -ENOMEM;
	ret = stream_open(r->pool, &id, f->path, 0, 0, &f->st);
	if (ret)
		return ret;
	return 0;
}

static int by_physical(const void *a, const void *b)
{
	const struct warm_item *x = a, *y = b;

	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

/* Every bucket of @it not yet warmed; returns 0 or the first read error. */
static int warm_item(struct warm_run *r, const struct warm_item *it, void *buf)
{
	struct warm_file *f = &r->files[it->file];
	uint64_t end = it->logical + it->length < f->size ? it->logical + it->length : f->size;

	for (uint64_t b = it->logical / r->bsize; b * r->bsize < end; b++) {
		ssize_t n;

		if (f->done[b / 8] & (1U << (b % 8)))
			continue;
		f->done[b / 8] |= (uint8_t)(1U << (b % 8));
		n = stream_read(f->st, buf, r->bsize, b * r->bsize, read_fd, &f->fd);
		if (n < 0)
			return (int)n;
	}
	return 0;
}

static uint64_t backend_reads(struct warm_file *f)
{
	struct pool_stats_file st;

	return pool_stats_file(stream_file(f->st), &st) ? 0 : st.c[POOL_C_BACKEND_READS];
}

/* The pool ("/name" from --pool name or /name, else the default) and -q. */
static int parse(int argc, char **argv, char *pool, size_t len, bool *quiet)
{
	const char *name = NULL;
	const struct cli_opt opts[] = {
		{ .name = "pool", .string = &name },
		{ .name = "quiet", .letter = 'q', .flag = quiet },
		{ NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);

	if (name)
		snprintf(pool, len, "%s%s", name[0] == '/' ? "" : "/", name);
	else
		poolseg_default_name(pool, len);
	return ret;
}

static void warm_all(struct warm_run *r)
{
	struct timespec t0, t1;
	void *buf = malloc(r->bsize);

	if (!buf) {
		util_err("warm", NULL, "out of memory");
		r->status = EXIT_FAIL;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (r->nitems) /* items is NULL when every path failed */
		qsort(r->items, r->nitems, sizeof(*r->items), by_physical);
	for (size_t k = 0; k < r->nitems; k++) {
		int ret = warm_item(r, &r->items[k], buf);

		if (ret) {
			util_err("warm", r->files[r->items[k].file].path, "%s", strerror(-ret));
			r->status = EXIT_FAIL;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	free(buf);
	size_t ok = 0;

	for (size_t i = 0; i < r->nfiles; i++) {
		struct warm_file *f = &r->files[i];

		if (!f->st)
			continue;
		ok++;
		if (!r->quiet)
			printf("%s: %llu buckets read from disk, the rest already in the pool\n",
			       f->path, (unsigned long long)(backend_reads(f) - f->reads_before));
	}
	if (!r->quiet)
		printf("warmed %zu of %zu file(s), %zu extent(s) in disk order, %.2f s\n", ok,
		       r->nfiles, r->nitems,
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

int cmd_warm(int argc, char **argv)
{
	char pool_name[256], why[256] = "";
	struct warm_run r = { .status = 0 };
	struct pool_config cfg = { .err = why, .errlen = sizeof(why) };
	bool quiet = false;
	int ret = parse(argc, argv, pool_name, sizeof(pool_name), &quiet);

	if (ret >= 0)
		return ret;
	r.quiet = quiet;
	cfg.name = pool_name;
	backend_init(BACKEND_AUTO, 0, why, sizeof(why));
	if ((ret = pool_open(&cfg, &r.pool))) {
		util_err("warm", NULL, "%s", why[0] ? why : strerror(-ret));
		return EXIT_FAIL;
	}
	r.bsize = pool_bucket_size(r.pool);
	r.nfiles = (size_t)(argc - optind);
	r.files = calloc(r.nfiles, sizeof(*r.files));
	for (size_t i = 0; r.files && i < r.nfiles; i++) {
		r.files[i].fd = -1;
		ret = open_file(&r, argv[optind + (int)i], &r.files[i]);
		if (!ret) {
			r.files[i].reads_before = backend_reads(&r.files[i]);
			ret = add_extents(&r, i);
		}
		if (ret) {
			util_err("warm", argv[optind + (int)i], "%s", cmd_strerror(ret));
			r.status = EXIT_FAIL;
		}
	}
	if (!r.files) {
		util_err("warm", NULL, "out of memory");
		r.status = EXIT_FAIL;
	} else {
		warm_all(&r);
	}
	for (size_t i = 0; r.files && i < r.nfiles; i++) {
		stream_close(r.files[i].st);
		if (r.files[i].fd >= 0)
			close(r.files[i].fd);
		free(r.files[i].done);
	}
	free(r.files);
	free(r.items);
	pool_close(r.pool);
	return r.status;
}
