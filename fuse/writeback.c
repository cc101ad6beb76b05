// SPDX-License-Identifier: MIT
/*
 * writeback.c - deferred write (RMS "deferred write", packetized I/O).
 *
 * A small write (less than one bucket) of a file opened without O_SYNC does
 * not go to SOURCE: its bytes go into the file's bucket in the shared pool,
 * marked dirty and owned by this daemon (cache/dirty.c, I8 in
 * pool_layout.h), so every mount on the pool reads them at once. Dirty
 * buckets reach SOURCE as one write per run of buckets:
 *   - after flush_interval (the flusher thread below),
 *   - at fsync/fdatasync (strict) and at every close (FUSE flush), which
 *     keeps close-to-open semantics,
 *   - before a write that goes straight to SOURCE, a truncate, fallocate or
 *     copy_file_range of the file, at release, at unmount and at SIGTERM.
 * A flush that fails keeps the bytes dirty (they are written again next
 * time), logs, counts, and hands the error to the next fsync or close of
 * the file -- the page cache's contract, with the same window.
 *
 * sync=relaxed (per mount, or per file with user.accelfs.sync) turns fsync
 * and O_SYNC into "on SOURCE within flush_interval": opt-in only, logged at
 * open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"
#include "lost_write.h"
#include "open_files.h"
#include "stream.h"
#include "thread_buf.h"
#include "times.h"
#include "watch.h"
#include "wb_append.h"

/* Process-wide by nature: the pool knows dirty buffers by the pid of the
 * process that deferred them (set by wb_start, after daemonising). */
static uint32_t owner;

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * @deferred_attr, @sync_attr: the file's user.accelfs.deferred_write and
 * user.accelfs.sync (1 on / relaxed, 0 off / strict, -1 not set).
 */
void wb_open(struct open_file *of, int deferred_attr, int sync_attr)
{
	const struct accelfs_opts *o = &of->fs->opts;
	bool on = deferred_attr < 0 ? o->deferred_write : deferred_attr == 1;
	bool writes = (of->flags & O_ACCMODE) != O_RDONLY;
	/* the descriptor's own flags: open_backing may have fallen back to O_WRONLY */
	int fl = on && writes && of->stream ? fcntl(of->fd, F_GETFL) : -1;

	of->relaxed = sync_attr < 0 ? o->sync_relaxed : sync_attr == 1;
	/* Read-modify-write needs a readable descriptor. An O_APPEND one
	 * (backing_flags keeps it where the kernel does not place appends)
	 * writes at SOURCE's end whatever the offset: its writes are deferred
	 * as appends, which only SOURCE places (wb_append.c). */
	/* O_DIRECT: the bytes must be on SOURCE's device when the write returns */
	of->defer = fl >= 0 && (fl & O_ACCMODE) == O_RDWR && !(of->flags & O_DIRECT) &&
		    (!(of->flags & (O_SYNC | O_DSYNC)) || of->relaxed);
	if (of->defer && (fl & O_APPEND) && !wb_append_usable(pool_bucket_size(of->fs->pool)))
		of->defer = false;
	of->append = of->defer && (fl & O_APPEND);
	if (of->append) /* recovered at SOURCE's end if this daemon dies */
		stream_set_append(of->stream);
	if (!of->relaxed || !writes)
		return;
	if (of->stream)
		pool_dirty_mark(stream_file(of->stream), POOL_FILE_F_RELAXED);
	log_msg(LOG_NOTICE,
		"inode %llu opened with sync=relaxed: fsync and O_SYNC mean \"on SOURCE "
		"within %.2g s\"",
		(unsigned long long)of->inode->ino, o->flush_interval);
}

/*
 * Read-modify-write reads SOURCE on behalf of a write: through a descriptor
 * opened O_NOATIME where allowed (owner or CAP_FOWNER), so that a write does
 * not change the file's atime as a read would; O_DIRECT where the buffer
 * fills are (backend_io=direct: bucket-aligned, into page-aligned buffers).
 */
static ssize_t backend_read_fn(void *arg, void *buf, size_t len, uint64_t off)
{
	struct open_file *of = arg;

	if (!of->rmw_tried) {
		char proc[PROC_FD_LEN];

		of->rmw_tried = true;
		/* direct where the fills are, or will be (-2: not opened yet) */
		of->rmw_fd =
		    open(proc_fd_path(of->fd, proc),
			 O_RDONLY | O_NOATIME | O_CLOEXEC |
			     (__atomic_load_n(&of->dfd, __ATOMIC_ACQUIRE) != -1 ? O_DIRECT : 0));
		if (of->rmw_fd < 0 && errno == EINVAL) /* O_DIRECT refused */
			of->rmw_fd = open(proc, O_RDONLY | O_NOATIME | O_CLOEXEC);
	}
	return backend_pread(of->rmw_fd >= 0 ? of->rmw_fd : of->fd, buf, len, (off_t)off);
}

