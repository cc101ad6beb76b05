// SPDX-License-Identifier: MIT
/*
 * wb_append.c - deferred appends.
 *
 * Without the kernel's writeback cache (shared mode, writeback=off) a
 * handle opened O_APPEND keeps O_APPEND on its backing descriptor: the
 * kernel sends each write at the end of file as it knows it, and SOURCE
 * places it at the end of file as it is, which another host may have moved.
 * Deferred like any small write (writeback.c), such writes would reach
 * SOURCE at the offsets this host believed, over another host's appends.
 * So they are gathered apart, as the file's *append region*:
 *
 *   - the region is the only deferred data of the daemon in the file, and
 *     lies in two buckets at most, so that one flush writes it in one run
 *     with one write(2) on a descriptor opened O_APPEND: SOURCE puts all of
 *     it at its end, after whatever another host appended meanwhile;
 *   - never between two pieces of one application write. The kernel sends
 *     a write that ends a page it does not hold whole as two requests, the
 *     first ending at the page's end. So the region is sent when it has
 *     reached its second bucket at a request that ends inside a page; the
 *     flusher leaves one that ends at a page's end for a tick while it
 *     grows; a close or fsync comes after the write() returned;
 *   - a request that crosses a bucket's end is written through (after the
 *     region): deferred, a part of it could be deferred and the rest not;
 *     a write of another handle at an offset sends the region first too;
 *   - after the write, SOURCE's size says where the region landed (asked
 *     after the backend fsync where there is one: a network client that
 *     writes behind answers it then without another round trip); if not
 *     where this host placed it, another writer's bytes came between, and
 *     what this host holds of the file (pool buffers, each handle's local
 *     buffers, the kernel's pages and size) is dropped, to be read again
 *     from SOURCE;
 *   - a flush that fails after part of the region went takes that part out
 *     of the region and of the pool's dirty ranges (pool_dirty_sent), so
 *     neither the next flush nor a recoverer, should the daemon die,
 *     appends a record twice.
 *
 * What another host sees is what it sees of the bare mount's write-behind:
 * the records at SOURCE's end, in the order written, at the latest at the
 * writer's close, fsync, lock release or flush_interval.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"
#include "open_files.h"
#include "stream.h"
#include "times.h"
#include "wb_append.h"
#include "watch.h"

static bool has_region(const struct inode *n)
{
	return n->app_hi > n->app_lo;
}

/* A request ending at a page's end may be the first of two (see above). */
static bool at_page_end(uint64_t off)
{
	return off % (uint64_t)sysconf(_SC_PAGESIZE) == 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool wb_append_usable(uint64_t bsize)
{
	return 2 * bsize <= STREAM_FLUSH_BYTES; /* two buckets in one flush batch */
}

int wb_append_admit(struct open_file *of, uint64_t off, size_t size, uint64_t bsize)
{
	const struct inode *n = of->inode;
	uint64_t end = off + size;

	if (!of->append)
		return has_region(n) ? 0 : 1; /* an offset write: the region goes first */
	if ((end - 1) / bsize != off / bsize)
		return -1; /* crosses a bucket's end */
	if (!has_region(n))
		return 0; /* any other deferred bytes of ours go first (flushed then admitted) */
	return off == n->app_hi && (end - 1) / bsize <= n->app_lo / bsize + 1 ? 1 : 0;
}

void wb_append_deferred(struct open_file *of, uint64_t off, uint64_t end)
{
	struct inode *n = of->inode;

	if (!of->append)
		return;
	if (!has_region(n))
		n->app_lo = off;
	n->app_hi = end;
	n->app_ns = mono_ns();
}

bool wb_append_pending(const struct inode *n)
{
	return has_region(n);
}

bool wb_append_full(const struct inode *n, uint64_t bsize)
{
	return has_region(n) && (n->app_hi - 1) / bsize > n->app_lo / bsize &&
	       !at_page_end(n->app_hi);
}

bool wb_append_hold(const struct inode *n)
{
	return has_region(n) && at_page_end(n->app_hi) && mono_ns() - n->app_ns < WB_APPEND_HOLD_NS;
}

bool wb_append_is_region(const struct inode *n, uint64_t off, size_t len)
{
	return has_region(n) && off == n->app_lo && len == n->app_hi - n->app_lo;
}

/* The daemon's O_APPEND descriptor of the file, opened at its first flush. */
static int append_fd(struct open_file *of)
{
	struct inode *n = of->inode;

	if (n->app_fd < 0)
		n->app_fd = wb_own_open(of, O_WRONLY | O_APPEND | O_CLOEXEC);
	return n->app_fd;
}

ssize_t wb_append_flush(struct open_file *of, const void *buf, size_t len, uint32_t owner)
{
	struct inode *n = of->inode;
	size_t done = 0;
	int fd = append_fd(of), err = 0;
	uid_t prev;

	if (fd < 0)
		return -errno;
	watch_echo_node(of->fs, n->nodeid); /* not an outside change */
	prev = creds_write_as(of->uid);	    /* its opener's reserve (creds.h) */
	while (done < len && !err) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w > 0)
			done += (size_t)w;
		else
			err = w < 0 ? -errno : -EIO;
	}
	creds_write_done(prev);
	times_source_moved(n);
	/* what went is on SOURCE: out of the region and the pool's dirty bytes,
	 * never appended again (if the pool refuses, it is lost anyway) */
	if (err && done &&
	    pool_dirty_sent(stream_file(of->stream), n->app_lo, n->app_lo + done, owner) >= 0)
		n->app_lo += done;
	if (err)
		return err;
	n->app_check = n->app_hi; /* where SOURCE's end should be now: wb_append_verify */
	n->app_lo = n->app_hi = 0;
	return (ssize_t)len;
}

