// SPDX-License-Identifier: MIT
/*
 * sysgen_mount.c - the rows of each accelfs mount (its FUSE connection's
 * queue limits, its BDI's read-ahead and dirty share) and the dirty-page
 * sysctls that decide how much write-back a mount may hold.
 *
 * A mount is found in mountinfo by its type fuse.accelfs. Its st_dev, taken
 * from the table's major:minor field rather than by stat() (a hung daemon
 * must not hang the check), names both the FUSE connection,
 * /sys/fs/fuse/connections/MINOR, and the BDI, /sys/class/bdi/MAJOR:MINOR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"
#include "sysgen_i.h"
#include "util.h"

#define SYSGEN_FSTYPE "fuse.accelfs"
#define PER_MOUNT_NOTE "per mount, lost at remount: run accel sysgen --apply after mounting"

/* The user_id= of a FUSE mount's super options: the daemon's uid, or -1. */
static long option_uid(char *super)
{
	char *save = NULL, *opt;

	for (opt = strtok_r(super, ",", &save); opt; opt = strtok_r(NULL, ",", &save))
		if (!strncmp(opt, "user_id=", 8))
			return strtol(opt + 8, NULL, 10);
	return -1;
}

/* One mountinfo line: 1 and @m filled for an accelfs mount, 0 for another, -EINVAL. */
static int parse_mount(char *line, struct sysgen_mount *m)
{
	struct mountinfo_line l;

	memset(m, 0, sizeof(*m));
	if (mountinfo_parse(line, &l))
		return -EINVAL;
	if (strcmp(l.fstype, SYSGEN_FSTYPE))
		return 0;
	m->major = l.major;
	m->minor = l.minor;
	snprintf(m->mountpoint, sizeof(m->mountpoint), "%s", l.point);
	m->uid = *l.super ? option_uid(l.super) : -1;
	return 1;
}

static int mount_add(struct sysgen_report *rep, const struct sysgen_mount *m)
{
	struct sysgen_mount *mounts = realloc(rep->mounts, (rep->nmounts + 1) * sizeof(*m));

	if (!mounts)
		return -ENOMEM;
	rep->mounts = mounts;
	rep->mounts[rep->nmounts++] = *m;
	return 0;
}

int sysgen_read_mounts(const char *mountinfo, struct sysgen_report *rep)
{
	struct sysgen_mount m;
	char line[3 * 4096];
	FILE *f = fopen(mountinfo, "re");
	int ret = 0;

	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		if (parse_mount(line, &m) == 1)
			ret = mount_add(rep, &m);
	}
	fclose(f);
	return ret;
}

unsigned int sysgen_bdi_ratio(uint64_t dirty_limit, uint64_t burst)
{
	uint64_t r;

	if (!dirty_limit)
		return 100;
	r = (2 * burst * 100 + dirty_limit - 1) / dirty_limit;
	return r < 1 ? 1 : r > 100 ? 100 : (unsigned int)r;
}

/* max_background and congestion_threshold of the mount's FUSE connection. */
static int conn_rows(struct sysgen_ctx *ctx, const struct sysgen_mount *m)
{
	static const struct {
		const char *knob, *cap;
		unsigned int min;
	} k[] = {
		{ "max_background", "module/fuse/parameters/max_user_bgreq",
		  SYSGEN_MAX_BACKGROUND },
		{ "congestion_threshold", "module/fuse/parameters/max_user_congthresh",
		  SYSGEN_CONGESTION },
	};
	char rel[96], path[PATH_MAX];
	uint64_t v, cap;
	size_t i;

	for (i = 0; i < 2; i++) {
		struct sysgen_row *row = sysgen_row_add(ctx, "fuse.%u.%s", m->minor, k[i].knob);

		if (!row)
			return -ENOMEM;
		sysgen_set(row->mount, "%s", m->mountpoint);
		snprintf(rel, sizeof(rel), "fs/fuse/connections/%u/%s", m->minor, k[i].knob);
		sysgen_path(path, sizeof(path), ctx->sys, rel);
		if (sysgen_judge_min(row, path, k[i].min, SYSGEN_INFO, &v) == -ENOENT) {
			sysgen_set(row->why, "fusectl not mounted");
			sysgen_set(row->manual, "mount -t fusectl none /sys/fs/fuse/connections");
			continue;
		}
		sysgen_path(path, sizeof(path), ctx->sys, k[i].cap);
		if (row->status == SYSGEN_LOW && m->uid != 0 && !sysgen_read_u64(path, &cap) &&
		    cap < k[i].min)
			sysgen_set(row->why, "non-root daemon capped at %llu",
				   (unsigned long long)cap);
		else
			sysgen_set(row->why, "accelfs asks %u at init", k[i].min);
		if (row->status == SYSGEN_LOW)
			sysgen_set(row->manual, PER_MOUNT_NOTE);
	}
	return 0;
}

