/* SPDX-License-Identifier: MIT */
/*
 * mrc_layout.h - the shared-memory layout of the miss-ratio-curve estimator
 * (cache/mrc.c), version 1: the part of a pool segment between off_mrc and
 * off_data (cache/pool_layout.h), MRC_REGION_SIZE bytes.
 *
 * Like the pool's layout this is a contract between every process that maps
 * the pool: daemons (read-write) and `accel report` / the monitor
 * (read-only). Everything is fixed-width, naturally aligned and
 * position-independent (indices, never pointers). The geometry is
 * compile-time (MRC_FILES, MRC_*_SMAX), so a reader trusts nothing of the
 * region but the header's identity; change anything here and bump
 * MRC_VERSION: a region whose magic, version, header size, mutex size,
 * byte order or total size differ is not used (its curves read as absent).
 *
 * Region, in this order:
 *
 *   +------------------------------+  0
 *   | struct mrc_header            |  identity, dir_lock, hints, pool access counters
 *   +------------------------------+  MRC_OFF_POOL
 *   | instance: the pool's curve   |  struct mrc_inst + arrays for MRC_POOL_SMAX
 *   +------------------------------+  MRC_OFF_FILES
 *   | instance [MRC_FILES]         |  struct mrc_inst + arrays for MRC_FILE_SMAX each
 *   +------------------------------+  <= MRC_REGION_SIZE
 *
 * An instance of s_max = s is struct mrc_inst followed by
 *   struct mrc_entry entries[s]  sampled buckets: key, last access time, chain
 *   uint32_t heads[s]            hash heads: entry index or MRC_NONE
 *   uint32_t tmap[2 s]           logical time -> entry index, or MRC_NONE
 *   uint32_t fen[2 s]            Fenwick tree over the times in use
 *
 * CONCURRENCY PROTOCOL
 *
 * M1. Each instance has a robust, process-shared mutex (lock). Every field
 *     and array marked "lock" changes only under it; the lock is taken only
 *     for a sampled access (the hash test comes first) and waited on with a
 *     bound (cache/shmlock.h): past it the sample is skipped. A lock whose
 *     owner died resets that instance (it is statistics, not data).
 * M2. The header's dir_lock gives instances to files: ident changes only
 *     under it. Lock order: dir_lock, then an instance lock; never two
 *     instance locks. The pool's shard and files locks are never held while
 *     either is taken, nor taken under them.
 * M3. An instance is reset (inst_clear) under its lock with epoch odd, and
 *     given to a new file with ident 0 meanwhile: an access that found it
 *     by its old ident then finds no match and is not counted in the new
 *     curve. Readers take no lock: they load epoch (acquire), skip if odd,
 *     copy the counters and bins with relaxed loads, fence (acquire), and
 *     accept the copy only if epoch and ident are unchanged (a seqlock,
 *     retried a bounded number of times).
 * M4. Counters (accesses, sampled, cold_w, total_w, bins, acc) are relaxed
 *     atomic adds: a reader may see them slightly out of date with each
 *     other, never torn. hint[] is a hint: its value is checked against
 *     the instance's ident before use.
 * M5. Nothing read from the region is trusted: every index (hash chain,
 *     free list, time map, hint) is bounds-checked; a check that fails
 *     resets the instance.
 */
#ifndef ACCELFS_CACHE_MRC_LAYOUT_H
#define ACCELFS_CACHE_MRC_LAYOUT_H

#include <pthread.h>
#include <stdint.h>

#include "mrc.h"

#define MRC_MAGIC 0x3143524d43434158ULL /* "XACCMRC1" little-endian */
#define MRC_VERSION 1U
#define MRC_ENDIAN 0x01020304U
#define MRC_NONE UINT32_MAX
#define MRC_P (1U << 24)	/* hash space of the sampling test: thresh is out of it */
#define MRC_T0_FILE MRC_P	/* a file curve starts exact (R = 1), lock per lookup */
#define MRC_T0_POOL (MRC_P / 4) /* the pool's, shared by every file, at R = 1/4 */
#define MRC_WSHIFT 16		/* weights are fixed point, 1.0 = 2^16 */
#define MRC_FILE_SMAX 1024	/* sampled buckets per file curve */
#define MRC_POOL_SMAX 8192	/* sampled buckets of the pool curve */
#define MRC_HINTS 256		/* slot -> instance hints */
#define MRC_STRIPES 16		/* pool access counters, one cache line each */

