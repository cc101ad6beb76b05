/* SPDX-License-Identifier: MIT */
/*
 * sysgen.h - the Linux settings that play the part of OpenVMS SYSGEN
 * parameters for accelfs (Tables 3-2/3-3 of the RMS buffering guide become
 * /dev/shm, io_uring, FUSE connection, BDI and dirty-page limits), read,
 * judged against what the configured pools and the mounted accelfs file
 * systems need, and where possible raised.
 *
 * Everything is read below three roots (normally /proc, /sys and /dev/shm)
 * so that tests can point the module at a fake tree; nothing else of the
 * system is consulted except PATH (for bpftrace) and, through a hook,
 * statvfs() of the shm root. The module never logs: it fills rows that the
 * command prints. The reasoning behind every "needed" value is written out
 * in docs/tuning.md ("Kernel and FUSE limits").
 *
 * Functions returning int return >= 0 on success and -errno on failure.
 */
#ifndef ACCELFS_TOOLS_SYSGEN_H
#define ACCELFS_TOOLS_SYSGEN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What accelfs asks of the kernel at FUSE init (fuse/ops.c). */
#define SYSGEN_MAX_BACKGROUND 64U
#define SYSGEN_CONGESTION 48U
#define SYSGEN_MAX_PAGES 256U	   /* max_write 1 MiB in 4 KiB pages */
#define SYSGEN_READ_AHEAD_KB 1024U /* one 1 MiB request ahead of a sequential reader */
/* Default burst a writer dirties at once: max_background x 1 MiB requests. */
#define SYSGEN_WRITE_BURST (64ULL << 20)
/* Estimate of a not yet created default pool: data plus metadata. */
#define SYSGEN_DEFAULT_POOL_BYTES ((64ULL << 20) + (1ULL << 20))
#define SYSGEN_SHM_HEADROOM_MIN (16ULL << 20)
/* Hard RLIMIT_NOFILE a daemon without file handles needs: one descriptor per
 * name the kernel caches (fuse/inode.c), so this many names at least. */
#define SYSGEN_NOFILE_FALLBACK 65536U

enum sysgen_status {
	SYSGEN_OK,
	SYSGEN_LOW,
	SYSGEN_INFO,
};

struct sysgen_row {
	char param[64];	  /* "fs.fuse.max_pages_limit", "fuse.45.max_background" */
	char mount[256];  /* the accelfs mount point a per-mount row is about, or "" */
	char current[48]; /* as read, or "absent" */
	char needed[48];  /* the minimum, "-" when there is none */
	enum sysgen_status status;
	char why[128]; /* one short phrase */
	/* How to get from current to needed (both empty when nothing to do). */
	char set_path[PATH_MAX]; /* knob --apply writes set_value to, or "" */
	uint64_t set_value;
	char manual[192]; /* what a person must do: reboot, fstab, modprobe... */
};

/* One accelfs mount, from mountinfo. */
struct sysgen_mount {
	char mountpoint[256];
	unsigned int major, minor; /* st_dev: FUSE connection = minor, BDI = major:minor */
	long uid;		   /* user_id= of the mount (daemon's uid), -1 unknown */
};

struct sysgen_report {
	struct sysgen_row **rows; /* each allocated alone: rows never move */
	size_t nrows, cap;
	struct sysgen_mount *mounts;
	size_t nmounts;
};

struct sysgen_config {
	const char *root_proc; /* NULL: "/proc" */
	const char *root_sys;  /* NULL: "/sys" */
	const char *root_shm;  /* NULL: "/dev/shm" */
	const char *path;      /* where to look for bpftrace; NULL: $PATH */
	uint64_t write_burst;  /* bytes a writer dirties at once; 0: SYSGEN_WRITE_BURST */
	bool probes;	       /* probe rows are required (LOW), not informational */
	bool io_uring;	       /* FUSE over io_uring is required (-o io_uring=on|auto) */
	bool halt_poll;	       /* a KVM guest's idle vCPUs must poll before halting */
	/* Size and free bytes of the file system at @dir; NULL: statvfs(). */
	int (*fs_space)(const char *dir, uint64_t *size, uint64_t *avail);
};

/*
 * sysgen_check - read every parameter below cfg's roots and append one row
 * per parameter to @rep (zeroed by the caller, freed with
 * sysgen_report_free()). Unreadable parameters become "absent" or "info"
 * rows, never an error. Returns 0 or -ENOMEM.
 */
int sysgen_check(const struct sysgen_config *cfg, struct sysgen_report *rep);

void sysgen_report_free(struct sysgen_report *rep);

/* Rows whose status is SYSGEN_LOW. */
size_t sysgen_low_count(const struct sysgen_report *rep);

/*
 * sysgen_apply_row - write row->set_value to row->set_path when the row is
 * LOW and settable. Returns 1 if written, 0 if there was nothing to write,
 * -errno if the write failed (the kernel refuses values it cannot take;
 * -ELOOP: a symbolic link at the knob, never written through).
 */
int sysgen_apply_row(const struct sysgen_row *row);

const char *sysgen_status_name(enum sysgen_status s);

/* Parse the lines of a mountinfo file; appends accelfs mounts. 0 or -errno. */
int sysgen_read_mounts(const char *mountinfo, struct sysgen_report *rep);

/*
 * The BDI max_ratio (percent, 1..100) that gives a strictlimit BDI room for
 * 2 x @burst dirty bytes under a global dirty limit of @dirty_limit bytes.
 */
unsigned int sysgen_bdi_ratio(uint64_t dirty_limit, uint64_t burst);

#endif
