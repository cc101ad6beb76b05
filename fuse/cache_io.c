// SPDX-License-Identifier: MIT
/*
 * cache_io.c - file data of open files through the buffer cache.
 *
 * Each open regular file gets a cache stream (cache/stream.h): reads look in
 * the handle's local buffers, then the host's global pool, then read whole
 * buckets from SOURCE through the backend; writes, truncates and the
 * fallocate/copy_file_range family are bracketed so the pool never holds
 * bytes SOURCE does not. The kernel page cache still sits in front of all
 * this (kernel_cache=auto), so the daemon sees only the kernel's misses.
 *
 * Per-file tuning comes from the backing file's user.accelfs.* attributes,
 * taken at open (ops_file.c, tuning_memo), like RMS's SET FILE/GLOBAL_BUFFERS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"
#include "disk.h"
#include "fill_fd.h"
#include "pool.h"
#include "shmlock.h"
#include "stream.h"
#include "times.h"
#include "tuning.h"
#include "uid_share.h"

#define TIMEOUT_LOG_NS 10000000000ULL /* lock timeouts: one log line per 10 s at most */

int cache_io_init(struct accelfs *fs, char *err, size_t errlen)
{
	const struct accelfs_opts *o = &fs->opts;
	struct pool_config cfg = {
		.name = o->pool_name,
		.bucket_size = o->bucket_size,
		.nbufs = o->global_buffers,
		.size = o->global_cache,
		.mode = o->pool_mode,
		.err = err,
		.errlen = errlen,
	};

	int ret;

	if (!o->cache)
		return 0;
	ret = pool_open(&cfg, &fs->pool);
	if (!ret) {
		struct pool_info info;

		pool_info(fs->pool, &info);
		uid_share_pool_init(info.nfiles);
	}
	/* a truncated segment must detach the pool, not kill the mount */
	if (!ret && (ret = pool_guard_sigbus(fs->pool)) != 0) {
		snprintf(err, errlen, "pool %s: cannot install the SIGBUS guard: %s",
			 cache_io_pool_name(fs), strerror(-ret));
		pool_close(fs->pool);
		fs->pool = NULL;
	}
	return ret;
}

/*
 * The disk tier below the pool (disk_cache=DIR): named by SOURCE's real
 * path, so every mount of the same SOURCE on the host, now or after a
 * reboot, finds the same entries. Needs the pool (its buckets and tickets).
 */
int cache_io_disk_init(struct accelfs *fs, char *err, size_t errlen)
{
	const struct accelfs_opts *o = &fs->opts;
	char *ns;
	int ret;

	if (!fs->pool) {
		snprintf(err, errlen, "disk_cache=%s: needs the pool (%s)", o->disk_cache,
			 o->cache ? "it could not be had" : "cache=off");
		return -EINVAL;
	}
	ns = realpath(o->source, NULL);
	if (!ns) {
		snprintf(err, errlen, "%s: %s", o->source, strerror(errno));
		return -errno;
	}
	ret = disk_tier_open(&(struct disk_config){ .dir = o->disk_cache,
						    .size = o->disk_cache_size,
						    .bucket_size = pool_bucket_size(fs->pool),
						    .ns = ns,
						    .err = err,
						    .errlen = errlen },
			     &fs->disk);
	free(ns);
	return ret;
}

/* After daemonising: the disk tier's eviction thread (a fork keeps no thread). */
void cache_io_disk_start(struct accelfs *fs)
{
	int ret = fs->disk ? disk_tier_start(fs->disk) : 0;

	if (ret)
		log_msg(LOG_ERR,
			"disk_cache=%s: cannot start its eviction thread: %s; it grows "
			"past disk_cache_size",
			fs->opts.disk_cache, strerror(-ret));
}

/*
 * The pool belongs to the host and outlives this daemon (KEEP), so the next
 * mount starts warm; pool_keep=no removes its name now (FREE). Daemons still
 * attached keep their mapping; the next mount then creates a new pool.
 */
void cache_io_shutdown(struct accelfs *fs)
{
	if (fs->pool && !fs->opts.pool_keep && pool_unlink(cache_io_pool_name(fs)) == 0)
		log_msg(LOG_INFO, "pool %s removed (pool_keep=no)", cache_io_pool_name(fs));
	disk_tier_close(fs->disk); /* before the pool: no read is left to use it */
	fs->disk = NULL;
	pool_close(fs->pool);
	fs->pool = NULL;
}

