// SPDX-License-Identifier: MIT
/*
 * sysgen.c - the report and its rows for shared memory (the pools' home),
 * System V limits, RLIMIT_MEMLOCK, io_uring, the FUSE module limits and the
 * tracing prerequisites; sysgen_mount.c adds the per-mount and dirty-page
 * rows, sysgen_cpu.c the idle-vCPU row. Every value is read below the
 * configured roots, so a fake tree in a temporary directory stands in for
 * the system in tests.
 *
 * Judging never fails: a file that cannot be read becomes "absent" (the
 * kernel does not have the knob) or "unreadable", and the row says whether
 * that matters. The reasons for each minimum are in docs/tuning.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "pool.h"
#include "sysgen_i.h"
#include "util.h"

/* The pools found in the shm root, and those mounts will create. */
struct shm_pools {
	uint64_t total;	  /* bytes of existing pool segments */
	uint64_t largest; /* largest pool, existing or planned */
	uint64_t planned; /* bytes of pools still to be created */
};

const char *sysgen_status_name(enum sysgen_status s)
{
	return s == SYSGEN_OK ? "ok" : s == SYSGEN_LOW ? "LOW" : "info";
}

void sysgen_path(char *buf, size_t len, const char *root, const char *rel)
{
	snprintf(buf, len, "%s/%s", root, rel);
}

int sysgen_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!ret)
		buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

int sysgen_read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;
	unsigned long long n;
	int ret = sysgen_read_line(path, buf, sizeof(buf));

	if (ret)
		return ret;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(buf, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\t'))
		return -EINVAL;
	*v = n;
	return 0;
}

struct sysgen_row *sysgen_row_add(struct sysgen_ctx *ctx, const char *fmt, ...)
{
	struct sysgen_report *rep = ctx->rep;
	struct sysgen_row *row;
	va_list ap;

	if (rep->nrows == rep->cap) {
		size_t cap = rep->cap ? 2 * rep->cap : 32;
		struct sysgen_row **rows = realloc(rep->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		rep->rows = rows;
		rep->cap = cap;
	}
	/* Callers fill several rows at once: a row's address must not change. */
	row = calloc(1, sizeof(*row));
	if (!row)
		return NULL;
	rep->rows[rep->nrows++] = row;
	va_start(ap, fmt);
	vsnprintf(row->param, sizeof(row->param), fmt, ap);
	va_end(ap);
	sysgen_set(row->needed, "-");
	row->status = SYSGEN_INFO;
	return row;
}

int sysgen_judge_min(struct sysgen_row *row, const char *path, uint64_t min,
		     enum sysgen_status absent, uint64_t *out)
{
	uint64_t v;
	int ret = sysgen_read_u64(path, &v);

	sysgen_set(row->needed, ">= %llu", (unsigned long long)min);
	if (ret) {
		sysgen_set(row->current, "%s", ret == -ENOENT ? "absent" : "unreadable");
		row->status = absent;
		return ret;
	}
	sysgen_set(row->current, "%llu", (unsigned long long)v);
	row->status = v >= min ? SYSGEN_OK : SYSGEN_LOW;
	if (row->status == SYSGEN_LOW) {
		sysgen_set(row->set_path, "%s", path);
		row->set_value = min;
	}
	if (out)
		*out = v;
	return 0;
}

/*
 * Header of a pool segment: its size and geometry. -EPROTO if not a pool;
 * -EPERM (with its file size) for an accel* segment that fails the pool's
 * trust check: not read (docs/cache.md, "Trust").
 */
static int pool_header_at(int dirfd, const char *name, struct pool_header *h, uint64_t *size)
{
	char shm_name[NAME_MAX + 2];
	struct stat st;
	int ret, fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -EPROTO;
	}
	snprintf(shm_name, sizeof(shm_name), "/%s", name);
	if (pool_seg_trusted(shm_name, &st, 0660, NULL, 0)) {
		close(fd);
		*size = (uint64_t)st.st_size;
		return strncmp(name, "accel", 5) ? -EPROTO : -EPERM;
	}
	ret = pool_seg_header(fd, h, size); /* cache/'s one header reader */
	close(fd);
	if (ret)
		return -EPROTO;
	if (h->total_size)
		*size = h->total_size;
	return 0;
}

