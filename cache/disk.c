// SPDX-License-Identifier: MIT
/*
 * disk.c - the disk tier's entries: opening the directory, reading,
 * checking and writing one bucket (disk.h has the contract, disk_i.h the
 * layout). Every call is a few local system calls on the tier's own
 * directory; none touches SOURCE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "disk_i.h"
#include "hash.h"

#define RECENCY_NS 60000000000LL /* a hit refreshes an entry's atime at most this often */
/* A hit this soon after the entry was written is the same reading (a reader
 * meeting its own read-ahead's entry before the pool has the bucket), not a
 * reading again: it does not promote the entry. */
#define REREAD_AFTER_NS 1000000000LL

#define ADD(field, n) __atomic_add_fetch(&(field), (n), __ATOMIC_RELAXED)

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

void disk_key_of(const struct disk_tier *d, const struct pool_file_id *id, struct disk_key *k)
{
	*k = (struct disk_key){
		.ns = d->ns,
		.ino = id->ino,
		.size = id->size,
		.mtime_ns = id->mtime_ns,
		.ctime_ns = id->ctime_ns,
	};
}

/* "XX/IIII...SSSS....B": the entry's path below the tier's directory. */
static void entry_name(const struct disk_tier *d, const struct disk_key *k, uint64_t bucket,
		       char *out, size_t len)
{
	uint64_t who = mix(k->ns, k->ino);
	uint64_t state =
	    mix(mix(mix(k->size, (uint64_t)k->mtime_ns), (uint64_t)k->ctime_ns), d->bsize);

	snprintf(out, len, "%02x/%016llx%016llx.%llx", (unsigned)(who >> 56),
		 (unsigned long long)who, (unsigned long long)state, (unsigned long long)bucket);
}

static int fail(const struct disk_config *cfg, int err, const char *fmt, const char *what)
{
	if (cfg->err && cfg->errlen) {
		char why[256];

		snprintf(why, sizeof(why), fmt, what);
		snprintf(cfg->err, cfg->errlen, "disk_cache=%s: %s", cfg->dir, why);
	}
	return -err;
}

/* Open @name below @at (a directory, created 0700 if missing), refusing a symlink. */
static int dir_open(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && (!mkdirat(at, name, 0700) || errno == EEXIST))
		fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* The directory must be ours and closed to everyone else: it holds every user's data. */
static int dir_check(const struct disk_config *cfg, int fd)
{
	struct stat st;
	char mode[64];

	if (fstat(fd, &st))
		return fail(cfg, errno, "%s", strerror(errno));
	if (st.st_uid != geteuid())
		return fail(cfg, EPERM, "%s",
			    "owned by another user; the daemon's user must own it (chown)");
	if (st.st_mode & 077) {
		snprintf(mode, sizeof(mode), "mode %04o lets other users in; chmod 0700 it",
			 (unsigned)(st.st_mode & 07777));
		return fail(cfg, EPERM, "%s", mode);
	}
	return 0;
}

int disk_tier_open(const struct disk_config *cfg, struct disk_tier **out)
{
	struct disk_tier *d;
	int top, fd, ret;

	if (!cfg->dir || cfg->dir[0] != '/' || cfg->size < DISK_MIN_SIZE || !cfg->bucket_size)
		return fail(cfg, EINVAL, "%s", "needs an absolute directory and a size >= 1M");
	top = dir_open(AT_FDCWD, cfg->dir);
	if (top < 0)
		return fail(cfg, errno, "%s",
			    errno == ELOOP || errno == ENOTDIR ? "not a directory (or a symlink)"
							       : strerror(errno));
	ret = dir_check(cfg, top);
	fd = ret ? -1 : dir_open(top, DISK_SUBDIR);
	if (!ret && fd < 0)
		ret = fail(cfg, errno, DISK_SUBDIR ": %s", strerror(errno));
	close(top);
	if (!ret && (ret = dir_check(cfg, fd)) == 0 && !(d = calloc(1, sizeof(*d))))
		ret = -ENOMEM;
	if (ret) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	d->dirfd = fd;
	d->ns = cache_fnv1a(cfg->ns ? cfg->ns : "", cfg->ns ? strlen(cfg->ns) : 0);
	d->bsize = cfg->bucket_size;
	d->limit = cfg->size;
	disk_evict_init(d);
	*out = d;
	return 0;
}