/*
 * wb_lock held: the descriptor deferred bytes are written back through. A
 * deferring handle's own descriptor can (wb_open: read-write, not O_APPEND)
 * and costs no open, unless it was opened O_SYNC or O_DSYNC (deferred under
 * sync=relaxed): each write-back through it would then wait for the device,
 * which relaxed sync is there to spare. Otherwise the flush may run on
 * behalf of a reader (fsync or close of a read-only descriptor, the flusher
 * picking any handle) whose descriptor cannot write: the daemon opens the
 * file once per node for writing with its own rights, through the handle's
 * descriptor's magic link (no name is followed); where that is refused, a
 * writable handle's descriptor still serves.
 */
int wb_own_open(struct open_file *of, int flags)
{
	char proc[PROC_FD_LEN];
	/* the daemon's descriptor, even inside a user's SETATTR or truncate */
	bool suspended = creds_suspend();
	/* the handle's own descriptor names the object (its magic link) */
	int fd = open(proc_fd_path(of->fd, proc), flags), err = errno;

	/* the rest of the request must not run as root: fail closed (it
	 * took a moment ago with the same ids; only a broken kernel refuses) */
	if (creds_resume(suspended)) {
		log_msg(LOG_CRIT, "cannot take the caller's credentials again: stopping");
		abort();
	}
	if (fd < 0)
		log_msg((of->flags & O_ACCMODE) == O_RDONLY || (flags & O_APPEND) ? LOG_WARNING
										  : LOG_DEBUG,
			"inode %llu: cannot open for write-back: %s",
			(unsigned long long)of->inode->ino, strerror(err));
	errno = err;
	return fd;
}

static int wb_fd_get(struct open_file *of)
{
	struct inode *n = of->inode;

	/* not an appender's: its writes would all go to the end (O_SYNC includes O_DSYNC) */
	if (n->wb_fd < 0 && of->defer && !of->append && !(of->flags & O_DSYNC))
		return of->fd;
	if (n->wb_fd < 0)
		n->wb_fd = wb_own_open(of, O_WRONLY | O_CLOEXEC);
	return n->wb_fd >= 0 ? n->wb_fd : of->fd;
}

/*
 * The file's last handle went (after its write-back): close the node's
 * write-back descriptor too. Kept open, it would make exec of the file in
 * SOURCE fail with ETXTBSY for as long as the kernel remembers the name.
 */
void wb_last_handle(struct inode *n)
{
	bool last;

	pthread_mutex_lock(&n->wb_lock);
	pthread_mutex_lock(&n->lock);
	last = n->opens == 0;
	pthread_mutex_unlock(&n->lock);
	if (last && n->wb_fd >= 0) {
		close(n->wb_fd);
		n->wb_fd = -1;
	}
	if (last)
		wb_append_close(n);
	pthread_mutex_unlock(&n->wb_lock);
}

/* wb_lock held (every caller flushes or writes through under it). */
static ssize_t backend_write_fn(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct open_file *of = arg;
	int fd = wb_fd_get(of);
	ssize_t n = 0;
	size_t done = 0;
	uid_t prev;

	watch_echo_node(of->fs, of->inode->nodeid);	   /* not an outside change */
	prev = creds_write_as(of->uid);			   /* its opener's reserve (creds.h) */
	while (done < len && n >= 0) {
		n = backend_pwrite(fd, (const uint8_t *)buf + done, len - done,
				   (off_t)(off + done));
		if (n == 0)
			n = -EIO;
		if (n > 0)
			done += (size_t)n;
	}
	creds_write_done(prev);
	times_source_moved(of->inode); /* times_apply */
	return n < 0 ? n : (ssize_t)done;
}

/* wb_lock held: a flush's run to SOURCE, the append region at SOURCE's end */
static ssize_t flush_write_fn(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct open_file *of = arg;

	if (wb_append_is_region(of->inode, off, len))
		return wb_append_flush(of, buf, len, owner);
	return backend_write_fn(arg, buf, len, off);
}

