// SPDX-License-Identifier: MIT
/*
 * shutdown.c - what SIGTERM/SIGINT/SIGHUP do before the session ends: put
 * every byte an application was told was written on SOURCE.
 *
 * syncfs() of a FUSE mount is not enough: on current kernels it returns
 * while the kernel's WRITE requests for dirty pages are still queued, and
 * ending the session then drops them (the writer's close() gets EIO). fsync()
 * of a file does wait: the kernel writes back and waits for that inode's
 * dirty pages, through our still-running workers, before it sends FSYNC. So
 * every file open for writing is fsync'ed *through the mount*, by its name
 * there (the backing file's current name in SOURCE, under the mount point),
 * resolved beneath the mount root without following any link a user could
 * plant, and checked to be the same regular file before it is opened. A file unlinked while open
 * has no name: syncfs is all it gets, and it is logged.
 *
 * Sequence: sync pass, syncfs, a second pass for what writers added during
 * the first, then writes and writable opens are refused (shutdown_closing)
 * and deferred buffers go to SOURCE; only then does the loop end. Remaining
 * window: a page an application dirties in the kernel's writeback cache
 * after the second pass fsync'ed its file is refused when the kernel writes
 * it back (the writer's fsync/close gets EIO), never silently dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "open_files.h"

/*
 * A write or writable open of inode @n: -EIO past the final sync (it would
 * be acknowledged and never reach SOURCE), logged once; else 0.
 */
int shutdown_refuse(struct accelfs *fs, const struct inode *n, const char *what)
{
	static bool logged;

	if (!__atomic_load_n(&fs->closing, __ATOMIC_ACQUIRE))
		return 0;
	if (!__atomic_exchange_n(&logged, true, __ATOMIC_RELAXED))
		log_msg(LOG_WARNING,
			"shutdown: %s of inode %llu after the final sync refused (EIO); "
			"later ones too, without a log line",
			what, (unsigned long long)n->ino);
	return -EIO;
}

/* One file to sync: its backing inode and name below the mount (NULL: none). */
struct sync_item {
	dev_t dev; /* SOURCE may span file systems: (dev, ino) names one file */
	ino_t ino;
	char *rel;
};

struct sync_list {
	struct sync_item *v;
	size_t n, cap;
};

/* The file's name relative to SOURCE, from its backing descriptor; NULL if it has none. */
static char *source_relpath(struct accelfs *fs, int fd)
{
	const char *src = fs->source_real;
	size_t len = strlen(src) == 1 ? 0 : strlen(src);
	char proc[PROC_FD_LEN], path[PATH_MAX];
	ssize_t n = readlink(proc_fd_path(fd, proc), path, sizeof(path) - 1);
	struct stat st;

	if (n <= 0 || fstat(fd, &st) || st.st_nlink == 0)
		return NULL; /* unlinked: "(deleted)" is no name */
	path[n] = '\0';
	if (strncmp(path, src, len) || path[len] != '/' || !path[len + 1])
		return NULL; /* moved out of SOURCE */
	return strdup(path + len + 1);
}

/* Open file list lock held: note a writable file, once per inode. */
static void collect(struct open_file *of, void *arg)
{
	struct sync_list *l = arg;

	if ((of->flags & O_ACCMODE) == O_RDONLY || !S_ISREG(of->inode->type))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].ino == of->inode->ino && l->v[i].dev == of->inode->dev)
			return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct sync_item *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return; /* syncfs still covers it, without waiting */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] =
	    (struct sync_item){ of->inode->dev, of->inode->ino, source_relpath(of->fs, of->fd) };
}

/*
 * fsync @it's file through the mount at @root (a descriptor of the mount
 * root, whose st_dev is @dev). The name is resolved to an O_PATH descriptor
 * first and checked to be the same regular file before anything is opened,
 * so a device or FIFO renamed into its place meanwhile is never opened.
 * Returns 0 or -errno; -ESTALE when the name now leads to another file.
 */
static int sync_through_mount(int root, dev_t dev, const struct sync_item *it)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve =
		    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	int pfd = (int)syscall(SYS_openat2, root, it->rel, &how, sizeof(how)), fd = -1;
	char proc[PROC_FD_LEN];
	struct stat st;
	int ret = 0;

	if (pfd < 0)
		return -errno;
	/* accelfs reports the backing inode numbers; NO_XDEV keeps st_dev ours */
	if (fstat(pfd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_dev != dev || st.st_ino != it->ino)
		ret = -ESTALE;
	else if ((fd = open(proc_fd_path(pfd, proc), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		ret = -errno; /* our own descriptor's magic link: the same file */
	else if (fsync(fd))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	close(pfd);
	return ret;
}

/* One pass over the files open for writing. Returns how many had no usable name. */
static unsigned int sync_pass(struct accelfs *fs, int root, dev_t dev)
{
	struct sync_list l = { 0 };
	unsigned int unnamed = 0;

	open_files_foreach(fs, collect, &l);
	for (size_t i = 0; i < l.n; i++) {
		int ret = l.v[i].rel ? sync_through_mount(root, dev, &l.v[i]) : -ENOENT;

		if (ret) {
			unnamed++;
			log_msg(LOG_WARNING,
				"shutdown: inode %llu (%s) not fsync'ed through the mount: %s; "
				"relying on syncfs",
				(unsigned long long)l.v[i].ino, l.v[i].rel ? l.v[i].rel : "no name",
				strerror(-ret));
		}
		free(l.v[i].rel);
	}
	free(l.v);
	return unnamed;
}

/*
 * Called once by the shutdown thread while the workers still serve: returns
 * when everything acknowledged so far is on SOURCE (or logged as not).
 */
void shutdown_sync(struct accelfs *fs)
{
	int root = open(fs->mountpoint_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (root < 0 || fstat(root, &st)) {
		log_msg(LOG_ERR, "shutdown: cannot open %s: %s; open files are not synced",
			fs->mountpoint_real, strerror(errno));
	} else {
		sync_pass(fs, root, st.st_dev);
		if (syncfs(root)) /* metadata, and the files with no name */
			log_msg(LOG_ERR, "syncfs %s: %s", fs->mountpoint_real, strerror(errno));
		sync_pass(fs, root, st.st_dev); /* what writers added meanwhile */
	}
	__atomic_store_n(&fs->closing, true, __ATOMIC_RELEASE);
	log_msg(LOG_INFO, "shutdown: open files synced; refusing writes from now on");
	if (root >= 0)
		close(root);
	wb_flush_all(fs); /* deferred buffers (fsync wrote those of synced files) */
}
