// SPDX-License-Identifier: MIT
/*
 * inode.c - the table of backing inodes the kernel holds references to;
 * their O_PATH descriptors are fd_cache.c's.
 *
 * A chained hash on (st_dev, st_ino) under one mutex. The table is touched by
 * lookup, create and forget, never by read or write, so one lock is enough;
 * it doubles when it gets crowded so chains stay short for trees with
 * millions of names.
 *
 * The kernel keeps a node for every name it caches until it sends FORGET,
 * so one descriptor per node would make RLIMIT_NOFILE a limit on the tree
 * (and a file deleted in SOURCE would stay allocated while the kernel
 * remembers its name). So, as virtiofsd's --inode-file-handles does, a node
 * is identified by its file handle, and only a bounded set of descriptors is
 * open, reopened with open_by_handle_at() on demand (fd_cache.c). Where SOURCE has no handles or the daemon may not open them
 * (CAP_DAC_READ_SEARCH), every node keeps its descriptor: the old mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "fd_cache.h"
#include "node_ids.h"

static size_t slot_of(dev_t dev, ino_t ino, size_t size)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> 17) & (size - 1);
}

int inode_table_init(struct accelfs *fs)
{
	struct inode_table *t = &fs->inodes;

	t->size = 4096;
	t->slots = calloc(t->size, sizeof(*t->slots));
	if (!t->slots || node_ids_init(&t->ids)) {
		free(t->slots);
		return -ENOMEM;
	}
	fd_cache_init(fs);
	return 0;
}

/* The node's descriptors and locks go with it (nobody else holds it now). */
static void inode_free(struct inode *n)
{
	if (n->fh)
		fd_cache_remove(n);
	if (n->fd >= 0)
		close(n->fd);
	if (n->wb_fd >= 0)
		close(n->wb_fd);
	if (n->app_fd >= 0)
		close(n->app_fd);
	free(n->fh);
	pthread_mutex_destroy(&n->lock);
	pthread_mutex_destroy(&n->wb_lock);
	pthread_mutex_destroy(&n->fd_lock);
	free(n);
}

void inode_table_destroy(struct accelfs *fs)
{
	struct inode_table *t = &fs->inodes;
	size_t i;

	fd_cache_destroy();
	inode_fh_destroy(t);
	for (i = 0; i < t->size; i++) {
		struct inode *n, *next;

		for (n = t->slots[i]; n; n = next) {
			next = n->hnext;
			inode_free(n);
		}
	}
	while (t->retired) {
		struct inode *n = t->retired;

		t->retired = n->hnext;
		inode_free(n);
	}
	free(t->slots);
	t->slots = NULL;
	t->count = 0;
	node_ids_destroy(&t->ids);
}

/* Double the table; on allocation failure keep the old one (chains just grow). */
static void table_grow(struct inode_table *t)
{
	size_t i, nsize = t->size * 2;
	struct inode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (i = 0; i < t->size; i++) {
		struct inode *n, *next;

		for (n = t->slots[i]; n; n = next) {
			size_t s = slot_of(n->dev, n->ino, nsize);

			next = n->hnext;
			n->hnext = nt[s];
			nt[s] = n;
		}
	}
	free(t->slots);
	t->slots = nt;
	t->size = nsize;
}

struct inode *inode_get(struct accelfs *fs, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &fs->root;
	return node_id_node(&fs->inodes.ids, ino);
}

static struct inode *find_locked(struct inode_table *t, dev_t dev, ino_t ino)
{
	struct inode *n;

	for (n = t->slots[slot_of(dev, ino, t->size)]; n; n = n->hnext)
		if (n->dev == dev && n->ino == ino)
			return n;
	return NULL;
}

bool stamp_equal(const struct inode *n, const struct stat *st)
{
	return n->stamp_valid && n->stamp_size == st->st_size &&
	       n->stamp_mtime.tv_sec == st->st_mtim.tv_sec &&
	       n->stamp_mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       n->stamp_ctime.tv_sec == st->st_ctim.tv_sec &&
	       n->stamp_ctime.tv_nsec == st->st_ctim.tv_nsec;
}