/* A mutex in a slot of fixed size, so the layout does not move with libc. */
union mrc_mutex {
	pthread_mutex_t m;
	uint8_t pad[64];
};

struct mrc_header {
	/* Immutable after mrc_init(). */
	uint64_t magic;	      /* MRC_MAGIC, stored last (release) at init */
	uint32_t version;     /* MRC_VERSION */
	uint32_t header_size; /* sizeof(struct mrc_header) */
	uint32_t mutex_size;  /* sizeof(pthread_mutex_t) of the creator */
	uint32_t endian;      /* MRC_ENDIAN as the creator stored it */
	uint64_t total_size;  /* MRC_REGION_SIZE */
	uint32_t nfiles;      /* MRC_FILES (informative: geometry is compile-time) */
	uint32_t pad0;
	uint8_t pad1[24];
	/* Mutable. */
	union mrc_mutex dir_lock; /* M2: protects instance identities (ident) */
	uint64_t retry_at;	  /* atomic: pool samples before the next take attempt */
	uint8_t pad2[56];
	uint32_t hint[MRC_HINTS];     /* atomic, M4: instance of slot % MRC_HINTS, unchecked */
	uint64_t acc[MRC_STRIPES][8]; /* atomic, M4: pool accesses, striped by hash */
};

/* One sampled bucket. */
struct mrc_entry {
	uint64_t key;  /* lock: hash of (slot, gen, bucket) */
	uint32_t time; /* lock: logical time of the last access, < window (2 s_max) */
	uint32_t next; /* lock: hash chain or free list, entry index or MRC_NONE */
};

/* One curve; its arrays follow it (see the diagram). */
struct mrc_inst {
	union mrc_mutex lock; /* M1: robust, process-shared: everything marked "lock" */
	uint64_t ident;	      /* dir_lock + atomic, M2/M3: (gen << 32 | slot + 1), 0 = free */
	uint32_t epoch;	      /* lock + atomic, M3: odd while being reset (reader seqlock) */
	uint32_t thresh;      /* lock + atomic: sampling threshold T, 1..MRC_P (R = T / MRC_P) */
	uint32_t used;	      /* lock: sampled buckets held, <= s_max */
	uint32_t free_head;   /* lock: free entry list */
	uint32_t clock;	      /* lock: next logical time, <= window */
	uint32_t pad0;
	uint64_t last;	   /* atomic: pool samples at this curve's last sample */
	uint64_t sampled;  /* atomic, M4: sampled references */
	uint64_t cold_w;   /* atomic, M4: weight (MRC_WSHIFT) of first references */
	uint64_t total_w;  /* atomic, M4: weight of all sampled references */
	uint64_t accesses; /* atomic, M4: all references (own cache line: hot) */
	uint8_t pad2[56];
	uint64_t bins[MRC_NBINS]; /* atomic, M4: weight by reuse distance bin (mrc_bin_lo) */
};

/* Bytes of an instance of s_max @s with its arrays, and where the instances are. */
#define MRC_INST_SIZE(s) (sizeof(struct mrc_inst) + (s) * (sizeof(struct mrc_entry) + 4 + 4 * 4))
#define MRC_OFF_POOL (sizeof(struct mrc_header))
#define MRC_OFF_FILES (MRC_OFF_POOL + MRC_INST_SIZE(MRC_POOL_SMAX))

_Static_assert(sizeof(struct mrc_header) % 64 == 0, "header is cache-line sized");
_Static_assert(sizeof(struct mrc_inst) % 64 == 0, "instance header is cache-line sized");
_Static_assert(sizeof(pthread_mutex_t) <= 64, "mutex fits its slot");
_Static_assert(MRC_OFF_FILES + MRC_FILES * MRC_INST_SIZE(MRC_FILE_SMAX) <= MRC_REGION_SIZE,
	       "estimator fits MRC_REGION_SIZE");

#endif