int disk_tier_start(struct disk_tier *d)
{
	return disk_evict_start(d);
}

void disk_tier_close(struct disk_tier *d)
{
	if (!d)
		return;
	disk_evict_stop(d);
	close(d->dirfd);
	free(d);
}

/*
 * A hit: the entry's atime after its mtime marks it read again (it outlives
 * entries read once, disk_evict.c), and is its recency: set at the first
 * hit a second or more after the entry was written, then refreshed at most
 * once a minute.
 */
static void touch(int fd)
{
	struct timespec now, ts[2];
	struct stat st;

	if (fstat(fd, &st) || clock_gettime(CLOCK_REALTIME, &now))
		return;
	if (disk_ts_ns(&now) - disk_ts_ns(&st.st_mtim) < REREAD_AFTER_NS ||
	    (disk_ts_ns(&st.st_atim) > disk_ts_ns(&st.st_mtim) &&
	     disk_ts_ns(&now) - disk_ts_ns(&st.st_atim) < RECENCY_NS))
		return;
	ts[0] = now;
	ts[1].tv_nsec = UTIME_OMIT;
	futimens(fd, ts);
}

static bool entry_ok(const struct disk_tier *d, const struct disk_entry *e,
		     const struct disk_key *k, uint64_t bucket, ssize_t got, const void *data)
{
	struct disk_entry h = *e;

	if (got < (ssize_t)sizeof(h) || memcmp(h.magic, DISK_MAGIC, 8) ||
	    h.version != DISK_VERSION || h.bucket_size != d->bsize || !h.len || h.len > d->bsize ||
	    (size_t)got != sizeof(h) + h.len || h.bucket != bucket || memcmp(&h.key, k, sizeof(*k)))
		return false;
	h.crc = 0;
	return disk_crc32c(disk_crc32c(0, &h, sizeof(h)), data, h.len) == e->crc;
}

