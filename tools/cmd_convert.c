// SPDX-License-Identifier: MIT
/*
 * cmd_convert.c - `accel convert IN OUT [--fdl F]` and `accel convert
 * --replace IN [--fdl F]`: build a new file as the FDL describes, prove it
 * identical, then give it its name. IN is only ever read. Like VMS CONVERT
 * followed by RENAME, except the RENAME happens only when the CONVERT
 * succeeded, in the same command (the engine is tools/replace.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cmd.h"
#include "fdl.h"
#include "fiemap.h"
#include "fslimit.h"
#include "meta.h"
#include "mountres.h"
#include "progress.h"
#include "replace.h"
#include "util.h"

struct convert_opts {
	const char *fdl_path;
	bool replace;
	bool verbose;
	const char *in;
	const char *out;
};

static void help(void)
{
	printf("Usage: accel convert [--fdl FILE.fdl] IN OUT\n"
	       "       accel convert --replace [--fdl FILE.fdl] IN\n\n"
	       "Create OUT as FILE.fdl describes (default: like IN, contiguous, holes kept),\n"
	       "copy IN's data into it (holes preserved, large I/O through io_uring), fsync,\n"
	       "re-read and compare checksums, then apply owner, mode, timestamps, xattrs,\n"
	       "ACLs and the FDL's ACCELFS tuning attributes. OUT is built under a temporary\n"
	       "name beside it and appears only when complete; it must not exist. IN is\n"
	       "never modified. On a terminal a progress line is drawn on stderr.\n\n"
	       "  --fdl FILE.fdl  layout and metadata to apply, in OpenVMS FDL syntax (FILE\n"
	       "                  ALLOCATION, BEST_TRY_CONTIGUOUS, CONTIGUOUS, EXTENSION,\n"
	       "                  RECORD, AREA 0, LINUX, ACCELFS; see 'accel analyze --fdl')\n"
	       "  --replace       build beside IN and rename over IN only after verification;\n"
	       "                  on any failure IN is intact and the temporary is removed\n"
	       "  -v, --verbose   say which I/O backend is used\n"
	       "  -h, --help\n\n"
	       "Exit status: 0 converted, 1 failed (IN intact), 2 usage error or bad FDL,\n"
	       "130 interrupted (IN intact, temporary removed).\n");
}

static const struct cli_cmd cli = { .name = "convert", .help = help, .own_operands = true };

/* Returns CLI_GO_ON to convert, or the exit status. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "fdl", .string = &o->fdl_path },
		{ .name = "replace", .flag = &o->replace },
		{ .name = "verbose", .letter = 'v', .flag = &o->verbose },
		{ NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);

	if (ret != CLI_GO_ON)
		return ret;
	if (argc - optind != (o->replace ? 1 : 2)) {
		util_err("convert", NULL, "%s (see 'accel convert --help')",
			 o->replace ? "--replace takes exactly one file, IN" : "need IN and OUT");
		return EXIT_USAGE;
	}
	o->in = argv[optind];
	o->out = o->replace ? NULL : argv[optind + 1];
	return CLI_GO_ON;
}

static int load_fdl(const char *path, struct fdl *fdl)
{
	struct fdl_error err = { 0 };
	int ret;

	ret = fdl_load(path, fdl, &err);
	if (ret == -EINVAL && err.line)
		util_err("convert", NULL, "%s:%u:%u: %s", path, err.line, err.col, err.msg);
	else if (ret < 0)
		util_err("convert", path, "cannot read the FDL: %s",
			 ret == -EINVAL ? "not a regular file" : strerror(-ret));
	else if (fdl->legacy)
		util_err("convert", path,
			 "note: the older [section] form, read as before; 'accel analyze --fdl' "
			 "writes OpenVMS FDL now (docs/defrag.md)");
	return ret;
}

/* Open IN (its backing file) and refuse what cannot be converted safely. */
static int open_in(const struct convert_opts *o, const char *in, struct replace_job *job)
{
	int ret;

	/* --replace renames over IN's name: that must be the file, not a link to it */
	job->in_fd = cmd_open_source(in, O_RDONLY | (o->replace ? O_NOFOLLOW : 0));
	if (job->in_fd == -ELOOP && o->replace) {
		util_err("convert", o->in, "is a symbolic link, not replaced (name its target)");
		return job->in_fd;
	}
	if (job->in_fd < 0) {
		util_err("convert", o->in, "%s", cmd_strerror(job->in_fd));
		return job->in_fd;
	}
	ret = fstat(job->in_fd, &job->in_st) < 0 ? -errno : 0;
	if (ret == 0 && !S_ISREG(job->in_st.st_mode))
		ret = S_ISDIR(job->in_st.st_mode) ? -EISDIR : -EINVAL;
	if (ret < 0) {
		util_err("convert", o->in, "%s",
			 ret == -EINVAL ? "not a regular file" : strerror(-ret));
	} else if (o->replace && job->in_st.st_nlink > 1) {
		util_err("convert", o->in,
			 "has %lu hard links; replacing one name would split "
			 "them (use 'accel defrag' on ext4, which keeps the inode)",
			 (unsigned long)job->in_st.st_nlink);
		ret = -EMLINK;
	} else if (o->replace && meta_is_locked(job->in_fd)) {
		util_err("convert", o->in, "is immutable or append-only; not replaced");
		ret = -EPERM;
	}
	return ret;
}

