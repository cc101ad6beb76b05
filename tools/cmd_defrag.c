// SPDX-License-Identifier: MIT
/*
 * cmd_defrag.c - `accel defrag PATH...`: rewrite fragmented files
 * contiguously without ever losing one.
 *
 * Per file: measure (FIEMAP); skip files that are already ideal; on ext4
 * exchange blocks in place (ext4move.c: same inode, links and open handles);
 * elsewhere build a verified copy beside the file under a read lease and
 * swap it in only if nobody wrote meanwhile (replace.c). A result with no
 * fewer extents than the original is thrown away.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd.h"
#include "ext4move.h"
#include "fiemap.h"
#include "fslimit.h"
#include "hot.h"
#include "meta.h"
#include "mountres.h"
#include "progress.h"
#include "replace.h"
#include "tmpname.h"
#include "util.h"

enum method { METHOD_AUTO, METHOD_MOVE, METHOD_COPY };

enum outcome { DONE, IDEAL, NOT_BETTER, WOULD, FAILED, N_OUTCOMES };

struct defrag_opts {
	bool recursive;
	bool dry_run;
	bool hot_first;
	bool verbose;
	bool quiet;
	uint64_t min_extents;
	enum method method;
};

struct entry {
	char *shown;   /* path as the user sees it */
	char *backing; /* the file we work on */
	uint64_t size;
	uint64_t hot;
	size_t order;
	dev_t dev; /* (dev, ino): a file named twice is done once */
	ino_t ino;
};

struct run {
	struct defrag_opts *o;
	struct entry *ent;
	size_t n;
	bool collect_failed;
	char last_clean[PATH_MAX]; /* directory most recently cleaned of stale temporaries */
	struct fslimit fs;	   /* the file system last measured on */
	const char *walk_shown;	   /* the directory argument being walked, as given */
	size_t walk_skip;	   /* length of its backing path */
	struct progress prog;
	unsigned int count[N_OUTCOMES];
	uint64_t ext_before;
	uint64_t ext_after;
	uint64_t moved;
};

/* One file being worked on. */
struct target {
	const struct entry *e;
	int fd; /* O_RDONLY */
	struct stat st;
	struct fiemap_stats before;
	struct fiemap_stats after;
	uint64_t unit;	/* the longest run the file system gives it (fslimit.h) */
	char limit[96]; /* ... as said to a person */
	uint64_t moved;
	const char *how;
	const char *failed;	  /* the step that failed */
	const char *why;	  /* a complete reason for skipping, instead of failed */
	char taken[NAME_MAX + 1]; /* a temporary's name something else had (replace.h) */
};

static void help(void)
{
	printf("Usage: accel defrag [OPTION]... PATH...\n\n"
	       "Rewrite fragmented files contiguously, keeping every piece of metadata.\n"
	       "On ext4 the kernel exchanges the blocks in place (EXT4_IOC_MOVE_EXT, as\n"
	       "e4defrag): inode, hard links and open handles are kept. Elsewhere a verified\n"
	       "copy is built beside the file and renamed over it only if nothing changed\n"
	       "the file meanwhile; files with several hard links are skipped there.\n"
	       "A result with no fewer extents than the original is discarded.\n\n"
	       "  -r, --recursive      descend into directories (not across mounts)\n"
	       "  -n, --dry-run        only report what would be done\n"
	       "  --min-extents N      leave files with fewer than N extents alone (default 2)\n"
	       "  --hot-first          most used files first, by their I/O count in the\n"
	       "                       accelfs global buffer pool's statistics\n"
	       "  --method M           auto (default), move (ext4 only) or copy\n"
	       "  -q, --quiet          report only errors and the total\n"
	       "  -v, --verbose        also say which I/O backend is used\n"
	       "  -h, --help\n\n"
	       "Stale temporaries (.accel-defrag.NAME.PID.tmp of dead processes) are removed\n"
	       "from every directory visited. Exit status: 0 done (including files already\n"
	       "contiguous or not improvable), 1 some file failed or was skipped, 2 usage\n"
	       "error, 128+N stopped by signal N (the current file is left intact).\n");
}

