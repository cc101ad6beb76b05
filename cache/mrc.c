// SPDX-License-Identifier: MIT
/*
 * mrc.c - fixed-size SHARDS miss-ratio curves kept in shared memory.
 *
 * Why this shape: the daemons of a host share one pool, so the curve of a
 * file must merge what every daemon saw; keeping the estimator in the pool
 * segment does that, and lets `accel report` read it without asking any
 * daemon. It must then obey the pool's rules (cache/pool_layout.h): fixed
 * width, indices instead of pointers, a version, robust locks, and no trust
 * in what another process left there.
 *
 * One curve ("instance") is a SHARDS sampler: a hash table of the sampled
 * buckets (key = 64-bit hash of slot, generation and bucket), each with the
 * logical time of its last access; a Fenwick tree over those times counts the
 * distinct buckets touched since a given time, i.e. the LRU stack distance,
 * in O(log s). Times live in a window of 2 * s_max slots; when it is used
 * up, the live times are renumbered 0..n-1 (compaction, O(window), at most
 * once per s_max accesses). When s_max buckets are sampled and a new one
 * comes, the threshold is lowered by 1/8 and every bucket above it is
 * forgotten (the paper lowers it one bucket at a time; batches cost less).
 *
 * Every sampled reference is weighted 1/R with the R in force when it was
 * seen, so the histogram estimates reference counts of the full trace even
 * though R falls over time; distances are scaled by 1/R the same way.
 *
 * The region's layout, its version and its concurrency protocol (M1-M5) are
 * in mrc_layout.h. Trust: the geometry is compile-time, so only the
 * header's identity is read from the region; every index (hash chain, free
 * list, time map, hint) is checked before use, and a check that fails
 * resets the curve.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "mrc.h"
#include "mrc_layout.h"
#include "shmlock.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* ThreadSanitizer knows no fences (and refuses them); every access it
 * checks here is an atomic already, so the fence can go under it. */
#if defined(__SANITIZE_THREAD__)
#define FENCE(order) ((void)0)
#else
#define FENCE(order) __atomic_thread_fence(order)
#endif
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

#define MRC_IDLE 4096  /* pool samples before an idle file curve may be taken */
#define MRC_RETRY 1024 /* pool samples between attempts when all curves are busy */

struct geom {
	uint32_t smax, nheads, window;
	size_t size; /* bytes of the instance with its arrays */
};

static const struct geom pool_geom = { MRC_POOL_SMAX, MRC_POOL_SMAX, 2 * MRC_POOL_SMAX,
				       MRC_INST_SIZE(MRC_POOL_SMAX) };
static const struct geom file_geom = { MRC_FILE_SMAX, MRC_FILE_SMAX, 2 * MRC_FILE_SMAX,
				       MRC_INST_SIZE(MRC_FILE_SMAX) };

/* Process-local view of one instance: pointers into the region. */
struct view {
	struct mrc_inst *in;
	const struct geom *g;
	struct mrc_entry *ent;
	uint32_t *heads, *tmap, *fen;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t key_of(uint32_t slot, uint32_t gen, uint64_t bucket)
{
	return mix64(bucket ^ mix64(((uint64_t)gen << 32) | slot));
}

static uint32_t sample_of(uint64_t key)
{
	return (uint32_t)(key >> 40); /* 24 bits, compared with the threshold */
}

static struct view view_of(void *region, bool pool, unsigned int file)
{
	struct view v;
	uint8_t *base =
	    (uint8_t *)region + (pool ? MRC_OFF_POOL : MRC_OFF_FILES + file * file_geom.size);