static void pool_row(struct sysgen_ctx *ctx, const char *name, const struct pool_header *h,
		     uint64_t size)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "pool /%s", name);
	char b1[32];

	if (!row)
		return;
	util_bytes(size, row->current, sizeof(row->current));
	if (h->version != POOL_LAYOUT_VERSION)
		sysgen_set(row->why, "layout version %u, not %u: accel pool --reset", h->version,
			   POOL_LAYOUT_VERSION);
	else
		sysgen_set(row->why, "%u x %s buffers", h->nbufs,
			   util_bytes(h->bucket_size, b1, sizeof(b1)));
}

/* A segment named like a pool that is not ours to read: its file size only. */
static void untrusted_row(struct sysgen_ctx *ctx, const char *name, uint64_t size)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "pool /%s", name);

	if (!row)
		return;
	util_bytes(size, row->current, sizeof(row->current));
	sysgen_set(row->why, "untrusted (not ours, or mode wider than 0660): accel pool --reset");
}

/* Rows for the pool segments in the shm root (sorted), and their sizes. */
static int shm_pools_scan(struct sysgen_ctx *ctx, struct shm_pools *p)
{
	struct dirent **ents;
	struct pool_header h;
	bool have_default = false;
	uint64_t size = 0;
	int i, n, dirfd = open(ctx->shm, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	n = dirfd < 0 ? -1 : scandir(ctx->shm, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		int ret = ents[i]->d_name[0] == '.'
			      ? -ENOENT
			      : pool_header_at(dirfd, ents[i]->d_name, &h, &size);

		if (ret == -EPERM) {
			untrusted_row(ctx, ents[i]->d_name, size);
			p->total += size;
		} else if (!ret) {
			pool_row(ctx, ents[i]->d_name, &h, size);
			p->total += size;
			p->largest = size > p->largest ? size : p->largest;
			have_default |= !strcmp(ents[i]->d_name, POOL_DEFAULT_NAME + 1);
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	if (dirfd >= 0)
		close(dirfd);
	if (!have_default)
		p->planned = SYSGEN_DEFAULT_POOL_BYTES;
	return 0;
}

static int statvfs_space(const char *dir, uint64_t *size, uint64_t *avail)
{
	struct statvfs vfs;

	if (statvfs(dir, &vfs))
		return -errno;
	*size = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	*avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	return 0;
}

/* A "current >= needed" row in bytes; LOW rows get @manual. */
static void bytes_row(struct sysgen_row *row, uint64_t cur, uint64_t need, const char *manual)
{
	char b[32];

	util_bytes(cur, row->current, sizeof(row->current));
	sysgen_set(row->needed, ">= %s", util_bytes(need, b, sizeof(b)));
	row->status = cur >= need ? SYSGEN_OK : SYSGEN_LOW;
	if (row->status == SYSGEN_LOW)
		sysgen_set(row->manual, "%s", manual);
}

static int shm_rows(struct sysgen_ctx *ctx, struct shm_pools *p)
{
	int (*space)(const char *, uint64_t *, uint64_t *) =
	    ctx->cfg->fs_space ? ctx->cfg->fs_space : statvfs_space;
	struct sysgen_row *sz, *fr;
	uint64_t size, avail, all, head, want;
	char manual[160], b[32];

	shm_pools_scan(ctx, p);
	if (p->planned) {
		sz = sysgen_row_add(ctx, "pool %s", POOL_DEFAULT_NAME);
		if (!sz)
			return -ENOMEM;
		sysgen_set(sz->current, "absent");
		sysgen_set(sz->why, "made by the first mount without pool= (~%s)",
			   util_bytes(p->planned, b, sizeof(b)));
		p->largest = p->planned > p->largest ? p->planned : p->largest;
	}
	all = p->total + p->planned;
	head = all / 8 > SYSGEN_SHM_HEADROOM_MIN ? all / 8 : SYSGEN_SHM_HEADROOM_MIN;
	sz = sysgen_row_add(ctx, "/dev/shm size");
	fr = sz ? sysgen_row_add(ctx, "/dev/shm free") : NULL;
	if (!fr)
		return -ENOMEM;
	sysgen_set(sz->why, "all pools + 1/8 headroom (min 16 MiB)");
	sysgen_set(fr->why, "pools yet to be created + headroom");
	if (space(ctx->shm, &size, &avail)) {
		sysgen_set(sz->current, "unreadable");
		sysgen_set(fr->current, "unreadable");
		return 0;
	}
	/* Big enough for all pools, and for what else is there plus the new ones. */
	want = size - avail + p->planned + head;
	want = want > all + head ? want : all + head;
	sysgen_set(manual, "mount -o remount,size=%lluM /dev/shm; and size= in /etc/fstab",
		   (unsigned long long)((want + (1 << 20) - 1) >> 20));
	bytes_row(sz, size, all + head, manual);
	bytes_row(fr, avail, p->planned + head, manual);
	return 0;
}

/* System V limits: POSIX shm_open() on tmpfs is not subject to them. */
static int sysv_rows(struct sysgen_ctx *ctx, const struct shm_pools *p)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages = (p->total + p->planned + (uint64_t)page - 1) / (uint64_t)page;
	struct sysgen_row *max = sysgen_row_add(ctx, "kernel.shmmax");
	struct sysgen_row *all = max ? sysgen_row_add(ctx, "kernel.shmall") : NULL;
	char path[PATH_MAX];

	if (!all)
		return -ENOMEM;
	sysgen_path(path, sizeof(path), ctx->proc, "sys/kernel/shmmax");
	sysgen_judge_min(max, path, p->largest, SYSGEN_INFO, NULL);
	sysgen_path(path, sizeof(path), ctx->proc, "sys/kernel/shmall");
	sysgen_judge_min(all, path, pages, SYSGEN_INFO, NULL);
	/* Informational whatever the value: nothing to raise. */
	max->status = all->status = SYSGEN_INFO;
	max->set_path[0] = all->set_path[0] = '\0';
	sysgen_set(max->why, "SysV only; POSIX shm on tmpfs ignores it");
	sysgen_set(all->why, "SysV only (pages); tmpfs size= limits pools");
	return 0;
}

/* RLIMIT_MEMLOCK of this process, from /proc/self/limits. */
static int memlock_row(struct sysgen_ctx *ctx)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "RLIMIT_MEMLOCK");
	char path[PATH_MAX], line[256], soft[32] = "absent";
	FILE *f;

	if (!row)
		return -ENOMEM;
	sysgen_path(path, sizeof(path), ctx->proc, "self/limits");
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Max locked memory", 17) && sscanf(line + 17, "%31s", soft) == 1)
			break;
	}
	if (f)
		fclose(f);
	if (strcmp(soft, "unlimited") && strcmp(soft, "absent"))
		util_bytes(strtoull(soft, NULL, 10), row->current, sizeof(row->current));
	else
		sysgen_set(row->current, "%s", soft);
	sysgen_set(row->why, "no registered buffers used; rings only (< 5.12)");
	return 0;
}