static const struct cli_cmd cli = { .name = "defrag", .help = help, .operands = "PATH" };

static int take_min_extents(const struct cli_opt *opt, const char *arg)
{
	if (util_parse_u64(arg, opt->to) == 0)
		return 0;
	util_err("defrag", NULL, "--min-extents: '%s' is not a number", arg);
	return -EINVAL;
}

static int take_method(const struct cli_opt *opt, const char *arg)
{
	static const char *const names[] = { "auto", "move", "copy" };
	enum method *m = opt->to;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (strcmp(arg, names[i]) == 0) {
			*m = (enum method)i;
			return 0;
		}
	}
	util_err("defrag", NULL, "--method: '%s' is not auto, move or copy", arg);
	return -EINVAL;
}

/* Returns CLI_GO_ON to run, or the exit status. */
static int parse_args(int argc, char **argv, struct defrag_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "recursive", .letter = 'r', .flag = &o->recursive },
		{ .name = "dry-run", .letter = 'n', .flag = &o->dry_run },
		{ .name = "min-extents", .take = take_min_extents, .to = &o->min_extents },
		{ .name = "hot-first", .flag = &o->hot_first },
		{ .name = "method", .take = take_method, .to = &o->method },
		{ .name = "quiet", .letter = 'q', .flag = &o->quiet },
		{ .name = "verbose", .letter = 'v', .flag = &o->verbose },
		{ NULL },
	};

	return cli_parse(&cli, opts, argc, argv);
}

/* ---- collecting the files ---- */

static struct run *walk_run; /* nftw() has no user argument */

static void report_stale(const char *name, void *arg)
{
	const char *dir = arg;

	progress_clear(&walk_run->prog);
	printf("%s: removed stale temporary %s\n", dir, name);
}

static void clean_dir(struct run *run, const char *dir)
{
	size_t len = strlen(dir);
	int fd;

	if (len >= sizeof(run->last_clean) || strcmp(run->last_clean, dir) == 0)
		return;
	memcpy(run->last_clean, dir, len + 1);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!run->o->dry_run)
		tmpname_clean(fd, report_stale, (void *)dir);
	close(fd);
}

static void clean_parent(struct run *run, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	clean_dir(run, dir);
}

static int add_entry(struct run *run, const char *shown, const char *backing, const struct stat *st)
{
	struct entry *ent;

	if ((run->n & (run->n + 1)) == 0 || run->n == 0) { /* grow at 0, 1, 3, 7, ... */
		ent = realloc(run->ent, (run->n * 2 + 2) * sizeof(*ent));
		if (!ent)
			return -ENOMEM;
		run->ent = ent;
	}
	ent = &run->ent[run->n];
	ent->shown = strdup(shown);
	ent->backing = strdup(backing);
	if (!ent->shown || !ent->backing) {
		free(ent->shown);
		free(ent->backing);
		return -ENOMEM;
	}
	ent->size = (uint64_t)st->st_size;
	ent->dev = st->st_dev;
	ent->ino = st->st_ino;
	ent->hot = 0;
	ent->order = run->n++;
	return 0;
}

/* nftw callback: clean directories, collect regular files. */
static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char shown[PATH_MAX];

	(void)ftw;
	if (type == FTW_D) {
		clean_dir(walk_run, path);
		return 0;
	}
	if (type == FTW_DNR) {
		util_err("defrag", path, "cannot read the directory");
		walk_run->collect_failed = true;
		return 0;
	}
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (tmpname_parse(strrchr(path, '/') ? strrchr(path, '/') + 1 : path, &(pid_t){ 0 }))
		return 0; /* one of ours, in use by a live process */
	/* shown as the user named it: their directory + the rest of the path */
	snprintf(shown, sizeof(shown), "%s%s", walk_run->walk_shown, path + walk_run->walk_skip);
	return add_entry(walk_run, shown, path, st) < 0 ? -1 : 0;
}