bool stamp_data_differs(const struct inode *n, const struct stat *st)
{
	return n->stamp_valid &&
	       (n->stamp_size != st->st_size || n->stamp_mtime.tv_sec != st->st_mtim.tv_sec ||
		n->stamp_mtime.tv_nsec != st->st_mtim.tv_nsec);
}

void stamp_set(struct inode *n, const struct stat *st)
{
	n->stamp_valid = true;
	n->stamp_size = st->st_size;
	n->stamp_mtime = st->st_mtim;
	n->stamp_ctime = st->st_ctim;
}

/*
 * What file_remove_privs() would clear on a write by an unprivileged caller:
 * set-user-ID, and set-group-ID when group execute is set (without it the
 * bit means mandatory locking, and stays). Kept per node so the write path
 * pays one atomic load when there is nothing to clear (ops_file.c).
 */
void inode_note_mode(struct inode *n, const struct stat *st)
{
	bool setid =
	    S_ISREG(st->st_mode) &&
	    ((st->st_mode & S_ISUID) || (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP));

	if (__atomic_load_n(&n->setid, __ATOMIC_RELAXED) != setid)
		__atomic_store_n(&n->setid, setid, __ATOMIC_RELAXED);
}

/* A node for @fd/@st, kept by handle @fh (opened through @mount_fd) or, if NULL, by @fd. */
static struct inode *inode_new(int fd, const struct stat *st, const struct file_handle *fh,
			       int mount_fd)
{
	struct inode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (fh) {
		n->fh = malloc(sizeof(*fh) + fh->handle_bytes);
		if (!n->fh) {
			free(n);
			return NULL;
		}
		memcpy(n->fh, fh, sizeof(*fh) + fh->handle_bytes);
		n->mount_fd = mount_fd;
	}
	n->fd = fd;
	n->wb_fd = -1;
	n->app_fd = -1;
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->type = st->st_mode & S_IFMT;
	pthread_mutex_init(&n->lock, NULL);
	pthread_mutex_init(&n->wb_lock, NULL);
	pthread_mutex_init(&n->fd_lock, NULL);
	stamp_set(n, st);
	inode_note_mode(n, st);
	return n;
}

/*
 * With the writeback cache the kernel owns a regular file's size and times
 * and ignores the ones we report, so a change made in SOURCE behind our back
 * (another mount, another program) would never show. When a lookup finds the
 * backing file changed while nothing has it open through us, the node is
 * retired and the name gets a new node: the kernel drops the old inode, its
 * size and its pages, and sees the file as it now is (close-to-open).
 * Table lock held.
 */
static bool must_retire(struct accelfs *fs, struct inode *n, const struct stat *st)
{
	bool retire;

	if (!fs->opts.writeback || fs->opts.kernel_cache != KERNEL_CACHE_AUTO ||
	    !S_ISREG(st->st_mode))
		return false;
	/* Data only: our own metadata changes (link, chmod, xattrs) move ctime.
	 * But any change the watcher saw made outside (watch_inval.c): the
	 * kernel would keep its ctime (and times) otherwise. */
	pthread_mutex_lock(&n->lock);
	retire =
	    n->opens == 0 && (stamp_data_differs(n, st) ||
			      __atomic_exchange_n(&n->changed_outside, false, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&n->lock);
	return retire;
}

static void unlink_locked(struct inode_table *t, struct inode *n)
{
	struct inode **pp = &t->slots[slot_of(n->dev, n->ino, t->size)];

	inode_fh_del(t, n);
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == n) {
			*pp = n->hnext;
			t->count--;
			return;
		}
	}
}

/* Table lock held: @n no longer stands for its name; freed when the kernel forgets it. */
static void retire_locked(struct inode_table *t, struct inode *n)
{
	unlink_locked(t, n);
	n->retired = true;
	n->hnext = t->retired;
	t->retired = n;
}

