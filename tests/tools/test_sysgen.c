// SPDX-License-Identifier: MIT
/*
 * test_sysgen.c - accel sysgen's reading and judging of every parameter, on
 * fake /proc, /sys and /dev/shm trees built in a temporary directory, and
 * --apply writing exactly the shown values into that tree and nothing else.
 */
#define _XOPEN_SOURCE 700
#include <CUnit/Basic.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit_main.h"
#include "pool.h"
#include "sysgen.h"
#include "util.h"

static char top[] = "/tmp/test_sysgen.XXXXXX";
static char proc[128], sys_[128], shm[128], bin[128], bpftrace[160];
static uint64_t fake_size, fake_avail;

static int fake_space(const char *dir, uint64_t *size, uint64_t *avail)
{
	(void)dir;
	*size = fake_size;
	*avail = fake_avail;
	return 0;
}

/* Write @text to @root/@rel, creating the directories. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void del(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

static char *get(const char *root, const char *rel)
{
	static char buf[256];
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return buf;
}

/* A pool segment: just the header the tool reads. */
static void put_pool(const char *name, uint64_t total, uint32_t bsize, uint32_t nbufs)
{
	struct pool_header h;
	char path[PATH_MAX];
	FILE *f;

	memset(&h, 0, sizeof(h));
	h.magic = POOL_MAGIC;
	h.version = POOL_LAYOUT_VERSION;
	h.total_size = total;
	h.bucket_size = bsize;
	h.nbufs = nbufs;
	snprintf(path, sizeof(path), "%s/%s", shm, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fwrite(&h, sizeof(h), 1, f);
	fclose(f);
	chmod(path, 0600); /* ours: a segment others could write is not read */
}

static const char mountinfo[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "45 22 0:45 / /mnt/a\\040b rw,nosuid,nodev,relatime shared:7 - fuse.accelfs /srv/a "
    "rw,user_id=0,group_id=0,default_permissions,allow_other\n"
    "46 22 0:46 / /mnt/user rw,relatime - fuse.accelfs /home/u/src rw,user_id=1000,group_id=1000\n"
    "47 22 0:47 / /mnt/other rw - fuse.sshfs host: rw,user_id=0\n";

/* The whole fake system; tests change pieces of it. */
static void build_tree(void)
{
	put(proc, "self/mountinfo", mountinfo);
	put(proc, "self/limits",
	    "Limit                     Soft Limit           Hard Limit   Units\n"
	    "Max locked memory         65536                65536        bytes\n"
	    "Max open files            1024                 4096         files\n");
	put(proc, "sys/kernel/shmmax", "1048576\n");
	put(proc, "sys/kernel/shmall", "4294967296\n");
	put(proc, "sys/kernel/io_uring_disabled", "0\n");
	put(proc, "sys/kernel/io_uring_group", "-1\n");
	put(proc, "sys/fs/fuse/max_pages_limit", "128\n");
	put(sys_, "module/fuse/parameters/max_user_bgreq", "32\n");
	put(sys_, "module/fuse/parameters/max_user_congthresh", "48\n");
	put(sys_, "module/fuse/parameters/enable_uring", "N\n");
	/* 2 GiB dirtyable */
	put(proc, "meminfo",
	    "MemTotal:       8000000 kB\nMemFree:         1048576 kB\n"
	    "Active(file):     524288 kB\nInactive(file):   524288 kB\n");
	put(proc, "sys/vm/dirty_background_ratio", "10\n");
	put(proc, "sys/vm/dirty_ratio", "20\n");
	put(proc, "sys/vm/dirty_bytes", "0\n");
	put(proc, "sys/vm/dirty_background_bytes", "0\n");
	put(proc, "sys/vm/dirty_expire_centisecs", "3000\n");
	put(proc, "sys/vm/dirty_writeback_centisecs", "500\n");
	put(sys_, "fs/fuse/connections/45/max_background", "12\n");
	put(sys_, "fs/fuse/connections/45/congestion_threshold", "9\n");
	put(sys_, "fs/fuse/connections/46/max_background", "32\n");
	put(sys_, "fs/fuse/connections/46/congestion_threshold", "48\n");
	put(sys_, "class/bdi/0:45/read_ahead_kb", "128\n");
	put(sys_, "class/bdi/0:45/max_ratio", "1\n");
	put(sys_, "class/bdi/0:46/read_ahead_kb", "2048\n");
	put(sys_, "class/bdi/0:46/max_ratio", "50\n");
	put(sys_, "kernel/tracing/uprobe_events", "");
	put(sys_, "kernel/tracing/README", "");
	put_pool("accelfs-default", 64ULL << 20, 65536, 1024);
	put(shm, "not-a-pool", "hello, this is not an accelfs pool segment at all, really\n");
	put(bin, "bpftrace", "#!/bin/sh\n");
	chmod(bpftrace, 0755);
	fake_size = 1ULL << 30;
	fake_avail = 512ULL << 20;
}

static struct sysgen_config config(void)
{
	struct sysgen_config cfg = {
		.root_proc = proc,
		.root_sys = sys_,
		.root_shm = shm,
		.path = bin,
		.fs_space = fake_space,
	};
	return cfg;
}

static const struct sysgen_row *row(const struct sysgen_report *rep, const char *param)
{
	size_t i;

	for (i = 0; i < rep->nrows; i++)
		if (!strcmp(rep->rows[i]->param, param))
			return rep->rows[i];
	return NULL;
}

/* Assert row @param reads @cur, needs @need, has status @st. */
#define EXPECT(rep, param, cur, need, st)                                                       \
	do {                                                                                    \
		const struct sysgen_row *r_ = row(rep, param);                                  \
		CU_ASSERT_PTR_NOT_NULL_FATAL(r_);                                               \
		if (strcmp(r_->current, cur) || strcmp(r_->needed, need) || r_->status != (st)) \
			fprintf(stderr, "\n%s: got '%s' '%s' %s\n", param, r_->current,         \
				r_->needed, sysgen_status_name(r_->status));                    \
		CU_ASSERT_STRING_EQUAL(r_->current, cur);                                       \
		CU_ASSERT_STRING_EQUAL(r_->needed, need);                                       \
		CU_ASSERT_EQUAL(r_->status, st);                                                \
	} while (0)

/* Judge the fake system as configured by @cfg (config(), perhaps changed) into @rep. */
static void check_with(struct sysgen_config cfg, struct sysgen_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	CU_ASSERT_EQUAL_FATAL(sysgen_check(&cfg, rep), 0);
}

static void check(struct sysgen_report *rep)
{
	check_with(config(), rep);
}

static void test_mounts(void)
{
	struct sysgen_report rep;

	build_tree();
	check(&rep);
	CU_ASSERT_EQUAL_FATAL(rep.nmounts, 2);
	CU_ASSERT_STRING_EQUAL(rep.mounts[0].mountpoint, "/mnt/a b");
	CU_ASSERT_EQUAL(rep.mounts[0].major, 0);
	CU_ASSERT_EQUAL(rep.mounts[0].minor, 45);
	CU_ASSERT_EQUAL(rep.mounts[0].uid, 0);
	CU_ASSERT_STRING_EQUAL(rep.mounts[1].mountpoint, "/mnt/user");
	CU_ASSERT_EQUAL(rep.mounts[1].uid, 1000);
	CU_ASSERT_PTR_NULL(row(&rep, "fuse.47.max_background")); /* sshfs is not ours */
	CU_ASSERT_STRING_EQUAL(row(&rep, "bdi.0:45.max_ratio")->mount, "/mnt/a b");
	sysgen_report_free(&rep);
	put(proc, "self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	check(&rep);
	EXPECT(&rep, "accelfs mounts", "none", "-", SYSGEN_INFO);
	CU_ASSERT_PTR_NULL(row(&rep, "fuse.45.max_background"));
	sysgen_report_free(&rep);
}

static void test_shm(void)
{
	struct sysgen_report rep;

	build_tree();
	check(&rep);
	EXPECT(&rep, "pool /accelfs-default", "64.0 MiB", "-", SYSGEN_INFO);
	CU_ASSERT_STRING_EQUAL(row(&rep, "pool /accelfs-default")->why, "1024 x 64.0 KiB buffers");
	CU_ASSERT_PTR_NULL(row(&rep, "pool /not-a-pool"));
	/* 64 MiB of pools + the 16 MiB minimum headroom */
	EXPECT(&rep, "/dev/shm size", "1.0 GiB", ">= 80.0 MiB", SYSGEN_OK);
	EXPECT(&rep, "/dev/shm free", "512.0 MiB", ">= 16.0 MiB", SYSGEN_OK);
	EXPECT(&rep, "kernel.shmmax", "1048576", ">= 67108864", SYSGEN_INFO);
	EXPECT(&rep, "kernel.shmall", "4294967296", ">= 16384", SYSGEN_INFO);
	sysgen_report_free(&rep);

	/* No default pool yet: it is planned (64 MiB + 1 MiB) and must fit. */
	del(shm, "accelfs-default");
	put_pool("big", 800ULL << 20, 1 << 20, 800);
	fake_size = 900ULL << 20;
	fake_avail = 50ULL << 20;
	check(&rep);
	EXPECT(&rep, "pool /accelfs-default", "absent", "-", SYSGEN_INFO);
	EXPECT(&rep, "pool /big", "800.0 MiB", "-", SYSGEN_INFO);
	/* 865 MiB of pools, headroom 1/8 = 108.125 MiB */
	EXPECT(&rep, "/dev/shm size", "900.0 MiB", ">= 973.1 MiB", SYSGEN_LOW);
	EXPECT(&rep, "/dev/shm free", "50.0 MiB", ">= 173.1 MiB", SYSGEN_LOW);
	/* used 850 + planned 65 + headroom 108.125 */
	CU_ASSERT_STRING_EQUAL(row(&rep, "/dev/shm free")->manual,
			       "mount -o remount,size=1024M /dev/shm; and size= in /etc/fstab");
	CU_ASSERT_STRING_EQUAL(row(&rep, "/dev/shm size")->set_path, "");
	sysgen_report_free(&rep);
	del(shm, "big");
}

/* Many pools: the row table grows while rows filled in pairs are held. */
static void test_many_pools(void)
{
	struct sysgen_report rep;
	char name[32];
	int i;

	build_tree();
	for (i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "p%02d", i);
		put_pool(name, 1 << 20, 4096, 256);
	}
	check(&rep);
	CU_ASSERT(rep.nrows > 64);
	EXPECT(&rep, "pool /p69", "1.0 MiB", "-", SYSGEN_INFO);
	/* 64 + 70 MiB of pools, headroom 1/8 */
	EXPECT(&rep, "/dev/shm size", "1.0 GiB", ">= 150.8 MiB", SYSGEN_OK);
	EXPECT(&rep, "/dev/shm free", "512.0 MiB", ">= 16.8 MiB", SYSGEN_OK);
	EXPECT(&rep, "uprobes", "available", "uprobe_events", SYSGEN_OK);
	sysgen_report_free(&rep);
	for (i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "p%02d", i);
		del(shm, name);
	}
}

static void test_limits(void)
{
	struct sysgen_report rep;

	build_tree();
	check(&rep);
	EXPECT(&rep, "RLIMIT_MEMLOCK", "64.0 KiB", "-", SYSGEN_INFO);
	/* the uid 1000 mount keeps a descriptor per inode: 4096 names at most */
	EXPECT(&rep, "RLIMIT_NOFILE hard", "4096", ">= 65536", SYSGEN_LOW);
	CU_ASSERT_PTR_NOT_NULL(strstr(row(&rep, "RLIMIT_NOFILE hard")->manual, "LimitNOFILE"));
	EXPECT(&rep, "kernel.io_uring_disabled", "0", "0 (1: root daemons)", SYSGEN_OK);
	EXPECT(&rep, "fs.fuse.max_pages_limit", "128", ">= 256", SYSGEN_LOW);
	EXPECT(&rep, "fuse.max_user_bgreq", "32", ">= 64", SYSGEN_LOW);
	EXPECT(&rep, "fuse.max_user_congthresh", "48", ">= 48", SYSGEN_OK);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(row(&rep, "fuse.max_user_bgreq")->manual, "/etc/modprobe.d/"));
	sysgen_report_free(&rep);

	/* 1: the non-root mount (uid 1000) cannot use io_uring without the group */
	put(proc, "sys/kernel/io_uring_disabled", "1\n");
	check(&rep);
	EXPECT(&rep, "kernel.io_uring_disabled", "1", "0 (1: root daemons)", SYSGEN_LOW);
	CU_ASSERT_STRING_EQUAL(row(&rep, "kernel.io_uring_disabled")->set_path, "");
	sysgen_report_free(&rep);
	put(proc, "sys/kernel/io_uring_group", "1000\n");
	check(&rep);
	EXPECT(&rep, "kernel.io_uring_disabled", "1", "0 (1: root daemons)", SYSGEN_INFO);
	sysgen_report_free(&rep);
	put(proc, "self/mountinfo",
	    "45 22 0:45 / /mnt/a rw - fuse.accelfs /srv/a rw,user_id=0,group_id=0\n");
	check(&rep);
	EXPECT(&rep, "kernel.io_uring_disabled", "1", "0 (1: root daemons)", SYSGEN_OK);
	/* root daemons use file handles: the fallback limit is only information */
	EXPECT(&rep, "RLIMIT_NOFILE hard", "4096", ">= 65536", SYSGEN_INFO);
	sysgen_report_free(&rep);
	put(proc, "sys/kernel/io_uring_disabled", "2\n");
	check(&rep);
	EXPECT(&rep, "kernel.io_uring_disabled", "2", "0 (1: root daemons)", SYSGEN_LOW);
	sysgen_report_free(&rep);

	/* Older kernels: no knob at all. */
	del(proc, "sys/kernel/io_uring_disabled");
	del(proc, "sys/fs/fuse/max_pages_limit");
	del(sys_, "module/fuse/parameters/max_user_bgreq");
	del(proc, "self/limits");
	check(&rep);
	EXPECT(&rep, "kernel.io_uring_disabled", "absent", "0 (1: root daemons)", SYSGEN_OK);
	EXPECT(&rep, "fs.fuse.max_pages_limit", "absent", ">= 256", SYSGEN_OK);
	EXPECT(&rep, "fuse.max_user_bgreq", "absent", ">= 64", SYSGEN_INFO);
	EXPECT(&rep, "RLIMIT_MEMLOCK", "absent", "-", SYSGEN_INFO);
	EXPECT(&rep, "RLIMIT_NOFILE hard", "absent", ">= 65536", SYSGEN_INFO);
	sysgen_report_free(&rep);
}

