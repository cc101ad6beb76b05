// SPDX-License-Identifier: MIT
/*
 * ops_dir.c - directory streams: opendir, readdir, readdirplus,
 * releasedir, fsyncdir.
 *
 * Offsets handed to the kernel are the backing file system's own d_off
 * cookies, so seekdir/telldir and listings resumed after a change keep the
 * backing directory's guarantees (ext4's hash cookies stay valid across
 * inserts). readdirplus returns attributes with each name, saving the kernel
 * one lookup per entry for `ls -l` and `find -ls`.
 *
 * The kernel may keep a directory's listing across opens (FOPEN_CACHE_DIR
 * with FOPEN_KEEP_CACHE). While a watcher runs, always: the kernel's own
 * changes drop its copy, and the watcher drops it at a change made in
 * SOURCE (watch_inval.c). Without one, while SOURCE's directory is unchanged
 * since the last open (size, mtime and ctime, the node's stamp): a change
 * made in SOURCE shows at the next opendir. Only with entry_timeout >=
 * DIR_CACHE_MIN_ENTRY_TIMEOUT: a listing served from the kernel's copy
 * instantiates no names, so once they expire every stat costs a LOOKUP
 * where an uncached READDIRPLUS refreshed ~100 names per request (find -ls
 * of 15,000 entries 1.5 s after the last: 15,034 LOOKUPs against 3,776
 * READDIR(PLUS) and 1,386 LOOKUPs uncached).
 *
 * Opens without a request: while a watcher that sees every change runs
 * (fanotify; inotify may leave directories unwatched, whose listings must
 * not be kept) and the kernel enforces permissions (default_permissions
 * with POSIX ACLs, or a root daemon only root may use), the first OPENDIR
 * is answered ENOSYS. The kernel then opens every directory of the
 * connection itself, checking the caller's rights from the attributes it
 * caches, and keeps listings across opens (FOPEN_CACHE_DIR|FOPEN_KEEP_CACHE
 * is its default then): a hot `find` or `git status` costs no
 * OPENDIR/RELEASEDIR round trip per directory. A READDIR then carries no
 * handle: the listing is read from a stream opened for that request
 * (dir_stateless). The choice is the connection's for good (the kernel asks
 * no more): if the watcher fails later, the kernel still compares the
 * directory's mtime before using its copy once the attributes
 * expire, which the short timeouts then make 1 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"
#include "thread_buf.h"
#include "watch.h"

static inline struct dir_handle *dh_of(struct fuse_file_info *fi)
{
	return (struct dir_handle *)(uintptr_t)fi->fh;
}

static void dir_free(struct accelfs *fs, struct dir_handle *d)
{
	handle_list_del(&d->link, &fs->dirs.lock);
	closedir(d->dp);
	free(d);
}

#define DIR_CACHE_MIN_ENTRY_TIMEOUT 10.0 /* seconds */

void ops_dir_init(struct accelfs *fs, struct fuse_conn_info *conn)
{
#ifdef FUSE_CAP_NO_OPENDIR_SUPPORT
	bool kernel_checks = fs->opts.default_permissions ? fs->dont_mask /* ACLs enforced too */
							  : geteuid() == 0 && !fs->opts.allow_other;

	bool ok = (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) && kernel_checks &&
		  fs->opts.kernel_cache != KERNEL_CACHE_NEVER;

	__atomic_store_n(&fs->dirs.no_opendir_ok, ok, __ATOMIC_RELAXED);
	if (ok)
		conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
#else
	(void)fs;
	(void)conn;
#endif
}

/* Let the kernel keep the listing of @n across opens while a watcher runs, or
 * when SOURCE's directory (open on @fd) is as it was at the last opendir and
 * names live long; never with kernel_cache=never. */
static void dir_cache_policy(struct accelfs *fs, struct inode *n, int fd, struct fuse_file_info *fi)
{
	struct stat st;

	if (fs->opts.kernel_cache == KERNEL_CACHE_NEVER)
		return;
	if (watch_active(fs) && watch_covers_dir(fs, n)) {
		fi->cache_readdir = fi->keep_cache = 1;
		return;
	}
	if (opt_entry_timeout(fs) < DIR_CACHE_MIN_ENTRY_TIMEOUT || fstat(fd, &st) < 0)
		return;
	fi->cache_readdir = 1;
	pthread_mutex_lock(&n->lock);
	fi->keep_cache = stamp_equal(n, &st);
	stamp_set(n, &st);
	pthread_mutex_unlock(&n->lock);
}