/* Table lock held: insert a new node for @fd/@st; NULL on ENOMEM. */
static struct inode *insert_locked(struct inode_table *t, int fd, const struct stat *st,
				   const struct file_handle *fh, int mount_fd)
{
	struct inode *n = inode_new(fd, st, fh, mount_fd);
	size_t s;

	if (!n)
		return NULL;
	if (!node_id_assign(&t->ids, n)) {
		n->fd = -1; /* the caller's still: it closes @fd on NULL */
		inode_free(n);
		return NULL;
	}
	n->nlookup = 1;
	if (++t->count > t->size * 2)
		table_grow(t);
	s = slot_of(n->dev, n->ino, t->size);
	n->hnext = t->slots[s];
	t->slots[s] = n;
	inode_fh_add(t, n);
	return n;
}

struct inode *inode_ref(struct accelfs *fs, int fd, const struct stat *st, int *err)
{
	struct inode_table *t = &fs->inodes;
	struct fh_buf fhb;
	int mount_fd = -1;
	const struct file_handle *fh;
	struct inode *n;

	if (st->st_dev == fs->root.dev && st->st_ino == fs->root.ino) {
		close(fd); /* the root reached again through a name (e.g. a bind mount) */
		return &fs->root;
	}
	fh = fd_cache_handle_of(fd, st->st_mode & S_IFMT, &fhb, &mount_fd) ? &fhb.h : NULL;
	pthread_mutex_lock(&t->lock);
	n = find_locked(t, st->st_dev, st->st_ino);
	/* Another handle: the inode number was freed and reused by a new file. */
	if (n && (!fd_cache_handle_equal(n->fh, fh) || must_retire(fs, n, st))) {
		retire_locked(t, n);
		n = NULL;
	}
	if (n) {
		n->nlookup++;
		pthread_mutex_unlock(&t->lock);
		fd_cache_adopt(n, fd);
		inode_note_mode(n, st);
		return n;
	}
	n = insert_locked(t, fd, st, fh, mount_fd);
	pthread_mutex_unlock(&t->lock);
	if (!n) {
		close(fd);
		*err = ENOMEM;
	} else if (n->fh) {
		fd_cache_insert(n); /* the lookup's descriptor serves until the cache evicts it */
	}
	return n;
}

struct inode *inode_ref_known(struct accelfs *fs, const struct stat *st)
{
	struct inode_table *t = &fs->inodes;
	struct inode *n;

	if (st->st_dev == fs->root.dev && st->st_ino == fs->root.ino)
		return &fs->root;
	pthread_mutex_lock(&t->lock);
	n = find_locked(t, st->st_dev, st->st_ino);
	if (n && must_retire(fs, n, st)) { /* as inode_ref() would: must_retire consumes */
		retire_locked(t, n);
		n = NULL;
	}
	if (n)
		n->nlookup++; /* held: it cannot be freed while we look at its descriptor */
	pthread_mutex_unlock(&t->lock);
	if (!n)
		return NULL;
	/* Open now, so open since before @st was taken: a closed one is reopened
	 * only by handle, which fails for an inode freed meanwhile (ESTALE). */
	if (fd_cache_is_open(n)) {
		inode_note_mode(n, st);
		return n;
	}
	inode_unref(fs, n, 1);
	return NULL;
}

