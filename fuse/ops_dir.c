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
 * would open, seek and read the directory again only to find nothing (or,
 * through a handle, read its stream's end again: on a network SOURCE a
 * round trip).
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

/* Reply with what follows @off; a reply that holds the listing's end is
 * first noted in @eof_node (eof_take), if not NULL. */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct dir_handle *d,
		       bool plus, struct inode *eof_node)
{
	char *buf = thread_buf_reply(size), *p = buf;
	size_t rem = size;
	ssize_t n;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
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

/* With a handle too: its stream at the end reads SOURCE again to find
 * nothing, one more round trip per listing on a network SOURCE. */
static void readdir_any(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi, bool plus)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);

	if (!fi->fh) {
		dir_stateless(req, ino, size, off, plus);
	} else if (eof_take(n, off)) {
		fuse_reply_buf(req, NULL, 0);
	} else {
		do_readdir(req, ino, size, off, dh_of(fi), plus, n);
	}
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
