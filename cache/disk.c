// SPDX-License-Identifier: MIT
/*
 * disk.c - the disk tier's entries: opening the directory, reading,
 * checking and writing one bucket (disk.h has the contract, disk_i.h the
 * layout). Every call is a few local system calls on the tier's own
 * directory; none touches SOURCE.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
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

/* "XX/IIII...SSSS...": the entry's path below the tier's directory. */
static void entry_name(const struct disk_tier *d, const struct disk_key *k, char *out, size_t len)
{
	uint64_t who = mix(k->ns, k->ino);
	uint64_t state =
	    mix(mix(mix(k->size, (uint64_t)k->mtime_ns), (uint64_t)k->ctime_ns), d->bsize);

	snprintf(out, len, "%02x/%016llx%016llx", (unsigned)(who >> 56), (unsigned long long)who,
		 (unsigned long long)state);
}

/* The offset of bucket @bucket's slot, or -1 past what a file can hold. */
static off_t slot_off(const struct disk_tier *d, uint64_t bucket)
{
	uint64_t slot = disk_slot(d->bsize);

	return bucket < (uint64_t)INT64_MAX / slot - 1 ? (off_t)(bucket * slot) : -1;
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
	struct stat st;
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
	if (!ret && (ret = dir_check(cfg, fd)) == 0 && !(d = calloc(1, sizeof(*d))))
		ret = -ENOMEM;
	if (ret) {
		if (fd >= 0)
			close(fd);
		close(top);
		return ret;
	}
	d->dirfd = fd;
	/* the layout before this one, left by an older daemon: emptied in the
	 * background (disk_evict.c), if ours (DIR, 0700, keeps others out) */
	d->oldfd = openat(top, DISK_OLD_SUBDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->oldfd >= 0 && (fstat(d->oldfd, &st) || st.st_uid != geteuid())) {
		close(d->oldfd);
		d->oldfd = -1;
	}
	d->topfd = d->oldfd >= 0 ? top : -1;
	if (d->oldfd < 0)
		close(top);
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
	if (d->oldfd >= 0)
		close(d->oldfd);
	if (d->topfd >= 0)
		close(d->topfd);
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

/* Is @e the header of bucket @bucket of @k, as written by this layout? */
static bool header_ok(const struct disk_tier *d, const struct disk_entry *e,
		      const struct disk_key *k, uint64_t bucket)
{
	return !memcmp(e->magic, DISK_MAGIC, 8) && e->version == DISK_VERSION &&
	       e->bucket_size == d->bsize && e->len && e->len <= d->bsize && e->bucket == bucket &&
	       !memcmp(&e->key, k, sizeof(*k));
}

static uint32_t entry_crc(const struct disk_entry *e, const void *data)
{
	struct disk_entry h = *e;

	h.crc = 0;
	return disk_crc32c(disk_crc32c(0, &h, sizeof(h)), data, h.len);
}

static int entry_open(struct disk_tier *d, const char *name)
{
	int fd = openat(d->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC);

	if (fd < 0 && errno == EPERM) /* O_NOATIME: not ours (root's tier read by root is) */
		fd = openat(d->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/*
 * Make slots @first..@last of entry @name holes. Where the file system
 * cannot punch, their headers are zeroed: a slot without its header is not
 * served either.
 */
static void slots_punch(struct disk_tier *d, const char *name, uint64_t first, uint64_t last)
{
	static const struct disk_entry zero;
	const off_t slot = (off_t)disk_slot(d->bsize);
	off_t off = slot_off(d, first), end = slot_off(d, last);
	struct stat st;
	int fd;

	if (off < 0 || last < first)
		return;
	fd = openat(d->dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && off < st.st_size) {
		if (end < 0 || end >= st.st_size) /* to the last slot kept */
			end = (st.st_size - 1) / slot * slot;
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			      end - off + slot))
			for (off_t o = off; o <= end; o += slot)
				if (pwrite(fd, &zero, sizeof(zero), o) != (ssize_t)sizeof(zero))
					break;
	}
	close(fd);
}

ssize_t disk_tier_read(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, uint32_t n,
		       void *buf)
{
	const size_t slot = (size_t)disk_slot(d->bsize);
	char name[DISK_NAME_MAX], pad[DISK_HDR - sizeof(struct disk_entry)];
	struct disk_entry e[DISK_RUN_MAX];
	struct iovec iov[3 * DISK_RUN_MAX];
	off_t off = slot_off(d, bucket);
	size_t total = 0;
	uint32_t ok = 0;
	ssize_t got;
	int fd;

	n = n < 1 ? 1 : n > DISK_RUN_MAX ? DISK_RUN_MAX : n;
	if (off >= 0 && slot_off(d, bucket + n - 1) < 0)
		n = 1;
	entry_name(d, k, name, sizeof(name));
	fd = off < 0 ? -1 : entry_open(d, name);
	if (fd < 0) {
		ADD(d->misses, 1);
		return -ENOENT;
	}
	for (uint32_t i = 0; i < n; i++) {
		iov[3 * i] = (struct iovec){ &e[i], sizeof(e[i]) };
		iov[3 * i + 1] = (struct iovec){ pad, sizeof(pad) }; /* read, not kept */
		iov[3 * i + 2] = (struct iovec){ (char *)buf + (size_t)i * d->bsize, d->bsize };
	}
	got = preadv(fd, iov, (int)(3 * n), off);
	/* Each slot in turn: a hole (never kept, punched, or a header lost to
	 * a power cut) ends the run as a miss; a header present but not right,
	 * or data short or not matching its CRC, is damage: punched out. */
	for (uint32_t i = 0; i < n; i++) {
		ssize_t at = (ssize_t)(i * slot);

		if (got < at + (ssize_t)sizeof(e[i]) || !memcmp(e[i].magic, (char[8]){ 0 }, 8))
			break;
		if (!header_ok(d, &e[i], k, bucket + i) ||
		    got < at + (ssize_t)(DISK_HDR + e[i].len) ||
		    entry_crc(&e[i], (char *)buf + (size_t)i * d->bsize) != e[i].crc) {
			slots_punch(d, name, bucket + i, bucket + i);
			ADD(d->corrupt, 1);
			break;
		}
		total += e[i].len;
		ok++;
		if (e[i].len < d->bsize) /* the file's last bucket */
			break;
	}
	if (ok)
		touch(fd);
	close(fd);
	if (!ok) {
		ADD(d->misses, 1);
		return -ENOENT;
	}
	ADD(d->hits, ok);
	return (ssize_t)total;
}

ssize_t disk_tier_get(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, void *buf)
{
	return disk_tier_read(d, k, bucket, 1, buf);
}

/* Is slot @bucket of the open entry @fd bucket @bucket of @k? (its header) */
static bool slot_kept(struct disk_tier *d, int fd, const struct disk_key *k, uint64_t bucket)
{
	struct disk_entry e;
	off_t off = slot_off(d, bucket);

	return off >= 0 && pread(fd, &e, sizeof(e), off) == (ssize_t)sizeof(e) &&
	       header_ok(d, &e, k, bucket);
}

bool disk_tier_has(struct disk_tier *d, const struct disk_key *k, uint64_t bucket)
{
	char name[DISK_NAME_MAX];
	bool kept;
	int fd;

	entry_name(d, k, name, sizeof(name));
	fd = entry_open(d, name);
	if (fd < 0)
		return false;
	kept = slot_kept(d, fd, k, bucket);
	close(fd);
	return kept;
}

bool disk_tier_prefetch(struct disk_tier *d, const struct disk_key *k, uint64_t bucket)
{
	char name[DISK_NAME_MAX];
	off_t off = slot_off(d, bucket);
	bool kept;
	int fd;

	entry_name(d, k, name, sizeof(name));
	fd = off < 0 ? -1 : entry_open(d, name);
	if (fd < 0)
		return false;
	/* the extent map, not the data: nothing waits for the disk */
	kept = lseek(fd, off, SEEK_DATA) == off;
	if (kept)
		posix_fadvise(fd, off, (off_t)disk_slot(d->bsize), POSIX_FADV_WILLNEED);
	close(fd);
	return kept;
}

void disk_tier_drop(struct disk_tier *d, const struct disk_key *k, uint64_t first, uint64_t last)
{
	char name[DISK_NAME_MAX];

	entry_name(d, k, name, sizeof(name));
	slots_punch(d, name, first, last);
}

/* Open (create) entry @name for writing a slot. */
static int entry_create(struct disk_tier *d, const char *name)
{
	int fd = openat(d->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 && errno == ENOENT) { /* its XX directory is not there yet */
		char sub[3] = { name[0], name[1], 0 };

		if (mkdirat(d->dirfd, sub, 0700) && errno != EEXIST)
			return -1;
		fd = openat(d->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	return fd;
}

/*
 * The data first, then the header: a reader on this host that sees the
 * header finds the data it covers (a second writer of the slot writes the
 * same bytes: same file, same state). After a power cut either may be
 * missing or torn: the CRC tells.
 */
static int slot_write(int fd, const struct disk_entry *e, const void *data, off_t off)
{
	ssize_t n = pwrite(fd, data, e->len, off + DISK_HDR);

	if (n == (ssize_t)e->len)
		n = pwrite(fd, e, sizeof(*e), off) == (ssize_t)sizeof(*e) ? n : -1;
	if (n == (ssize_t)e->len)
		return 0;
	return n < 0 ? -errno : -ENOSPC;
}

void disk_tier_put(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, const void *data,
		   size_t len)
{
	char name[DISK_NAME_MAX];
	struct disk_entry e = { .version = DISK_VERSION,
				.len = (uint32_t)len,
				.bucket = bucket,
				.key = *k,
				.bucket_size = d->bsize };
	off_t off = slot_off(d, bucket);
	int fd, ret;

	if (!len || len > d->bsize || off < 0)
		return;
	entry_name(d, k, name, sizeof(name));
	fd = entry_create(d, name);
	if (fd < 0) {
		ret = -errno;
		goto failed;
	}
	/* kept already (a miss's run and the read-ahead bring the same buckets):
	 * same file, same state, so the same bytes */
	if (slot_kept(d, fd, k, bucket)) {
		close(fd);
		return;
	}
	memcpy(e.magic, DISK_MAGIC, 8);
	e.crc = entry_crc(&e, data);
	ret = slot_write(fd, &e, data, off);
	close(fd);
	if (ret) {
		slots_punch(d, name, bucket, bucket); /* what did fit of it */
		goto failed;
	}
	ADD(d->puts, 1);
	if (ADD(d->used, disk_slot_bytes(len)) > d->limit)
		disk_evict_kick(d);
	return;
failed:
	ADD(d->put_errors, 1);
	/* DIR's file system is fuller than disk_cache_size allows for */
	if ((ret == -ENOSPC || ret == -EDQUOT) &&
	    !__atomic_exchange_n(&d->full, true, __ATOMIC_RELAXED))
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