static void accel_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct dir_handle *d;
	int fd = -1, err, nfd;

	if (__atomic_load_n(&fs->dirs.no_opendir_ok, __ATOMIC_RELAXED) && watch_covers_all(fs)) {
		if (!__atomic_exchange_n(&fs->dirs.no_opendir, true, __ATOMIC_RELAXED))
			log_msg(LOG_INFO, "directories: opened by the kernel without a request "
					  "while the watcher runs");
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* pinned with the daemon's rights (reopening by handle needs them), then
	 * opened as the caller, who must be allowed to read the directory --
	 * and need not search it: through its magic link, not its "." (which
	 * would refuse its owner a directory of mode 0400 or 0600) */
	nfd = inode_fd_get(inode_get(fs, ino));
	err = nfd < 0 ? -nfd : -creds_enter(req);
	if (!err) {
		char path[PROC_FD_LEN];

		fd = open(proc_fd_path(nfd, path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = fd < 0 ? errno : 0;
		creds_leave();
	}
	inode_fd_put(inode_get(fs, ino), nfd);
	if (err) {
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	if (!(d->dp = fdopendir(fd))) {
		err = errno;
		close(fd);
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	dir_cache_policy(fs, inode_get(fs, ino), fd, fi);
	handle_list_add(&fs->dirs.head, &d->link, &fs->dirs.lock);
	if (fuse_reply_open(req, fi) == -ENOENT)
		dir_free(fs, d);
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/* Add the pending entry to @p; returns its size, 0 if it did not fit, or -errno. */
static ssize_t add_entry(fuse_req_t req, fuse_ino_t ino, struct dirent *de, char *p, size_t rem,
			 bool plus)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	size_t size;
	int ret;

	if (!plus) {
		struct stat st = { .st_ino = de->d_ino, .st_mode = (mode_t)de->d_type << 12 };

		size = fuse_add_direntry(req, p, rem, de->d_name, &st, de->d_off);
		return size > rem ? 0 : (ssize_t)size;
	}
	if (is_dot_or_dotdot(de->d_name)) {
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = de->d_ino;
		e.attr.st_mode = (mode_t)de->d_type << 12;
	} else {
		ret = entry_lookup(fs, ino, de->d_name, &e, LOOKUP_LISTED);
		if (ret)
			return ret;
	}
	size = fuse_add_direntry_plus(req, p, rem, de->d_name, &e, de->d_off);
	if (size > rem) {
		if (e.ino)
			inode_unref(fs, inode_get(fs, e.ino), 1); /* the kernel never saw it */
		return 0;
	}
	return (ssize_t)size;
}

/*
 * The kernel asks for what follows the last entry of a listing before it
 * takes the listing as complete: one more READDIR per directory, which
 * would open, seek and read the directory again only to find nothing.
 * When the reply before held the end, at @off, and came less than
 * DIR_EOF_NS ago, the answer is "nothing" straight away (once). A name
 * created since may be left out of this pass, as POSIX allows for names
 * added after opendir or rewinddir; the kernel's copy of the listing is
 * dropped by then (the create bumped the directory's version, or the
 * watcher invalidated it), so the next pass reads it.
 */
#define DIR_EOF_NS 1000000000ULL

static void eof_note(struct inode *n, off_t off)
{
	pthread_mutex_lock(&n->lock);
	n->dir_eof = off;
	n->dir_eof_ns = now_ns();
	pthread_mutex_unlock(&n->lock);
}

static bool eof_take(struct inode *n, off_t off)
{
	bool known;

	pthread_mutex_lock(&n->lock);
	known = off && off == n->dir_eof && now_ns() - n->dir_eof_ns < DIR_EOF_NS;
	if (known)
		n->dir_eof = 0;
	pthread_mutex_unlock(&n->lock);
	return known;
}

/*
 * Shared mode's READDIRPLUS: the next names of the listing, as many as the
 * reply can hold up to DIR_BATCH, have their stats asked of SOURCE at once
 * (BACKEND_OP_STATX: on the worker's ring, which io_uring's own workers run
 * side by side). One at a time, each stat waits for SOURCE's client (a hop
 * into GlusterFS's client, a round trip on NFS), and a program walking a
 * tree (git status looking for untracked files) waits for every entry of
 * every directory one after the other. The stats are not forced: the
 * listing just brought them to the client (stat_name, LOOKUP_LISTED).
 */
#define DIR_BATCH 64
#define DIRENTPLUS_MIN 160 /* the smallest entry of a READDIRPLUS reply (152 + a name of 8) */

struct dir_batch {
	struct listed {
		off_t off; /* d_off: where the listing goes on after this name */
		ino_t ino;
		unsigned char type;
		char name[NAME_MAX + 1];
	} ent[DIR_BATCH];
	struct statx stx[DIR_BATCH];
	struct backend_op ops[DIR_BATCH];
};

/* Fill @b with the names that follow in @d, at most @max, and ask their
 * stats together; their count, or -errno of the listing's read. @end: the
 * listing ended after them (not an error). */
static int batch_fill(struct accelfs *fs, fuse_ino_t ino, struct dir_handle *d, struct dir_batch *b,
		      unsigned int max, bool *end)
{
	struct inode *p = inode_get(fs, ino);
	unsigned int n = 0, k = 0, i;
	int pfd;

	while (n < max) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				if (errno && !n)
					return -errno;
				*end = !errno;
				break;
			}
		}
		b->ent[n].off = d->entry->d_off;
		b->ent[n].ino = d->entry->d_ino;
		b->ent[n].type = d->entry->d_type;
		snprintf(b->ent[n].name, sizeof(b->ent[n].name), "%s", d->entry->d_name);
		d->entry = NULL;
		n++;
	}
	pfd = inode_fd_get(p);
	for (i = 0; pfd >= 0 && i < n; i++) {
		if (is_dot_or_dotdot(b->ent[i].name))
			continue;
		b->ops[k] = (struct backend_op){ .op = BACKEND_OP_STATX,
						 .fd = pfd,
						 .path = b->ent[i].name,
						 .mode = AT_SYMLINK_NOFOLLOW,
						 .len = STATX_BASIC_STATS,
						 .buf = &b->stx[i],
						 .res = -EAGAIN };
		k++;
	}
	if (k && backend_submit(b->ops, k) < 0)
		for (i = 0; i < k; i++)
			b->ops[i].res = -EAGAIN;
	/* an entry whose stat failed is looked up alone (stx marked unused) */
	for (i = 0; i < k; i++)
		if (b->ops[i].res < 0)
			((struct statx *)b->ops[i].buf)->stx_mask = 0;
	if (pfd >= 0)
		inode_fd_put(p, pfd);
	else
		for (i = 0; i < n; i++)
			b->stx[i].stx_mask = 0;
	return (int)n;
}

/* Shared mode's READDIRPLUS (see DIR_BATCH); @d positioned at @off. */
static void readdirplus_batched(fuse_req_t req, fuse_ino_t ino, size_t size, struct dir_handle *d,
				struct inode *eof_node)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct dir_batch *b = thread_buf_get(THREAD_BUF_LISTING, sizeof(*b));
	char *buf = thread_buf_reply(size), *p = buf;
	size_t rem = size, max = size / DIRENTPLUS_MIN, got;
	struct fuse_entry_param e;
	bool end = false;
	int n, i, ret;

	if (!buf || !b) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (max > DIR_BATCH)
		max = DIR_BATCH;
	if (!max)
		max = 1;
	n = batch_fill(fs, ino, d, b, (unsigned int)max, &end);
	if (n < 0) {
		fuse_reply_err(req, -n);
		return;
	}
	for (i = 0; i < n; i++) {
		struct listed *l = &b->ent[i];

		if (is_dot_or_dotdot(l->name)) {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = l->ino;
			e.attr.st_mode = (mode_t)l->type << 12;
			ret = 0;
		} else {
			ret = entry_listed(fs, ino, l->name, b->stx[i].stx_mask ? &b->stx[i] : NULL,
					   &e);
		}
		if (ret == -ENOENT) { /* gone since the listing: skipped, as ls would see */
			d->offset = l->off;
			continue;
		}
		if (ret < 0) {
			if (rem == size) {
				fuse_reply_err(req, -ret);
				return;
			}
			break;
		}
		got = fuse_add_direntry_plus(req, p, rem, l->name, &e, l->off);
		if (got > rem) {
			if (e.ino)
				inode_unref(fs, inode_get(fs, e.ino),
					    1); /* the kernel never saw it */
			break;
		}
		p += got;
		rem -= got;
		d->offset = l->off;
	}
	if (i < n) { /* names left for the next request: the listing goes on after the last sent */
		seekdir(d->dp, d->offset);
		d->entry = NULL;
		end = false;
	}
	if (eof_node && end)
		eof_note(eof_node, d->offset);
	fuse_reply_buf(req, buf, size - rem);
}