static void test_mount_rows(void)
{
	struct sysgen_report rep;
	struct sysgen_config cfg;
	char want[64];

	build_tree();
	check(&rep);
	EXPECT(&rep, "fuse.45.max_background", "12", ">= 64", SYSGEN_LOW);
	CU_ASSERT_STRING_EQUAL(row(&rep, "fuse.45.max_background")->why, "accelfs asks 64 at init");
	EXPECT(&rep, "fuse.45.congestion_threshold", "9", ">= 48", SYSGEN_LOW);
	EXPECT(&rep, "fuse.46.max_background", "32", ">= 64", SYSGEN_LOW);
	CU_ASSERT_STRING_EQUAL(row(&rep, "fuse.46.max_background")->why,
			       "non-root daemon capped at 32");
	EXPECT(&rep, "fuse.46.congestion_threshold", "48", ">= 48", SYSGEN_OK);
	EXPECT(&rep, "bdi.0:45.read_ahead_kb", "128", ">= 1024", SYSGEN_LOW);
	EXPECT(&rep, "bdi.0:46.read_ahead_kb", "2048", ">= 1024", SYSGEN_OK);
	/* dirty limit 20 % of 2 GiB; 2 x 64 MiB of it is 31.25 % -> 32 */
	CU_ASSERT_EQUAL(sysgen_bdi_ratio(2147483648ULL / 100 * 20, 64ULL << 20), 32);
	EXPECT(&rep, "bdi.0:45.max_ratio", "1", ">= 32", SYSGEN_LOW);
	EXPECT(&rep, "bdi.0:46.max_ratio", "50", ">= 32", SYSGEN_OK);
	sysgen_report_free(&rep);

	CU_ASSERT_EQUAL(sysgen_bdi_ratio(1ULL << 40, 64ULL << 20), 1);
	CU_ASSERT_EQUAL(sysgen_bdi_ratio(64ULL << 20, 64ULL << 20), 100);
	/* vm.dirty_bytes overrides the ratio; a bigger burst needs a bigger share */
	put(proc, "sys/vm/dirty_bytes", "1073741824\n");
	cfg = config();
	cfg.write_burst = 256ULL << 20;
	check_with(cfg, &rep);
	EXPECT(&rep, "bdi.0:45.max_ratio", "1", ">= 50", SYSGEN_LOW);
	snprintf(want, sizeof(want), "dirty_bytes: writers throttled at 1.0 GiB dirty");
	CU_ASSERT_STRING_EQUAL(row(&rep, "vm.dirty_ratio")->why, want);
	sysgen_report_free(&rep);

	/* fusectl not mounted: the connection cannot be judged */
	del(sys_, "fs/fuse/connections/45/max_background");
	check(&rep);
	EXPECT(&rep, "fuse.45.max_background", "absent", ">= 64", SYSGEN_INFO);
	CU_ASSERT_STRING_EQUAL(row(&rep, "fuse.45.max_background")->why, "fusectl not mounted");
	sysgen_report_free(&rep);
}