static void ratio_why(struct sysgen_ctx *ctx, struct sysgen_row *row, uint64_t cur, uint64_t burst)
{
	char b1[32], b2[32];

	if (!ctx->dirty_limit) {
		row->status = SYSGEN_INFO;
		row->set_path[0] = '\0';
		sysgen_set(row->needed, "-");
		sysgen_set(row->why, "dirty limit unknown");
		return;
	}
	sysgen_set(row->why, "strictlimit: %s dirty before throttling; want 2 x %s",
		   util_bytes(ctx->dirty_limit / 100 * cur, b1, sizeof(b1)),
		   util_bytes(burst, b2, sizeof(b2)));
}

/* read_ahead_kb and max_ratio of the mount's BDI. */
static int bdi_rows(struct sysgen_ctx *ctx, const struct sysgen_mount *m)
{
	uint64_t burst = ctx->cfg->write_burst ? ctx->cfg->write_burst : SYSGEN_WRITE_BURST;
	struct sysgen_row *ra = sysgen_row_add(ctx, "bdi.%u:%u.read_ahead_kb", m->major, m->minor);
	struct sysgen_row *mr =
	    ra ? sysgen_row_add(ctx, "bdi.%u:%u.max_ratio", m->major, m->minor) : NULL;
	char rel[96], path[PATH_MAX];
	uint64_t v = 0;

	if (!mr)
		return -ENOMEM;
	sysgen_set(ra->mount, "%s", m->mountpoint);
	sysgen_set(mr->mount, "%s", m->mountpoint);
	snprintf(rel, sizeof(rel), "class/bdi/%u:%u/read_ahead_kb", m->major, m->minor);
	sysgen_path(path, sizeof(path), ctx->sys, rel);
	if (sysgen_judge_min(ra, path, SYSGEN_READ_AHEAD_KB, SYSGEN_INFO, NULL) == -ENOENT)
		sysgen_set(ra->why, "no BDI in sysfs");
	else
		sysgen_set(ra->why, "FUSE gives 128; 1 MiB ahead of sequential reads");
	snprintf(rel, sizeof(rel), "class/bdi/%u:%u/max_ratio", m->major, m->minor);
	sysgen_path(path, sizeof(path), ctx->sys, rel);
	if (sysgen_judge_min(mr, path, sysgen_bdi_ratio(ctx->dirty_limit, burst), SYSGEN_INFO,
			     &v) == -ENOENT)
		sysgen_set(mr->why, "no BDI in sysfs");
	else
		ratio_why(ctx, mr, v, burst);
	if (ra->status == SYSGEN_LOW)
		sysgen_set(ra->manual, PER_MOUNT_NOTE);
	if (mr->status == SYSGEN_LOW)
		sysgen_set(mr->manual, PER_MOUNT_NOTE);
	return 0;
}

