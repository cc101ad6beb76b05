// SPDX-License-Identifier: MIT
/*
 * ops.c - the one FUSE operations table, and connection setup.
 *
 * Handlers live in one file per kind of object (ops_entry.c, ops_file.c,
 * ops_dir.c, ops_xattr.c); this file only merges them and negotiates the
 * kernel features they rely on.
 */
#include <stdio.h>
#include <string.h>

#include "accelfs_i.h"
#include "fair.h"
#include "reqstat.h"
#include "shared.h"
#include "watch.h"

#define ACCEL_MAX_WRITE (1U << 20) /* 256 pages: the kernel's default max_pages_limit */

static void accel_init(void *userdata, struct fuse_conn_info *conn)
{
	struct accelfs *fs = userdata;
	char cache[200];

	/* Writeback makes the kernel the owner of mtime and size; direct I/O
	 * (kernel_cache=never) would leave them stale, so never mix the two.
	 * The kernel refuses passthrough beside it (passthrough.c). */
	bool wb = fs->opts.writeback && !fs->opts.read_only &&
		  fs->opts.kernel_cache != KERNEL_CACHE_NEVER &&
		  (conn->capable & FUSE_CAP_WRITEBACK_CACHE);

	transport_init(fs, conn);
	passthrough_init(fs, conn, wb);
	wb = wb && !fs->passthrough; /* the kernel's writeback cache, from here on */
	if (wb)
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	else {
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
		/* open() must not widen access modes then; the watcher thread,
		 * started before INIT, reads it too */
		__atomic_store_n(&fs->opts.writeback, false, __ATOMIC_RELAXED);
	}
	/* deferred_write=auto: the writeback cache already gathers small writes
	 * into pages and sends them in large WRITEs, so deferring them again
	 * would only cost every close a FLUSH round trip (docs/tuning.md).
	 * Kept where writes reach us as made, and under sync=relaxed, which
	 * asks for write-back within flush_interval. Settled before any open. */
	if (fs->opts.deferred_mode == DEFERRED_AUTO && wb && !fs->opts.sync_relaxed)
		__atomic_store_n(&fs->opts.deferred_write, false, __ATOMIC_RELAXED);
	/* POSIX ACLs: the kernel enforces them (with default_permissions), caches
	 * them, and refreshes attributes after an ACL changes the mode. */
	if ((conn->capable & FUSE_CAP_POSIX_ACL) && (conn->capable & FUSE_CAP_DONT_MASK)) {
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
		fs->dont_mask = true;
	}
	ops_dir_init(fs, conn);
	/* Lookups and listings of one directory in parallel: without it the
	 * kernel holds the directory's mutex around each (fuse_lock_inode),
	 * so 20 threads looking up names of one directory on a network SOURCE
	 * wait one round trip after another (docs/benchmarks.md, round 5).
	 * Creates, unlinks and renames stay exclusive by the VFS's own lock. */
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
#ifdef ACCEL_HAVE_KILLPRIV_V2
	/* No GETXATTR security.capability before every write: we remove set-ID
	 * bits and capabilities where the kernel flags it (killpriv.c). */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2) {
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
		fs->killpriv_v2 = true;
	}
#endif
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
	/* kernel_cache=never opens direct_io: without this the kernel refuses
	 * every MAP_SHARED mapping (ENODEV); with it, shared mappings go
	 * through the page cache, which the kernel drops around direct writes. */
	if (conn->capable & FUSE_CAP_DIRECT_IO_ALLOW_MMAP)
		conn->want |= FUSE_CAP_DIRECT_IO_ALLOW_MMAP;
#endif
	/* locks=forward: taken on SOURCE (ops_lock.c); locks=local: the kernel
	 * enforces them among the users of this mount only. */
	conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
	if (fs->opts.locks == LOCKS_FORWARD)
		conn->want |= conn->capable & (FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
	/* No splice of requests into a pipe: the data is copied anyway (pool,
	 * deferred write), and libfuse needs a pipe of max_write + a page,
	 * which is more than fs.pipe-max-size (1 MiB): it then made, failed
	 * to grow and closed a pipe on every request (7 system calls each). */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	/* Handles exported from the mount (name_to_handle_at, NFS) outlive the
	 * kernel's node: it asks for "." in a forgotten id (node_ids.c), which
	 * only nodes kept by file handle can answer. */
	if (inode_handles_used())
		conn->want |= conn->capable & FUSE_CAP_EXPORT_SUPPORT;
	conn->max_write = ACCEL_MAX_WRITE;
	/* The kernel takes min(this, the bdi's read-ahead), which bdi_tune()
	 * raised before the INIT reply; FUSE offers only 128 KiB by itself. */
	if (fs->opts.readahead_kb)
		conn->max_readahead = fs->opts.readahead_kb * 1024;
	/* More requests in flight lets writeback and readahead overlap. */
	conn->max_background = 64;
	conn->congestion_threshold = 48;
	conn->time_gran = 1;
	log_msg(LOG_INFO,
		"mounted %s: requests through %s, backend %s, writeback cache %s, "
		"deferred write %s, passthrough %s, kernel_cache %s",
		fs->source_real, transport_describe(fs, conn), backend_kind_name(backend_active()),
		fs->opts.writeback ? "on" : "off",
		fs->opts.deferred_write && fs->opts.cache ? "on" : "off",
		fs->passthrough ? "on" : "off",
		fs->opts.kernel_cache == KERNEL_CACHE_AUTO     ? "auto"
		: fs->opts.kernel_cache == KERNEL_CACHE_ALWAYS ? "always"
							       : "never");
	cache_io_describe(fs, cache, sizeof(cache));
	log_msg(LOG_INFO, "%s", cache);
	inode_fd_log_mode();
	shared_log(fs);
	watch_log(fs);
}

void ops_features(char *buf, size_t len)
{
#ifdef ACCEL_HAVE_KILLPRIV_V2
	const char *kp = "+killpriv_v2 +io_uring";
#else
	const char *kp = "-killpriv_v2 -io_uring";
#endif
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
	const char *mm = "+direct_io_allow_mmap";
#else
	const char *mm = "-direct_io_allow_mmap";
#endif
#ifdef ACCEL_HAVE_PASSTHROUGH
	const char *pt = "+passthrough";
#else
	const char *pt = "-passthrough";
#endif
#ifdef ACCEL_HAVE_TMPFILE
	const char *tf = "+tmpfile";
#else
	const char *tf = "-tmpfile";
#endif
	snprintf(buf, len, "%s %s %s %s", kp, mm, pt, tf);
}

void ops_fill(struct accelfs *fs, struct fuse_lowlevel_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->init = accel_init;
	ops_entry_fill(ops);
	ops_file_fill(fs, ops);
	ops_seek_fill(ops);
	ops_dir_fill(ops);
	ops_xattr_fill(ops);
	ops_lock_fill(fs, ops);
	watch_echo_wrap(fs, ops); /* inotify: the mount's own changes are noted */
	reqstat_wrap(ops);	  /* every request is counted, in one place */
	fair_wrap(fs, ops); /* last: a request waiting for its user's share is not yet served */
}
