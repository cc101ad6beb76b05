/* SPDX-License-Identifier: MIT */
/*
 * disk_i.h - the disk tier's internals shared by disk.c (entries) and
 * disk_evict.c (the size bound). Private to cache/disk*.
 *
 * Layout below DIR (docs/cache.md, "The disk tier"):
 *   DIR/accelfs-disk-v2/XX/IIIIIIIIIIIIIIIISSSSSSSSSSSSSSSS
 * XX: the first two hex digits of I; I: 16 hex digits, the hash of the
 * file's identity (namespace, inode); S: 16 hex digits, the hash of
 * its state (size, mtime, ctime) and the bucket size. One sparse file per
 * file state (an entry): bucket B is the slot at B * disk_slot(bsize), a
 * DISK_HDR-byte page holding its struct disk_entry, then its len data
 * bytes; a bucket not kept is a hole.
 */
#ifndef ACCELFS_CACHE_DISK_I_H
#define ACCELFS_CACHE_DISK_I_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "disk.h"

#define DISK_MAGIC "ACCDISK2"
#define DISK_VERSION 2U
#define DISK_OLD_SUBDIR "accelfs-disk-v1" /* the layout before: removed at start */
#define DISK_NAME_MAX 40		  /* "XX/" + 32 hex + NUL fits */
#define DISK_HDR 4096U			  /* a slot's header page: the data starts page-aligned */
#define DISK_SCAN_EVERY_NS 30000000000ULL /* a scan at least this often while puts happen */

/* The header of a slot, in host byte order (a tier is not moved between hosts). */
struct disk_entry {
	char magic[8];	      /* DISK_MAGIC */
	uint32_t version;     /* DISK_VERSION */
	uint32_t len;	      /* data bytes after the header page, 1..bucket_size */
	uint64_t bucket;      /* its bucket number */
	struct disk_key key;  /* the file and state it belongs to */
	uint32_t bucket_size; /* the pool's when written */
	uint32_t crc;	      /* CRC-32C of this header (crc 0) and the data */
};
_Static_assert(sizeof(struct disk_entry) == 72, "the entry header is part of the layout");

struct disk_tier {
	int dirfd;	/* DIR/accelfs-disk-v2, O_PATH|O_DIRECTORY */
	int oldfd;	/* DIR/accelfs-disk-v1 to empty and remove (disk_evict.c), or -1 */
	int topfd;	/* DIR while oldfd is open, else -1 */
	uint64_t ns;	/* hash of the namespace */
	uint32_t bsize; /* bucket size */
	uint64_t limit; /* bytes */
	uint64_t used;	/* atomic: bytes at the last scan plus puts since */
	uint64_t hits, misses, puts, put_errors, corrupt, evicted; /* atomic counters */

	/* The eviction thread (disk_evict.c); lock protects the fields below. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool thread_started;
	bool stop;	/* lock: the thread ends */
	bool want_scan; /* lock: a put took the estimate past the bound */
	bool full;	/* atomic: a put met ENOSPC: the next scan frees a tenth */
};

/* disk_evict.c */
void disk_evict_init(struct disk_tier *d); /* the lock and condition, at open */
int disk_evict_start(struct disk_tier *d);
void disk_evict_stop(struct disk_tier *d);
void disk_evict_kick(struct disk_tier *d); /* a put took the estimate past the bound */

/* disk_crc32c by the tables alone (the unit test holds the instruction to it) */
uint32_t disk_crc32c_sw(uint32_t crc, const void *data, size_t len);

/* a file time in nanoseconds (entries' mtime is their writing, atime their last re-read) */
static inline int64_t disk_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* The distance between two slots of an entry. */
static inline uint64_t disk_slot(uint32_t bsize)
{
	return DISK_HDR + (((uint64_t)bsize + 4095) & ~4095ULL);
}

/* Bytes a slot of @len data bytes takes on disk (the scan's measure, roughly). */
static inline uint64_t disk_slot_bytes(uint64_t len)
{
	return DISK_HDR + ((len + 4095) & ~4095ULL);
}

#endif
