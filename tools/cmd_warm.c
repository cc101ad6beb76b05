// SPDX-License-Identifier: MIT
/*
 * cmd_warm.c - `accel warm [-r] PATH...`: load files into the global buffer
 * pool in the order their blocks lie on the device.
 *
 * The PxPlus seed measured that reading a file in physical rather than key
 * order cut its I/O requests tenfold. A cold cache warmed bucket by bucket in
 * logical order makes the disk seek between every fragment; here every
 * extent of every named file is sorted by physical address first (FIEMAP),
 * and each bucket goes through the same stream front the daemon uses
 * (local -> global -> backend), so what is already cached costs nothing and
 * what is read lands in the pool the mounts share.
 *
 * The pool must exist (only a mount creates one) and is the one the mount of
 * the named paths uses, unless --pool names another: a path inside a mount
 * is read from its backing file, whose device and inode are what the mount's
 * daemon looks a bucket up by. Files are taken WARM_BATCH at a time (each
 * holds a descriptor and a pool stream until its batch is done).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd.h"
#include "fiemap.h"
#include "mountres.h"
#include "pool.h"
#include "poolseg.h"
#include "progress.h"
#include "stream.h"
#include "util.h"

#define WARM_BATCH 256 /* files open at once */

/* A file to warm, as collected from the command line (and -r). */
struct warm_name {
	char *shown;   /* as the user named it (for -r: their directory + the rest) */
	char *path;    /* the file to read: the backing file inside a mount */
	bool walked;   /* found by -r: never follow a symlink put in its place */
	uint64_t size; /* when collected, for the progress line */
};

