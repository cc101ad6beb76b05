// SPDX-License-Identifier: MIT
/*
 * recover.c - a dead owner's deferred bytes go to SOURCE (I9 of
 * pool_layout.h). Dirty buffers live in the pool, which outlives the daemon
 * that deferred them; whoever finds them after it died (a daemon attaching,
 * a live daemon's flusher, a daemon opening the file, `accel pool
 * --recover`) writes them back to the file they belong to, when it can
 * prove that file is still the one they were written to, and drops them
 * only when it cannot.
 *
 * Proof: the slot records the file's handle (name_to_handle_at). A handle
 * carries the inode's generation, so once the file is deleted and its inode
 * number reused, open_by_handle_at() gives ESTALE instead of opening the new
 * file. The handle is opened O_PATH first and used only for a regular file
 * of the recorded dev and ino; only then is it reopened for writing. A
 * handle read from a pool another user can write (pool_mode with group
 * bits) is never used: open_by_handle_at() ignores permissions, so it could
 * name any file on the device (docs/security.md).
 *
 * Appends (POOL_BUF_F_APPEND: deferred by an O_APPEND handle of a daemon in
 * shared mode) are written at SOURCE's end, as their owner would have:
 * another host may have appended since, and at the offsets this host
 * believed they would land over its records. A run of them in consecutive
 * buckets goes as one write(2), so nothing another host appends lands
 * inside it (the owner's region is two buckets at most).
 *
 * This is the one place in cache/ that does I/O on SOURCE (pwrite,
 * fdatasync), through descriptors it opens itself, outside every lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mountinfo.h"
#include "pool_i.h"

#define RECOVER_BATCH 16  /* dirty buckets written per fdatasync */
#define RECOVER_ROUNDS 64 /* batches at most per file, then handed back */

/* What a slot said its file was, copied out under files_lock. */
struct ident {
	uint64_t dev, ino;
	uint32_t idgen, epoch, fh_type, fh_bytes;
	unsigned char fh[POOL_FH_MAX];
	char path[POOL_PATH_LEN];
};

/* The last owner found alive and dead: one kill(2) per owner, not per buffer. */
struct pids {
	uint32_t live, dead;
};

static bool owner_gone(struct pids *p, uint32_t owner)
{
	if (owner == p->dead)
		return true;
	if (owner == p->live || owner == (uint32_t)getpid())
		return false;
	if (pool_pid_gone(owner)) {
		p->dead = owner;
		return true;
	}
	p->live = owner;
	return false;
}

/* Racy: does slot @f hold a dirty buffer of a dead owner (lock-free look)? */
static bool any_dead(struct pool *pool, uint32_t f, struct pids *p)
{
	for (uint32_t i = 0; i < pool->nbufs; i++) {
		const struct pool_buf *b = &pool->bufs[i];

		if ((LOAD(&b->flags) & POOL_BUF_F_DIRTY) && LOAD(&b->file) == f &&
		    owner_gone(p, LOAD(&b->owner)))
			return true;
	}
	return false;
}

/* Slot @f's identity under files_lock; -ENOENT if it is not in use. */
static int ident_get(struct pool *pool, uint32_t f, struct ident *id)
{
	struct pool_fslot *fs = &pool->files[f];
	int ret = pool_files_lock(pool);

	if (ret)
		return ret;
	if (fs->state != POOL_FSLOT_USED || (fs->idgen & 1)) {
		pool_files_unlock(pool);
		return -ENOENT;
	}
	id->dev = fs->dev;
	id->ino = fs->ino;
	id->idgen = fs->idgen;
	id->epoch = pool_epoch_of(LOAD_ACQ(&fs->residency));
	id->fh_type = fs->fh_type;
	id->fh_bytes = fs->fh_bytes; /* untrusted: bounded where used */
	memcpy(id->fh, fs->fh, sizeof(id->fh));
	memcpy(id->path, fs->path, sizeof(id->path));
	pool_files_unlock(pool);
	id->path[POOL_PATH_LEN - 1] = '\0';
	return 0;
}

/*
 * Buffers of slot @id at its epoch, dirty and owned by a dead process (or
 * by @from if not 0), given to @to one by one under their shard lock: the
 * claim two recoverers race for. Returns how many changed hands.
 */