static int collect_path(struct run *run, const char *shown)
{
	struct mountres r;
	const char *backing = r.path;
	struct stat st;
	int ret;

	ret = mountres_resolve(shown, &r);
	if (ret >= 0 && lstat(backing, &st) < 0)
		ret = -errno;
	if (ret < 0) {
		util_err("defrag", shown, "%s", strerror(-ret));
		return ret;
	}
	if (S_ISDIR(st.st_mode) && !run->o->recursive) {
		util_err("defrag", shown, "is a directory (use -r to defragment its files)");
		return -EISDIR;
	}
	if (S_ISDIR(st.st_mode)) {
		walk_run = run;
		run->walk_shown = shown;
		run->walk_skip = strlen(backing);
		return nftw(backing, walk_one, 32, FTW_PHYS | FTW_MOUNT) < 0 ? -ENOMEM : 0;
	}
	if (!S_ISREG(st.st_mode)) {
		util_err("defrag", shown, "%s",
			 S_ISLNK(st.st_mode) ? "is a symbolic link; name its target instead"
					     : "not a regular file");
		return -EINVAL;
	}
	clean_parent(run, backing);
	return add_entry(run, shown, backing, &st);
}

static int by_inode(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* Keep the first name of each inode (hard links, or a file named twice). */
static void dedupe(struct run *run)
{
	size_t i, n = 0;

	if (!run->n)
		return; /* every path failed: ent may be NULL, which qsort must not get */
	qsort(run->ent, run->n, sizeof(*run->ent), by_inode);
	for (i = 0; i < run->n; i++) {
		if (n && run->ent[n - 1].dev == run->ent[i].dev &&
		    run->ent[n - 1].ino == run->ent[i].ino) {
			free(run->ent[i].shown);
			free(run->ent[i].backing);
			continue;
		}
		run->ent[n++] = run->ent[i];
	}
	run->n = n;
	qsort(run->ent, run->n, sizeof(*run->ent), by_order);
}

static int hotter(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->hot != y->hot)
		return x->hot > y->hot ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void order_hot_first(struct run *run)
{
	size_t i;

	for (i = 0; i < run->n; i++)
		run->ent[i].hot = hot_score(run->ent[i].backing);
	if (run->n)
		qsort(run->ent, run->n, sizeof(*run->ent), hotter);
}

/* ---- one file ---- */

static const char *reason(int err)
{
	switch (err) {
	case -EOPNOTSUPP:
		return "the file system does not report extents (no FIEMAP)";
	case -ESTALE:
		return "the file changed while being defragmented; stopped, its data is kept";
	case -EBUSY:
		return "the file was opened for writing while being defragmented; stopped, "
		       "its data is kept";
	case -EROFS:
		return "read-only file system";
	default:
		return strerror(-err);
	}
}

static int measure(int fd, uint64_t size, uint64_t unit, struct fiemap_stats *fs)
{
	struct fiemap_map map;
	int ret;

	ret = fiemap_read(fd, &map);
	if (ret == 0) {
		fiemap_stats(&map, size, unit, fs);
		fiemap_free(&map);
	}
	return ret;
}

/* The ext4 path. Returns an outcome, or -errno (-ENOTTY: use the copy path). */
static int by_move(struct run *run, struct target *t, int dir_fd)
{
	struct ext4move_job job = { .dir_fd = dir_fd, .donor_fd = -1, .st = t->st };
	char self[32];
	int ret;

	job.copy.progress = progress_update;
	job.copy.arg = &run->prog;
	/* the file examine() opened, for writing: through its descriptor, not its name */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->fd);
	job.fd = open(self, O_RDWR | O_NOATIME | O_CLOEXEC);
	if (job.fd < 0)
		job.fd = open(self, O_RDWR | O_CLOEXEC);
	if (job.fd < 0) {
		t->failed = "open the file for the exchange";
		return -errno;
	}
	ret = ext4move_prepare(&job);
	if (ret == 0 && job.donor.extents >= t->before.extents)
		ret = NOT_BETTER;
	if (ret == 0)
		ret = ext4move_run(&job);
	if (ret == -EOPNOTSUPP || ret == -ENOTTY || ret == -EINVAL)
		ret = job.copy.bytes ? ret : -ENOTTY; /* e.g. a non-extent (ext3) file */
	t->moved = job.copy.bytes;
	t->how = "ext4 move";
	t->failed = job.failed;
	ext4move_release(&job);
	if (ret >= 0 || ret == -ESTALE || ret == -EINTR)
		measure(job.fd, (uint64_t)t->st.st_size, t->unit, &t->after);
	close(job.fd);
	return ret < 0 ? ret : ret == NOT_BETTER ? NOT_BETTER : DONE;
}