int sysgen_mount_rows(struct sysgen_ctx *ctx)
{
	struct sysgen_row *row;
	size_t i;
	int ret = 0;

	if (!ctx->rep->nmounts) {
		row = sysgen_row_add(ctx, "accelfs mounts");
		if (!row)
			return -ENOMEM;
		sysgen_set(row->current, "none");
		sysgen_set(row->why, "per-mount limits not checked");
	}
	for (i = 0; !ret && i < ctx->rep->nmounts; i++) {
		ret = conn_rows(ctx, &ctx->rep->mounts[i]);
		ret = ret ? ret : bdi_rows(ctx, &ctx->rep->mounts[i]);
	}
	return ret;
}

/* Bytes the kernel counts as dirtyable: free plus file-backed pages. */
static uint64_t dirtyable_bytes(struct sysgen_ctx *ctx)
{
	static const char *const keys[] = { "MemFree:", "Active(file):", "Inactive(file):" };
	char path[PATH_MAX], line[128], key[32];
	unsigned long long kb, sum = 0;
	size_t i;
	FILE *f;

	sysgen_path(path, sizeof(path), ctx->proc, "meminfo");
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %llu", key, &kb) != 2)
			continue;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			sum += strcmp(key, keys[i]) ? 0 : kb;
	}
	if (f)
		fclose(f);
	return (uint64_t)sum * 1024;
}

/* An informational vm.* row; @v receives the value (0 when absent). */
static struct sysgen_row *vm_row(struct sysgen_ctx *ctx, const char *name, uint64_t *v)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "vm.%s", name);
	char rel[64], path[PATH_MAX];

	*v = 0;
	if (!row)
		return NULL;
	snprintf(rel, sizeof(rel), "sys/vm/%s", name);
	sysgen_path(path, sizeof(path), ctx->proc, rel);
	if (sysgen_read_u64(path, v))
		sysgen_set(row->current, "absent");
	else
		sysgen_set(row->current, "%llu", (unsigned long long)*v);
	return row;
}

/* vm.dirty_bytes / dirty_background_bytes override the ratios when non-zero. */
static uint64_t vm_bytes(struct sysgen_ctx *ctx, const char *name)
{
	char rel[64], path[PATH_MAX];
	uint64_t v = 0;

	snprintf(rel, sizeof(rel), "sys/vm/%s", name);
	sysgen_path(path, sizeof(path), ctx->proc, rel);
	return sysgen_read_u64(path, &v) ? 0 : v;
}

int sysgen_dirty_rows(struct sysgen_ctx *ctx)
{
	uint64_t mem = dirtyable_bytes(ctx), bgr, ratio, exp, wb;
	uint64_t bg_bytes = vm_bytes(ctx, "dirty_background_bytes");
	uint64_t bytes = vm_bytes(ctx, "dirty_bytes");
	struct sysgen_row *r[4];
	char b[32];

	r[0] = vm_row(ctx, "dirty_background_ratio", &bgr);
	r[1] = r[0] ? vm_row(ctx, "dirty_ratio", &ratio) : NULL;
	r[2] = r[1] ? vm_row(ctx, "dirty_expire_centisecs", &exp) : NULL;
	r[3] = r[2] ? vm_row(ctx, "dirty_writeback_centisecs", &wb) : NULL;
	if (!r[3])
		return -ENOMEM;
	ctx->dirty_limit = bytes ? bytes : mem / 100 * ratio;
	sysgen_set(r[0]->why, "%sflusher starts at %s dirty",
		   bg_bytes ? "dirty_background_bytes: " : "",
		   util_bytes(bg_bytes ? bg_bytes : mem / 100 * bgr, b, sizeof(b)));
	sysgen_set(r[1]->why, "%swriters throttled at %s dirty", bytes ? "dirty_bytes: " : "",
		   util_bytes(ctx->dirty_limit, b, sizeof(b)));
	sysgen_set(r[2]->why, "unsynced writes reach SOURCE in ~%llu s",
		   (unsigned long long)((exp + wb + 99) / 100));
	if (wb)
		sysgen_set(r[3]->why, "flusher wakes every %llu.%02llu s",
			   (unsigned long long)(wb / 100), (unsigned long long)(wb % 100));
	else
		sysgen_set(r[3]->why, "0: no periodic write-back, only limits and sync");
	return 0;
}