static int claim(struct pool *pool, uint32_t f, const struct ident *id, uint32_t from, uint32_t to,
		 struct pids *p)
{
	int n = 0;

	for (uint32_t i = 0; i < pool->nbufs; i++) {
		struct pool_buf *b = &pool->bufs[i];
		uint32_t owner = LOAD(&b->owner), s = i / pool->per_shard;

		if (!(LOAD(&b->flags) & POOL_BUF_F_DIRTY) || LOAD(&b->file) != f ||
		    (from ? owner != from : !owner_gone(p, owner)))
			continue;
		if (pool_shard_lock(pool, s))
			continue; /* left for the next pass */
		if (b->state == POOL_BUF_VALID && (b->flags & POOL_BUF_F_DIRTY) && b->file == f &&
		    b->epoch == id->epoch && b->owner == owner) {
			STORE(&b->owner, to);
			n++;
		}
		pool_shard_unlock(pool, s);
	}
	return n;
}

/* A directory descriptor on a mount of device @dev (open_by_handle_at's anchor), or -errno. */
static int mount_fd_of_dev(uint64_t dev)
{
	FILE *mi = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	struct mountinfo_line m;
	int fd = -ENODEV;
	struct stat st;

	if (!mi)
		return -errno;
	while (fd < 0 && fgets(line, sizeof(line), mi)) {
		if (mountinfo_parse(line, &m) || makedev(m.major, m.minor) != dev)
			continue;
		fd = open(m.point, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && (fstat(fd, &st) || st.st_dev != dev)) {
			close(fd); /* something else is mounted over it */
			fd = -ENODEV;
		}
	}
	fclose(mi);
	return fd;
}

/* open_by_handle_at(O_PATH) of @id's handle, or -errno with @why. */
static int open_handle(const struct ident *id, const char **why)
{
	struct {
		struct file_handle h;
		unsigned char bytes[POOL_FH_MAX];
	} fh;
	int mfd, fd;

	fh.h.handle_bytes = id->fh_bytes;
	fh.h.handle_type = (int)id->fh_type;
	memcpy(fh.h.f_handle, id->fh, id->fh_bytes);
	mfd = mount_fd_of_dev(id->dev);
	if (mfd < 0) {
		*why = "its file system is not mounted here";
		return mfd;
	}
	fd = open_by_handle_at(mfd, &fh.h, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		*why = fd == -ESTALE  ? "the file is gone (deleted, or its inode number reused)"
		       : fd == -EPERM ? "cannot open file handles here (no CAP_DAC_READ_SEARCH)"
				      : "its file handle cannot be opened";
	}
	close(mfd);
	return fd;
}

/*
 * The file slot @id named, opened O_WRONLY by this process, if it provably is
 * that file; else -errno and @why (a static string).
 */
static int open_same(struct pool *pool, const struct ident *id, const char **why)
{
	char proc[64];
	struct stat st;
	int pfd, fd;

	if (!pool->seg_private) {
		*why =
		    "the pool is writable by others (pool_mode): its file handles are not trusted";
		return -EPERM;
	}
	if (!id->fh_bytes || id->fh_bytes > POOL_FH_MAX) {
		*why = "no file handle recorded for it";
		return -ENOENT;
	}
	pfd = open_handle(id, why);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode) || st.st_dev != id->dev ||
	    st.st_ino != id->ino) {
		*why = "its handle opens another file";
		close(pfd);
		return -ESTALE;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		*why = "it cannot be opened for writing";
	}
	close(pfd);
	return fd;
}