struct warm_file {
	const struct warm_name *name;
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

struct warm_opts {
	const char *pool; /* --pool, as given */
	bool quiet, recursive;
};

struct warm_run {
	const struct warm_opts *o;
	struct pool *pool;
	uint32_t bsize;
	struct warm_name *names; /* every file, in command-line order */
	size_t nnames, names_cap;
	struct warm_file *files; /* the batch */
	size_t nfiles;
	struct warm_item *items;
	size_t nitems, cap;
	size_t warmed, extents;	       /* totals over the batches */
	struct progress prog;	       /* on a terminal: files and bytes warmed */
	uint64_t batch_bytes;	       /* of the batch's files */
	uint64_t batch_done;	       /* ... gone through: read, or found warm */
	char pool_name[POOL_NAME_LEN]; /* the pool of every path ("": none yet) */
	const char *pool_from;	       /* the first path, which chose it */
	const char *walk_shown;	       /* -r: the directory argument being walked, as given */
	size_t walk_skip;	       /* ... and the length of its backing path */
	int status;
};

static void help(void)
{
	printf("Usage: accel warm [--pool NAME] [-r] [-q] PATH...\n"
	       "\n"
	       "Load files into an accelfs global buffer pool, reading their extents in\n"
	       "the order they lie on disk (FIEMAP), so that a cold start costs one\n"
	       "sequential pass instead of a seek per fragment. Buckets already in the\n"
	       "pool are not read again. Paths inside an accelfs mount are read from the\n"
	       "backing file, into the pool that mount uses. Only a mount creates a pool:\n"
	       "a pool that does not exist is an error naming those that do.\n"
	       "\n"
	       "  --pool NAME       the pool, \"name\" or \"/name\" (default: the pool of the\n"
	       "                    mount the PATHs are in; else /accelfs-default for root,\n"
	       "                    /accelfs-default-UID for other users)\n"
	       "  -r, --recursive   warm the regular files below each directory PATH (not\n"
	       "                    across mounts; symbolic links are never followed)\n"
	       "  -q, --quiet       print only errors\n"
	       "  -h, --help\n"
	       "\n"
	       "Exit status: 0 all files warmed, 1 a file or the pool failed, 2 usage error.\n");
}

static const struct cli_cmd cli = { .name = "warm", .help = help, .operands = "PATH" };

static ssize_t read_fd(void *arg, void *buf, size_t len, uint64_t off)
{
	return backend_pread(*(int *)arg, buf, len, (off_t)off);
}

/* ---- collecting the files ---- */

static int add_name(struct warm_run *r, const char *shown, const char *path, bool walked,
		    uint64_t size)
{
	struct warm_name *n;

	if (r->nnames == r->names_cap) {
		size_t cap = r->names_cap ? r->names_cap * 2 : 16;

		n = realloc(r->names, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->names = n;
		r->names_cap = cap;
	}
	n = &r->names[r->nnames];
	n->shown = strdup(shown);
	n->path = strdup(path);
	n->walked = walked;
	n->size = size;
	if (!n->shown || !n->path) {
		free(n->shown);
		free(n->path);
		return -ENOMEM;
	}
	r->nnames++;
	return 0;
}

static struct warm_run *walk_run; /* nftw() has no user argument */

/* -r: regular files only; FTW_PHYS reports a symlink as one, never follows it. */
static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char shown[PATH_MAX];

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	snprintf(shown, sizeof(shown), "%s%s", walk_run->walk_shown, path + walk_run->walk_skip);
	return add_name(walk_run, shown, path, true, (uint64_t)st->st_size) < 0 ? -1 : 0;
}

/* One PATH argument: the file itself, or with -r the files below it. */
static int collect(struct warm_run *r, const char *arg, struct mountres *res)
{
	struct stat st = { 0 };
	int ret = mountres_resolve(arg, res);

	if (ret == 0 && stat(res->path, &st) < 0)
		st.st_size = 0; /* opening it says why */
	if (ret == 0 && r->o->recursive && S_ISDIR(st.st_mode)) {
		walk_run = r;
		r->walk_shown = arg;
		r->walk_skip = strlen(res->path);
		if (nftw(res->path, walk_one, 32, FTW_PHYS | FTW_MOUNT) < 0)
			ret = errno ? -errno : -ENOMEM;
	} else if (ret == 0) {
		ret = add_name(r, arg, res->path, false, (uint64_t)st.st_size);
	}
	if (ret < 0) {
		util_err("warm", arg, "%s", strerror(-ret));
		r->status = EXIT_FAIL;
	}
	return ret;
}

/*
 * The pool of the path just collected into @res (poolseg_choose(): --pool,
 * else its mount's), which must be the run's: paths in mounts of two pools
 * need two runs. 0, or -errno with one line in @why.
 */
static int same_pool(struct warm_run *r, const char *path, const struct mountres *res, char *why,
		     size_t len)
{
	char name[POOL_NAME_LEN];
	int ret = poolseg_choose(r->o->pool, res->mountpoint, name, why, len);

	if (ret)
		return ret;
	if (!r->pool_name[0]) {
		memcpy(r->pool_name, name, sizeof(name));
		r->pool_from = path;
	} else if (strcmp(r->pool_name, name)) {
		snprintf(why, len,
			 "%s is for pool %s, %s for pool %s: warm them in separate runs, or name "
			 "one with --pool",
			 r->pool_from, r->pool_name + 1, path, name + 1);
		return -EXDEV;
	}
	return 0;
}

/* Every PATH, and the pool they go to. Returns 0 or the exit status. */
static int collect_all(struct warm_run *r, char **paths, int n)
{
	struct mountres res;
	char why[320];
	int ret = 0;

	for (int i = 0; i < n && !ret; i++)
		if (collect(r, paths[i], &res) == 0)
			ret = same_pool(r, paths[i], &res, why, sizeof(why));
	if (ret) {
		util_err("warm", NULL, "%s", why);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	return r->pool_name[0] ? 0 : EXIT_FAIL; /* no path to warm: each said why */
}

/* ---- one batch ---- */

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

/*
 * Open @f's file and its stream. A file found by -r is opened without
 * following a symlink planted in its place since; a file whose device is an
 * accelfs mount's (reached through a symlink into a mount) is refused, as
 * the pool would record it under the mount's device, where no daemon looks.
 */
static int open_file(struct warm_run *r, struct warm_file *f)
{
	struct pool_file_id id;
	struct stat st;

	f->fd = cmd_open_source(f->name->path, O_RDONLY | (f->name->walked ? O_NOFOLLOW : 0));
	if (f->fd < 0)
		return f->fd == -ELOOP ? -CMD_ENOTREG : f->fd;
	if (fstat(f->fd, &st))
		return -errno;
	if (mountres_dev_accelfs(st.st_dev))
		return -EXDEV;
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
	return stream_open(r->pool, &id, f->name->path, 0, 0, &f->st);
}

static const char *open_error(int err)
{
	if (err == -EXDEV)
		return "reached through an accelfs mount by a name the mount table does not "
		       "show (a symbolic link?): name it under the mount point or in SOURCE";
	if (err == -EISDIR)
		return "Is a directory (use -r to warm the files below it)";
	return cmd_strerror(err);
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
		r->batch_done += r->bsize;
		progress_update(r->batch_done, &r->prog);
	}
	return 0;
}

static uint64_t backend_reads(struct warm_file *f)
{
	struct pool_stats_file st;

	return pool_stats_file(stream_file(f->st), &st) ? 0 : st.c[POOL_C_BACKEND_READS];
}

/* Open the batch's files and list their extents; a file that fails is said and skipped. */
static void batch_open(struct warm_run *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		struct warm_file *f = &r->files[i];
		int ret = open_file(r, f);

		if (!ret) {
			f->reads_before = backend_reads(f);
			ret = add_extents(r, i);
		}
		if (ret) {
			progress_clear(&r->prog);
			util_err("warm", f->name->shown, "%s", open_error(ret));
			r->status = EXIT_FAIL;
		}
	}
}