static void test_dirty(void)
{
	struct sysgen_report rep;

	build_tree();
	check(&rep);
	EXPECT(&rep, "vm.dirty_background_ratio", "10", "-", SYSGEN_INFO);
	CU_ASSERT_STRING_EQUAL(row(&rep, "vm.dirty_background_ratio")->why,
			       "flusher starts at 204.8 MiB dirty");
	EXPECT(&rep, "vm.dirty_ratio", "20", "-", SYSGEN_INFO);
	CU_ASSERT_STRING_EQUAL(row(&rep, "vm.dirty_ratio")->why,
			       "writers throttled at 409.6 MiB dirty");
	EXPECT(&rep, "vm.dirty_expire_centisecs", "3000", "-", SYSGEN_INFO);
	CU_ASSERT_STRING_EQUAL(row(&rep, "vm.dirty_expire_centisecs")->why,
			       "unsynced writes reach SOURCE in ~35 s");
	EXPECT(&rep, "vm.dirty_writeback_centisecs", "500", "-", SYSGEN_INFO);
	sysgen_report_free(&rep);
}

static void test_probes(void)
{
	struct sysgen_report rep;
	struct sysgen_config cfg;

	build_tree();
	check(&rep);
	EXPECT(&rep, "bpftrace", bpftrace, "present", SYSGEN_OK);
	EXPECT(&rep, "uprobes", "available", "uprobe_events", SYSGEN_OK);
	sysgen_report_free(&rep);

	del(bin, "bpftrace");
	del(sys_, "kernel/tracing/uprobe_events");
	check(&rep);
	EXPECT(&rep, "bpftrace", "absent", "present", SYSGEN_INFO);
	EXPECT(&rep, "uprobes", "not in kernel", "uprobe_events", SYSGEN_INFO);
	sysgen_report_free(&rep);

	del(sys_, "kernel/tracing/README");
	cfg = config();
	cfg.probes = true;
	check_with(cfg, &rep);
	EXPECT(&rep, "bpftrace", "absent", "present", SYSGEN_LOW);
	EXPECT(&rep, "uprobes", "no tracefs", "uprobe_events", SYSGEN_LOW);
	CU_ASSERT_STRING_EQUAL(row(&rep, "uprobes")->manual,
			       "mount -t tracefs nodev /sys/kernel/tracing");
	sysgen_report_free(&rep);
}

