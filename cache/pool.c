// SPDX-License-Identifier: MIT
/*
 * pool.c - creating, attaching to, validating and detaching from a pool.
 *
 * Creation and attachment race safely: the creator makes the segment with
 * O_EXCL and holds an exclusive flock() on it until the header's magic is
 * stored; attachers take a shared flock() first, so they never see a half
 * built pool, and a creator that dies mid-way releases its flock (the segment
 * then stays unusable, with a clear error, until pool_unlink()). The pool is
 * sized once: its pages are allocated at creation (posix_fallocate) so that
 * running out of /dev/shm is an error now, not a SIGBUS later.
 *
 * An attacher trusts nothing in the header until it has checked magic,
 * version, byte order, libc mutex size, a checksum of the geometry, and that
 * the geometry recomputed from first principles gives the same offsets and
 * the same size as the segment really has. Only then is the geometry copied
 * into the process-local struct pool, the sole source of bounds afterwards.
 *
 * Before any of that, the attacher checks whom the segment belongs to (on
 * the descriptor, so nothing can be swapped in between): a pool somebody
 * else could write is somebody else's cache of our files, not ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "mrc.h"
#include "pool_i.h"
#include "shmlock.h"

#define ATTACH_WAIT_MS 2000

static int fail(const struct pool_config *cfg, int err, const char *fmt, ...)
{
	va_list ap;

	if (cfg && cfg->err && cfg->errlen) {
		va_start(ap, fmt);
		vsnprintf(cfg->err, cfg->errlen, fmt, ap);
		va_end(ap);
	}
	return -err;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t pow2_ceil(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1U << 31))
		p <<= 1;
	return p;
}

static uint32_t pow2_floor(uint32_t v)
{
	uint32_t p = 1;

	while (p <= v / 2)
		p <<= 1;
	return p;
}

/* Everything from version to geometry_sum (magic is stored last, so not in it). */
static uint64_t geometry_sum(const struct pool_header *h)
{
	size_t from = offsetof(struct pool_header, version);

	return cache_fnv1a((const uint8_t *)h + from,
			   offsetof(struct pool_header, geometry_sum) - from);
}

/*
 * Lay out a pool of @nbufs buffers of 2^@bshift bytes in @nshards shards with
 * @nfiles file slots: fill the geometry fields of @h. The same function
 * validates an existing header, so creator and attacher cannot disagree.
 */
static int layout(struct pool_header *h, uint32_t bshift, uint32_t nbufs, uint32_t nshards,
		  uint32_t nfiles)
{
	uint64_t off;

	if (bshift < 12 || bshift > 22 || !nshards || (nshards & (nshards - 1)) || nshards > 4096 ||
	    nbufs < nshards || nbufs % nshards || nbufs >= POOL_NONE || nfiles < 1 ||
	    nfiles >= (1U << 24))
		return -EINVAL;
	h->bucket_shift = bshift;
	h->bucket_size = 1U << bshift;
	h->nbufs = nbufs;
	h->nshards = nshards;
	h->bufs_per_shard = nbufs / nshards;
	h->chains_per_shard = pow2_ceil(h->bufs_per_shard);
	h->nfiles = nfiles;
	h->nfchains = pow2_ceil(nfiles);
	off = sizeof(struct pool_header);
	h->off_shards = off;
	off = align_up(off + (uint64_t)nshards * sizeof(struct pool_shard), 64);
	h->off_files = off;
	off = align_up(off + (uint64_t)nfiles * sizeof(struct pool_fslot), 64);
	h->off_fchains = off;
	off = align_up(off + (uint64_t)h->nfchains * sizeof(uint32_t), 64);
	h->off_chains = off;
	off = align_up(off + (uint64_t)nshards * h->chains_per_shard * sizeof(uint32_t), 64);
	h->off_bufs = off;
	off = align_up(off + (uint64_t)nbufs * sizeof(struct pool_buf), 64);
	h->off_mrc = off;
	h->mrc_size = MRC_REGION_SIZE;
	off = align_up(off + h->mrc_size, 4096);
	h->off_data = off;
	h->total_size = off + ((uint64_t)nbufs << bshift);
	return 0;
}

