// SPDX-License-Identifier: MIT
/*
 * cmd_analyze.c - `accel analyze FILE...`: the on-disk layout of each file
 * from FIEMAP (text or --json), and with --fdl a FILE.fdl describing how to
 * rebuild it contiguously with the same ownership, mode and accelfs tuning.
 * Never modifies the files it looks at (they are opened O_NOATIME if we may).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "fdl.h"
#include "fiemap.h"
#include "fslimit.h"
#include "json.h"
#include "meta.h"
#include "mountres.h"
#include "outfile.h"
#include "util.h"

struct analyze_opts {
	bool json;
	bool fdl;
	unsigned int printed; /* JSON objects so far */
	struct fslimit fs;    /* the file system last seen */
};

struct analysis {
	const char *path; /* as given */
	char backing[PATH_MAX];
	struct stat st;
	struct fiemap_stats fs;
	uint64_t map_end; /* logical end of the last extent */
	char limit[96];	  /* what limits contiguity, "" for nothing known */
	char fdl_path[PATH_MAX + 8];
};

static void help(void)
{
	printf("Usage: accel analyze [--json] [--fdl] FILE...\n\n"
	       "Show where each FILE's data lies: size, allocated bytes, extents (kernel\n"
	       "extents merged when physically contiguous), holes, unwritten extents, a\n"
	       "fragmentation score (0 = ideal, 90 = ten times the extents needed) and the\n"
	       "ideal: the fewest extents the file system can give the file (one per run of\n"
	       "data between holes, and on ext4 one per block group a run spans).\n\n"
	       "  --fdl    also write FILE.fdl, in OpenVMS FDL syntax: FILE ALLOCATION,\n"
	       "           BEST_TRY_CONTIGUOUS..., RECORD, the owner and mode (LINUX) and\n"
	       "           the tuning attributes (ACCELFS), for 'accel convert --fdl'\n"
	       "  --json   one JSON array on stdout, for scripts\n"
	       "  -h, --help\n\n"
	       "Paths inside an accelfs mount are analysed on the backing file.\n"
	       "Exit status: 0 all analysed, 1 some file failed, 2 usage error.\n");
}

static const struct cli_cmd cli = { .name = "analyze", .help = help, .operands = "FILE" };

static int measure(int fd, struct analysis *a, struct fslimit *l)
{
	uint64_t unit = fslimit_unit(fd, l, a->limit, sizeof(a->limit));
	struct fiemap_map map;
	int ret;

	ret = fiemap_read(fd, &map);
	if (ret < 0)
		return ret;
	fiemap_stats(&map, (uint64_t)a->st.st_size, unit, &a->fs);
	a->map_end = map.n ? map.ext[map.n - 1].logical + map.ext[map.n - 1].length : 0;
	fiemap_free(&map);
	return 0;
}

/* The FDL of the file open as @fd: its layout now, owner, mode, tuning. 0 or -errno. */
static int describe(int fd, const struct analysis *a, struct fdl *fdl)
{
	const char *base = strrchr(a->path, '/');
	uint64_t size = (uint64_t)a->st.st_size;

	fdl_init(fdl);
	fdl->name = strdup(base ? base + 1 : a->path);
	if (!fdl->name)
		return -ENOMEM;
	fdl->has_preallocate = fdl->has_uid = fdl->has_gid = fdl->has_mode = true;
	fdl->preallocate = a->map_end > size ? a->map_end : size;
	fdl->uid = a->st.st_uid;
	fdl->gid = a->st.st_gid;
	fdl->mode = a->st.st_mode & 07777;
	return meta_accelfs_load(fd, fdl);
}

/* The comment lines at the top, and IDENT in ANALYZE/RMS/FDL's form: date, time, who. */
static void heading(const struct analysis *a, char *comment, size_t clen, char *ident, size_t ilen)
{
	time_t now = time(NULL);
	struct tm tm;
	char date[32];

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%d-%b-%Y %H:%M:%S", &tm);
	for (char *p = date; *p; p++)
		*p = *p >= 'a' && *p <= 'z' ? *p - 32 : *p;
	snprintf(ident, ilen, "%s   accel analyze %s", date, ACCELFS_VERSION);
	snprintf(comment, clen,
		 "! accelfs file definition (OpenVMS FDL syntax; docs/defrag.md)\n"
		 "! %llu bytes; now %llu extent%s, ideal %llu (%s)\n"
		 "! Use: accel convert --fdl FILE.fdl IN OUT\n",
		 (unsigned long long)a->st.st_size, (unsigned long long)a->fs.extents,
		 a->fs.extents == 1 ? "" : "s", (unsigned long long)a->fs.ideal,
		 a->fs.ideal > a->fs.data_runs ? a->limit : "one per data run");
}

/*
 * Write FILE.fdl through a temporary renamed over it (outfile.h): a symbolic
 * link planted at FILE.fdl is refused, never written through. 0 or -errno,
 * with the cause in @why.
 */