static int entry_open(struct disk_tier *d, const char *name)
{
	int fd = openat(d->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC);

	if (fd < 0 && errno == EPERM) /* O_NOATIME: not ours (root's tier read by root is) */
		fd = openat(d->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

ssize_t disk_tier_get(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, void *buf)
{
	char name[DISK_NAME_MAX];
	struct disk_entry e;
	struct iovec iov[2] = { { &e, sizeof(e) }, { buf, d->bsize } };
	ssize_t got;
	int fd;

	entry_name(d, k, bucket, name, sizeof(name));
	fd = entry_open(d, name);
	if (fd < 0) {
		ADD(d->misses, 1);
		return -ENOENT;
	}
	got = preadv(fd, iov, 2, 0);
	if (!entry_ok(d, &e, k, bucket, got, buf)) {
		close(fd);
		if (unlinkat(d->dirfd, name, 0) == 0)
			ADD(d->corrupt, 1);
		ADD(d->misses, 1);
		return -ENOENT;
	}
	touch(fd);
	close(fd);
	ADD(d->hits, 1);
	return (ssize_t)e.len;
}

bool disk_tier_has(struct disk_tier *d, const struct disk_key *k, uint64_t bucket)
{
	char name[DISK_NAME_MAX];

	entry_name(d, k, bucket, name, sizeof(name));
	return faccessat(d->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool disk_tier_prefetch(struct disk_tier *d, const struct disk_key *k, uint64_t bucket)
{
	char name[DISK_NAME_MAX];
	int fd;

	entry_name(d, k, bucket, name, sizeof(name));
	fd = entry_open(d, name);
	if (fd < 0)
		return false;
	posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
	close(fd);
	return true;
}

void disk_tier_drop(struct disk_tier *d, const struct disk_key *k, uint64_t bucket)
{
	char name[DISK_NAME_MAX];

	entry_name(d, k, bucket, name, sizeof(name));
	unlinkat(d->dirfd, name, 0);
}

/* Write the entry under a temporary name next to @name; its descriptor closed. */
static int entry_write(struct disk_tier *d, const char *name, char *tmp, size_t tmplen,
		       const struct disk_entry *e, const void *data)
{
	struct iovec iov[2] = { { (void *)e, sizeof(*e) }, { (void *)data, e->len } };
	uint32_t seq = ADD(d->tmpseq, 1);
	ssize_t n;
	int fd;

	snprintf(tmp, tmplen, "%s.t%x.%x", name, (unsigned)getpid(), seq);
	fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == ENOENT) { /* its XX directory is not there yet */
		char sub[3] = { name[0], name[1], 0 };

		if (mkdirat(d->dirfd, sub, 0700) && errno != EEXIST)
			return -errno;
		fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
	}
	if (fd < 0)
		return -errno;
	n = pwritev(fd, iov, 2, 0);
	if (n != (ssize_t)(sizeof(*e) + e->len)) {
		int err = n < 0 ? errno : ENOSPC;

		close(fd);
		unlinkat(d->dirfd, tmp, 0);
		return -err;
	}
	return close(fd) ? -errno : 0;
}

void disk_tier_put(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, const void *data,
		   size_t len)
{
	char name[DISK_NAME_MAX], tmp[DISK_NAME_MAX + 24];
	struct disk_entry e = { .version = DISK_VERSION,
				.len = (uint32_t)len,
				.bucket = bucket,
				.key = *k,
				.bucket_size = d->bsize };
	int ret;

	if (!len || len > d->bsize)
		return;
	entry_name(d, k, bucket, name, sizeof(name));
	/* kept already (a miss's run and the read-ahead bring the same buckets):
	 * same file, same state, so the same bytes */
	if (faccessat(d->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return;
	memcpy(e.magic, DISK_MAGIC, 8);
	e.crc = disk_crc32c(disk_crc32c(0, &e, sizeof(e)), data, len);
	if ((ret = entry_write(d, name, tmp, sizeof(tmp), &e, data)) != 0 ||
	    (ret = renameat(d->dirfd, tmp, d->dirfd, name) ? -errno : 0) != 0) {
		unlinkat(d->dirfd, tmp, 0);
		ADD(d->put_errors, 1);
		/* DIR's file system is fuller than disk_cache_size allows for */
		if ((ret == -ENOSPC || ret == -EDQUOT) &&
		    !__atomic_exchange_n(&d->full, true, __ATOMIC_RELAXED))
			disk_evict_kick(d);
		return;
	}
	ADD(d->puts, 1);
	if (ADD(d->used, disk_entry_bytes(len)) > d->limit)
		disk_evict_kick(d);
}

void disk_tier_stats(struct disk_tier *d, struct disk_stats *s)
{
	*s = (struct disk_stats){
		.hits = __atomic_load_n(&d->hits, __ATOMIC_RELAXED),
		.misses = __atomic_load_n(&d->misses, __ATOMIC_RELAXED),
		.puts = __atomic_load_n(&d->puts, __ATOMIC_RELAXED),
		.put_errors = __atomic_load_n(&d->put_errors, __ATOMIC_RELAXED),
		.corrupt = __atomic_load_n(&d->corrupt, __ATOMIC_RELAXED),
		.evicted = __atomic_load_n(&d->evicted, __ATOMIC_RELAXED),
		.used = __atomic_load_n(&d->used, __ATOMIC_RELAXED),
		.limit = d->limit,
	};
}