/* Derive the geometry of a new pool from @cfg into @h. */
static int plan(const struct pool_config *cfg, struct pool_header *h)
{
	uint32_t bsize = cfg->bucket_size ? cfg->bucket_size : POOL_DEFAULT_BUCKET;
	uint64_t size = cfg->size ? cfg->size : POOL_DEFAULT_SIZE;
	uint64_t nbufs, nshards, nfiles;
	uint32_t bshift = 0;

	if (bsize < POOL_MIN_BUCKET || bsize > POOL_MAX_BUCKET || (bsize & (bsize - 1)))
		return fail(cfg, EINVAL, "bucket size %u: must be a power of two, 4 KiB to 4 MiB",
			    bsize);
	while ((1U << bshift) < bsize)
		bshift++;
	nbufs = cfg->nbufs ? cfg->nbufs : size >> bshift;
	if (nbufs < 1 || nbufs >= POOL_NONE)
		return fail(cfg, EINVAL, "pool of %llu buffers: need 1 to %u",
			    (unsigned long long)nbufs, POOL_NONE - 1);
	nshards = cfg->nshards ? cfg->nshards : pow2_floor((uint32_t)(nbufs / 32 ? nbufs / 32 : 1));
	if (nshards > 64 && !cfg->nshards)
		nshards = 64;
	if (nshards > nbufs || (nshards & (nshards - 1)) || nshards > 4096)
		return fail(cfg, EINVAL, "%llu shards: need a power of two <= 4096 and <= buffers",
			    (unsigned long long)nshards);
	nbufs -= nbufs % nshards;
	nfiles = cfg->max_files ? cfg->max_files : (nbufs << bshift) >> 16;
	if (!cfg->max_files)
		nfiles = nfiles < 16 ? 16 : nfiles > (1U << 20) ? (1U << 20) : nfiles;
	if (layout(h, bshift, (uint32_t)nbufs, (uint32_t)nshards, (uint32_t)nfiles))
		return fail(cfg, EINVAL, "max_files %llu: need 1 to %u", (unsigned long long)nfiles,
			    (1U << 24) - 1);
	return 0;
}

/* The pool must fit in memory and in /dev/shm; say which limit it broke. */
static int check_limits(const struct pool_config *cfg, uint64_t total)
{
	uint64_t mem = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	struct statvfs vfs;

	if (total > mem)
		return fail(
		    cfg, ENOMEM,
		    "pool of %llu bytes exceeds physical memory (%llu bytes); make it smaller",
		    (unsigned long long)total, (unsigned long long)mem);
	if (statvfs("/dev/shm", &vfs) == 0 && total > (uint64_t)vfs.f_bavail * vfs.f_frsize)
		return fail(cfg, ENOSPC,
			    "pool of %llu bytes exceeds free space in /dev/shm (%llu bytes); "
			    "make it smaller or remount /dev/shm with a larger size=",
			    (unsigned long long)total,
			    (unsigned long long)vfs.f_bavail * vfs.f_frsize);
	return 0;
}