static int pwrite_all(int fd, const uint8_t *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/*
 * Appends gathered for one write(2) at SOURCE's end: consecutive pieces, the
 * next starting a bucket where the last ended one. @buf holds two buckets.
 */
struct appends {
	uint8_t *buf;
	size_t len, cap;
	uint64_t start; /* the file offset its owner gave the run's first byte */
	uint64_t next;	/* the bucket a piece continuing the run must be in */
};

/*
 * Write the gathered run with O_APPEND on @fd (its flag only for this
 * write). A write SOURCE took part of: that part is no longer dirty
 * (pool_dirty_sent), so the next pass appends only the rest.
 */
static int appends_out(struct pool_file *pf, uint32_t me, int fd, struct appends *a)
{
	int fl = fcntl(fd, F_GETFL), err = 0;
	size_t done = 0;

	if (!a->len)
		return 0;
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_APPEND))
		return -errno;
	while (done < a->len && !err) {
		ssize_t w = write(fd, a->buf + done, a->len - done);

		if (w > 0)
			done += (size_t)w;
		else if (w == 0 || errno != EINTR)
			err = w < 0 ? -errno : -EIO;
	}
	if (fcntl(fd, F_SETFL, fl) && !err)
		err = -errno;
	if (err && done)
		pool_dirty_sent(pf, a->start, a->start + done, me);
	a->len = 0;
	return err;
}

/* Add bytes [lo, lo + len) of bucket @bucket (copied into @bbuf) to the run. */
static int appends_add(struct pool_file *pf, uint32_t me, int fd, struct appends *a,
		       const struct pool_dirty *d, const uint8_t *bbuf, size_t len)
{
	uint32_t bsize = pf->pool->bsize;
	int err = 0;

	/* not a continuation (or no room): what was gathered goes first */
	if (a->len && (d->bucket != a->next || d->lo || a->len + len > a->cap))
		err = appends_out(pf, me, fd, a);
	if (err)
		return err;
	if (!a->len)
		a->start = (d->bucket << pf->pool->bshift) + d->lo;
	memcpy(a->buf + a->len, bbuf + d->lo, len);
	a->len += len;
	/* a run goes on in the next bucket only from this one's end */
	a->next = d->lo + len == bsize ? d->bucket + 1 : UINT64_MAX;
	return 0;
}

/* One batch of @me's dirty buckets of @pf to @fd, synced, then cleaned. Returns cleaned or -errno.
 */
static int write_batch(struct pool_file *pf, int fd, uint32_t me, uint8_t *buf, struct appends *a)
{
	struct pool_dirty d[RECOVER_BATCH];
	bool copied[RECOVER_BATCH];
	int n = pool_dirty_list(pf, me, UINT64_MAX, d, RECOVER_BATCH), done = 0, err = 0;

	for (int k = 0; k < n && !err; k++) {
		ssize_t len = pool_dirty_copy(pf, &d[k], me, buf);

		copied[k] = len > 0;
		if (len < 0)
			err = (int)len;
		else if (len > 0 && d[k].append)
			err = appends_add(pf, me, fd, a, &d[k], buf, (size_t)len);
		else if (len > 0)
			err = pwrite_all(fd, buf + d[k].lo, (size_t)len,
					 (off_t)(d[k].bucket << pf->pool->bshift) + d[k].lo);
	}
	if (!err && n > 0)
		err = appends_out(pf, me, fd, a); /* before the sync: cleaned after it */
	a->len = 0;
	if (n < 0 || err)
		return n < 0 ? n : err;
	if (fdatasync(fd))
		return -errno;
	for (int k = 0; k < n; k++)
		if (copied[k] && pool_dirty_clean(pf, &d[k], me) == 1) {
			pool_stats_count(pf, d[k].bucket, POOL_C_DIRTY_RECOVERED, 1);
			done++;
		}
	return n ? done : -ENOENT; /* -ENOENT: nothing of ours left */
}

/* Everything @me claimed of slot @id, to @fd. Returns buffers written back or -errno. */
static int write_back(struct pool *pool, uint32_t f, const struct ident *id, int fd, uint32_t me)
{
	struct pool_file pf = { .pool = pool, .slot = f, .idgen = id->idgen };
	uint8_t *buf = malloc(pool->bsize);
	struct appends a = { .buf = malloc(2 * (size_t)pool->bsize),
			     .cap = 2 * (size_t)pool->bsize };
	int total = 0, ret = 0;

	if (!buf || !a.buf) {
		free(buf);
		free(a.buf);
		return -ENOMEM;
	}
	for (int r = 0; r < RECOVER_ROUNDS && ret >= 0; r++) {
		ret = write_batch(&pf, fd, me, buf, &a);
		total += ret > 0 ? ret : 0;
	}
	free(buf);
	free(a.buf);
	pool_dirty_end_clamp(&pf, UINT64_MAX); /* nothing deferred left: SOURCE's size */
	return ret == -ENOENT || ret >= 0 ? total : ret;
}