/* Reply with what follows @off; a reply that holds the listing's end is
 * first noted in @eof_node (eof_take), if not NULL. */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct dir_handle *d,
		       bool plus, struct inode *eof_node)
{
	struct accelfs *fs = fuse_req_userdata(req);
	char *buf, *p;
	size_t rem = size;
	ssize_t n;
	int err = 0;

	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	if (plus && fs->shared) {
		readdirplus_batched(req, ino, size, d, eof_node);
		return;
	}
	buf = p = thread_buf_reply(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		n = add_entry(req, ino, d->entry, p, rem, plus);
		if (n < 0) {
			/* a name that vanished since readdir is skipped, as ls would see */
			if (n != -ENOENT) {
				err = (int)-n;
				break;
			}
			n = 0;
		} else if (n == 0) {
			break;
		}
		p += n;
		rem -= n;
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}
	if (err && rem == size) {
		fuse_reply_err(req, err);
		return;
	}
	/* Before the reply: the kernel's next READDIR may come at once, on
	 * another worker (and a RELEASEDIR may free @d). */
	if (eof_node && !err && !d->entry)
		eof_note(eof_node, d->offset);
	fuse_reply_buf(req, buf, size - rem);
}

/* A descriptor of directory @ino opened for reading with the daemon's
 * rights (the kernel checked the caller's at open), or -errno. */