/* Read the batch's extents in disk order, then say what each file cost. */
static void batch_warm(struct warm_run *r, void *buf)
{
	if (r->nitems) /* items is NULL when every path failed */
		qsort(r->items, r->nitems, sizeof(*r->items), by_physical);
	for (size_t k = 0; k < r->nitems && !util_stop_sig; k++) {
		int ret = warm_item(r, &r->items[k], buf);

		if (ret) {
			progress_clear(&r->prog);
			util_err("warm", r->files[r->items[k].file].name->shown, "%s",
				 strerror(-ret));
			r->status = EXIT_FAIL;
		}
	}
	progress_clear(&r->prog);
	for (size_t i = 0; i < r->nfiles; i++) {
		struct warm_file *f = &r->files[i];

		if (!f->st)
			continue;
		r->warmed++;
		if (!r->o->quiet)
			printf("%s: %llu buckets read from disk, the rest already in the pool\n",
			       f->name->shown,
			       (unsigned long long)(backend_reads(f) - f->reads_before));
	}
	r->extents += r->nitems;
}

static void batch_close(struct warm_run *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		stream_close(r->files[i].st);
		if (r->files[i].fd >= 0)
			close(r->files[i].fd);
		free(r->files[i].done);
	}
	r->nfiles = 0;
	r->nitems = 0;
}

/* The files of names [@at, @at + @n) as the batch. */
static void batch_set(struct warm_run *r, size_t at, size_t n)
{
	memset(r->files, 0, n * sizeof(*r->files));
	r->batch_bytes = r->batch_done = 0;
	for (size_t i = 0; i < n; i++) {
		r->files[i].name = &r->names[at + i];
		r->files[i].fd = -1;
		r->batch_bytes += r->names[at + i].size;
	}
	r->nfiles = n;
	progress_item(&r->prog, r->batch_bytes, 0);
}

static void warm_all(struct warm_run *r)
{
	double t0 = util_now();
	void *buf = malloc(r->bsize);
	uint64_t bytes = 0;

	r->files = calloc(WARM_BATCH, sizeof(*r->files));
	if (!buf || !r->files) {
		util_err("warm", NULL, "out of memory");
		r->status = EXIT_FAIL;
		free(buf);
		return;
	}
	for (size_t i = 0; i < r->nnames; i++)
		bytes += r->names[i].size;
	progress_init(&r->prog, "warm", "files", r->nnames, bytes, !r->o->quiet);
	for (size_t at = 0; at < r->nnames && !util_stop_sig; at += WARM_BATCH) {
		batch_set(r, at, r->nnames - at < WARM_BATCH ? r->nnames - at : WARM_BATCH);
		batch_open(r);
		batch_warm(r, buf);
		progress_done(&r->prog, r->nfiles, r->batch_bytes);
		batch_close(r);
	}
	progress_clear(&r->prog);
	free(buf);
	if (!r->o->quiet)
		printf("warmed %zu of %zu file(s), %zu extent(s) in disk order, %.2f s\n",
		       r->warmed, r->nnames, r->extents, util_now() - t0);
}

/* Attach to @name, which must exist: tools never create a pool. 0 or the exit status. */
static int attach(struct warm_run *r, const char *name)
{
	char why[512] = "";
	struct pool_config cfg = {
		.name = name, .no_create = true, .err = why, .errlen = sizeof(why)
	};
	int ret = pool_open(&cfg, &r->pool);

	if (ret == -ENOENT)
		poolseg_missing(name, why, sizeof(why));
	if (ret) {
		util_err("warm", NULL, "%s", why[0] ? why : strerror(-ret));
		return EXIT_FAIL;
	}
	r->bsize = pool_bucket_size(r->pool);
	return 0;
}

static void run_free(struct warm_run *r)
{
	for (size_t i = 0; i < r->nnames; i++) {
		free(r->names[i].shown);
		free(r->names[i].path);
	}
	free(r->names);
	free(r->files);
	free(r->items);
	pool_close(r->pool);
}

int cmd_warm(int argc, char **argv)
{
	struct warm_opts o = { 0 };
	const struct cli_opt opts[] = {
		{ .name = "pool", .string = &o.pool },
		{ .name = "recursive", .letter = 'r', .flag = &o.recursive },
		{ .name = "quiet", .letter = 'q', .flag = &o.quiet },
		{ NULL },
	};
	struct warm_run r = { .o = &o };
	char why[160];
	int ret = cli_parse(&cli, opts, argc, argv);

	if (ret != CLI_GO_ON)
		return ret;
	ret = collect_all(&r, argv + optind, argc - optind);
	if (!ret)
		ret = attach(&r, r.pool_name);
	if (!ret) {
		backend_init(BACKEND_AUTO, 0, why, sizeof(why));
		warm_all(&r);
		ret = util_stop_sig ? cmd_signal_exit() : r.status;
	}
	run_free(&r);
	return ret;
}
