/* SPDX-License-Identifier: MIT */
/*
 * mrc.h - online miss-ratio curves of the global pool, per file and for the
 * whole pool, in constant memory (fixed-size SHARDS: Waldspurger et al.,
 * "Efficient MRC Construction with SHARDS", FAST'15).
 *
 * Every bucket lookup is hashed; only buckets whose hash falls under a
 * threshold T (sampling rate R = T / 2^24) are followed. Their LRU reuse
 * distances, measured among the sampled buckets and scaled by 1/R, give a
 * histogram from which the hit fraction of an LRU cache of any size (in
 * buffers = buckets) is read. When more than s_max distinct buckets are
 * sampled, T is lowered and the buckets above it are forgotten, so memory
 * stays fixed whatever the working set.
 *
 * The state lives in a region of MRC_REGION_SIZE bytes inside the pool's
 * shared-memory segment, mapped by several daemons at once (and read-only by
 * the tools). It is fixed-width, position-independent (indices only),
 * versioned, and treated as untrusted: every index read from it is
 * bounds-checked, and a region that fails a check is reset, never followed.
 * Each curve has a robust process-shared mutex; only sampled accesses take
 * it (the hash test comes first), and a lock whose owner died resets that
 * curve (it is statistics). A wait for one is bounded (cache/shmlock.h):
 * past the bound the sample is skipped. Readers take no lock.
 *
 * Curves are kept for up to MRC_FILES files, keyed by (pool file slot,
 * identity generation of the slot); a new generation starts a new curve.
 *
 * Functions returning int return 0 or -errno.
 */
#ifndef ACCELFS_CACHE_MRC_H
#define ACCELFS_CACHE_MRC_H

#include <stddef.h>
#include <stdint.h>

#define MRC_REGION_SIZE (1024U * 1024) /* bytes the pool reserves for the estimator */
#define MRC_FILES 16		       /* files with a curve of their own */
#define MRC_NBINS 464		       /* histogram bins, see mrc_bin_lo() */
#define MRC_POINTS 32		       /* candidate sizes in struct mrc_curve */

/* A miss-ratio curve, as estimated so far (a process-local snapshot). */
struct mrc_curve {
	uint32_t file_slot; /* for a file curve: its pool slot and generation */
	uint32_t file_gen;
	uint64_t accesses;	/* bucket lookups seen (all, sampled or not) */
	uint64_t sampled;	/* lookups that passed the hash test */
	uint64_t working_set;	/* estimated distinct buckets (cold misses / R) */
	double rate;		/* current sampling rate R, 0..1 */
	double total;		/* estimated references, sum of 1/R weights */
	double cold;		/* of which first references (compulsory misses) */
	double bins[MRC_NBINS]; /* estimated references by reuse distance bin */
	/* Filled by the query functions: hit fraction at default candidate sizes
	 * (powers of two from 1 up to about twice the working set). */
	uint32_t npoints;
	uint64_t buffers[MRC_POINTS];
	double hit[MRC_POINTS]; /* 0..1 */
};

/*
 * mrc_init - lay out an estimator in @region (@size bytes, zeroed, aligned
 * to 64), initialise its process-shared robust mutexes. Called once by the
 * pool's creator. Returns 0, or -EINVAL if @size < MRC_REGION_SIZE or the
 * region is misaligned.
 */
int mrc_init(void *region, size_t size);

/*
 * mrc_access - record a lookup of bucket @bucket of the file in pool slot
 * @file_slot, identity generation @file_gen. Cheap when not sampled (a hash,
 * a few relaxed loads and adds, no lock); thread- and process-safe. Does
 * nothing if the region is not a valid estimator. Returns 0, or -ETIMEDOUT
 * if a curve's lock could not be had within SHM_LOCK_WAIT_NS (cache/shmlock.h;
 * the sample is skipped: a stopped process holds it).
 */
int mrc_access(void *region, size_t size, uint32_t file_slot, uint32_t file_gen, uint64_t bucket);

/*
 * mrc_file_curve / mrc_pool_curve - snapshot the curve of one file or of the
 * whole pool into @out, lock-free (the region may be mapped read-only).
 * Returns 0, -ENOENT if the file has no curve (never accessed, not tracked,
 * or another generation), -EINVAL/-EPROTO if the region is not a valid
 * estimator of this version.
 */
int mrc_file_curve(const void *region, size_t size, uint32_t file_slot, uint32_t file_gen,
		   struct mrc_curve *out);
int mrc_pool_curve(const void *region, size_t size, struct mrc_curve *out);

/*
 * mrc_slot_curve - mrc_file_curve() for whichever generation of @file_slot
 * has a curve (out->file_gen says which), for readers that know a slot but
 * not its generation. A curve of a slot's previous file is replaced at that
 * slot's next access. Returns 0, -ENOENT, -EINVAL, -EPROTO.
 */
int mrc_slot_curve(const void *region, size_t size, uint32_t file_slot, struct mrc_curve *out);

/* Estimated hit fraction (0..1) of an LRU cache of @buffers buffers. */
double mrc_curve_hit(const struct mrc_curve *c, uint64_t buffers);

/* Smallest reuse distance (in buffers) counted in bin @bin. */
uint64_t mrc_bin_lo(unsigned int bin);

/* Forget every curve (keeps the region valid). Needs write access. */
int mrc_reset(void *region, size_t size);

#endif