static int dir_open_fd(struct accelfs *fs, fuse_ino_t ino)
{
	int nfd = inode_fd_get(inode_get(fs, ino)), fd;

	if (nfd < 0)
		return nfd;
	fd = openat(nfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = fd < 0 ? -errno : fd;
	inode_fd_put(inode_get(fs, ino), nfd);
	return fd;
}

/* A READDIR without a handle (the kernel opened the directory itself): a
 * stream for this request only, positioned at @off by do_readdir. */
static void dir_stateless(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct dir_handle d = { .offset = 0 };
	struct inode *n = inode_get(fs, ino);
	int fd;

	if (eof_take(n, off)) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	fd = dir_open_fd(fs, ino);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	if (!(d.dp = fdopendir(fd))) {
		fuse_reply_err(req, errno);
		close(fd);
		return;
	}
	do_readdir(req, ino, size, off, &d, plus, n);
	closedir(d.dp);
}

static void readdir_any(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi, bool plus)
{
	if (fi->fh)
		do_readdir(req, ino, size, off, dh_of(fi), plus, NULL);
	else
		dir_stateless(req, ino, size, off, plus);
}

static void accel_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	readdir_any(req, ino, size, off, fi, false);
}

static void accel_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			      struct fuse_file_info *fi)
{
	readdir_any(req, ino, size, off, fi, true);
}

static void accel_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct dir_handle *d = dh_of(fi);

	(void)ino;
	dir_free(fs, d);
	fuse_reply_err(req, 0);
}

static void accel_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int fd = fi->fh ? dirfd(dh_of(fi)->dp) : dir_open_fd(fs, ino), err;

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	err = (datasync ? fdatasync(fd) : fsync(fd)) ? errno : 0;
	if (!fi->fh)
		close(fd);
	fuse_reply_err(req, err);
}

void ops_dir_release_all(struct accelfs *fs)
{
	while (fs->dirs.head.next && fs->dirs.head.next != &fs->dirs.head)
		dir_free(fs, (struct dir_handle *)fs->dirs.head.next);
}

void ops_dir_fill(struct fuse_lowlevel_ops *ops)
{
	ops->opendir = accel_opendir;
	ops->readdir = accel_readdir;
	ops->readdirplus = accel_readdirplus;
	ops->releasedir = accel_releasedir;
	ops->fsyncdir = accel_fsyncdir;
}