/* fuse.enable_uring: informational by default, required (and set by --apply) with --io-uring. */
static void test_fuse_uring(void)
{
	struct sysgen_report rep;
	struct sysgen_config cfg;

	build_tree();
	check(&rep);
	EXPECT(&rep, "fuse.enable_uring", "N", "- (Y for -o io_uring)", SYSGEN_INFO);
	CU_ASSERT_EQUAL(sysgen_apply_row(row(&rep, "fuse.enable_uring")), 0);
	sysgen_report_free(&rep);
	cfg = config();
	cfg.io_uring = true;
	check_with(cfg, &rep);
	EXPECT(&rep, "fuse.enable_uring", "N", "Y", SYSGEN_LOW);
	CU_ASSERT_EQUAL(sysgen_apply_row(row(&rep, "fuse.enable_uring")), 1);
	CU_ASSERT_STRING_EQUAL(get(sys_, "module/fuse/parameters/enable_uring"), "1\n");
	sysgen_report_free(&rep);
	put(sys_, "module/fuse/parameters/enable_uring", "Y\n");
	check_with(cfg, &rep);
	EXPECT(&rep, "fuse.enable_uring", "Y", "Y", SYSGEN_OK);
	sysgen_report_free(&rep);
	del(sys_, "module/fuse/parameters/enable_uring");
	check(&rep);
	EXPECT(&rep, "fuse.enable_uring", "absent", "- (Y for -o io_uring)", SYSGEN_INFO);
	sysgen_report_free(&rep);
}