/* Take a read lease: the kernel then tells us (SIGIO) when anyone opens for writing. */
static int take_lease(struct target *t)
{
	util_lease_broken = 0;
	if (util_test_flag("ACCEL_TEST_NO_LEASE"))
		return 0;
	if (fcntl(t->fd, F_SETLEASE, F_RDLCK) == 0)
		return 1;
	if (errno == EAGAIN)
		return -ETXTBSY; /* someone has it open for writing now */
	return 0;		 /* no leases here: rely on the size/mtime/ctime checks alone */
}

static int copy_swap(struct target *t, struct replace_job *job)
{
	struct fiemap_map map;
	int ret;

	ret = replace_build(job);
	if (ret < 0)
		return ret;
	t->moved = job->copy.bytes;
	ret = fiemap_read(job->tmp_fd, &map);
	if (ret == 0) {
		fiemap_stats(&map, (uint64_t)t->st.st_size, t->unit, &t->after);
		fiemap_free(&map);
	}
	if (ret == 0 && t->after.extents >= t->before.extents)
		ret = NOT_BETTER;
	util_test_pause("ACCEL_TEST_PAUSE_BEFORE_SWAP");
	if (util_stop_sig)
		ret = -EINTR;
	if (ret != 0) {
		replace_discard(job);
		return ret;
	}
	ret = replace_commit(job);
	return ret < 0 ? ret : DONE;
}

/* The copy path. Returns an outcome or -errno. */
static int by_copy(struct run *run, struct target *t, int dir_fd, const char *name)
{
	struct replace_job job = { .kind = "defrag",
				   .in_fd = t->fd,
				   .in_st = t->st,
				   .dir_fd = dir_fd,
				   .target = name,
				   .target_is_source = true };
	int lease, ret;

	t->how = "copy";
	if (t->st.st_nlink > 1)
		t->why = "has several hard links; skipped (the copy path would split them)";
	else if (meta_is_locked(t->fd))
		t->why = "is immutable or append-only; skipped";
	lease = t->why ? 0 : take_lease(t);
	if (lease < 0)
		t->why = "is open for writing by another process; skipped";
	if (t->why)
		return -EPERM;
	job.guard = lease ? &util_lease_broken : NULL;
	job.copy.progress = progress_update;
	job.copy.arg = &run->prog;
	/* the snapshot that every later check compares against, taken under the lease */
	ret = fstat(t->fd, &job.in_st) < 0 ? -errno : 0;
	if (ret == 0 && replace_same_file(&t->st, &job.in_st) < 0)
		ret = -ESTALE;
	if (ret == 0)
		ret = copy_swap(t, &job);
	if (ret == -EIO && util_lease_broken)
		ret = -EBUSY;
	t->failed = job.failed;
	memcpy(t->taken, job.taken, sizeof(t->taken));
	if (lease)
		fcntl(t->fd, F_SETLEASE, F_UNLCK);
	if (ret == NOT_BETTER)
		t->after = t->before;
	return ret;
}

