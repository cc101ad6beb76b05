// SPDX-License-Identifier: MIT
/*
 * watch_echo.c - the inotify watcher's echo filter: the daemon's own changes
 * to SOURCE must not come back as invalidations (fanotify names the process
 * that made a change; inotify does not).
 *
 * Each mutating request notes what it changes, before and after the change,
 * in a small direct-mapped table: a name (its directory's node id and the
 * name) or a node (its id), with the time. The watcher drops an event about
 * a name or node noted less than ECHO_WINDOW_MS ago. A slot is one 64-bit
 * word, the key's high 40 bits and a 24-bit millisecond clock, written and
 * read atomically: no lock, no allocation; two keys sharing a slot only
 * cost an echo that gets through (an invalidation too many). Reads never
 * touch the table; a write notes its file at most every ECHO_WINDOW_MS / 4
 * (one load of the slot otherwise, no system call: the clock is the vDSO's
 * coarse one).
 *
 * The price (docs/design.md, "Echoes"): a change made outside to a name or
 * file within ECHO_WINDOW_MS of one of the mount's own is taken for an echo
 * and shows only when the kernel's timeouts expire; which is why the long
 * timeouts are WATCH_INOTIFY_TIMEOUT in inotify mode, not an hour.
 *
 * The notes are taken by wrapping the mutating handlers of the ops table
 * (watch_echo_wrap, only in inotify mode), and by the flusher where it
 * writes deferred bytes (writeback.c).
 */
#include <fcntl.h>
#include <string.h>
#include <time.h>

#include "watch_i.h"

#define ECHO_TIME_BITS 24
#define ECHO_TIME_MASK ((1ull << ECHO_TIME_BITS) - 1)

/* Process-wide by nature: the handler table is wrapped once per process
 * (watch_echo_wrap). The echo table is the mount's (fs->watch). */
static struct fuse_lowlevel_ops orig; /* the handlers wrapped; read only */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t key_node(fuse_ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull;

	return h ^ h >> 31;
}

static uint64_t key_name(fuse_ino_t parent, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ key_node(parent);

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211ull;
	return h ^ h >> 29;
}

/* Note @key now, unless noted less than ECHO_WINDOW_MS / 4 ago. */
static void note(struct watch *w, uint64_t key)
{
	uint64_t *slot = &w->echo_tab[key & (ECHO_SLOTS - 1)];
	uint64_t now = now_ms(), v = __atomic_load_n(slot, __ATOMIC_RELAXED);
	uint64_t tag = key & ~ECHO_TIME_MASK;

	if ((v & ~ECHO_TIME_MASK) == tag && ((now - v) & ECHO_TIME_MASK) < ECHO_WINDOW_MS / 4)
		return;
	__atomic_store_n(slot, tag | (now & ECHO_TIME_MASK), __ATOMIC_RELAXED);
}

static bool noted(struct watch *w, uint64_t key, uint64_t now)
{
	uint64_t v = __atomic_load_n(&w->echo_tab[key & (ECHO_SLOTS - 1)], __ATOMIC_RELAXED);

	return v && (v & ~ECHO_TIME_MASK) == (key & ~ECHO_TIME_MASK) &&
	       ((now - v) & ECHO_TIME_MASK) < ECHO_WINDOW_MS;
}

void watch_echo_node(struct accelfs *fs, fuse_ino_t ino)
{
	if (fs->watch.echo_on)
		note(&fs->watch, key_node(ino));
}

bool watch_echo_match(struct accelfs *fs, const struct watch_change *c)
{
	uint64_t now = now_ms();

	if (c->name && noted(&fs->watch, key_name(c->parent, c->name), now))
		return true;
	return c->ino && (c->what & WATCH_NAME) == 0 && noted(&fs->watch, key_node(c->ino), now);
}

/* Handlers that change a name: noted before (the watcher may read the event
 * before the handler returns) and after (a slow change). */
static void echo_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name);

	note(&fs->watch, k);
	orig.mknod(req, parent, name, mode, rdev);
	note(&fs->watch, k);
}

static void echo_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name);

	note(&fs->watch, k);
	orig.mkdir(req, parent, name, mode);
	note(&fs->watch, k);
}

static void echo_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name);

	note(&fs->watch, k);
	orig.symlink(req, link, parent, name);
	note(&fs->watch, k);
}

static void echo_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name);

	note(&fs->watch, k);
	orig.unlink(req, parent, name);
	note(&fs->watch, k);
}