/* haltpoll.guest_halt_poll_ns: a KVM guest's idle polling, informational unless --halt-poll. */
static void test_halt_poll(void)
{
	const char *knob = "module/haltpoll/parameters/guest_halt_poll_ns";
	struct sysgen_report rep;
	struct sysgen_config cfg = config();

	build_tree(); /* no cpuidle directory: not a guest with haltpoll */
	check(&rep);
	EXPECT(&rep, "haltpoll.guest_halt_poll_ns", "absent", "- (200000 for --halt-poll)",
	       SYSGEN_OK);
	sysgen_report_free(&rep);
	put(sys_, "devices/system/cpu/cpuidle/current_driver", "acpi_idle\n");
	cfg.halt_poll = true;
	check_with(cfg, &rep);
	EXPECT(&rep, "haltpoll.guest_halt_poll_ns", "absent", "200000", SYSGEN_OK);
	sysgen_report_free(&rep);

	put(sys_, "devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
	put(sys_, knob, "0\n");
	check(&rep); /* polling off: said, not judged */
	EXPECT(&rep, "haltpoll.guest_halt_poll_ns", "0", "- (200000 for --halt-poll)", SYSGEN_INFO);
	CU_ASSERT_EQUAL(sysgen_apply_row(row(&rep, "haltpoll.guest_halt_poll_ns")), 0);
	CU_ASSERT_STRING_EQUAL(get(sys_, knob), "0\n");
	sysgen_report_free(&rep);
	check_with(cfg, &rep); /* asked for: LOW, and --apply writes the default */
	EXPECT(&rep, "haltpoll.guest_halt_poll_ns", "0", "200000", SYSGEN_LOW);
	CU_ASSERT_PTR_NOT_NULL(strstr(row(&rep, "haltpoll.guest_halt_poll_ns")->manual,
				      "haltpoll.guest_halt_poll_ns=200000"));
	CU_ASSERT_EQUAL(sysgen_apply_row(row(&rep, "haltpoll.guest_halt_poll_ns")), 1);
	CU_ASSERT_STRING_EQUAL(get(sys_, knob), "200000\n");
	sysgen_report_free(&rep);
	check_with(cfg, &rep); /* any window the admin chose is fine */
	EXPECT(&rep, "haltpoll.guest_halt_poll_ns", "200000", "200000", SYSGEN_OK);
	sysgen_report_free(&rep);
	del(sys_, knob);
	check_with(cfg, &rep);
	EXPECT(&rep, "haltpoll.guest_halt_poll_ns", "unreadable", "200000", SYSGEN_INFO);
	sysgen_report_free(&rep);
	del(sys_, "devices/system/cpu/cpuidle/current_driver");
}

/* --apply writes the needed value into exactly the LOW, settable knobs. */
static void test_apply(void)
{
	struct sysgen_report rep, after;
	size_t i;
	int written = 0;

	build_tree();
	put(proc, "sys/kernel/io_uring_disabled", "2\n");
	check(&rep);
	for (i = 0; i < rep.nrows; i++) {
		int ret = sysgen_apply_row(rep.rows[i]);

		CU_ASSERT(ret >= 0);
		written += ret;
		CU_ASSERT_EQUAL(ret, rep.rows[i]->status == SYSGEN_LOW && rep.rows[i]->set_path[0]);
	}
	CU_ASSERT_EQUAL(written, 7);
	CU_ASSERT_STRING_EQUAL(get(proc, "sys/fs/fuse/max_pages_limit"), "256\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "module/fuse/parameters/max_user_bgreq"), "64\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "module/fuse/parameters/max_user_congthresh"), "48\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "fs/fuse/connections/45/max_background"), "64\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "fs/fuse/connections/45/congestion_threshold"), "48\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "fs/fuse/connections/46/max_background"), "64\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "fs/fuse/connections/46/congestion_threshold"), "48\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "class/bdi/0:45/read_ahead_kb"), "1024\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "class/bdi/0:45/max_ratio"), "32\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "class/bdi/0:46/read_ahead_kb"), "2048\n");
	CU_ASSERT_STRING_EQUAL(get(sys_, "class/bdi/0:46/max_ratio"), "50\n");
	/* policy and informational values are left alone */
	CU_ASSERT_STRING_EQUAL(get(proc, "sys/kernel/io_uring_disabled"), "2\n");
	CU_ASSERT_STRING_EQUAL(get(proc, "sys/kernel/shmmax"), "1048576\n");
	CU_ASSERT_STRING_EQUAL(get(proc, "sys/vm/dirty_ratio"), "20\n");
	check(&after);
	CU_ASSERT_EQUAL(sysgen_low_count(&rep), 9);
	CU_ASSERT_EQUAL(sysgen_low_count(&after), 2);
	EXPECT(&after, "kernel.io_uring_disabled", "2", "0 (1: root daemons)", SYSGEN_LOW);
	/* a process limit, set where the daemon is started */
	EXPECT(&after, "RLIMIT_NOFILE hard", "4096", ">= 65536", SYSGEN_LOW);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(row(&after, "kernel.io_uring_disabled")->manual, "not changed by --apply"));
	sysgen_report_free(&after);
	sysgen_report_free(&rep);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	CU_pSuite s;
	int ret;

	if (!mkdtemp(top))
		return 1;
	snprintf(proc, sizeof(proc), "%s/proc", top);
	snprintf(sys_, sizeof(sys_), "%s/sys", top);
	snprintf(shm, sizeof(shm), "%s/dev/shm", top);
	snprintf(bin, sizeof(bin), "%s/bin", top);
	if (mkdir(proc, 0755) || mkdir(sys_, 0755) || mkdir(bin, 0755) ||
	    mkdir(strcat(strcpy(bpftrace, top), "/dev"), 0755) || mkdir(shm, 0755))
		return 1;
	snprintf(bpftrace, sizeof(bpftrace), "%s/bpftrace", bin);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("sysgen", NULL, NULL);
	CU_add_test(s, "accelfs mounts from mountinfo", test_mounts);
	CU_add_test(s, "pools and /dev/shm, SysV limits", test_shm);
	CU_add_test(s, "70 pools: rows stay put while the table grows", test_many_pools);
	CU_add_test(s, "memlock, io_uring, FUSE module limits", test_limits);
	CU_add_test(s, "connection and BDI rows", test_mount_rows);
	CU_add_test(s, "dirty-page sysctls", test_dirty);
	CU_add_test(s, "bpftrace and uprobes", test_probes);
	CU_add_test(s, "fuse.enable_uring", test_fuse_uring);
	CU_add_test(s, "haltpoll.guest_halt_poll_ns", test_halt_poll);
	CU_add_test(s, "--apply writes exactly the needed values", test_apply);
	ret = cunit_run();
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return ret;
}