static void say(struct run *run, const struct target *t, enum outcome oc, double secs)
{
	const char *path = t->e->shown;
	unsigned long long b = t->before.extents, a = t->after.extents;
	char sz[32];

	if (run->o->quiet)
		return;
	progress_clear(&run->prog);
	if (oc == DONE)
		printf("%s: %llu -> %llu extents, %s moved, %.2f s (%s)\n", path, b, a,
		       util_bytes(t->moved, sz, sizeof(sz)), secs, t->how);
	else if (oc == IDEAL && b > t->before.ideal)
		printf("%s: %llu extents, fewer than --min-extents %llu: left alone\n", path, b,
		       (unsigned long long)run->o->min_extents);
	else if (oc == IDEAL)
		printf("%s: %llu extent%s, the fewest %s can give it (%s): left alone\n", path, b,
		       b == 1 ? "" : "s", t->limit[0] ? "the file system" : "a file with its holes",
		       t->limit[0] ? t->limit : "one per data run");
	else if (oc == NOT_BETTER)
		printf("%s: %llu extents; the best free space found gives %llu: not better, "
		       "original kept\n",
		       path, b, a);
	else if (oc == WOULD)
		printf("%s: %llu extents, ideal %llu: would defragment\n", path, b,
		       (unsigned long long)t->before.ideal);
}

static void say_failure(struct run *run, const struct target *t, int err)
{
	const char *path = t->e->shown;

	progress_clear(&run->prog);
	if (t->why)
		util_err("defrag", path, "%s", t->why);
	else if (err == -EEXIST && t->taken[0])
		util_err("defrag", path,
			 "cannot %s: the name %s beside it is taken, not written (the file is "
			 "intact)",
			 t->failed, t->taken);
	else if (err == -EINTR)
		util_err("defrag", path, "interrupted; the file is intact%s",
			 strcmp(t->how, "copy") ? "" : ", temporary removed");
	else if (t->failed && err != -ESTALE && err != -EBUSY)
		util_err("defrag", path, "cannot %s: %s (the file is intact%s)", t->failed,
			 reason(err), strcmp(t->how, "copy") ? "" : ", temporary removed");
	else
		util_err("defrag", path, "%s", reason(err));
}

/* Open and measure; returns IDEAL/WOULD when nothing is to be done, 0 to go on. */
static int examine(struct run *run, struct target *t)
{
	int ret;

	t->how = "measure";
	t->failed = "open the file";
	/* collected as a regular file: a symlink put in its place since is not followed */
	t->fd = cmd_open_source(t->e->backing, O_RDONLY | O_NOFOLLOW);
	if (t->fd == -CMD_ENOTREG || t->fd == -EISDIR || t->fd == -ELOOP)
		t->why = "is no longer a regular file";
	if (t->fd < 0)
		return t->fd;
	t->failed = "stat the file";
	if (fstat(t->fd, &t->st) < 0)
		return -errno;
	if (!S_ISREG(t->st.st_mode)) {
		t->why = "is no longer a regular file";
		return -EINVAL;
	}
	if (t->st.st_dev != t->e->dev || t->st.st_ino != t->e->ino) {
		t->why = "is no longer the file it was when the run began (replaced); skipped";
		return -ESTALE;
	}
	t->failed = NULL;
	t->unit = fslimit_unit(t->fd, &run->fs, t->limit, sizeof(t->limit));
	ret = measure(t->fd, (uint64_t)t->st.st_size, t->unit, &t->before);
	if (ret < 0)
		return ret;
	t->after = t->before;
	if (t->before.extents < run->o->min_extents || t->before.extents <= t->before.ideal)
		return IDEAL;
	return run->o->dry_run ? WOULD : 0;
}