/* True if some accelfs mount's daemon runs as another user than root. */
static bool nonroot_daemon(const struct sysgen_report *rep)
{
	size_t i;

	for (i = 0; i < rep->nmounts; i++)
		if (rep->mounts[i].uid != 0)
			return true;
	return false;
}

/* The hard RLIMIT_NOFILE in @limits (a /proc/PID/limits file), or -errno. */
static int nofile_hard(const char *limits, char *hard, size_t len)
{
	char line[256], soft[32], h[32];
	FILE *f = fopen(limits, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Max open files", 14) &&
		    sscanf(line + 14, "%31s %31s", soft, h) == 2) {
			snprintf(hard, len, "%s", h);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/*
 * A daemon that cannot use file handles (not root: no CAP_DAC_READ_SEARCH,
 * or SOURCE without handles) keeps one descriptor per name the kernel
 * caches, and raises its soft limit to the hard one; a daemon started from
 * here inherits this process's hard limit. Certain trouble for non-root
 * daemons, so LOW only then.
 */
static int nofile_row(struct sysgen_ctx *ctx)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "RLIMIT_NOFILE hard");
	char path[PATH_MAX], hard[32];
	bool fallback = nonroot_daemon(ctx->rep);

	if (!row)
		return -ENOMEM;
	sysgen_set(row->needed, ">= %u", SYSGEN_NOFILE_FALLBACK);
	sysgen_path(path, sizeof(path), ctx->proc, "self/limits");
	if (nofile_hard(path, hard, sizeof(hard))) {
		sysgen_set(row->current, "absent");
		return 0;
	}
	sysgen_set(row->current, "%s", hard);
	if (!strcmp(hard, "unlimited") || strtoull(hard, NULL, 10) >= SYSGEN_NOFILE_FALLBACK)
		row->status = SYSGEN_OK;
	else if (fallback)
		row->status = SYSGEN_LOW;
	sysgen_set(row->why, "%s: one descriptor per name the kernel caches",
		   fallback ? "non-root daemon" : "daemons without file handles only");
	if (row->status == SYSGEN_LOW)
		sysgen_set(row->manual, "LimitNOFILE=%u (systemd) or nofile in "
					"/etc/security/limits.conf, then remount",
			   SYSGEN_NOFILE_FALLBACK);
	return 0;
}