static void report(const struct convert_opts *o, const struct replace_job *job,
		   const struct fiemap_stats *fs, double secs)
{
	char b[32];

	printf("%s -> %s: %s copied and verified, %llu extent%s (ideal %llu), %.2f s\n", o->in,
	       o->replace ? o->in : o->out, util_bytes(job->copy.bytes, b, sizeof(b)),
	       (unsigned long long)fs->extents, fs->extents == 1 ? "" : "s",
	       (unsigned long long)fs->ideal, secs);
}

static int fail(const struct convert_opts *o, const struct replace_job *job, int err)
{
	const char *why = err == -ESTALE		   ? "IN changed while it was being copied"
			  : err == -EIO && job->copy.bytes ? "the copy does not match IN"
							   : strerror(-err);

	if (err == -EINTR) {
		util_err("convert", o->in, "interrupted; IN is intact, temporary removed");
		return cmd_signal_exit();
	}
	if (err == -EEXIST && job->taken[0]) {
		util_err("convert", o->in,
			 "cannot %s: the name %s beside the target is taken, not written (IN is "
			 "intact%s)",
			 job->failed, job->taken, o->replace ? "" : "; nothing was created");
		return EXIT_FAIL;
	}
	if (err == -EEXIST && !o->replace) {
		util_err("convert", o->out, "already exists; not overwritten");
		return EXIT_FAIL;
	}
	util_err("convert", o->in, "cannot %s: %s (IN is intact%s)", job->failed, why,
		 o->replace ? ", temporary removed" : "; nothing was created");
	return EXIT_FAIL;
}