int inode_open_id(struct accelfs *fs, fuse_ino_t id)
{
	struct inode_table *t = &fs->inodes;
	struct fh_buf fh;
	struct inode *n;
	int mount_fd, nfd, fd;
	bool ghost = false;

	pthread_mutex_lock(&t->lock);
	n = id == FUSE_ROOT_ID ? NULL : node_id_node(&t->ids, id);
	if (n)
		n->nlookup++; /* held while we take its descriptor */
	else if (id != FUSE_ROOT_ID)
		ghost = node_id_ghost(&t->ids, id, &fh, &mount_fd);
	pthread_mutex_unlock(&t->lock);
	if (n) {
		nfd = inode_fd_get(n);
		fd = INODE_FD_OR(nfd, fcntl(nfd, F_DUPFD_CLOEXEC, 0));
		fd = fd < 0 ? -errno : fd;
		inode_fd_put(n, nfd);
		inode_unref(fs, n, 1);
		return fd;
	}
	if (!ghost)
		return -ENOENT;
	fd = open_by_handle_at(mount_fd, &fh.h, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void inode_mark_stale(struct accelfs *fs, struct inode *n)
{
	if (!__atomic_exchange_n(&n->stale, true, __ATOMIC_RELAXED))
		__atomic_add_fetch(&fs->inodes.stale_marks, 1, __ATOMIC_RELAXED);
}

/* @n's mark, if any, goes (taken by a lookup, or the node freed). */
static bool stale_clear(struct inode_table *t, struct inode *n)
{
	if (!__atomic_exchange_n(&n->stale, false, __ATOMIC_RELAXED))
		return false;
	__atomic_sub_fetch(&t->stale_marks, 1, __ATOMIC_RELAXED);
	return true;
}

bool inode_take_stale(struct accelfs *fs, const struct stat *st)
{
	struct inode_table *t = &fs->inodes;
	struct inode *n;
	bool stale = false;

	if (!__atomic_load_n(&t->stale_marks, __ATOMIC_RELAXED))
		return false; /* every shared-mode lookup asks: no lock when none is marked */
	pthread_mutex_lock(&t->lock);
	n = find_locked(t, st->st_dev, st->st_ino);
	if (n)
		stale = stale_clear(t, n);
	pthread_mutex_unlock(&t->lock);
	return stale;
}

void inode_unref(struct accelfs *fs, struct inode *n, uint64_t count)
{
	struct inode_table *t = &fs->inodes;

	if (n == &fs->root)
		return;
	pthread_mutex_lock(&t->lock);
	if (count > n->nlookup)
		count = n->nlookup; /* never underflow on a confused kernel */
	n->nlookup -= count;
	if (n->nlookup) {
		pthread_mutex_unlock(&t->lock);
		return;
	}
	if (!n->retired) {
		unlink_locked(t, n);
	} else {
		struct inode **pp;

		for (pp = &t->retired; *pp && *pp != n; pp = &(*pp)->hnext)
			;
		if (*pp)
			*pp = n->hnext;
	}
	/* a retired node's file has a newer node: its id is not kept */
	node_id_release(&t->ids, n, !n->retired);
	pthread_mutex_unlock(&t->lock);
	stale_clear(t, n);
	if (t->free_hook) /* the watcher's: its inotify watch, before the node goes */
		t->free_hook(fs, n);
	inode_free(n);
}

void inode_set_free_hook(struct accelfs *fs, void (*fn)(struct accelfs *fs, struct inode *n))
{
	fs->inodes.free_hook = fn;
}

/* For the watchers (watch_ino.c, watch_inval.c): see accelfs_i.h. */
fuse_ino_t inode_find_id(struct accelfs *fs, dev_t dev, ino_t ino, bool changed)
{
	struct inode_table *t = &fs->inodes;
	struct inode *n;
	fuse_ino_t id = 0;

	if (dev == fs->root.dev && ino == fs->root.ino) {
		if (changed)
			xattr_absent_forget(&fs->root);
		return FUSE_ROOT_ID;
	}
	pthread_mutex_lock(&t->lock);
	n = find_locked(t, dev, ino);
	if (n) {
		id = n->nodeid;
		if (changed) {
			__atomic_store_n(&n->changed_outside, true, __ATOMIC_RELAXED);
			xattr_absent_forget(n);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return id;
}

void inode_all_xattrs_changed(struct accelfs *fs)
{
	struct inode_table *t = &fs->inodes;

	xattr_absent_forget(&fs->root);
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->size; i++)
		for (struct inode *n = t->slots[i]; n; n = n->hnext)
			xattr_absent_forget(n);
	pthread_mutex_unlock(&t->lock);
}

size_t inode_all_ids(struct accelfs *fs, fuse_ino_t **out)
{
	struct inode_table *t = &fs->inodes;
	fuse_ino_t *ids;
	size_t cnt = 0;

	pthread_mutex_lock(&t->lock);
	ids = malloc((t->count + 1) * sizeof(*ids));
	if (ids) {
		ids[cnt++] = FUSE_ROOT_ID;
		for (size_t i = 0; i < t->size; i++)
			for (struct inode *n = t->slots[i]; n; n = n->hnext)
				ids[cnt++] = n->nodeid;
	}
	pthread_mutex_unlock(&t->lock);
	*out = ids;
	return cnt;
}