void wb_append_verify(struct open_file *of)
{
	struct inode *n = of->inode;
	struct stat st;

	/* SOURCE's end is where ours is, or another writer came between */
	if (n->app_check && n->app_fd >= 0 && !fstat(n->app_fd, &st) &&
	    (uint64_t)st.st_size != n->app_check)
		wb_append_moved(of);
	n->app_check = 0;
}

void wb_append_moved(struct open_file *of)
{
	__atomic_store_n(&of->inode->app_moved, true, __ATOMIC_RELEASE);
	/* the bytes just written are clean by now or at the flush's end; a
	 * dirty bucket is kept (-EBUSY) and dropped at the next read's check */
	if (of->stream)
		stream_invalidate(of->stream);
}

static void mark_changed(struct open_file *of, void *arg)
{
	if (of->inode == arg)
		__atomic_store_n(&of->changed, true, __ATOMIC_RELAXED);
}

void wb_append_kernel(struct open_file *of)
{
	struct accelfs *fs = of->fs;
	struct inode *n = of->inode;

	if (!__atomic_load_n(&n->app_moved, __ATOMIC_ACQUIRE) ||
	    !__atomic_exchange_n(&n->app_moved, false, __ATOMIC_ACQ_REL))
		return;
	/* every handle's local buffers: at its next read (revalidate_now) */
	open_files_foreach(fs, mark_changed, n);
	/* pages and size; not under the writeback cache, whose dirty pages the
	 * kernel would first write back through a worker that may be waiting,
	 * nor single-threaded (a read waiting for its reply holds a page) */
	if (!fs->opts.writeback && !fs->opts.single_thread && fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, n->nodeid, 0, 0);
}

bool wb_append_stale(const struct inode *n)
{
	return __atomic_load_n(&n->app_moved, __ATOMIC_ACQUIRE);
}

void wb_append_close(struct inode *n)
{
	if (n->app_fd >= 0)
		close(n->app_fd);
	n->app_fd = -1;
}
