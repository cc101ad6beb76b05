// SPDX-License-Identifier: MIT
/*
 * replace.c - the CONVERT-then-RENAME engine shared by `accel convert` and
 * the copy path of `accel defrag`; the guarantees are listed in replace.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "meta.h"
#include "replace.h"
#include "tmpname.h"
#include "util.h"

int replace_same_file(const struct stat *then, const struct stat *now)
{
	if (then->st_dev != now->st_dev || then->st_ino != now->st_ino ||
	    then->st_size != now->st_size || then->st_nlink != now->st_nlink ||
	    then->st_mtim.tv_sec != now->st_mtim.tv_sec ||
	    then->st_mtim.tv_nsec != now->st_mtim.tv_nsec ||
	    then->st_ctim.tv_sec != now->st_ctim.tv_sec ||
	    then->st_ctim.tv_nsec != now->st_ctim.tv_nsec)
		return -ESTALE;
	return 0;
}

void replace_discard(struct replace_job *job)
{
	if (job->tmp_fd >= 0)
		close(job->tmp_fd);
	job->tmp_fd = -1;
	if (job->tmp[0])
		unlinkat(job->dir_fd, job->tmp, 0);
	job->tmp[0] = '\0';
}

static int create_tmp(struct replace_job *job)
{
	int ret;

	job->failed = "create the temporary file";
	ret = tmpname_make(job->tmp, sizeof(job->tmp), job->kind, job->target, getpid());
	if (ret < 0) {
		job->tmp[0] = '\0';
		return ret;
	}
	/* O_EXCL: a name planted here (a symlink too) is never opened, nor removed */
	job->tmp_fd =
	    openat(job->dir_fd, job->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (job->tmp_fd < 0) {
		ret = -errno;
		if (ret == -EEXIST)
			memcpy(job->taken, job->tmp, sizeof(job->taken));
		job->tmp[0] = '\0';
		return ret;
	}
	return 0;
}

/* Reserve space; "best try": a file system without fallocate is not an error. */
static int reserve(int fd, uint64_t off, uint64_t len)
{
	int ret;

	if (len == 0)
		return 0;
	ret = backend_fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
	return ret == -EOPNOTSUPP ? 0 : ret;
}

/*
 * Reserve every data range of the source, in order, so they land together.
 * A range that reaches EOF is reserved together with the preallocation up to
 * @want, so that the tail continues it on disk.
 */
static int reserve_data(struct replace_job *job, uint64_t want)
{
	uint64_t size = (uint64_t)job->in_st.st_size, done = 0;
	struct copy_range r = { 0, 0 };
	int ret;

	while ((ret = copy_next_data(job->in_fd, r.end, size, &r)) > 0) {
		done = r.end == size ? want : r.end;
		ret = reserve(job->tmp_fd, r.start, done - r.start);
		if (ret < 0)
			return ret;
	}
	if (ret == 0 && done < want && want > size)
		ret = reserve(job->tmp_fd, size, want - size);
	return ret;
}

/* Space as the FDL says: whole range, data ranges only, or nothing, + preallocation
 * (ALLOCATION, or one EXTENSION past the end, whichever reaches further). */
static int allocate(struct replace_job *job)
{
	uint64_t size = (uint64_t)job->in_st.st_size, want = size;
	const struct fdl *fdl = job->fdl;
	int ret = 0;

	job->failed = "reserve space";
	if (fdl && fdl->has_preallocate && fdl->preallocate > want)
		want = fdl->preallocate;
	/* EXTENSION: RMS grows a file by this much; reserve one extension past the end */
	if (fdl && fdl->extension && size + fdl->extension > want)
		want = size + fdl->extension;
	if (fdl && fdl->contiguous && fdl->holes == FDL_HOLES_ALLOCATE)
		return reserve(job->tmp_fd, 0, want);
	if (!fdl || fdl->contiguous)
		return reserve_data(job, want);
	if (want > size)
		ret = reserve(job->tmp_fd, size, want - size);
	return ret;
}

/*
 * fsync, forget the cached pages, and compare checksums read back from disk.
 * Copies that differ because the source was written meanwhile say so
 * (-ESTALE: changed) rather than -EIO (the copy itself is bad).
 */