static int map_pool(struct pool *pool, int fd, size_t size, bool readonly)
{
	int prot = readonly ? PROT_READ : PROT_READ | PROT_WRITE;
	void *base = mmap(NULL, size, prot, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return -errno;
	pool->base = base;
	pool->size = size;
	pool->readonly = readonly;
	return 0;
}

/* Adopt the (validated) geometry of @h into the process-local handle. */
static void adopt(struct pool *pool, const struct pool_header *h)
{
	uint8_t *b = pool->base;

	pool->bsize = h->bucket_size;
	pool->bshift = h->bucket_shift;
	pool->nbufs = h->nbufs;
	pool->nshards = h->nshards;
	pool->per_shard = h->bufs_per_shard;
	pool->nchains = h->chains_per_shard;
	pool->nfiles = h->nfiles;
	pool->nfchains = h->nfchains;
	pool->hdr = (struct pool_header *)b;
	pool->shards = (struct pool_shard *)(b + h->off_shards);
	pool->files = (struct pool_fslot *)(b + h->off_files);
	pool->fchains = (uint32_t *)(b + h->off_fchains);
	pool->chains = (uint32_t *)(b + h->off_chains);
	pool->bufs = (struct pool_buf *)(b + h->off_bufs);
	pool->data = b + h->off_data;
	pool->mrc = b + h->off_mrc;
	pool->mrc_size = h->mrc_size;
}

/* Build a fresh pool in @pool's mapping from the planned geometry @g. */
static int init_pool(struct pool *pool, const struct pool_header *g, const char *name)
{
	struct pool_header *h = pool->base;
	struct timespec now;
	int ret;

	*h = *g;
	h->version = POOL_LAYOUT_VERSION;
	h->header_size = sizeof(*h);
	h->mutex_size = sizeof(pthread_mutex_t);
	h->endian = POOL_ENDIAN_TAG;
	clock_gettime(CLOCK_REALTIME, &now);
	h->created_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h->creator_pid = (uint32_t)getpid();
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->geometry_sum = geometry_sum(h);
	adopt(pool, h);
	ret = shm_mutex_init(&h->files_lock.m);
	for (uint32_t s = 0; s < pool->nshards && !ret; s++)
		ret = shm_mutex_init(&pool->shards[s].lock.m);
	if (ret)
		return ret;
	memset(pool->fchains, 0xff, (size_t)pool->nfchains * sizeof(uint32_t));
	memset(pool->chains, 0xff, (size_t)pool->nshards * pool->nchains * sizeof(uint32_t));
	for (uint32_t i = 0; i < pool->nbufs; i++) {
		pool->bufs[i].file = POOL_NONE;
		pool->bufs[i].next = POOL_NONE;
	}
	for (uint32_t i = 0; i < pool->nfiles; i++)
		pool->files[i].fnext = POOL_NONE;
	ret = mrc_init(pool->mrc, pool->mrc_size);
	if (ret)
		return ret;
	__atomic_store_n(&h->magic, POOL_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static const char *type_name(mode_t m)
{
	return S_ISREG(m)    ? "a regular file"
	       : S_ISLNK(m)  ? "a symbolic link"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
			     : "a special file";
}

/* Is @gid the effective or a supplementary group of this process? */
static bool our_group(gid_t gid)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	if (gid == getegid())
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

int pool_seg_trusted(const char *name, const struct stat *st, mode_t mode, char *why, size_t len)
{
	mode_t allowed = (mode ? mode : 0600) & 0777, m = st->st_mode & 07777;
	bool owner_ok = st->st_uid == geteuid() || ((allowed & 0070) && our_group(st->st_gid));

	if (S_ISREG(st->st_mode) && owner_ok && !(m & ~allowed))
		return 0;
	if (why && len)
		snprintf(
		    why, len,
		    "pool /dev/shm%s: %s%sowned by uid %u mode %04o, not %sby uid %u%s with "
		    "mode within %04o (remove it: accel pool --reset %s, or choose -o pool=NAME)",
		    name, S_ISREG(st->st_mode) ? "" : type_name(st->st_mode),
		    S_ISREG(st->st_mode) ? "" : ", ", (unsigned int)st->st_uid, (unsigned int)m,
		    S_ISREG(st->st_mode) ? "" : "a regular file owned ", (unsigned int)geteuid(),
		    allowed & 0070 ? " or a group of ours" : "", (unsigned int)allowed, name + 1);
	return -EPERM;
}

int pool_seg_open(const char *name, int flags, mode_t mode, char *why, size_t len)
{
	char path[POOL_NAME_LEN + 16];
	struct stat st;
	int fd = shm_open(name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
	int ret;

	if (fd < 0 && errno != ENOENT && errno != EACCES) { /* symlink (ELOOP), dir, FIFO? */
		int err = errno;

		snprintf(path, sizeof(path), "/dev/shm%s", name);
		if (!lstat(path, &st) && pool_seg_trusted(name, &st, mode, why, len))
			return -EPERM;
		errno = err;
	}
	if (fd < 0) {
		if (why && len)
			snprintf(why, len, "%s: %s", name, strerror(errno));
		return -errno;
	}
	ret = fstat(fd, &st) ? -errno : pool_seg_trusted(name, &st, mode, why, len);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static int create(const struct pool_config *cfg, const char *name, struct pool *pool)
{
	struct pool_header g = { 0 };
	mode_t mode = cfg->mode ? cfg->mode : 0600;
	int fd, ret;

	/* Creation parameters matter only if we create: judge them after O_EXCL. */
	ret = plan(cfg, &g);
	if (!ret)
		ret = check_limits(cfg, g.total_size);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno; /* -EEXIST: attach instead */
	if (ret)
		goto out_unlink;
	pool->seg_private = !(mode & 077); /* ours: we just made it */
	if (flock(fd, LOCK_EX) || fchmod(fd, mode)) {
		ret = fail(cfg, errno, "%s: flock/fchmod: %s", name, strerror(errno));
		goto out_unlink;
	}
	ret = -posix_fallocate(fd, 0, (off_t)g.total_size);
	if (ret) {
		ret = fail(cfg, -ret, "%s: cannot allocate %llu bytes in /dev/shm: %s", name,
			   (unsigned long long)g.total_size, strerror(-ret));
		goto out_unlink;
	}
	ret = map_pool(pool, fd, g.total_size, false);
	if (!ret)
		ret = init_pool(pool, &g, name);
	if (ret) {
		fail(cfg, -ret, "%s: cannot initialise: %s", name, strerror(-ret));
		goto out_unlink;
	}
	pool->created = true;
	flock(fd, LOCK_UN); /* explicitly: the mapping keeps the file, and so the lock, alive */
	close(fd);
	return 0;
out_unlink:
	if (pool->base)
		munmap(pool->base, pool->size);
	pool->base = NULL;
	shm_unlink(name);
	close(fd);
	return ret;
}

/* Check every header field an attacher relies on. */
static int validate(const struct pool_config *cfg, const char *name, const struct pool_header *h,
		    uint64_t st_size)
{
	struct pool_header g = { 0 };

	if (h->endian != POOL_ENDIAN_TAG)
		return fail(cfg, EPROTO, "%s: pool made on a machine of another byte order", name);
	if (h->version != POOL_LAYOUT_VERSION || h->header_size != sizeof(*h))
		return fail(cfg, EPROTO,
			    "%s: pool layout version %u, this program needs %u; "
			    "unmount all users and run 'accel pool --reset %s'",
			    name, h->version, POOL_LAYOUT_VERSION, name);
	if (h->mutex_size != sizeof(pthread_mutex_t))
		return fail(cfg, EPROTO, "%s: pool made with another C library (mutex of %u bytes)",
			    name, h->mutex_size);
	if (h->geometry_sum != geometry_sum(h))
		return fail(cfg, EUCLEAN, "%s: pool header corrupt (checksum mismatch)", name);
	if (layout(&g, h->bucket_shift, h->nbufs, h->nshards, h->nfiles) ||
	    g.bucket_size != h->bucket_size || g.bufs_per_shard != h->bufs_per_shard ||
	    g.chains_per_shard != h->chains_per_shard || g.nfchains != h->nfchains ||
	    g.off_shards != h->off_shards || g.off_files != h->off_files ||
	    g.off_fchains != h->off_fchains || g.off_chains != h->off_chains ||
	    g.off_bufs != h->off_bufs || g.off_mrc != h->off_mrc || g.mrc_size != h->mrc_size ||
	    g.off_data != h->off_data || g.total_size != h->total_size || h->total_size != st_size)
		return fail(cfg, EUCLEAN, "%s: pool geometry inconsistent (corrupt header)", name);
	return 0;
}

/*
 * One look at @fd under a shared flock: mapped with the magic in place (0),
 * -EAGAIN (being built, or its creator holds the flock), -EPROTO (not ours).
 * LOCK_NB: a creator stopped mid-way must not hold us beyond the bound.
 */
static int try_map(const struct pool_config *cfg, const char *name, int fd, struct pool *pool,
		   bool readonly, struct stat *st)
{
	int ret = -EAGAIN;

	if (flock(fd, LOCK_SH | LOCK_NB))
		return errno == EWOULDBLOCK ? -EAGAIN
					    : fail(cfg, errno, "%s: %s", name, strerror(errno));
	if (fstat(fd, st))
		ret = fail(cfg, errno, "%s: %s", name, strerror(errno));
	else if ((uint64_t)st->st_size >= sizeof(struct pool_header))
		ret = map_pool(pool, fd, (size_t)st->st_size, readonly);
	if (!ret && LOAD_ACQ(&((struct pool_header *)pool->base)->magic) != POOL_MAGIC) {
		/* magic 0: still being built (or its creator died); else: not ours */
		ret = ((struct pool_header *)pool->base)->magic ? -EPROTO : -EAGAIN;
		munmap(pool->base, pool->size);
		pool->base = NULL;
	}
	flock(fd, LOCK_UN);
	return ret;
}

/* Open and check the segment, wait (bounded) for a creator to finish, map, validate. */
static int attach(const struct pool_config *cfg, const char *name, struct pool *pool, bool readonly)
{
	struct stat st;
	int fd, ret = -EAGAIN;

	fd = pool_seg_open(name, readonly ? O_RDONLY : O_RDWR, cfg->mode, cfg->err, cfg->errlen);
	if (fd < 0)
		return fd;
	for (int ms = 0; ms < ATTACH_WAIT_MS && ret == -EAGAIN; ms++)
		if ((ret = try_map(cfg, name, fd, pool, readonly, &st)) == -EAGAIN)
			usleep(1000);
	close(fd);
	if (ret == -EPROTO)
		return fail(cfg, EPROTO, "%s: not an accelfs pool (bad magic)", name);
	if (ret == -EAGAIN)
		return fail(cfg, EPROTO,
			    "%s: pool never finished initialising (its creator died?); "
			    "remove it with 'accel pool --reset %s'",
			    name, name);
	if (ret)
		return ret;
	ret = validate(cfg, name, pool->base, (uint64_t)st.st_size);
	if (ret) {
		munmap(pool->base, pool->size);
		pool->base = NULL;
		return ret;
	}
	adopt(pool, pool->base);
	/* I9: only a pool nobody else can write may name a file to open by handle */
	pool->seg_private = st.st_uid == geteuid() && !(st.st_mode & 077);
	return 0;
}

static int check_name(const struct pool_config *cfg, const char *name)
{
	size_t n = strlen(name);

	if (n < 2 || n >= POOL_NAME_LEN || name[0] != '/' || strchr(name + 1, '/'))
		return fail(cfg, EINVAL, "pool name \"%s\": need \"/name\", under %d bytes", name,
			    POOL_NAME_LEN);
	return 0;
}

static int open_common(const struct pool_config *cfg, bool readonly, struct pool **out)
{
	const char *name = cfg->name ? cfg->name : POOL_DEFAULT_NAME;
	struct pool *pool;
	int ret = check_name(cfg, name);

	if (ret)
		return ret;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	ret = -EEXIST;
	if (!readonly && !cfg->no_create)
		ret = create(cfg, name, pool);
	if (ret == -EEXIST) {
		if (cfg->err && cfg->errlen)
			cfg->err[0] = '\0';
		ret = attach(cfg, name, pool, readonly);
	}
	if (!ret) {
		/* process-local: which locks timed out here, which slots we dirtied */
		pool->suspect = calloc(pool->nshards + 1, 1);
		pool->our_dirty = calloc(pool->nfiles, 1);
		if (!pool->suspect || !pool->our_dirty) {
			pool_close(pool);
			return -ENOMEM;
		}
	}
	if (ret) {
		free(pool);
		return ret;
	}
	*out = pool;
	return 0;
}

int pool_open(const struct pool_config *cfg, struct pool **out)
{
	if (cfg->err && cfg->errlen)
		cfg->err[0] = '\0';
	return open_common(cfg, false, out);
}

int pool_open_readonly(const char *name, struct pool **out, char *err, size_t errlen)
{
	/* readers accept a pool shared with a group of theirs (pool_mode=0660) */
	struct pool_config cfg = { .name = name, .mode = 0660, .err = err, .errlen = errlen };

	if (err && errlen)
		err[0] = '\0';
	return open_common(&cfg, true, out);
}

void pool_close(struct pool *pool)
{
	if (!pool)
		return;
	pool_guard_forget(pool);
	if (pool->base)
		munmap(pool->base, pool->size);
	free(pool->suspect);
	free(pool->our_dirty);
	free(pool);
}

int pool_unlink(const char *name)
{
	return shm_unlink(name ? name : POOL_DEFAULT_NAME) ? -errno : 0;
}

void pool_info(const struct pool *pool, struct pool_info *info)
{
	memset(info, 0, sizeof(*info));
	info->bucket_size = pool->bsize;
	info->nbufs = pool->nbufs;
	info->nshards = pool->nshards;
	info->nfiles = pool->nfiles;
	info->files_used = LOAD(&pool->hdr->files_used);
	info->reserved = LOAD(&pool->hdr->reserved);
	info->total_size = pool->size;
	info->data_size = (uint64_t)pool->nbufs << pool->bshift;
	info->meta_size = info->total_size - info->data_size;
	info->mrc_size = pool->mrc_size;
	info->created = pool->created;
	info->readonly = pool->readonly;
}

uint32_t pool_bucket_size(const struct pool *pool)
{
	return pool->bsize;
}