/* Every file with bytes written back, dropped, or kept after a failed write. */
static void report(pool_recover_fn *fn, void *arg, const struct pool_recover_note *note)
{
	if (fn && (note->recovered || note->lost || note->err))
		fn(arg, note);
}

/* Drop slot @f's dead owners' buffers: not provably its file's (@why). */
static void drop(struct pool *pool, uint32_t f, struct pool_recover_note *note, const char *why,
		 int err, pool_recover_fn *fn, void *arg)
{
	int ret = pool_dirty_reap_slot(pool, f);

	note->why = why;
	note->err = err;
	note->lost = ret > 0 ? (uint32_t)ret : 0;
	report(fn, arg, note);
}

/* Slot @f: recover what is provably its file's, drop what is not. */
static int recover_one(struct pool *pool, uint32_t f, pool_recover_fn *fn, void *arg,
		       struct pids *p)
{
	struct pool_recover_note note = { 0 };
	/* Claimed for this thread, not the process: a daemon's own deferred
	 * buffers (owner: its pid) are written back under its per-file lock,
	 * and only the ones claimed here may be written without it. */
	uint32_t me = (uint32_t)gettid();
	struct ident id;
	int fd, ret;

	if (!any_dead(pool, f, p))
		return 0;
	ret = ident_get(pool, f, &id);
	if (ret == -ENOENT)
		drop(pool, f, &note, "its file slot is not in use", 0, fn, arg);
	if (ret)
		return 0;
	note.dev = id.dev;
	note.ino = id.ino;
	memcpy(note.path, id.path, sizeof(note.path));
	fd = open_same(pool, &id, &note.why);
	if (fd < 0) {
		drop(pool, f, &note, note.why, -fd, fn, arg);
		return 0;
	}
	claim(pool, f, &id, 0, me, p);
	ret = write_back(pool, f, &id, fd, me);
	close(fd);
	/* what is still ours (a write failed, or kept changing) is left to the next pass */
	claim(pool, f, &id, me, 0, p);
	note.recovered = ret > 0 ? (uint32_t)ret : 0;
	if (ret < 0) {
		note.why = "writing it back failed; kept for the next pass";
		note.err = -ret;
	}
	report(fn, arg, &note);
	return ret;
}

int pool_recover_slot(struct pool *pool, uint32_t slot, pool_recover_fn *fn, void *arg)
{
	struct pids p = { 0 };

	if (pool->readonly)
		return -EROFS;
	if (pool_is_broken(pool))
		return -EIO;
	if (slot >= pool->nfiles)
		return -EINVAL;
	return recover_one(pool, slot, fn, arg, &p);
}

int pool_recover_all(struct pool *pool, pool_recover_fn *fn, void *arg)
{
	struct pids p = { 0 };
	uint8_t *todo;
	int total = 0, ret;

	if (pool->readonly)
		return -EROFS;
	if (pool_is_broken(pool))
		return -EIO;
	todo = calloc(pool->nfiles, 1);
	if (!todo)
		return -ENOMEM;
	for (uint32_t i = 0; i < pool->nbufs; i++) {
		const struct pool_buf *b = &pool->bufs[i];
		uint32_t f = LOAD(&b->file);

		if ((LOAD(&b->flags) & POOL_BUF_F_DIRTY) && f < pool->nfiles &&
		    owner_gone(&p, LOAD(&b->owner)))
			todo[f] = 1;
	}
	for (uint32_t f = 0; f < pool->nfiles; f++)
		if (todo[f] && (ret = recover_one(pool, f, fn, arg, &p)) > 0)
			total += ret;
	free(todo);
	return total;
}

int pool_recover_file(struct pool *pool, const struct pool_file_id *id, pool_recover_fn *fn,
		      void *arg)
{
	uint32_t f;

	if (pool->readonly || pool_is_broken(pool))
		return 0;
	f = pool_files_peek(pool, id->dev, id->ino);
	if (f == POOL_NONE || !pool_fslot_ndirty(&pool->files[f]) ||
	    LOAD(&pool->files[f].validator) == pool_file_validator(id))
		return 0;
	return pool_recover_slot(pool, f, fn, arg);
}