static int verify(struct replace_job *job)
{
	uint64_t size = (uint64_t)job->in_st.st_size, sum_in, sum_out;
	struct copy_ctl pass = job->copy;
	struct stat now;
	int ret, same;

	job->failed = "flush the copy to disk";
	ret = backend_fsync(job->tmp_fd, false);
	if (ret < 0)
		return ret;
	posix_fadvise(job->tmp_fd, 0, 0, POSIX_FADV_DONTNEED);
	util_test_pause("ACCEL_TEST_PAUSE_BEFORE_VERIFY");
	job->failed = "verify the copy";
	pass.offset += size; /* the copy was the first pass over @size bytes */
	ret = copy_checksum(job->in_fd, size, &sum_in, &pass);
	pass.offset += size;
	if (ret == 0)
		ret = copy_checksum(job->tmp_fd, size, &sum_out, &pass);
	if (ret == 0 && sum_in != sum_out)
		ret = -EIO;
	if (fstat(job->in_fd, &now) < 0)
		return ret < 0 ? ret : -errno;
	same = replace_same_file(&job->in_st, &now);
	if (same < 0) {
		job->failed = "copy a file that did not change meanwhile";
		return same;
	}
	return ret;
}

static int apply_meta(struct replace_job *job)
{
	struct meta_plan plan = {
		.st = &job->in_st,
		.src_fd = job->in_fd,
		.fdl = job->fdl,
		.owner_best_effort = job->owner_best_effort,
	};
	int ret;

	ret = meta_apply(job->tmp_fd, &plan);
	job->failed = plan.failed;
	if (ret == 0) {
		job->failed = "flush the metadata to disk";
		ret = backend_fsync(job->tmp_fd, false);
	}
	return ret;
}

int replace_build(struct replace_job *job)
{
	int ret;

	job->tmp[0] = '\0';
	job->tmp_fd = -1;
	ret = create_tmp(job);
	if (ret == 0) {
		job->failed = "set the no-copy-on-write flag";
		ret = meta_flags_early(job->in_fd, job->tmp_fd);
	}
	if (ret == 0)
		ret = allocate(job);
	if (ret == 0) {
		job->failed = "copy the data";
		ret = copy_data(job->in_fd, job->tmp_fd, (uint64_t)job->in_st.st_size, &job->copy);
	}
	if (ret == 0)
		ret = verify(job);
	if (ret == 0)
		ret = apply_meta(job);
	if (ret < 0)
		replace_discard(job);
	return ret;
}

static int check_target(struct replace_job *job)
{
	struct stat now;

	job->failed = "replace a file that did not change meanwhile";
	if (fstatat(job->dir_fd, job->target, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return replace_same_file(&job->in_st, &now);
}

static int do_rename(struct replace_job *job)
{
	int ret;

	job->failed = "rename the new file into place";
	if (!job->noreplace)
		return renameat(job->dir_fd, job->tmp, job->dir_fd, job->target) < 0 ? -errno : 0;
	ret = renameat2(job->dir_fd, job->tmp, job->dir_fd, job->target, RENAME_NOREPLACE);
	if (ret < 0 && errno == EINVAL) { /* no RENAME_NOREPLACE here: link is exclusive too */
		if (linkat(job->dir_fd, job->tmp, job->dir_fd, job->target, 0) < 0)
			return -errno;
		unlinkat(job->dir_fd, job->tmp, 0);
		return 0;
	}
	return ret < 0 ? -errno : 0;
}

/*
 * The guarded rename (see replace.h). A lease-break signal raised by a
 * writer's open() is delivered to us no later than the return from the
 * rename system call, so testing the flag after the rename is enough.
 */
static int guarded_rename(struct replace_job *job)
{
	char old[NAME_MAX + 1];
	int ret;

	job->failed = "link the file under a guard name";
	ret = tmpname_make(old, sizeof(old), "defrag-old", job->target, getpid());
	if (ret == 0 && linkat(job->dir_fd, job->target, job->dir_fd, old, 0) < 0)
		ret = -errno;
	if (ret == -EEXIST) /* planted: never followed (linkat without AT_SYMLINK_FOLLOW) */
		memcpy(job->taken, old, sizeof(job->taken));
	if (ret < 0)
		return ret;
	ret = do_rename(job);
	if (ret == 0 && *job->guard) {
		/* tmp's inode loses its last name here: it is removed, as intended */
		if (renameat(job->dir_fd, old, job->dir_fd, job->target) == 0) {
			job->failed = "replace a file nobody opened for writing meanwhile";
			ret = -EBUSY;
			job->tmp[0] = '\0';
		}
	}
	unlinkat(job->dir_fd, old, 0);
	return ret;
}

int replace_commit(struct replace_job *job)
{
	int ret = 0;

	if (job->target_is_source)
		ret = check_target(job);
	if (ret == 0 && job->guard && *job->guard)
		ret = -EBUSY;
	if (ret == 0)
		ret = job->guard ? guarded_rename(job) : do_rename(job);
	if (ret < 0) {
		replace_discard(job);
		return ret;
	}
	job->tmp[0] = '\0';
	close(job->tmp_fd);
	job->tmp_fd = -1;
	job->failed = "flush the directory to disk";
	return fsync(job->dir_fd) < 0 ? 1 : 0;
}