	v.g = pool ? &pool_geom : &file_geom;
	v.in = (struct mrc_inst *)base;
	v.ent = (struct mrc_entry *)(base + sizeof(struct mrc_inst));
	v.heads = (uint32_t *)(v.ent + v.g->smax);
	v.tmap = v.heads + v.g->nheads;
	v.fen = v.tmap + v.g->window;
	return v;
}

static const struct mrc_header *header_ok(const void *region, size_t size)
{
	const struct mrc_header *h = region;

	if (!region || size < MRC_REGION_SIZE || ((uintptr_t)region & 63))
		return NULL;
	if (LOAD_ACQ(&h->magic) != MRC_MAGIC || h->version != MRC_VERSION ||
	    h->header_size != sizeof(*h) || h->mutex_size != sizeof(pthread_mutex_t) ||
	    h->endian != MRC_ENDIAN || h->total_size != MRC_REGION_SIZE)
		return NULL;
	return h;
}

/* Histogram bins: distances 0..31 exactly, then 16 bins per power of two. */
static unsigned int bin_of(uint64_t d)
{
	unsigned int o;

	if (d < 32)
		return (unsigned int)d;
	if (d >= (1ULL << 32))
		return MRC_NBINS - 1;
	o = 63 - (unsigned int)__builtin_clzll(d);
	return 32 + (o - 5) * 16 + (unsigned int)((d >> (o - 4)) & 15);
}

uint64_t mrc_bin_lo(unsigned int bin)
{
	unsigned int o;

	if (bin < 32)
		return bin;
	if (bin >= MRC_NBINS)
		return 1ULL << 32;
	o = 5 + (bin - 32) / 16;
	return (uint64_t)(16 + (bin - 32) % 16) << (o - 4);
}

/* --- the sampler, all under the instance lock ------------------------------ */

static void fen_add(const struct view *v, uint32_t t, int32_t d)
{
	for (uint32_t i = t + 1; i <= v->g->window; i += i & -i)
		v->fen[i - 1] += (uint32_t)d;
}

/* Marks at times 0..t. */
static uint32_t fen_prefix(const struct view *v, uint32_t t)
{
	uint32_t n = 0;

	for (uint32_t i = t + 1; i > 0; i -= i & -i)
		n += v->fen[i - 1];
	return n;
}

/* Empty the sampler (keeps ident, counters go to zero). */
static void inst_clear(const struct view *v)
{
	struct mrc_inst *in = v->in;
	uint32_t e = LOAD(&in->epoch);

	STORE(&in->epoch, e | 1);
	FENCE(__ATOMIC_RELEASE);
	for (uint32_t i = 0; i < v->g->smax; i++)
		v->ent[i] = (struct mrc_entry){ 0, 0, i + 1 < v->g->smax ? i + 1 : MRC_NONE };
	memset(v->heads, 0xff, v->g->nheads * sizeof(uint32_t));
	memset(v->tmap, 0xff, v->g->window * sizeof(uint32_t));
	memset(v->fen, 0, v->g->window * sizeof(uint32_t));
	in->used = 0;
	in->free_head = 0;
	in->clock = 0;
	STORE(&in->thresh, v->g == &pool_geom ? MRC_T0_POOL : MRC_T0_FILE);
	STORE(&in->sampled, 0);
	STORE(&in->cold_w, 0);
	STORE(&in->total_w, 0);
	STORE(&in->accesses, 0);
	for (unsigned int b = 0; b < MRC_NBINS; b++)
		STORE(&in->bins[b], 0);
	STORE_REL(&in->epoch, (e | 1) + 1);
}

/* Are the scalars sane? (The arrays are checked as they are walked.) */
static bool inst_sane(const struct view *v)
{
	const struct mrc_inst *in = v->in;
	uint32_t t = LOAD(&in->thresh);

	return in->used <= v->g->smax && in->clock <= v->g->window &&
	       (in->free_head < v->g->smax || in->free_head == MRC_NONE) && t >= 1 && t <= MRC_P;
}

/* Find @key; sets *prevp to the link that points at it. MRC_NONE if absent,
 * MRC_NONE - 1 if the chain is corrupt. */
static uint32_t inst_find(const struct view *v, uint64_t key, uint32_t **prevp)
{
	uint32_t *link = &v->heads[key & (v->g->nheads - 1)];

	for (uint32_t steps = 0; steps <= v->g->smax; steps++) {
		uint32_t i = *link;

		if (i == MRC_NONE)
			return MRC_NONE;
		if (i >= v->g->smax)
			return MRC_NONE - 1;
		if (v->ent[i].key == key) {
			*prevp = link;
			return i;
		}
		link = &v->ent[i].next;
	}
	return MRC_NONE - 1;
}

/* Renumber live times 0..n-1 and rebuild the tree. */
static bool inst_compact(const struct view *v)
{
	uint32_t n = 0, w = v->g->window;

	for (uint32_t t = 0; t < v->in->clock; t++) {
		uint32_t i = v->tmap[t];

		if (i == MRC_NONE)
			continue;
		if (i >= v->g->smax || v->ent[i].time != t)
			return false;
		v->tmap[t] = MRC_NONE;
		v->tmap[n] = i;
		v->ent[i].time = n++;
	}
	if (n != v->in->used)
		return false;
	memset(v->fen, 0, w * sizeof(uint32_t));
	for (uint32_t k = 1; k <= w; k++) {
		uint32_t up = k + (k & -k);

		v->fen[k - 1] += k <= n;
		if (up <= w)
			v->fen[up - 1] += v->fen[k - 1];
	}
	v->in->clock = n;
	return true;
}

/* Stamp entry @i with the next time (the caller made room: clock < window). */
static void inst_touch(const struct view *v, uint32_t i)
{
	v->ent[i].time = v->in->clock;
	v->tmap[v->in->clock] = i;
	fen_add(v, v->in->clock, 1);
	v->in->clock++;
}

/* Forget entry @i, found through @link. */
static bool inst_drop(const struct view *v, uint32_t i, uint32_t *link)
{
	uint32_t t = v->ent[i].time;

	if (t >= v->in->clock || v->tmap[t] != i)
		return false;
	*link = v->ent[i].next;
	v->tmap[t] = MRC_NONE;
	fen_add(v, t, -1);
	v->ent[i].next = v->in->free_head;
	v->in->free_head = i;
	v->in->used--;
	return true;
}

/* Lower the threshold until a slot is free, dropping the buckets above it. */
static bool inst_shrink(const struct view *v)
{
	while (v->in->used >= v->g->smax) {
		uint32_t t = LOAD(&v->in->thresh);

		if (t <= 1)
			return false;
		t -= (t + 7) / 8;
		STORE(&v->in->thresh, t ? t : 1);
		for (uint32_t h = 0; h < v->g->nheads; h++) {
			uint32_t *link = &v->heads[h];

			for (uint32_t steps = 0; *link != MRC_NONE; steps++) {
				uint32_t i = *link;

				if (i >= v->g->smax || steps > v->g->smax)
					return false;
				if (sample_of(v->ent[i].key) < t)
					link = &v->ent[i].next;
				else if (!inst_drop(v, i, link))
					return false;
			}
		}
	}
	return true;
}

/* Count a reference seen at threshold @t: a reuse at distance @dist (sampled
 * buckets), or a first reference if @cold. Both weigh 1/R. */
static void hist_add(struct mrc_inst *in, uint64_t dist, uint32_t t, bool cold)
{
	uint64_t w = ((uint64_t)MRC_P << MRC_WSHIFT) / t;

	if (cold)
		ADD(&in->cold_w, w);
	else
		ADD(&in->bins[bin_of(dist * MRC_P / t)], w);
	ADD(&in->total_w, w);
	ADD(&in->sampled, 1);
}

/* A sampled reference to @key: false if the state was found corrupt. */
static bool inst_sample(const struct view *v, uint64_t key)
{
	struct mrc_inst *in = v->in;
	uint32_t *link = NULL, t = LOAD(&in->thresh);
	uint32_t i = inst_find(v, key, &link);

	if (i == MRC_NONE - 1 || (in->clock >= v->g->window && !inst_compact(v)))
		return false;
	if (i != MRC_NONE) {
		uint32_t tp = v->ent[i].time;

		if (tp >= in->clock || v->tmap[tp] != i)
			return false;
		hist_add(in, in->used - fen_prefix(v, tp), t, false);
		v->tmap[tp] = MRC_NONE;
		fen_add(v, tp, -1);
		inst_touch(v, i);
		return true;
	}
	if (!inst_shrink(v))
		return false;
	t = LOAD(&in->thresh);
	if (sample_of(key) >= t)
		return true; /* above the lowered threshold: no longer sampled */
	i = in->free_head;
	if (i >= v->g->smax)
		return false;
	in->free_head = v->ent[i].next;
	v->ent[i].key = key;
	v->ent[i].next = v->heads[key & (v->g->nheads - 1)];
	v->heads[key & (v->g->nheads - 1)] = i;
	in->used++;
	hist_add(in, 0, t, true);
	inst_touch(v, i);
	return true;
}

#define MRC_SUSPECTS 8

static union mrc_mutex *suspects[MRC_SUSPECTS]; /* atomic: locks that timed out here */
static __thread bool timed_out;			/* this thread gave up a wait */

/* Is @m one that timed out? With @set, note it (true) or forget it (false). */
static bool suspect(union mrc_mutex *m, int set)
{
	for (int i = 0; i < MRC_SUSPECTS; i++) {
		union mrc_mutex *old = __atomic_load_n(&suspects[i], __ATOMIC_RELAXED);

		if (set < 0 && old == m)
			return true;
		if (set == 0 && old == m)
			__atomic_compare_exchange_n(&suspects[i], &old, NULL, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		if (set > 0 && !old &&
		    __atomic_compare_exchange_n(&suspects[i], &old, m, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/*
 * Take a robust lock; *dead tells that its previous owner died holding it.
 * Bounded, by shmlock.h's one timeout policy: a lock held by a stopped
 * process costs one wait of SHM_LOCK_WAIT_NS, then SHM_LOCK_SUSPECT_NS a wait
 * until it is seen free; a curve is statistics, so the sample is skipped
 * meanwhile. Which locks are suspect in this process is kept in suspects[]:
 * the region is every process's, so this process's note has no room there.
 */
static int lock(union mrc_mutex *m, bool *dead)
{
	uint8_t was = suspect(m, -1), now = was;
	int ret = shm_mutex_lock(&m->m, &now);

	if (now != was)
		suspect(m, now);
	if (ret == ETIMEDOUT)
		timed_out = true;
	*dead = ret == EOWNERDEAD;
	if (ret == EOWNERDEAD) {
		pthread_mutex_consistent(&m->m);
		ret = 0;
	}
	return -ret;
}

static void unlock(union mrc_mutex *m)
{
	pthread_mutex_unlock(&m->m);
}

/* Sample @key into @v if it still passes and @v still belongs to @ident. */
static void sample(const struct view *v, uint64_t ident, uint64_t key, uint64_t now)
{
	bool dead;

	if (lock(&v->in->lock, &dead))
		return;
	if (dead || !inst_sane(v))
		inst_clear(v);
	if (LOAD(&v->in->ident) == ident && sample_of(key) < LOAD(&v->in->thresh)) {
		STORE(&v->in->last, now);
		if (!inst_sample(v, key))
			inst_clear(v);
	}
	unlock(&v->in->lock);
}

/* --- file curves: which instance belongs to which file ----------------------- */

static uint64_t ident_of(uint32_t slot, uint32_t gen)
{
	return ((uint64_t)gen << 32) | (slot + 1U);
}

static int find_file(void *region, uint32_t slot, uint64_t ident)
{
	struct mrc_header *h = region;
	uint32_t hint = LOAD(&h->hint[slot % MRC_HINTS]);

	if (hint < MRC_FILES && LOAD(&view_of(region, false, hint).in->ident) == ident)
		return (int)hint;
	for (unsigned int f = 0; f < MRC_FILES; f++)
		if (LOAD(&view_of(region, false, f).in->ident) == ident)
			return (int)f;
	return -1;
}

/* The instance to give to @ident: its slot's old generation, a free one, or
 * the least recently sampled one if idle long enough. Under dir_lock. */
static int pick_victim(void *region, uint32_t slot, uint64_t now)
{
	int lru = -1;
	uint64_t oldest = UINT64_MAX;

	for (unsigned int f = 0; f < MRC_FILES; f++) {
		struct mrc_inst *in = view_of(region, false, f).in;
		uint64_t id = LOAD(&in->ident), last = LOAD(&in->last);

		if (id == 0 || (uint32_t)id == slot + 1U)
			return (int)f;
		if (last < oldest) {
			oldest = last;
			lru = (int)f;
		}
	}
	return now - oldest >= MRC_IDLE ? lru : -1;
}

static int take_file(void *region, uint32_t slot, uint64_t ident, uint64_t now)
{
	struct mrc_header *h = region;
	bool dead;
	int f;

	if (now < LOAD(&h->retry_at) || lock(&h->dir_lock, &dead))
		return -1;
	f = find_file(region, slot, ident);
	if (f < 0)
		f = pick_victim(region, slot, now);
	if (f < 0) {
		STORE(&h->retry_at, now + MRC_RETRY);
	} else if (LOAD(&view_of(region, false, (unsigned int)f).in->ident) != ident) {
		struct view v = view_of(region, false, (unsigned int)f);

		if (!lock(&v.in->lock, &dead)) {
			/* Publish the new ident only once the instance is clear: a
			 * reference that found it by ident in between counted an
			 * access that the clear then wiped out (lock-free ADD). */
			STORE(&v.in->ident, 0);
			inst_clear(&v);
			STORE(&v.in->last, now);
			STORE_REL(&v.in->ident, ident);
			unlock(&v.in->lock);
		} else {
			f = -1;
		}
	}
	if (f >= 0)
		STORE(&h->hint[slot % MRC_HINTS], (uint32_t)f);
	unlock(&h->dir_lock);
	return f;
}

/* --- public ----------------------------------------------------------------- */

int mrc_init(void *region, size_t size)
{
	struct mrc_header *h = region;
	int ret;

	if (!region || size < MRC_REGION_SIZE || ((uintptr_t)region & 63))
		return -EINVAL;
	memset(region, 0, MRC_REGION_SIZE);
	h->version = MRC_VERSION;
	h->header_size = sizeof(*h);
	h->mutex_size = sizeof(pthread_mutex_t);
	h->endian = MRC_ENDIAN;
	h->total_size = MRC_REGION_SIZE;
	h->nfiles = MRC_FILES;
	ret = shm_mutex_init(&h->dir_lock.m);
	for (unsigned int f = 0; f <= MRC_FILES && !ret; f++) {
		struct view v =
		    f < MRC_FILES ? view_of(region, false, f) : view_of(region, true, 0);

		ret = shm_mutex_init(&v.in->lock.m);
		inst_clear(&v);
	}
	for (unsigned int i = 0; i < MRC_HINTS; i++)
		h->hint[i] = MRC_NONE;
	if (!ret)
		STORE_REL(&h->magic, MRC_MAGIC);
	return ret;
}

int mrc_access(void *region, size_t size, uint32_t file_slot, uint32_t file_gen, uint64_t bucket)
{
	struct mrc_header *h = region;
	uint64_t key = key_of(file_slot, file_gen, bucket), ident, now;
	struct view pv, fv;
	int f;

	if (!header_ok(region, size) || file_slot >= INT32_MAX)
		return 0;
	timed_out = false;
	pv = view_of(region, true, 0);
	ident = ident_of(file_slot, file_gen);
	ADD(&h->acc[key % MRC_STRIPES][0], 1);
	now = LOAD(&pv.in->sampled);
	f = find_file(region, file_slot, ident);
	if (f < 0)
		f = take_file(region, file_slot, ident, now);
	if (f >= 0) {
		fv = view_of(region, false, (unsigned int)f);
		ADD(&fv.in->accesses, 1);
		if (sample_of(key) < LOAD(&fv.in->thresh))
			sample(&fv, ident, key, now);
	}
	if (sample_of(key) < LOAD(&pv.in->thresh))
		sample(&pv, 0, key, now);
	return timed_out ? -ETIMEDOUT : 0;
}

/* Copy instance @v into @out without locking; -EAGAIN if it kept changing. */
static int snapshot(const struct view *v, uint64_t ident, struct mrc_curve *out)
{
	const struct mrc_inst *in = v->in;

	for (int tries = 0; tries < 100; tries++) {
		uint32_t e = LOAD_ACQ(&in->epoch);
		uint32_t t = LOAD(&in->thresh);

		if (e & 1)
			continue;
		out->accesses = LOAD(&in->accesses);
		out->sampled = LOAD(&in->sampled);
		out->cold = (double)LOAD(&in->cold_w) / (1U << MRC_WSHIFT);
		out->total = (double)LOAD(&in->total_w) / (1U << MRC_WSHIFT);
		for (unsigned int b = 0; b < MRC_NBINS; b++)
			out->bins[b] = (double)LOAD(&in->bins[b]) / (1U << MRC_WSHIFT);
		out->rate = t >= 1 && t <= MRC_P ? (double)t / MRC_P : 0;
		FENCE(__ATOMIC_ACQUIRE);
		if (LOAD(&in->epoch) == e && LOAD(&in->ident) == ident)
			return 0;
	}
	return -EAGAIN;
}

/*
 * SHARDS_adj (section 4.3 of the paper): the sampled references estimate the
 * trace's length as c->total, the counter says c->accesses. The difference
 * comes mostly from hot buckets that happened to be (or not be) sampled, and
 * hot buckets are reused at short distances: move it into the first bins.
 */
static void adjust(struct mrc_curve *c)
{
	double d = (double)c->accesses - c->total;

	if (!(c->total > 0) || c->accesses == 0)
		return;
	for (unsigned int b = 0; b < MRC_NBINS && d < 0; b++) {
		double take = c->bins[b] < -d ? c->bins[b] : -d;

		c->bins[b] -= take;
		d += take;
	}
	if (d > 0)
		c->bins[0] += d;
	c->total = (double)c->accesses;
}

/* Default candidate sizes and their hit fractions. */
static void fill_points(struct mrc_curve *c)
{
	adjust(c);
	c->working_set = (uint64_t)(c->cold + 0.5);
	c->npoints = 0;
	for (uint64_t b = 1; c->npoints < MRC_POINTS; b *= 2) {
		c->buffers[c->npoints] = b;
		c->hit[c->npoints++] = mrc_curve_hit(c, b);
		if (b >= 2 * c->working_set)
			break;
	}
}

int mrc_file_curve(const void *region, size_t size, uint32_t file_slot, uint32_t file_gen,
		   struct mrc_curve *out)
{
	uint64_t ident = ident_of(file_slot, file_gen);
	struct view v;
	int f, ret;

	memset(out, 0, sizeof(*out));
	if (!header_ok(region, size))
		return region && size >= MRC_REGION_SIZE ? -EPROTO : -EINVAL;
	if (file_slot >= INT32_MAX)
		return -ENOENT;
	f = find_file((void *)region, file_slot, ident);
	if (f < 0)
		return -ENOENT;
	v = view_of((void *)region, false, (unsigned int)f);
	ret = snapshot(&v, ident, out);
	out->file_slot = file_slot;
	out->file_gen = file_gen;
	if (!ret)
		fill_points(out);
	return ret;
}

int mrc_slot_curve(const void *region, size_t size, uint32_t file_slot, struct mrc_curve *out)
{
	memset(out, 0, sizeof(*out));
	if (!header_ok(region, size))
		return region && size >= MRC_REGION_SIZE ? -EPROTO : -EINVAL;
	for (unsigned int f = 0; f < MRC_FILES && file_slot < INT32_MAX; f++) {
		uint64_t id = LOAD(&view_of((void *)region, false, f).in->ident);

		if (id && (uint32_t)id == file_slot + 1U)
			return mrc_file_curve(region, size, file_slot, (uint32_t)(id >> 32), out);
	}
	return -ENOENT;
}

int mrc_pool_curve(const void *region, size_t size, struct mrc_curve *out)
{
	const struct mrc_header *h = header_ok(region, size);
	struct view v;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!h)
		return region && size >= MRC_REGION_SIZE ? -EPROTO : -EINVAL;
	v = view_of((void *)region, true, 0);
	ret = snapshot(&v, 0, out);
	out->accesses = 0;
	for (unsigned int s = 0; s < MRC_STRIPES; s++)
		out->accesses += LOAD(&h->acc[s][0]);
	out->file_slot = UINT32_MAX;
	if (!ret)
		fill_points(out);
	return ret;
}

double mrc_curve_hit(const struct mrc_curve *c, uint64_t buffers)
{
	double hits = 0;

	if (!(c->total > 0))
		return 0;
	for (unsigned int b = 0; b < MRC_NBINS; b++) {
		uint64_t lo = mrc_bin_lo(b), hi = mrc_bin_lo(b + 1);

		if (lo >= buffers)
			break;
		if (hi <= buffers)
			hits += c->bins[b];
		else
			hits += c->bins[b] * (double)(buffers - lo) / (double)(hi - lo);
	}
	hits /= c->total;
	return hits < 0 ? 0 : hits > 1 ? 1 : hits;
}

int mrc_reset(void *region, size_t size)
{
	struct mrc_header *h = region;
	bool dead;

	if (!header_ok(region, size))
		return -EINVAL;
	if (lock(&h->dir_lock, &dead))
		return -EIO;
	for (unsigned int f = 0; f <= MRC_FILES; f++) {
		struct view v =
		    f < MRC_FILES ? view_of(region, false, f) : view_of(region, true, 0);

		if (lock(&v.in->lock, &dead))
			continue;
		if (f < MRC_FILES)
			STORE(&v.in->ident, 0);
		inst_clear(&v);
		unlock(&v.in->lock);
	}
	for (unsigned int s = 0; s < MRC_STRIPES; s++)
		STORE(&h->acc[s][0], 0);
	STORE(&h->retry_at, 0);
	unlock(&h->dir_lock);
	return 0;
}