static void uring_judge(struct sysgen_ctx *ctx, struct sysgen_row *row, uint64_t v)
{
	char path[PATH_MAX], group[32] = "-1";

	sysgen_set(row->current, "%llu", (unsigned long long)v);
	row->status = SYSGEN_LOW;
	if (v == 0) {
		row->status = SYSGEN_OK;
		sysgen_set(row->why, "io_uring allowed for every daemon");
		return;
	}
	sysgen_path(path, sizeof(path), ctx->proc, "sys/kernel/io_uring_group");
	sysgen_read_line(path, group, sizeof(group));
	if (v == 1 && !nonroot_daemon(ctx->rep)) {
		row->status = SYSGEN_OK;
		sysgen_set(row->why, "root daemons may; others need gid %s", group);
	} else if (v == 1 && strcmp(group, "-1")) {
		row->status = SYSGEN_INFO;
		sysgen_set(row->why, "non-root daemons need io_uring_group %s", group);
	} else {
		sysgen_set(row->why, "%s daemons fall back to pread/pwrite",
			   v == 1 ? "non-root" : "all");
	}
	if (row->status == SYSGEN_LOW)
		sysgen_set(row->manual, "security policy, not changed by --apply: "
					"sysctl -w kernel.io_uring_disabled=0 and /etc/sysctl.d");
}

static int uring_row(struct sysgen_ctx *ctx)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "kernel.io_uring_disabled");
	char path[PATH_MAX];
	uint64_t v;
	int ret;

	if (!row)
		return -ENOMEM;
	sysgen_set(row->needed, "0 (1: root daemons)");
	sysgen_path(path, sizeof(path), ctx->proc, "sys/kernel/io_uring_disabled");
	ret = sysgen_read_u64(path, &v);
	if (ret == -ENOENT) {
		sysgen_set(row->current, "absent");
		row->status = SYSGEN_OK;
		sysgen_set(row->why, "kernel < 6.6: io_uring always allowed");
	} else if (ret) {
		sysgen_set(row->current, "unreadable");
	} else {
		uring_judge(ctx, row, v);
	}
	return 0;
}

/* fs.fuse.max_pages_limit and the caps on unprivileged daemons' queues. */
static const struct fuse_knob {
	const char *name;
	bool sys;	  /* below the sys root (module parameter), else proc */
	const char *rel;  /* path below the root */
	unsigned int min; /* what accelfs asks */
	const char *why, *absent, *persist;
} fuse_knobs[] = {
	{ "fs.fuse.max_pages_limit", false, "sys/fs/fuse/max_pages_limit", SYSGEN_MAX_PAGES,
	  "max_write 1 MiB = 256 pages", "older kernel: fixed 256",
	  "lost at reboot: fs.fuse.max_pages_limit = 256 in /etc/sysctl.d/" },
	{ "fuse.max_user_bgreq", true, "module/fuse/parameters/max_user_bgreq",
	  SYSGEN_MAX_BACKGROUND, "caps max_background of non-root daemons",
	  "fuse module not loaded: modprobe fuse",
	  "lost at reboot: options fuse max_user_bgreq=64 in /etc/modprobe.d/" },
	{ "fuse.max_user_congthresh", true, "module/fuse/parameters/max_user_congthresh",
	  SYSGEN_CONGESTION, "caps congestion_threshold of non-root",
	  "fuse module not loaded: modprobe fuse",
	  "lost at reboot: options fuse max_user_congthresh=48 in /etc/modprobe.d/" },
};