/*
 * Does the file have dirty buffers in the pool? Asked of the pool, not of
 * this node: after a close-to-open retirement two nodes (and their handles)
 * can stand for one file, and the kernel may write through either.
 */
static bool wb_pending(struct open_file *of)
{
	return of->stream && stream_dirty(of->stream);
}

/*
 * Where the file's deferred data ends and when it was last written, ours or
 * another mount's: kept in its pool slot (pool_dirty_end_set), which is
 * the only copy, so every node and every mount sees the same. 0: none.
 */
static uint64_t deferred_end(struct accelfs *fs, uint64_t dev, uint64_t ino, int64_t *mt)
{
	uint64_t end = 0;

	*mt = 0;
	if (!fs->pool || !pool_dirty_end_peek(fs->pool, dev, ino, &end, mt))
		return 0;
	return end;
}

uint64_t wb_end(struct open_file *of)
{
	int64_t mt;

	return deferred_end(of->fs, of->id.dev, of->id.ino, &mt);
}

/* Deferred bytes make the file longer or newer than SOURCE says, in every mount. */
void wb_fix_attr(struct accelfs *fs, struct stat *st)
{
	int64_t mt;
	uint64_t size;

	if (!S_ISREG(st->st_mode) || !(size = deferred_end(fs, st->st_dev, st->st_ino, &mt)))
		return;
	if (size > (uint64_t)st->st_size)
		st->st_size = (off_t)size;
	if (mt > (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec) {
		st->st_mtim.tv_sec = mt / 1000000000;
		st->st_mtim.tv_nsec = mt % 1000000000;
		st->st_ctim = st->st_mtim;
	}
}

static int flush_some_locked(struct open_file *of, uint64_t before, uint64_t limit);

ssize_t wb_write(struct open_file *of, struct fuse_bufvec *in, off_t off)
{
	size_t size = fuse_buf_size(in), bsize;
	uint64_t end = (uint64_t)off + size;
	struct inode *n = of->inode;
	const void *data;
	bool foreign;
	ssize_t ret;
	int admit;

	/* only small writes: a bucket or more is a large I/O already */
	if (!of->defer || !size || size >= pool_bucket_size(of->fs->pool))
		return -EAGAIN;
	bsize = pool_bucket_size(of->fs->pool);
	if (in->count - in->idx == 1 && !(in->buf[in->idx].flags & FUSE_BUF_IS_FD) && !in->off) {
		data = in->buf[in->idx].mem;
	} else {
		struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
		void *tmp = thread_buf_reply(size);

		out.buf[0].mem = tmp;
		if (!tmp || fuse_buf_copy(&out, in, 0) != (ssize_t)size)
			return -EAGAIN;
		data = tmp;
	}
	/* wb_lock: deferrals of one file never meet its write-throughs or flushes */
	pthread_mutex_lock(&n->wb_lock);
	/* an append goes at SOURCE's end, an offset write where it says (wb_append.c) */
	admit = wb_append_admit(of, (uint64_t)off, size, bsize);
	if (admit < 0 || (admit == 0 && flush_some_locked(of, UINT64_MAX, UINT64_MAX))) {
		pthread_mutex_unlock(&n->wb_lock);
		return -EAGAIN; /* written through (a failed flush: its error then) */
	}
	ret = stream_write_defer(of->stream, data, size, (uint64_t)off, backend_read_fn, of, owner,
				 &foreign);
	if (ret < 0) {
		pthread_mutex_unlock(&n->wb_lock);
		return ret == -EAGAIN ? -EAGAIN : ret;
	}
	/* release: the flusher that sees it (acquire) sees the handle's setup */
	__atomic_store_n(&of->deferred, true, __ATOMIC_RELEASE);
	/* at close, the pool's copy matches SOURCE: revalidate, keep it */
	__atomic_store_n(&of->wrote, true, __ATOMIC_RELAXED);
	__atomic_store_n(&of->unsettled, true, __ATOMIC_RELEASE);
	pool_dirty_end_set(stream_file(of->stream), end, (int64_t)realtime_ns());
	/* Bytes in a bucket another daemon writes back: make them ours on SOURCE too. */
	if (foreign && backend_write_fn(of, data, size, (uint64_t)off) < 0)
		ret = -EIO;
	else if (!foreign)
		wb_append_deferred(of, (uint64_t)off, end);
	/* A writer that went on where its last write ended and reached the end
	 * of a bucket has filled it: the buckets behind it go to SOURCE now, as
	 * one large write (RMS writes a full buffer), not at the next timer
	 * tick. Only a continuing writer: the kernel's write-back sends the page
	 * of a record updated in place on every fsync, and a page that ends a
	 * bucket says nothing about the rest of it (with sync=relaxed that was
	 * one backend write per record in the last page of every bucket). An
	 * error waits for fsync/close. */
	if (ret >= 0 && of->append && wb_append_full(n, bsize))
		flush_some_locked(of, UINT64_MAX, UINT64_MAX);
	else if (ret >= 0 && !of->append && (uint64_t)off == of->wb_next &&
		 end / bsize > (uint64_t)off / bsize)
		flush_some_locked(of, UINT64_MAX, end / bsize);
	if (ret >= 0)
		of->wb_next = end;
	pthread_mutex_unlock(&n->wb_lock);
	/* an O_SYNC write deferred under sync=relaxed: owed a background sync */
	if (ret >= 0 && (of->flags & O_DSYNC))
		__atomic_add_fetch(&of->fs->flusher.relaxed_debt, 1, __ATOMIC_RELEASE);
	return ret;
}

/*
 * Write our dirty buckets of @of's file dirty since before @before (ns), and
 * below bucket @limit, to SOURCE.
 */
static int flush_unchecked(struct open_file *of, uint64_t before, uint64_t limit);

/* ... and where an append region went, checked at once (wb_append_verify). */
static int flush_some_locked(struct open_file *of, uint64_t before, uint64_t limit)
{
	int ret = flush_unchecked(of, before, limit);

	wb_append_verify(of);
	return ret;
}

static int flush_unchecked(struct open_file *of, uint64_t before, uint64_t limit)
{
	struct inode *n = of->inode;
	int ret;

	if (!wb_pending(of))
		return 0;
	if (wb_append_pending(n)) { /* the append region goes whole, or waits */
		if (before != UINT64_MAX && wb_append_hold(n))
			return 0;
		before = limit = UINT64_MAX;
	}
	ret = stream_flush_below(of->stream, owner, before, limit, flush_write_fn, of);
	if (ret) {
		int zero = 0;

		if (!__atomic_compare_exchange_n(&n->wb_err, &zero, ret, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			return ret;
		if (pool_guard_broken(of->fs->pool)) /* the bytes went with the segment */
			log_msg(LOG_ERR,
				"inode %llu: deferred bytes lost with the broken pool; reported "
				"at next fsync or close",
				(unsigned long long)n->ino);
		else
			log_msg(LOG_ERR,
				"inode %llu: deferred write failed: %s; kept, reported at next "
				"fsync or close",
				(unsigned long long)n->ino, strerror(-ret));
	} else if (!stream_dirty(of->stream)) {
		pool_dirty_end_clamp(stream_file(of->stream), UINT64_MAX);
		n->app_lo = n->app_hi = 0; /* nothing of it is left to place */
	}
	return ret;
}

/* Our buckets of the file dirty since before @before (ns), taking wb_lock. */
static int flush(struct open_file *of, uint64_t before)
{
	int ret;

	if (!wb_pending(of))
		return 0;
	pthread_mutex_lock(&of->inode->wb_lock);
	ret = flush_some_locked(of, before, UINT64_MAX);
	pthread_mutex_unlock(&of->inode->wb_lock);
	return ret;
}

/*
 * A write straight to SOURCE (write-through, truncate, fallocate,
 * copy_file_range): under the file's wb_lock from here to
 * wb_write_through_end(), so no deferred write lands in its buckets while
 * they are being dropped and SOURCE changed (a bucket dirtied in between
 * would keep the old bytes of that range). Our older deferred bytes go first.
 */
int wb_write_through_begin(struct open_file *of)
{
	int ret;

	pthread_mutex_lock(&of->inode->wb_lock);
	ret = flush_some_locked(of, UINT64_MAX, UINT64_MAX);
	if (ret)
		pthread_mutex_unlock(&of->inode->wb_lock);
	return ret;
}

void wb_write_through_end(struct open_file *of)
{
	pthread_mutex_unlock(&of->inode->wb_lock);
}

/* Before SOURCE is asked about the file (copy_file_range, SEEK_DATA): our bytes first. */
int wb_flush_now(struct open_file *of)
{
	return flush(of, UINT64_MAX);
}

static void flush_same_file(struct open_file *of, void *arg)
{
	const struct inode *n = arg;

	/* a retired node and its successor are one file: match the backing inode */
	if (of->inode->dev == n->dev && of->inode->ino == n->ino)
		flush(of, UINT64_MAX);
}

/*
 * Before its times are set: the file's deferred bytes, through whichever of
 * our handles deferred them, so that their write-back does not move the
 * mtime afterwards. A failure stays with the file (next fsync or close).
 */
void wb_flush_file(struct accelfs *fs, const struct inode *n)
{
	open_files_foreach_pinned(fs, OPEN_FILES_DEFERRED, flush_same_file, (void *)n);
}

/* Flush everything now; the result (or an earlier flush's error) is the caller's. */
int wb_sync(struct open_file *of)
{
	int ret = flush(of, UINT64_MAX);
	int err = __atomic_exchange_n(&of->inode->wb_err, 0, __ATOMIC_RELAXED);

	/* a failure that this flush put right (space freed since) is not reported */
	return ret ? ret : (wb_pending(of) ? err : 0);
}

/*
 * fsync/fdatasync: wb_sync, then SOURCE's. An append region's landing is
 * checked after SOURCE's fsync: a client that writes behind (glusterfs)
 * holds a stat until the write is out, a round trip per appended record
 * that fsync pays anyway (1.48x the bare mount with the check before it).
 */
int wb_fsync(struct open_file *of, int datasync)
{
	struct inode *n = of->inode;
	int ret = 0, err;

	if (wb_pending(of)) {
		pthread_mutex_lock(&n->wb_lock);
		ret = flush_unchecked(of, UINT64_MAX, UINT64_MAX);
		pthread_mutex_unlock(&n->wb_lock);
	}
	err = __atomic_exchange_n(&n->wb_err, 0, __ATOMIC_RELAXED);
	ret = ret ? ret : (wb_pending(of) ? err : 0);
	if (!ret)
		ret = backend_fsync(of->fd, datasync);
	pthread_mutex_lock(&n->wb_lock);
	wb_append_verify(of);
	pthread_mutex_unlock(&n->wb_lock);
	return ret;
}

/*
 * close(2) of a handle (FUSE flush): a writer's close puts the file's
 * deferred bytes on SOURCE (close-to-open) and reports an earlier flush's
 * failure. A reader's close leaves them to their writers, as a local file
 * system does (the reader had them from the pool anyway).
 */
int wb_close(struct open_file *of)
{
	return (of->flags & O_ACCMODE) == O_RDONLY ? 0 : wb_sync(of);
}

/*
 * The last handle of the file in this daemon goes: a flush that still fails
 * leaves nobody to retry it. The close that preceded this already returned
 * the error; the bytes are dropped from the pool (counted as dirty_lost,
 * logged) so that no mount serves data SOURCE does not have.
 */
void wb_last_close(struct open_file *of)
{
	int ret = wb_sync(of);

	if (ret && __atomic_load_n(&of->inode->opens, __ATOMIC_RELAXED) == 0) {
		int n = pool_dirty_discard(stream_file(of->stream), owner);

		log_msg(LOG_ERR,
			"inode %llu: %d deferred buffers could not be written (%s): dropped",
			(unsigned long long)of->inode->ino, n, strerror(-ret));
	}
}

/* fsync under sync=relaxed: nothing is written now; an earlier failure still is reported. */
int wb_fsync_relaxed(struct open_file *of)
{
	__atomic_add_fetch(&of->fs->flusher.relaxed_debt, 1, __ATOMIC_RELEASE);
	return __atomic_exchange_n(&of->inode->wb_err, 0, __ATOMIC_RELAXED);
}

static void flush_old(struct open_file *of, void *arg)
{
	flush(of, *(uint64_t *)arg);
	wb_append_kernel(of); /* an append region that found the file moved */
}

static void flush_every(struct open_file *of, void *arg)
{
	(void)arg;
	flush(of, UINT64_MAX);
}

/* At unmount and SIGTERM: everything deferred goes to SOURCE. */
void wb_flush_all(struct accelfs *fs)
{
	open_files_foreach_pinned(fs, OPEN_FILES_DEFERRED, flush_every, NULL);
}

/* One line per file whose deferred bytes a dead daemon left (I9, cache/recover.c). */
void wb_recover_log(void *arg, const struct pool_recover_note *n)
{
	const char *sep = n->err ? ": " : "", *err = n->err ? strerror(n->err) : "";

	(void)arg;
	if (n->lost)
		log_msg(LOG_WARNING,
			"%s (dev %llu inode %llu): %u deferred buffers of a daemon that died "
			"dropped: %s%s%s",
			n->path, (unsigned long long)n->dev, (unsigned long long)n->ino, n->lost,
			n->why, sep, err);
	else if (n->why)
		log_msg(LOG_WARNING,
			"%s (dev %llu inode %llu): %u deferred buffers of a daemon that died "
			"written back, the rest kept: %s%s%s",
			n->path, (unsigned long long)n->dev, (unsigned long long)n->ino,
			n->recovered, n->why, sep, err);
	else
		log_msg(LOG_NOTICE,
			"%s (dev %llu inode %llu): %u deferred buffers of a daemon that died "
			"written back",
			n->path, (unsigned long long)n->dev, (unsigned long long)n->ino,
			n->recovered);
}

/*
 * The flusher wakes four times per flush_interval and writes what has waited
 * longer than flush_interval, so nothing waits more than 1.25 intervals; it
 * also writes back (or drops, when their file is not provably the same) the
 * dirty buffers left by daemons that died (pool_recover_all).
 */
/*
 * What relaxed fsyncs acknowledged since the last background sync becomes
 * durable: every deferred byte goes to SOURCE, then SOURCE's file system is
 * synced (syncfs: one call whatever the number of files, and it covers the
 * files written through too). At most every flush_interval / 2, so the
 * bound after a power cut is about flush_interval (period + that + the
 * sync's own time; measured in docs/daemon-death.md).
 */
/* After a failed sync of SOURCE: the file's own error (its errseq), kept as a lost write. */
static void check_written(struct open_file *of, void *arg)
{
	(void)arg;
	if (fdatasync(of->fd))
		lost_write_note(of, -errno);
}

static void relaxed_sync(struct accelfs *fs, int src_fd, uint64_t *last)
{
	uint64_t debt = __atomic_load_n(&fs->flusher.relaxed_debt, __ATOMIC_ACQUIRE),
		 now = now_ns();

	if (!debt || src_fd < 0 || now - *last < (uint64_t)(fs->opts.flush_interval * 5e8))
		return;
	__atomic_sub_fetch(&fs->flusher.relaxed_debt, debt, __ATOMIC_RELAXED);
	open_files_foreach_pinned(fs, OPEN_FILES_DEFERRED, flush_every, NULL);
	if (syncfs(src_fd)) {
		log_msg(LOG_WARNING, "sync=relaxed: syncfs of %s: %s", fs->source_real,
			strerror(errno));
		/* whose: reported at their next fsync and writer's close */
		open_files_foreach_pinned(fs, OPEN_FILES_WRITTEN, check_written, NULL);
	}
	*last = now;
}

static void *flusher_main(void *arg)
{
	struct accelfs *fs = arg;
	struct wb_flusher *w = &fs->flusher;
	uint64_t period = (uint64_t)(fs->opts.flush_interval * 1e9 / 4), last_sync = 0;
	unsigned int ticks = 0;
	/* a descriptor syncfs takes (not O_PATH) */
	int src_fd = open(fs->source_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct timespec ts;
		uint64_t before;

		clock_gettime(CLOCK_REALTIME, &ts);
		before = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + period;
		ts.tv_sec = (time_t)(before / 1000000000ULL);
		ts.tv_nsec = (long)(before % 1000000000ULL);
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->lock);
		before = realtime_ns() - (uint64_t)(fs->opts.flush_interval * 1e9);
		open_files_foreach_pinned(fs, OPEN_FILES_DEFERRED, flush_old, &before);
		relaxed_sync(fs, src_fd, &last_sync);
		if (++ticks % 16 == 0 && fs->pool)
			pool_recover_all(fs->pool, wb_recover_log, NULL);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	if (src_fd >= 0)
		close(src_fd);
	return NULL;
}

int wb_start(struct accelfs *fs)
{
	struct wb_flusher *w = &fs->flusher;

	owner = (uint32_t)getpid();
	if (!fs->pool)
		return 0;
	/* what a dead daemon deferred goes to SOURCE first (and at an open of its file) */
	pool_recover_all(fs->pool, wb_recover_log, NULL);
	/* also without deferred write: sync=relaxed (per mount, or a file's
	 * attribute) needs its background sync */
	if (pthread_create(&w->thread, NULL, flusher_main, fs))
		return -EAGAIN;
	w->running = true;
	return 0;
}

void wb_stop(struct accelfs *fs)
{
	struct wb_flusher *w = &fs->flusher;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->running = false;
}