/* The target: IN's own name for --replace, else OUT (both in backing terms). */
static int open_target(const struct convert_opts *o, const char *in, struct replace_job *job,
		       char *name, size_t len)
{
	const char *path = in, *shown = o->in;
	struct mountres r;
	int ret;

	struct stat st;

	if (!o->replace) {
		ret = mountres_resolve(o->out, &r);
		if (ret < 0) {
			util_err("convert", o->out, "%s", strerror(-ret));
			return ret;
		}
		path = r.path;
		shown = o->out;
	}
	job->dir_fd = util_open_parent(path, name, len);
	if (job->dir_fd < 0)
		util_err("convert", shown, "%s", strerror(-job->dir_fd));
	if (job->dir_fd < 0)
		return job->dir_fd;
	if (!o->replace && fstatat(job->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		util_err("convert", o->out, "%s",
			 S_ISLNK(st.st_mode) ? "is a symbolic link, not written"
					     : "already exists; not overwritten");
		return -EEXIST;
	}
	job->target = name;
	return 0;
}

/*
 * FDL CONTIGUOUS yes: RMS fails the CONVERT unless the file is contiguous;
 * here, unless the copy is at the fewest extents the file system can give
 * it (@fs, fslimit.h). 0, or -ENOSPC after saying so.
 */
static int check_contiguous(const struct convert_opts *o, const struct replace_job *job,
			    const struct fiemap_stats *fs, const char *limit)
{
	if (!job->fdl || !job->fdl->contiguous_required || fs->extents <= fs->ideal)
		return 0;
	util_err("convert", o->in,
		 "FDL CONTIGUOUS yes: the copy has %llu extents, the fewest the file system can "
		 "give is %llu (%s); nothing was %s (IN is intact)",
		 (unsigned long long)fs->extents, (unsigned long long)fs->ideal,
		 fs->ideal > fs->data_runs ? limit : "one per data run",
		 o->replace ? "replaced" : "created");
	return -ENOSPC;
}

/* Build, measure, commit, report. */
static int run_job(const struct convert_opts *o, struct replace_job *job)
{
	struct fiemap_stats fs = { 0 };
	struct fslimit lim = { 0 };
	struct fiemap_map map;
	double t0 = util_now();
	uint64_t size = (uint64_t)job->in_st.st_size;
	struct progress prog;
	char why[96] = "";
	int ret;

	progress_init(&prog, "convert", NULL, 1, size, true);
	progress_item(&prog, size, size * REPLACE_PASSES);
	job->copy.progress = progress_update;
	job->copy.arg = &prog;
	ret = replace_build(job);
	progress_clear(&prog);
	if (ret < 0)
		return fail(o, job, ret);
	if (fiemap_read(job->tmp_fd, &map) == 0) {
		fiemap_stats(&map, (uint64_t)job->in_st.st_size,
			     fslimit_unit(job->tmp_fd, &lim, why, sizeof(why)), &fs);
		fiemap_free(&map);
	}
	if (check_contiguous(o, job, &fs, why) < 0) {
		replace_discard(job);
		return EXIT_FAIL;
	}
	ret = replace_commit(job);
	if (ret < 0)
		return fail(o, job, ret);
	if (ret > 0)
		util_err("convert", o->replace ? o->in : o->out, "warning: cannot %s", job->failed);
	report(o, job, &fs, util_now() - t0);
	return 0;
}

/* FDL RECORD FORMAT fixed: IN must hold whole records. 0, or -EINVAL after saying so. */
static int check_records(const struct convert_opts *o, const struct replace_job *job)
{
	const struct fdl *fdl = job->fdl;
	uint64_t size = (uint64_t)job->in_st.st_size;

	if (!fdl || fdl->format != FDL_FORMAT_FIXED || size % fdl->record_size == 0)
		return 0;
	util_err("convert", o->in,
		 "has %llu bytes, not a whole number of the FDL's fixed records of %u bytes "
		 "(RECORD FORMAT fixed, SIZE %u); nothing was done",
		 (unsigned long long)size, fdl->record_size, fdl->record_size);
	return -EINVAL;
}

static int convert(const struct convert_opts *o, const struct fdl *fdl)
{
	struct replace_job job = { .kind = "convert", .in_fd = -1, .dir_fd = -1, .fdl = fdl };
	char name[NAME_MAX + 1];
	struct mountres in;
	int ret;

	job.target_is_source = o->replace;
	job.noreplace = !o->replace;
	job.owner_best_effort = !o->replace && !(fdl && (fdl->has_uid || fdl->has_gid));
	ret = mountres_resolve(o->in, &in);
	if (ret < 0)
		util_err("convert", o->in, "%s", strerror(-ret));
	if (ret >= 0)
		ret = open_in(o, in.path, &job);
	if (ret >= 0)
		ret = check_records(o, &job);
	if (ret >= 0)
		ret = open_target(o, in.path, &job, name, sizeof(name));
	ret = ret < 0 ? EXIT_FAIL : run_job(o, &job);
	if (job.in_fd >= 0)
		close(job.in_fd);
	if (job.dir_fd >= 0)
		close(job.dir_fd);
	return ret;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_opts o = { 0 };
	char why[160];
	struct fdl fdl;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret != CLI_GO_ON)
		return ret;
	fdl_init(&fdl);
	if (o.fdl_path && load_fdl(o.fdl_path, &fdl) < 0) {
		fdl_free(&fdl);
		return EXIT_USAGE;
	}
	backend_init(BACKEND_AUTO, 0, why, sizeof(why));
	if (o.verbose)
		fprintf(stderr, "accel convert: I/O backend %s%s%s\n",
			backend_kind_name(backend_active()), why[0] ? ": " : "", why);
	ret = convert(&o, o.fdl_path ? &fdl : NULL);
	fdl_free(&fdl);
	return ret;
}