static int fuse_module_rows(struct sysgen_ctx *ctx)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(fuse_knobs) / sizeof(fuse_knobs[0]); i++) {
		const struct fuse_knob *k = &fuse_knobs[i];
		struct sysgen_row *row = sysgen_row_add(ctx, "%s", k->name);
		int ret;

		if (!row)
			return -ENOMEM;
		sysgen_path(path, sizeof(path), k->sys ? ctx->sys : ctx->proc, k->rel);
		/* Without the file the kernel has no such limit (or no FUSE). */
		ret = sysgen_judge_min(row, path, k->min, k->sys ? SYSGEN_INFO : SYSGEN_OK, NULL);
		sysgen_set(row->why, "%s", ret == -ENOENT ? k->absent : k->why);
		if (row->status == SYSGEN_LOW)
			sysgen_set(row->manual, "%s", k->persist);
	}
	return 0;
}

/*
 * fuse.enable_uring: FUSE over io_uring (-o io_uring=auto|on, libfuse >=
 * 3.18) needs the fuse module's parameter. Opt-in, so informational unless
 * the check is asked for it (--io-uring); then LOW and --apply sets it.
 */
static int fuse_uring_row(struct sysgen_ctx *ctx)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "fuse.enable_uring");
	char path[PATH_MAX], v[8] = "";

	if (!row)
		return -ENOMEM;
	sysgen_set(row->needed, ctx->cfg->io_uring ? "Y" : "- (Y for -o io_uring)");
	sysgen_path(path, sizeof(path), ctx->sys, "module/fuse/parameters/enable_uring");
	if (sysgen_read_line(path, v, sizeof(v))) {
		sysgen_set(row->current, "absent");
		row->status = ctx->cfg->io_uring ? SYSGEN_LOW : SYSGEN_INFO;
		sysgen_set(row->why, "kernel without FUSE over io_uring (or fuse not loaded)");
		if (row->status == SYSGEN_LOW)
			sysgen_set(row->manual, "a kernel >= 6.14 with CONFIG_FUSE_IO_URING; "
						"modprobe fuse");
		return 0;
	}
	sysgen_set(row->current, "%s", v);
	if (v[0] == 'Y' || v[0] == 'y' || v[0] == '1') {
		row->status = SYSGEN_OK;
		sysgen_set(row->why, "-o io_uring=auto uses FUSE over io_uring");
		return 0;
	}
	row->status = ctx->cfg->io_uring ? SYSGEN_LOW : SYSGEN_INFO;
	sysgen_set(row->why, "-o io_uring=auto reads /dev/fuse instead");
	snprintf(row->set_path, sizeof(row->set_path), "%s", path);
	row->set_value = 1;
	sysgen_set(row->manual, "lost at reboot: options fuse enable_uring=1 in /etc/modprobe.d/");
	return 0;
}

/* The first executable "bpftrace" in the colon-separated @path, or "". */
static void find_program(const char *path, const char *prog, char *out, size_t len)
{
	const char *p = path, *end;

	out[0] = '\0';
	while (p && *p) {
		end = strchr(p, ':');
		snprintf(out, len, "%.*s/%s", (int)(end ? end - p : (long)strlen(p)), p, prog);
		if (out[0] == '/' && access(out, X_OK) == 0)
			return;
		out[0] = '\0';
		p = end ? end + 1 : NULL;
	}
}

/* Is @rel present below the sys root? */
static bool sys_has(struct sysgen_ctx *ctx, const char *rel)
{
	char path[PATH_MAX];

	sysgen_path(path, sizeof(path), ctx->sys, rel);
	return access(path, F_OK) == 0;
}

