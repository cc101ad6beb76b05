// SPDX-License-Identifier: MIT
/*
 * ext4move.c - the ext4 online path of `accel defrag` (see ext4move.h).
 *
 * The donor is an O_TMPFILE, so there is never a name to clean up after a
 * crash; on kernels without O_TMPFILE a named temporary is unlinked at once.
 * Blocks are exchanged in MOVE_CHUNK pieces so that a signal, a progress
 * update or a concurrent change is noticed within a fraction of a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend.h"
#include "ext4move.h"
#include "tmpname.h"
#include "util.h"

/* From the kernel's fs/ext4/ext4.h; not exported by the uapi headers. */
struct move_extent {
	uint32_t reserved;
	uint32_t donor_fd;
	uint64_t orig_start;  /* in blocks */
	uint64_t donor_start; /* in blocks */
	uint64_t len;	      /* in blocks */
	uint64_t moved_len;   /* out, in blocks */
};
#define EXT4_IOC_MOVE_EXT _IOWR('f', 15, struct move_extent)

#define MOVE_CHUNK (16ULL << 20)

bool ext4move_possible(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == EXT4_SUPER_MAGIC;
}

static int open_donor(struct ext4move_job *job)
{
	char name[NAME_MAX + 1];
	int fd;

	fd = openat(job->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
		return fd < 0 ? -errno : fd;
	tmpname_make(name, sizeof(name), "defrag", "donor", getpid());
	fd = openat(job->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	unlinkat(job->dir_fd, name, 0);
	return fd;
}

static int reserve_donor(struct ext4move_job *job)
{
	uint64_t size = (uint64_t)job->st.st_size;
	struct copy_range r = { 0, 0 };
	int ret;

	while ((ret = copy_next_data(job->fd, r.end, size, &r)) > 0) {
		ret = backend_fallocate(job->donor_fd, 0, (off_t)r.start, (off_t)(r.end - r.start));
		if (ret < 0)
			return ret;
	}
	if (ret == 0 && ftruncate(job->donor_fd, (off_t)size) < 0)
		ret = -errno;
	return ret;
}

int ext4move_prepare(struct ext4move_job *job)
{
	struct fiemap_map map;
	int ret;

	job->failed = "create the donor file";
	job->donor_fd = open_donor(job);
	if (job->donor_fd < 0)
		return job->donor_fd;
	job->failed = "reserve contiguous space";
	ret = reserve_donor(job);
	if (ret == 0) {
		job->failed = "map the reserved space";
		ret = fiemap_read(job->donor_fd, &map);
	}
	if (ret < 0) {
		ext4move_release(job);
		return ret;
	}
	fiemap_stats(&map, (uint64_t)job->st.st_size, 0, &job->donor); /* extents compared only */
	fiemap_free(&map);
	return 0;
}

/* Has anyone written to the file since we started? */
static int changed(struct ext4move_job *job)
{
	struct stat now;

	if (fstat(job->fd, &now) < 0)
		return -errno;
	if (now.st_size != job->st.st_size || now.st_mtim.tv_sec != job->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != job->st.st_mtim.tv_nsec)
		return -ESTALE;
	return 0;
}

/*
 * Write back and forget the pages of a range. Like e4defrag: the exchange is
 * many times slower on pages that are already cached, and a defrag run should
 * not push everyone else's data out of the page cache either.
 */
static void drop_cached(int fd, uint64_t off, uint64_t len)
{
	sync_file_range(fd, (off_t)off, (off_t)len,
			SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			    SYNC_FILE_RANGE_WAIT_AFTER);
	posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

static int move_range(struct ext4move_job *job, const struct copy_range *r, uint64_t bsize)
{
	struct move_extent me = { .donor_fd = (uint32_t)job->donor_fd };
	uint64_t blk = r->start / bsize, end = (r->end + bsize - 1) / bsize;
	int ret;

	while (blk < end) {
		if (util_stop_sig)
			return -EINTR;
		ret = changed(job);
		if (ret < 0)
			return ret;
		me.orig_start = me.donor_start = blk;
		me.len = end - blk < MOVE_CHUNK / bsize ? end - blk : MOVE_CHUNK / bsize;
		me.moved_len = 0;
		if (ioctl(job->fd, EXT4_IOC_MOVE_EXT, &me) < 0)
			return -errno;
		drop_cached(job->fd, blk * bsize, me.moved_len * bsize);
		if (me.moved_len == 0)
			return -EIO;
		blk += me.moved_len;
		job->copy.bytes += me.moved_len * bsize;
		if (job->copy.progress)
			job->copy.progress(job->copy.bytes, job->copy.arg);
	}
	return 0;
}

int ext4move_run(struct ext4move_job *job)
{
	uint64_t size = (uint64_t)job->st.st_size, bsize = (uint64_t)job->st.st_blksize;
	struct copy_range r = { 0, 0 };
	struct timespec ts[2] = { job->st.st_atim, job->st.st_mtim };
	int ret;

	job->failed = "flush the file before the exchange";
	ret = backend_fsync(job->fd, false);
	if (ret < 0)
		return ret;
	drop_cached(job->fd, 0, size);
	job->failed = "exchange blocks (EXT4_IOC_MOVE_EXT)";
	while ((ret = copy_next_data(job->fd, r.end, size, &r)) > 0) {
		ret = move_range(job, &r, bsize);
		if (ret < 0)
			break;
	}
	if (ret == 0) {
		job->failed = "flush to disk";
		ret = backend_fsync(job->fd, false);
	}
	if (ret != -ESTALE && changed(job) == 0 && futimens(job->fd, ts) < 0 && ret == 0) {
		job->failed = "restore the timestamps";
		ret = -errno;
	}
	return ret;
}

void ext4move_release(struct ext4move_job *job)
{
	if (job->donor_fd >= 0)
		close(job->donor_fd);
	job->donor_fd = -1;
}
