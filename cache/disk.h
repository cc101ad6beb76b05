/* SPDX-License-Identifier: MIT */
/*
 * disk.h - the disk tier: buckets of SOURCE files kept in a local directory
 * below the pool (-o disk_cache=DIR), so a re-read after a daemon restart,
 * a reboot or the RAM caches' eviction is a local read, not a network one
 * (FS-Cache, rclone's VFS cache, JuiceFS's cache-dir do the same).
 *
 * Guarantees (docs/cache.md, "The disk tier"):
 * - An entry, one sparse file holding the buckets kept of one file in one
 *   state, is named by the file's identity (a namespace naming SOURCE,
 *   the inode number) and its state (size, mtime, ctime) when the buckets
 *   were read, and every bucket's header holds them again: a file changed
 *   anywhere (another host included) has another state at its next open,
 *   so its old entries are never looked up again.
 *   The caller keeps the state true between its own writes (stream.c).
 * - A bucket is whole or not served: a CRC-32C over its header and data is
 *   checked at every hit; a torn or damaged one (power cut while it was
 *   written, a bad disk block) is punched out and counted, and the caller
 *   reads SOURCE instead. Its data is written before its header.
 * - The directory holds at most about the configured size: a thread of
 *   the tier scans it when its estimate passes the bound (and every 30 s)
 *   and removes entries never read since they were written, oldest first,
 *   then the least recently read ones, down to 90 % of the bound (the last
 *   to go loses only its first buckets); a put that meets a full file
 *   system has it make room the same way.
 * - The directory must be the daemon user's own, mode 0700 or stricter,
 *   and no symlink: the data of every user's files is in it.
 * - Several daemons (every mount of the host) may share one directory.
 *
 * Library code: no logging; one-line reasons through the config's err.
 */
#ifndef ACCELFS_CACHE_DISK_H
#define ACCELFS_CACHE_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool.h"

struct disk_tier;

#define DISK_DEFAULT_SIZE (1ULL << 30) /* disk_cache_size= when not given */
#define DISK_MIN_SIZE (1ULL << 20)
#define DISK_SUBDIR "accelfs-disk-v2" /* below DIR: the layout version */

struct disk_config {
	const char *dir;      /* an absolute path; created (0700) if missing */
	uint64_t size;	      /* bytes the entries may take on disk, >= DISK_MIN_SIZE */
	uint32_t bucket_size; /* the pool's */
	const char *ns;	      /* names SOURCE (its real path): entries apart from another's */
	char *err;	      /* if set, receives a one-line reason on failure */
	size_t errlen;
};

/*
 * disk_tier_open - check and open the directory. Returns 0, -EPERM (not the
 * daemon user's own, or group/other bits: @err says which and the fix),
 * -ENOTDIR, -ELOOP (a symlink), -EINVAL, -errno.
 */
int disk_tier_open(const struct disk_config *cfg, struct disk_tier **out);

/*
 * disk_tier_start - start the thread that keeps the size bound (in the
 * process that will use the tier: after a daemon's fork). Until then the
 * tier works, unbounded. Returns 0 or -errno.
 */
int disk_tier_start(struct disk_tier *d);

/* Stop the thread and close. Entries stay for the next daemon. */
void disk_tier_close(struct disk_tier *d);

/* A file in a given state: what its entries are named by and hold. */
struct disk_key {
	uint64_t ns;  /* hash of the namespace */
	uint64_t ino; /* SOURCE inode number */
	/* No file handle: a FUSE SOURCE's (GlusterFS's) names its node, which
	 * changes when the kernel forgets the inode; ctime tells a new file
	 * that took a freed inode number from the old one. */
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
};

/* The key of file @id in tier @d. */
void disk_key_of(const struct disk_tier *d, const struct pool_file_id *id, struct disk_key *k);

/*
 * disk_tier_get - read bucket @bucket of @k into @buf (bucket_size bytes).
 * Returns its length (short only at the file's end, never 0), or -ENOENT:
 * no such entry, or a damaged one (removed, counted corrupt).
 */
ssize_t disk_tier_get(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, void *buf);

#define DISK_RUN_MAX 32 /* buckets one disk_tier_read reads at most */

/*
 * disk_tier_read - read buckets @bucket.. of @k, up to @n (at most
 * DISK_RUN_MAX), into @buf (@n x bucket_size bytes) with one system call.
 * Returns the bytes of the leading buckets kept and whole, one after the
 * other (each full but the file's last), or -ENOENT if the first is not:
 * the run ends at the first bucket not kept or damaged (removed, counted
 * corrupt). Counts a hit per bucket returned, or one miss.
 */
ssize_t disk_tier_read(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, uint32_t n,
		       void *buf);

/* Remove what is kept of buckets @first..@last of @k (one hole punched). */
void disk_tier_drop(struct disk_tier *d, const struct disk_key *k, uint64_t first, uint64_t last);

/* Is bucket @bucket of @k kept? (its header read; the data not checked) */
bool disk_tier_has(struct disk_tier *d, const struct disk_key *k, uint64_t bucket);

/*
 * disk_tier_prefetch - if SOURCE's bucket @bucket of @k seems kept (its
 * slot is not a hole: no read waited for), have the kernel start reading
 * it into the page cache now (POSIX_FADV_WILLNEED), without waiting: a
 * reader's next hits then find it in memory. Counts nothing.
 */
bool disk_tier_prefetch(struct disk_tier *d, const struct disk_key *k, uint64_t bucket);

/*
 * disk_tier_put - keep @len bytes (1..bucket_size; short only at the end
 * of the file as @k's size says) as bucket @bucket of @k. Best effort: a
 * full disk or any error only counts (put_errors). Never blocks on the
 * eviction scan.
 */
void disk_tier_put(struct disk_tier *d, const struct disk_key *k, uint64_t bucket, const void *data,
		   size_t len);

struct disk_stats {
	uint64_t hits, misses; /* gets answered / not */
	uint64_t puts;	       /* entries written */
	uint64_t put_errors;   /* entries that could not be written (full disk...) */
	uint64_t corrupt;      /* damaged entries found and removed */
	uint64_t evicted;      /* entries removed to keep the bound */
	uint64_t used;	       /* bytes on disk at the last scan, plus puts since */
	uint64_t limit;	       /* the bound */
};
void disk_tier_stats(struct disk_tier *d, struct disk_stats *s);

/* CRC-32C (Castagnoli) of @len bytes, continuing from @crc (0 to start). */
uint32_t disk_crc32c(uint32_t crc, const void *data, size_t len);

#endif
