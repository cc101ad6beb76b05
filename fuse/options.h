/* SPDX-License-Identifier: MIT */
/*
 * options.h - the accelfs command line: what can be set, defaults, checks.
 *
 * Parsing is kept apart from the daemon so it can be unit tested without a
 * mount, and so that every option, its default and its meaning live in one
 * table (options.c) that also prints --help.
 */
#ifndef ACCELFS_FUSE_OPTIONS_H
#define ACCELFS_FUSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

enum kernel_cache_mode {
	KERNEL_CACHE_AUTO,   /* keep the page cache while the backing file is unchanged */
	KERNEL_CACHE_ALWAYS, /* always keep it (SOURCE is never changed behind our back) */
	KERNEL_CACHE_NEVER,  /* direct I/O: every read and write reaches the daemon */
};

enum fuse_transport {
	FUSE_URING_OFF,	 /* requests through read()/write() on /dev/fuse */
	FUSE_URING_AUTO, /* FUSE over io_uring when the kernel offers it */
	FUSE_URING_ON,	 /* FUSE over io_uring, or refuse to start */
};

enum watch_mode {
	WATCH_AUTO,	/* fanotify, else inotify, else off */
	WATCH_FANOTIFY, /* fanotify on SOURCE's file system, else off */
	WATCH_INOTIFY,	/* inotify on the directories and files looked up, else off */
	WATCH_OFF,	/* no watcher: changes in SOURCE show after the timeouts */
};

enum deferred_mode {
	DEFERRED_AUTO, /* on, unless the writeback cache gathers the writes (ops.c) */
	DEFERRED_ON,
	DEFERRED_OFF,
};

enum shared_mode {
	SHARED_AUTO, /* on where SOURCE's file system can be changed by other hosts (shared.c) */
	SHARED_ON,   /* other hosts share SOURCE: no weaker than its own clients */
	SHARED_OFF,  /* only this host changes SOURCE */
};

enum lock_mode {
	LOCKS_FORWARD, /* fcntl, OFD and flock locks taken on SOURCE (ops_lock.c) */
	LOCKS_LOCAL,   /* kept in the kernel, among the users of this mount only */
};

enum passthrough_mode {
	PASSTHROUGH_AUTO,   /* files that need nothing from the daemon, on writeback=off
			     * mounts with the page cache (fuse/passthrough.c) */
	PASSTHROUGH_ALWAYS, /* every regular file the kernel accepts; no writeback cache */
	PASSTHROUGH_NEVER,  /* every read and write through the daemon */
};

struct accelfs_opts {
	char *source;	  /* as given */
	char *mountpoint; /* as given */
	bool foreground;
	bool debug;
	bool single_thread;
	bool show_help;
	bool show_version;
	unsigned int threads;	      /* worker threads of the session loop */
	bool clone_fd;		      /* one /dev/fuse fd per worker */
	enum fuse_transport io_uring; /* how requests reach the daemon (libfuse >= 3.18) */
	enum backend_kind backend;
	unsigned int queue_depth; /* io_uring entries per worker ring */
	double attr_timeout;
	double entry_timeout;
	double negative_timeout;
	enum watch_mode watch;	 /* how changes made in SOURCE reach the kernel (fuse/watch.c) */
	enum shared_mode shared; /* as given; shared.c settles auto before mounting */
	enum lock_mode locks;	 /* where locks are taken (fuse/ops_lock.c) */
	uint64_t given;		 /* bit i: opt_table[i] was set on the command line */
	enum kernel_cache_mode kernel_cache;
	bool writeback; /* kernel writeback cache */
	/* kernel passthrough (libfuse >= 3.16) */
	enum passthrough_mode passthrough;
	unsigned int readahead_kb; /* the mount bdi's read-ahead (root only; 0: kernel's) */
	unsigned int
	    bdi_max_ratio; /* the mount bdi's share of the dirty limit, % (root; 0: kernel's) */
	bool allow_other;
	bool default_permissions;
	bool read_only;
	char *mount_opts; /* options passed through to the kernel mount, comma list */
	char *log_target; /* log=: NULL (auto), "syslog", "stderr" or an absolute file path */

	/* The buffer cache (cache/): see docs/cache.md and docs/tuning.md. */
	bool cache;		     /* use the global pool at all */
	char *pool_name;	     /* shm name, "/accelfs-default" when NULL */
	unsigned int global_buffers; /* pool buffers at creation; 0: from global_cache */
	uint64_t global_cache;	     /* pool bytes at creation; 0: the default */
	unsigned int bucket_size;    /* bytes per buffer at creation; 0: the default */
	unsigned int local_buffers;  /* private buffers per open file */
	unsigned int pool_mode;	     /* permission bits of a new pool segment */
	bool backend_direct;	     /* backend_io=direct: fill buffers with O_DIRECT reads */
	bool pool_keep;		     /* keep the pool after unmount (KEEP) or remove it (FREE) */
	double revalidate;	     /* seconds between checks of an open file; 0: at open only */
	char *disk_cache;	     /* the disk tier's directory (cache/disk.h), NULL: none */
	bool disk_cache_auto;	     /* disk_cache=auto: fuse/disk_auto.c chooses */
	uint64_t disk_cache_size;    /* its bound in bytes */

	/* Deferred write and read-ahead (fuse/writeback.c, issue 4; docs/tuning.md). */
	enum deferred_mode deferred_mode; /* as given (auto, on, off) */
	/* small writes wait in dirty pool buffers: on or auto until INIT, where
	 * auto is settled by the writeback cache (ops.c), then fixed */
	bool deferred_write;
	double flush_interval;	/* seconds a deferred write may wait */
	bool sync_relaxed;	/* fsync/O_SYNC mean "on SOURCE within flush_interval" */
	uint64_t readahead_max; /* bytes the daemon prefetches ahead of a reader; 0: off */
	uint64_t readahead_latency_max; /* the window SOURCE's delay may grow it to */
};

#define OPTS_EXIT_OK 0	  /* --help/--version printed */
#define OPTS_EXIT_USAGE 2 /* bad command line */

/*
 * opts_parse - fill @opts from argv.
 * Returns 0 when the daemon should run, 1 when --help or --version was
 * handled (exit 0), or -EINVAL after printing one "accelfs: ..." line to
 * stderr (exit OPTS_EXIT_USAGE).
 */
int opts_parse(int argc, char **argv, struct accelfs_opts *opts);

void opts_free(struct accelfs_opts *opts);

/* Was option @name (a keyed -o option) set on the command line? */
bool opts_given(const struct accelfs_opts *opts, const char *name);

void opts_print_help(const char *prog);

/* Parse helpers, exported for unit tests: return 0 or -EINVAL / -ERANGE. */
int opts_parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out);
int opts_parse_seconds(const char *s, double *out);
int opts_parse_bool(const char *s, bool *out);

#endif