void cache_io_describe(struct accelfs *fs, char *buf, size_t len)
{
	struct pool_info info;

	if (!fs->pool) {
		snprintf(buf, len, "no global buffers");
		return;
	}
	pool_info(fs->pool, &info);
	snprintf(buf, len, "pool %s: %u buffers of %u KiB (%llu MiB, %s), %u local per file",
		 cache_io_pool_name(fs), info.nbufs, info.bucket_size >> 10,
		 (unsigned long long)(info.data_size >> 20), info.created ? "created" : "attached",
		 fs->opts.local_buffers);
}

/* The mount failed: a pool this daemon created for it is removed again. */
void cache_io_abandon(struct accelfs *fs)
{
	struct pool_info info;

	if (!fs->pool)
		return;
	pool_info(fs->pool, &info);
	if (info.created)
		pool_unlink(cache_io_pool_name(fs));
	disk_tier_close(fs->disk);
	fs->disk = NULL;
	pool_close(fs->pool);
	fs->pool = NULL;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void file_id(const struct stat *st, struct pool_file_id *id)
{
	*id = (struct pool_file_id){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = ts_ns(&st->st_mtim),
		.ctime_ns = ts_ns(&st->st_ctim),
	};
}

/* The node's file handle, kept in the pool slot so that a successor can
 * write a dead daemon's deferred bytes to this very file (I9). The node
 * outlives every open file and stream of it, and its handle is immutable. */
static void file_id_handle(const struct inode *n, struct pool_file_id *id)
{
	if (!n->fh)
		return;
	id->fh_type = (uint32_t)n->fh->handle_type;
	id->fh_bytes = n->fh->handle_bytes;
	id->fh = n->fh->f_handle;
}

struct file_tuning {
	uint32_t quota, nlocal;
	int deferred, sync;	/* see wb_open() */
	uint64_t readahead_max; /* read-ahead limit in bytes */
	bool disk;		/* the mount's disk tier, if any, for this file */
};

/* The file's tuning attributes (cache/tuning.h; @read: already read) over the mount's defaults. */
static void file_tuning(struct accelfs *fs, int fd, const struct tuning_values *read,
			struct file_tuning *t)
{
	struct tuning_values v;

	if (read)
		v = *read;
	else
		tuning_read_fd(fd, &v);
	*t = (struct file_tuning){
		.quota = v.global_buffers >= 0 ? (uint32_t)v.global_buffers : 0,
		.nlocal = v.local_buffers >= 0 ? (uint32_t)v.local_buffers : fs->opts.local_buffers,
		.deferred = v.deferred_write,
		.sync = v.sync_relaxed,
		.readahead_max =
		    v.readahead_max >= 0 ? (uint64_t)v.readahead_max : fs->opts.readahead_max,
		.disk = v.disk_cache != 0,
	};
}

/*
 * What the pool went through since the last look, logged here (cache/ does
 * not log): a break once, lock timeouts at most once per TIMEOUT_LOG_NS with
 * the count since the last line. The requests concerned were served from
 * SOURCE already; `accel stat` shows lock_timeouts.
 */
static void pool_watch(struct accelfs *fs)
{
	static uint64_t logged, next_log;
	static bool broken;
	uint64_t n = pool_guard_lock_timeouts(fs->pool), now;

	if (pool_guard_broken(fs->pool) && !__atomic_exchange_n(&broken, true, __ATOMIC_RELAXED))
		log_msg(LOG_ERR,
			"pool %s: segment truncated or damaged (SIGBUS): detached, serving from "
			"SOURCE; deferred bytes in it are lost (EIO at fsync/close); remove it: "
			"accel pool --reset %s",
			cache_io_pool_name(fs), cache_io_pool_name(fs) + 1);
	if (n == __atomic_load_n(&logged, __ATOMIC_RELAXED) ||
	    (now = now_ns()) < __atomic_load_n(&next_log, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&next_log, now + TIMEOUT_LOG_NS, __ATOMIC_RELAXED);
	log_msg(LOG_WARNING,
		"pool %s: %llu lock wait(s) gave up after %d s (a process holding a pool lock is "
		"stopped or stuck): served from SOURCE",
		cache_io_pool_name(fs),
		(unsigned long long)(n - __atomic_load_n(&logged, __ATOMIC_RELAXED)),
		(int)(SHM_LOCK_WAIT_NS / 1000000000LL));
	__atomic_store_n(&logged, n, __ATOMIC_RELAXED);
}

int cache_io_open(struct open_file *of, const struct stat *st, const struct tuning_values *tv)
{
	struct accelfs *fs = of->fs;
	char proc[PROC_FD_LEN], path[POOL_PATH_LEN];
	struct file_tuning t;
	ssize_t len;
	int ret;

	of->stream = NULL;
	of->dfd = -1;
	of->rmw_fd = -1;
	if (!fs->pool || !S_ISREG(st->st_mode) || of->passthrough)
		return 0; /* passthrough: the kernel does the I/O, nothing to cache or defer */
	pool_watch(fs);
	if (pool_guard_broken(fs->pool))
		return 0; /* detached: SOURCE only */
	file_id(st, &of->id);
	file_id_handle(of->inode, &of->id);
	/* with the daemon's credentials (after creds_leave): it may open by handle */
	pool_recover_file(fs->pool, &of->id, wb_recover_log, NULL);
	of->known_size = of->id.size;
	file_tuning(fs, of->fd, tv, &t);
	len = readlink(proc_fd_path(of->fd, proc), path, sizeof(path) - 1);
	path[len > 0 ? len : 0] = '\0';
	/* past the user's share of the file slots: uncached (uid_share.c) */
	ret = uid_share_pool_take(of->uid) ? 0 : -EUSERS;
	if (!ret) {
		ret = stream_open(fs->pool, &of->id, path, t.quota, t.nlocal, &of->stream);
		if (ret)
			uid_share_pool_give(of->uid);
	}
	if (ret) {
		/* a full file table is no reason to fail an open: read through */
		log_msg(LOG_DEBUG, "%s: not cached: %s", path, strerror(-ret));
		of->stream = NULL;
	}
	if (of->stream && fs->shared)
		stream_set_exact(of->stream); /* another host's bytes may sit between two writes */
	if (of->stream && fs->disk && t.disk)
		stream_set_disk(of->stream, fs->disk);
	of->next_check = now_ns() + (uint64_t)(fs->opts.revalidate * 1e9);
	if (of->stream && fs->opts.backend_direct)
		of->dfd = FILL_FD_LATER;
	wb_open(of, t.deferred, t.sync);
	of->readahead_max = t.readahead_max;
	return 0;
}

void cache_io_count_passthrough(struct accelfs *fs, bool ok)
{
	if (fs->pool && !pool_guard_broken(fs->pool))
		pool_stats_count_pool(fs->pool, ok ? POOL_C_PT_OPENS : POOL_C_PT_FALLBACKS, 1);
}

/* Our writes kept the pool coherent: the state @st they left in SOURCE is the
 * pool's, so the next open keeps the buffers instead of dropping them all.
 * Not in shared mode, where other hosts' writes may have come between ours,
 * unseen by the buffers (close-to-open: the next open compares). */
void cache_io_settle(struct open_file *of, const struct stat *st)
{
	struct pool_file_id id;

	if (!of->stream || of->fs->shared)
		return;
	file_id(st, &id);
	file_id_handle(of->inode, &id);
	stream_revalidate(of->stream, &id);
}

void cache_io_close(struct open_file *of)
{
	/* Deferred bytes reach SOURCE before the handle goes (release, unmount). */
	if (of->stream && __atomic_load_n(&of->deferred, __ATOMIC_RELAXED))
		wb_last_close(of);
	if (of->dfd >= 0)
		close(of->dfd);
	of->dfd = -1;
	if (of->rmw_fd >= 0)
		close(of->rmw_fd);
	of->rmw_fd = -1;
	if (of->stream)
		uid_share_pool_give(of->uid);
	stream_close(of->stream);
	of->stream = NULL;
}

/*
 * The watcher saw the file change (watch_inval.c): drop its buffers if it
 * differs from what this handle opened. of->id is left to revalidate=S's
 * checker (below), its only writer; a second change re-checks.
 */
static void revalidate_now(struct open_file *of)
{
	struct pool_file_id id;
	struct stat st;

	/* shared mode: a lock was granted (ops_lock.c), and another host may
	 * have written under it without changing what stat shows */
	if (of->fs->shared) {
		stream_invalidate(of->stream);
		return;
	}
	if (fstat(of->fd, &st))
		return;
	file_id(&st, &id);
	if (pool_file_validator(&id) != pool_file_validator(&of->id))
		stream_invalidate(of->stream);
}

/*
 * revalidate=S: drop the file's buffers if SOURCE changed it behind our back.
 * Reads of one handle run in parallel: the thread that moves next_check on
 * (compare-and-swap) is the only one that checks, and the only one that
 * touches the validator fields of of->id (dev and ino never change).
 */
static void revalidate(struct open_file *of)
{
	uint64_t now, next = __atomic_load_n(&of->next_check, __ATOMIC_RELAXED);
	struct pool_file_id id;
	struct stat st;

	if (__atomic_load_n(&of->changed, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&of->changed, false, __ATOMIC_ACQ_REL)) {
		revalidate_now(of);
		return;
	}
	if (of->fs->opts.revalidate <= 0 || (now = now_ns()) < next ||
	    !__atomic_compare_exchange_n(&of->next_check, &next,
					 now + (uint64_t)(of->fs->opts.revalidate * 1e9), false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (fstat(of->fd, &st))
		return;
	file_id(&st, &id);
	if (pool_file_validator(&id) != pool_file_validator(&of->id)) {
		stream_invalidate(of->stream);
		of->id.size = id.size;
		of->id.mtime_ns = id.mtime_ns;
		of->id.ctime_ns = id.ctime_ns;
	}
}

/* One READ's reading of what the pool did not have: its file and its flight (readahead_io.c). */
struct miss {
	struct open_file *of;
	int flight; /* -1: none published yet */
};

static ssize_t read_backend(void *arg, void *buf, size_t len, uint64_t off)
{
	struct miss *m = arg;

	m->flight = readahead_reading(m->of, off, len, m->flight);
	return backend_pread(fill_fd_get(m->of), buf, len, (off_t)off);
}

/*
 * A read came back short at @off + @n, below the file's end @end (SOURCE's
 * size, or deferred data past it). A bucket cached shorter than the file
 * now is (the end of file was in it, then a write past it here or in another
 * mount, or deferred bytes further on) is fixed bucket by bucket: a clean
 * copy is dropped and read again, a dirty one grows with zeros (SOURCE has
 * a hole there); what SOURCE does not have below @end reads as zeros.
 */
static ssize_t read_short(struct open_file *of, void *buf, size_t size, off_t off, ssize_t n,
			  uint64_t end, struct miss *miss)
{
	uint64_t bsize = pool_bucket_size(of->fs->pool);
	uint8_t *p = buf;

	if (end > (uint64_t)off + size)
		end = (uint64_t)off + size;
	while ((uint64_t)off + (uint64_t)n < end) {
		uint64_t pos = (uint64_t)off + (uint64_t)n;
		uint64_t stop = (pos / bsize + 1) * bsize < end ? (pos / bsize + 1) * bsize : end;
		ssize_t m;

		stream_grown(of->stream, pos, end);
		m = stream_read(of->stream, p + n, stop - pos, pos, read_backend, miss);
		if (m < 0)
			return n ? n : m;
		memset(p + n + m, 0, stop - pos - (uint64_t)m);
		n += (ssize_t)(stop - pos);
	}
	return n;
}

ssize_t cache_io_read(struct open_file *of, void *buf, size_t size, off_t off)
{
	struct miss miss = { .of = of, .flight = -1 };
	struct stat st;
	ssize_t n;

	if (!of->stream)
		return backend_pread(of->fd, buf, size, off);
	pool_watch(of->fs);
	revalidate(of);
	/* A read at or past the end (cat's last read) needs neither the cache
	 * nor a backend read, and must not count as a miss: one fstat decides,
	 * and a file seen to have grown is not fstat'ed again below its size. */
	if ((uint64_t)off >= __atomic_load_n(&of->known_size, __ATOMIC_RELAXED) &&
	    !fstat(of->fd, &st)) {
		wb_fix_attr(of->fs, &st); /* deferred bytes past SOURCE's end count */
		if (off >= st.st_size)
			return 0;
		__atomic_store_n(&of->known_size, (uint64_t)st.st_size, __ATOMIC_RELAXED);
	}
	readahead_wait(of, (uint64_t)off, size); /* a read on its way beats one of our own */
	n = stream_read(of->stream, buf, size, (uint64_t)off, read_backend, &miss);
	/* what it read is in the pool now (or never will be) */
	readahead_read_done(of->fs, miss.flight);
	miss.flight = -1;
	if (n > 0)
		cache_io_readahead(of, (uint64_t)off, (size_t)n);
	if (n >= 0 && (size_t)n < size) {
		uint64_t end = wb_end(of), got = (uint64_t)off + (uint64_t)n;

		if (!fstat(of->fd, &st) && (uint64_t)st.st_size > end)
			end = (uint64_t)st.st_size;
		if (end <= got)
			return n; /* the real end of file */
		/* Grown since its last bucket was cached: without deferred data
		 * the file's buffers are dropped at once (O(1)) and read again. */
		if (!wb_end(of) && stream_invalidate(of->stream) == 0)
			n = stream_read(of->stream, buf, size, (uint64_t)off, read_backend, &miss);
		else
			n = read_short(of, buf, size, off, n, end, &miss);
		readahead_read_done(of->fs, miss.flight);
	}
	return n;
}

int cache_io_write_begin(struct open_file *of, uint64_t off, uint64_t len)
{
	int ret;

	__atomic_store_n(&of->wrote, true, __ATOMIC_RELAXED); /* ops_file_check_written */
	__atomic_store_n(&of->unsettled, true, __ATOMIC_RELEASE);
	if (!of->stream)
		return 0;
	pool_watch(of->fs);
	/* our deferred bytes are older than this write: they go first (I8) */
	ret = wb_write_through_begin(of);
	if (ret)
		return ret;
	ret = stream_write_begin(of->stream, off, (size_t)len);
	if (ret)
		wb_write_through_end(of);
	return ret;
}

void cache_io_write_end(struct open_file *of, uint64_t off, ssize_t res)
{
	/* after the write: SOURCE's mtime moved (times_apply sets them again) */
	times_source_moved(of->inode);
	if (!of->stream)
		return;
	stream_write_end(of->stream, off, res);
	wb_write_through_end(of);
}

void cache_io_truncated(struct open_file *of, uint64_t size)
{
	if (of->stream)
		stream_truncate(of->stream, size);
}

/*
 * A dead daemon's deferred bytes of the file go to SOURCE (or are dropped,
 * logged) before the truncate judges the file (I9), with the daemon's
 * rights even inside a user's SETATTR: recovery opens by handle.
 */
static void recover_as_daemon(struct accelfs *fs, const struct pool_file_id *id)
{
	bool suspended = creds_suspend();

	pool_recover_file(fs->pool, id, wb_recover_log, NULL);
	/* the rest of the request must not run as root: fail closed (as wb_fd_get) */
	if (creds_resume(suspended)) {
		log_msg(LOG_CRIT, "cannot take the caller's credentials again: stopping");
		abort();
	}
}

/*
 * A size change without an open file (truncate(2) by path): bracket it with
 * a temporary pool handle for the inode. Returns the result of @fn.
 */
int cache_io_truncate_inode(struct accelfs *fs, struct inode *n, off_t size,
			    int (*fn)(struct inode *, off_t))
{
	struct pool_file_id id;
	struct pool_file *pf = NULL;
	struct stat st;
	int ret, fd;

	if (!fs->pool)
		return fn(n, size);
	fd = inode_fd_get(n);
	ret = INODE_FD_OR(fd, fstatat(fd, "", &st, AT_EMPTY_PATH));
	inode_fd_put(n, fd);
	if (ret || !S_ISREG(st.st_mode))
		return fn(n, size);
	file_id(&st, &id);
	file_id_handle(n, &id);
	recover_as_daemon(fs, &id);
	if (pool_file_get(fs->pool, &id, NULL, 0, &pf))
		return fn(n, size); /* no slot: the file is not cached either */
	if (pool_buf_write_begin(pf, 0, 0)) {
		ret = fn(n, size);
		pool_file_invalidate(pf);
	} else {
		ret = fn(n, size);
		if (ret)
			pool_file_invalidate(pf);
		else
			pool_buf_truncate(pf, (uint64_t)size);
		pool_buf_write_end(pf);
		/* the buffers now match the truncated file: keep them at next open */
		fd = ret ? -1 : inode_fd_get(n);
		if (fd >= 0 && !fstatat(fd, "", &st, AT_EMPTY_PATH)) {
			file_id(&st, &id);
			pool_file_revalidate(pf, &id);
		}
		inode_fd_put(n, fd);
	}
	pool_file_put(pf);
	return ret;
}
