/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the byte hash of cache/'s on-disk and shared-memory names and
 * sums (the pool header's geometry_sum, the disk tier's namespace). Both
 * are layouts other processes read, so the function is fixed: FNV-1a, 64
 * bits. Not for untrusted keys of in-memory tables (no seed).
 */
#ifndef ACCEL_CACHE_HASH_H
#define ACCEL_CACHE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t cache_fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#endif