static int write_fdl(int fd, struct analysis *a, char *why, size_t len)
{
	struct outfile out = { .dir_fd = -1 };
	char comment[512], ident[96];
	struct fdl fdl;
	int ret = describe(fd, a, &fdl);

	snprintf(a->fdl_path, sizeof(a->fdl_path), "%s.fdl", a->path);
	heading(a, comment, sizeof(comment), ident, sizeof(ident));
	if (ret == 0 && (ret = outfile_open(&out, a->fdl_path, "fdl")) == 0) {
		ret = fdl_write(out.f, &fdl, comment, ident);
		if (ret == 0)
			ret = outfile_commit(&out);
		else
			outfile_discard(&out);
	}
	if (ret < 0)
		outfile_why(&out, ret, why, len);
	fdl_free(&fdl);
	return ret;
}

static void print_text(const struct analysis *a)
{
	const struct fiemap_stats *fs = &a->fs;
	char b1[32], b2[32];

	printf("%s%s%s\n", a->path, strcmp(a->path, a->backing) ? " -> " : "",
	       strcmp(a->path, a->backing) ? a->backing : "");
	printf("  size           %llu (%s)\n", (unsigned long long)a->st.st_size,
	       util_bytes((uint64_t)a->st.st_size, b1, sizeof(b1)));
	printf("  allocated      %llu (%s)\n", (unsigned long long)a->st.st_blocks * 512ULL,
	       util_bytes((uint64_t)a->st.st_blocks * 512, b2, sizeof(b2)));
	printf("  extents        %llu (%llu as the kernel counts them)\n",
	       (unsigned long long)fs->extents, (unsigned long long)fs->kernel_extents);
	printf("  holes          %llu (%llu bytes)\n", (unsigned long long)fs->holes,
	       (unsigned long long)fs->hole_bytes);
	printf("  unwritten      %llu\n", (unsigned long long)fs->unwritten);
	printf("  fragmentation  %.1f\n", fs->score);
	printf("  ideal          %llu extent%s (%s)%s\n", (unsigned long long)fs->ideal,
	       fs->ideal == 1 ? "" : "s", fs->ideal > fs->data_runs ? a->limit : "one per data run",
	       fs->extents > fs->ideal ? "" : ", already ideal");
	if (a->fdl_path[0])
		printf("  fdl            %s\n", a->fdl_path);
}

static void print_json(const struct analysis *a, struct analyze_opts *o)
{
	const struct fiemap_stats *fs = &a->fs;

	printf("%s\n  {\"path\": ", o->printed++ ? "," : "");
	json_string(a->path);
	printf(", \"backing\": ");
	json_string(a->backing);
	printf(", \"size\": %llu, \"allocated\": %llu, \"extents\": %llu, "
	       "\"kernel_extents\": %llu, \"ideal_extents\": %llu, \"holes\": %llu, "
	       "\"hole_bytes\": %llu, \"unwritten\": %llu, \"fragmentation\": %.1f, \"fdl\": ",
	       (unsigned long long)a->st.st_size, (unsigned long long)a->st.st_blocks * 512ULL,
	       (unsigned long long)fs->extents, (unsigned long long)fs->kernel_extents,
	       (unsigned long long)fs->ideal, (unsigned long long)fs->holes,
	       (unsigned long long)fs->hole_bytes, (unsigned long long)fs->unwritten, fs->score);
	json_string_or_null(a->fdl_path[0] ? a->fdl_path : NULL);
	printf("}");
}

static const char *reason(int err)
{
	if (err == -EOPNOTSUPP)
		return "the file system does not report extents (no FIEMAP)";
	return strerror(-err);
}

static int analyze_one(const char *path, struct analyze_opts *o)
{
	struct analysis a = { .path = path };
	struct mountres r;
	char why[NAME_MAX + 96];
	int fd, ret;

	ret = mountres_resolve(path, &r);
	fd = ret < 0 ? ret : cmd_open_source(r.path, O_RDONLY);
	if (fd < 0) {
		util_err("analyze", path, "%s", cmd_strerror(fd));
		return -1;
	}
	snprintf(a.backing, sizeof(a.backing), "%s", r.path);
	ret = fstat(fd, &a.st) < 0 ? -errno : 0;
	if (ret == 0 && !S_ISREG(a.st.st_mode))
		ret = S_ISDIR(a.st.st_mode) ? -EISDIR : -EINVAL;
	if (ret == 0)
		ret = measure(fd, &a, &o->fs);
	if (ret == 0 && o->fdl && (ret = write_fdl(fd, &a, why, sizeof(why))) < 0)
		util_err("analyze", a.fdl_path, "%s", why);
	else if (ret < 0)
		util_err("analyze", path, "%s",
			 ret == -EINVAL ? "not a regular file" : reason(ret));
	close(fd);
	if (ret < 0)
		return -1;
	if (o->json)
		print_json(&a, o);
	else
		print_text(&a);
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_opts o = { 0 };
	const struct cli_opt opts[] = {
		{ .name = "json", .flag = &o.json },
		{ .name = "fdl", .flag = &o.fdl },
		{ NULL },
	};
	int i, failed = 0, ret = cli_parse(&cli, opts, argc, argv);

	if (ret != CLI_GO_ON)
		return ret;
	if (o.json)
		printf("[");
	for (i = optind; i < argc; i++)
		failed |= analyze_one(argv[i], &o) < 0;
	if (o.json)
		printf("\n]\n");
	return failed ? EXIT_FAIL : 0;
}