static int defrag_file(struct run *run, struct target *t)
{
	char name[NAME_MAX + 1];
	int dir_fd, ret;

	ret = examine(run, t);
	if (ret != 0)
		return ret;
	t->failed = "open the directory";
	dir_fd = util_open_parent(t->e->backing, name, sizeof(name));
	if (dir_fd < 0)
		return dir_fd;
	ret = -ENOTTY;
	if (run->o->method != METHOD_COPY && ext4move_possible(t->fd)) {
		progress_item(&run->prog, t->e->size, 0);
		ret = by_move(run, t, dir_fd);
	}
	if (ret == -ENOTTY && run->o->method == METHOD_MOVE) {
		t->why = "cannot be defragmented in place (not an ext4 extent-mapped file)";
	} else if (ret == -ENOTTY) {
		progress_item(&run->prog, t->e->size, t->e->size * REPLACE_PASSES);
		ret = by_copy(run, t, dir_fd, name);
	}
	close(dir_fd);
	return t->why && ret < 0 ? -EPERM : ret;
}

static void defrag_one(struct run *run, const struct entry *e)
{
	struct target t = { .e = e, .fd = -1 };
	double t0 = util_now();
	int ret;

	ret = defrag_file(run, &t);
	if (t.fd >= 0)
		close(t.fd);
	if (ret < 0) {
		say_failure(run, &t, ret);
		ret = FAILED;
	} else {
		say(run, &t, (enum outcome)ret, util_now() - t0);
	}
	run->count[ret]++;
	run->ext_before += t.before.extents;
	run->ext_after += ret == DONE ? t.after.extents : t.before.extents;
	run->moved += ret == DONE ? t.moved : 0;
	progress_done(&run->prog, 1, e->size);
}

static void say_total(struct run *run, double secs)
{
	char b[32];

	progress_clear(&run->prog);
	printf("total: %zu file%s: %u %s, %u left alone, %u not improved, %u failed; "
	       "extents %llu -> %llu; %s moved; %.2f s\n",
	       run->n, run->n == 1 ? "" : "s", run->count[DONE] + run->count[WOULD],
	       run->o->dry_run ? "to defragment" : "defragmented", run->count[IDEAL],
	       run->count[NOT_BETTER], run->count[FAILED], (unsigned long long)run->ext_before,
	       (unsigned long long)run->ext_after, util_bytes(run->moved, b, sizeof(b)), secs);
}

static int collect(struct run *run, int argc, char **argv)
{
	uint64_t bytes = 0;
	int i, ret;

	walk_run = run;
	for (i = 0; i < argc; i++) {
		ret = collect_path(run, argv[i]);
		if (ret == -ENOMEM)
			return ret;
		run->collect_failed |= ret < 0;
	}
	dedupe(run);
	if (run->o->hot_first)
		order_hot_first(run);
	for (i = 0; (size_t)i < run->n; i++)
		bytes += run->ent[i].size;
	progress_init(&run->prog, "defrag", "files", run->n, bytes, !run->o->quiet);
	return 0;
}

static void free_entries(struct run *run)
{
	size_t i;

	for (i = 0; i < run->n; i++) {
		free(run->ent[i].shown);
		free(run->ent[i].backing);
	}
	free(run->ent);
}

int cmd_defrag(int argc, char **argv)
{
	struct defrag_opts o = { .min_extents = 2 };
	struct run run = { .o = &o };
	double t0 = util_now();
	char why[160];
	size_t i;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret != CLI_GO_ON)
		return ret;
	backend_init(BACKEND_AUTO, 0, why, sizeof(why));
	if (o.verbose)
		fprintf(stderr, "accel defrag: I/O backend %s%s%s\n",
			backend_kind_name(backend_active()), why[0] ? ": " : "", why);
	ret = collect(&run, argc - optind, argv + optind);
	for (i = 0; ret == 0 && i < run.n && !util_stop_sig; i++)
		defrag_one(&run, &run.ent[i]);
	if (ret == 0)
		say_total(&run, util_now() - t0);
	else
		util_err("defrag", NULL, "%s", strerror(-ret));
	free_entries(&run);
	if (cmd_signal_exit())
		return cmd_signal_exit();
	return ret || run.collect_failed || run.count[FAILED] ? EXIT_FAIL : 0;
}