static void echo_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name);

	note(&fs->watch, k);
	orig.rmdir(req, parent, name);
	note(&fs->watch, k);
}

static void echo_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
			const char *newname, unsigned int flags)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name), nk = key_name(newparent, newname);

	note(&fs->watch, k);
	note(&fs->watch, nk);
	orig.rename(req, parent, name, newparent, newname, flags);
	note(&fs->watch, k);
	note(&fs->watch, nk);
}

static void echo_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(newparent, newname);

	note(&fs->watch, k);
	note(&fs->watch, key_node(ino));
	orig.link(req, ino, newparent, newname);
	note(&fs->watch, k);
}

static void echo_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	uint64_t k = key_name(parent, name);

	note(&fs->watch, k);
	orig.create(req, parent, name, mode, fi);
	note(&fs->watch, k);
}

/* Handlers that change a node's attributes or data. */
static void echo_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	bool w = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);

	if (w) /* a truncation; a writable descriptor's close reports IN_CLOSE_WRITE */
		note(&fs->watch, key_node(ino));
	orig.open(req, ino, fi);
	if (w)
		note(&fs->watch, key_node(ino));
}

static void echo_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			 struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);

	note(&fs->watch, key_node(ino));
	orig.setattr(req, ino, attr, to_set, fi);
	note(&fs->watch, key_node(ino));
}

static void echo_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			  size_t size, int flags)
{
	struct accelfs *fs = fuse_req_userdata(req);

	note(&fs->watch, key_node(ino));
	orig.setxattr(req, ino, name, value, size, flags);
	note(&fs->watch, key_node(ino));
}

static void echo_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);

	note(&fs->watch, key_node(ino));
	orig.removexattr(req, ino, name);
	note(&fs->watch, key_node(ino));
}

static void echo_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
			   struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);

	note(&fs->watch, key_node(ino)); /* usually one load: noted by the handle's last write */
	orig.write_buf(req, ino, bufv, off, fi);
}

static void echo_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			   struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);

	note(&fs->watch, key_node(ino));
	orig.fallocate(req, ino, mode, offset, length, fi);
	note(&fs->watch, key_node(ino));
}

static void echo_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
				 struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
				 struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct accelfs *fs = fuse_req_userdata(req);

	note(&fs->watch, key_node(ino_out));
	orig.copy_file_range(req, ino_in, off_in, fi_in, ino_out, off_out, fi_out, len, flags);
	note(&fs->watch, key_node(ino_out));
}

/*
 * flush, fsync and release write deferred bytes back, and release closes
 * (IN_CLOSE_WRITE): noted for handles open for writing only, so that closing
 * a file the mount only read leaves an outside change to it seen at once.
 */
static bool writable(const struct fuse_file_info *fi)
{
	const struct open_file *of = (const struct open_file *)(uintptr_t)fi->fh;

	return (of->flags & O_ACCMODE) != O_RDONLY;
}

static void echo_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	bool w = writable(fi);

	if (w)
		note(&fs->watch, key_node(ino));
	orig.flush(req, ino, fi);
	if (w)
		note(&fs->watch, key_node(ino));
}

static void echo_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	bool w = writable(fi);

	if (w)
		note(&fs->watch, key_node(ino));
	orig.fsync(req, ino, datasync, fi);
	if (w)
		note(&fs->watch, key_node(ino));
}

static void echo_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	bool w = writable(fi); /* before the handle is freed */

	if (w)
		note(&fs->watch, key_node(ino));
	orig.release(req, ino, fi);
	if (w)
		note(&fs->watch, key_node(ino));
}

#define WRAP(op)                             \
	do {                                 \
		if (ops->op)                 \
			ops->op = echo_##op; \
	} while (0)

void watch_echo_wrap(struct accelfs *fs, struct fuse_lowlevel_ops *ops)
{
	if (fs->watch.mode != WATCH_INOTIFY) /* settled before the workers start */
		return;
	fs->watch.echo_on = true;
	orig = *ops;
	WRAP(mknod);
	WRAP(mkdir);
	WRAP(symlink);
	WRAP(unlink);
	WRAP(rmdir);
	WRAP(rename);
	WRAP(link);
	WRAP(create);
	WRAP(open);
	WRAP(setattr);
	WRAP(setxattr);
	WRAP(removexattr);
	WRAP(write_buf);
	WRAP(fallocate);
	WRAP(copy_file_range);
	WRAP(flush);
	WRAP(fsync);
	WRAP(release);
}
