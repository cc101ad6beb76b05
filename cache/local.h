/* SPDX-License-Identifier: MIT */
/*
 * local.h - a handle's private buffers (RMS "local buffers"), looked at
 * before the global pool.
 *
 * A handle owns N bucket-sized buffers in its own process memory, most
 * recently used kept. Each remembers the coherence ticket (pool.h) current
 * when its data was taken, and counts as a hit only while the file's ticket
 * is still the same: any write, truncate or invalidation of the file by any
 * process makes every local buffer of that file miss, so local buffers never
 * serve stale bytes. Not thread-safe: the owner serialises calls.
 */
#ifndef ACCELFS_CACHE_LOCAL_H
#define ACCELFS_CACHE_LOCAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool.h"

struct local;

/* Make @n local buffers of @bucket_size bytes (memory taken on first use). */
int local_create(uint32_t bucket_size, unsigned int n, struct local **out);

void local_destroy(struct local *lc);

/*
 * local_read - copy @len bytes at @off of @bucket if a buffer holds it under
 * ticket @cur. Returns bytes copied (short only at end of file) or -ENOENT.
 */
ssize_t local_read(struct local *lc, const struct pool_ticket *cur, uint64_t bucket, void *buf,
		   size_t off, size_t len);

/*
 * local_prepare - the buffer that will next receive a bucket (the least
 * recently used, invalidated now), for the caller to fill in place and then
 * publish with local_commit(). NULL if memory is short.
 */
void *local_prepare(struct local *lc);

/* Publish what local_prepare() returned as @len bytes of @bucket under @t. */
void local_commit(struct local *lc, const struct pool_ticket *t, uint64_t bucket, size_t len);

/* Forget @bucket (or every bucket if @bucket is UINT64_MAX). Returns buffers dropped. */
int local_invalidate(struct local *lc, uint64_t bucket);

unsigned int local_count(const struct local *lc);

#endif