/* bpftrace and uprobes, needed by the USDT probes (accel trace). */
static int probe_rows(struct sysgen_ctx *ctx)
{
	enum sysgen_status missing = ctx->cfg->probes ? SYSGEN_LOW : SYSGEN_INFO;
	struct sysgen_row *bt = sysgen_row_add(ctx, "bpftrace");
	struct sysgen_row *up = bt ? sysgen_row_add(ctx, "uprobes") : NULL;
	const char *path = ctx->cfg->path ? ctx->cfg->path : getenv("PATH");

	if (!up)
		return -ENOMEM;
	find_program(path, "bpftrace", bt->current, sizeof(bt->current));
	sysgen_set(bt->needed, "present");
	bt->status = bt->current[0] ? SYSGEN_OK : missing;
	sysgen_set(bt->why, "runs the USDT probes (accel trace)");
	if (!bt->current[0]) {
		sysgen_set(bt->current, "absent");
		sysgen_set(bt->manual, "install the bpftrace package");
	}
	sysgen_set(up->needed, "uprobe_events");
	sysgen_set(up->why, "USDT probes are uprobes (CONFIG_UPROBES)");
	up->status = missing;
	if (sys_has(ctx, "kernel/tracing/uprobe_events") ||
	    sys_has(ctx, "kernel/debug/tracing/uprobe_events")) {
		sysgen_set(up->current, "available");
		up->status = SYSGEN_OK;
	} else if (sys_has(ctx, "kernel/tracing/README")) {
		sysgen_set(up->current, "not in kernel");
		sysgen_set(up->manual, "a kernel built with CONFIG_UPROBES=y (reboot)");
	} else {
		sysgen_set(up->current, "no tracefs");
		sysgen_set(up->manual, "mount -t tracefs nodev /sys/kernel/tracing");
	}
	return 0;
}

int sysgen_check(const struct sysgen_config *cfg, struct sysgen_report *rep)
{
	struct sysgen_ctx ctx = { .cfg = cfg, .rep = rep };
	struct shm_pools p = { 0 };
	char path[PATH_MAX];
	int ret;

	ctx.proc = cfg->root_proc ? cfg->root_proc : "/proc";
	ctx.sys = cfg->root_sys ? cfg->root_sys : "/sys";
	ctx.shm = cfg->root_shm ? cfg->root_shm : "/dev/shm";
	sysgen_path(path, sizeof(path), ctx.proc, "self/mountinfo");
	ret = sysgen_read_mounts(path, rep);
	if (ret == -ENOMEM)
		return ret;
	ret = shm_rows(&ctx, &p);
	ret = ret ? ret : sysv_rows(&ctx, &p);
	ret = ret ? ret : memlock_row(&ctx);
	ret = ret ? ret : nofile_row(&ctx);
	ret = ret ? ret : uring_row(&ctx);
	ret = ret ? ret : fuse_module_rows(&ctx);
	ret = ret ? ret : fuse_uring_row(&ctx);
	ret = ret ? ret : sysgen_cpu_rows(&ctx);
	ret = ret ? ret : sysgen_dirty_rows(&ctx);
	ret = ret ? ret : sysgen_mount_rows(&ctx);
	return ret ? ret : probe_rows(&ctx);
}

void sysgen_report_free(struct sysgen_report *rep)
{
	size_t i;

	for (i = 0; i < rep->nrows; i++)
		free(rep->rows[i]);
	free(rep->rows);
	free(rep->mounts);
	memset(rep, 0, sizeof(*rep));
}

size_t sysgen_low_count(const struct sysgen_report *rep)
{
	size_t i, n = 0;

	for (i = 0; i < rep->nrows; i++)
		n += rep->rows[i]->status == SYSGEN_LOW;
	return n;
}

int sysgen_apply_row(const struct sysgen_row *row)
{
	char buf[32];
	int fd, len, ret = 1;

	if (row->status != SYSGEN_LOW || !row->set_path[0])
		return 0;
	/* O_TRUNC for the regular files of a test tree; sysfs and procfs ignore it.
	 * A knob is never a symbolic link: one there is not written through. */
	fd = open(row->set_path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)row->set_value);
	errno = 0;
	if (write(fd, buf, (size_t)len) != len)
		ret = errno ? -errno : -EIO;
	if (close(fd) && ret == 1)
		ret = -errno;
	return ret;
}
