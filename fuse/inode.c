// SPDX-License-Identifier: MIT
/*
 * inode.c - the table of backing inodes the kernel holds references to.
 *
 * A chained hash on (st_dev, st_ino) under one mutex. The table is touched by
 * lookup, create and forget, never by read or write, so one lock is enough;
 * it doubles when it gets crowded so chains stay short for trees with
 * millions of names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "accelfs_i.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inode **table;  /* under table_lock */
static size_t table_size;     /* power of two; under table_lock */
static size_t table_count;    /* under table_lock */
static struct inode *retired; /* retired nodes the kernel still holds, via hnext; table_lock */

static size_t slot_of(dev_t dev, ino_t ino, size_t size)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> 17) & (size - 1);
}

int inode_table_init(void)
{
	table_size = 4096;
	table = calloc(table_size, sizeof(*table));
	return table ? 0 : -ENOMEM;
}

/* The node's descriptors and locks go with it (nobody else holds it now). */
static void inode_free(struct inode *n)
{
	close(n->fd);
	if (n->wb_fd >= 0)
		close(n->wb_fd);
	pthread_mutex_destroy(&n->lock);
	pthread_mutex_destroy(&n->wb_lock);
	free(n);
}

void inode_table_destroy(void)
{
	size_t i;

	for (i = 0; i < table_size; i++) {
		struct inode *n, *next;

		for (n = table[i]; n; n = next) {
			next = n->hnext;
			inode_free(n);
		}
	}
	while (retired) {
		struct inode *n = retired;

		retired = n->hnext;
		inode_free(n);
	}
	free(table);
	table = NULL;
	table_count = 0;
}

/* Double the table; on allocation failure keep the old one (chains just grow). */
static void table_grow(void)
{
	size_t i, nsize = table_size * 2;
	struct inode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (i = 0; i < table_size; i++) {
		struct inode *n, *next;

		for (n = table[i]; n; n = next) {
			size_t s = slot_of(n->dev, n->ino, nsize);

			next = n->hnext;
			n->hnext = nt[s];
			nt[s] = n;
		}
	}
	free(table);
	table = nt;
	table_size = nsize;
}

struct inode *inode_get(fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &accelfs.root;
	return (struct inode *)(uintptr_t)ino;
}

static struct inode *find_locked(dev_t dev, ino_t ino)
{
	struct inode *n;

	for (n = table[slot_of(dev, ino, table_size)]; n; n = n->hnext)
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

static struct inode *inode_new(int fd, const struct stat *st)
{
	struct inode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->fd = fd;
	n->wb_fd = -1;
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->type = st->st_mode & S_IFMT;
	pthread_mutex_init(&n->lock, NULL);
	pthread_mutex_init(&n->wb_lock, NULL);
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
static bool must_retire(struct inode *n, const struct stat *st)
{
	bool retire;

	if (!accelfs.opts.writeback || accelfs.opts.kernel_cache != KERNEL_CACHE_AUTO ||
	    !S_ISREG(st->st_mode))
		return false;
	/* Data only: our own metadata changes (link, chmod, xattrs) move ctime. */
	pthread_mutex_lock(&n->lock);
	retire = n->opens == 0 && n->stamp_valid &&
		 (n->stamp_size != st->st_size || n->stamp_mtime.tv_sec != st->st_mtim.tv_sec ||
		  n->stamp_mtime.tv_nsec != st->st_mtim.tv_nsec);
	pthread_mutex_unlock(&n->lock);
	return retire;
}

static void unlink_locked(struct inode *n)
{
	struct inode **pp = &table[slot_of(n->dev, n->ino, table_size)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == n) {
			*pp = n->hnext;
			table_count--;
			return;
		}
	}
}

struct inode *inode_ref(int fd, const struct stat *st, int *err)
{
	struct inode *n;
	size_t s;

	if (st->st_dev == accelfs.root.dev && st->st_ino == accelfs.root.ino) {
		close(fd); /* the root reached again through a name (e.g. a bind mount) */
		return &accelfs.root;
	}
	pthread_mutex_lock(&table_lock);
	n = find_locked(st->st_dev, st->st_ino);
	if (n && must_retire(n, st)) {
		unlink_locked(n);
		n->retired = true; /* freed when the kernel forgets it */
		n->hnext = retired;
		retired = n;
		n = NULL;
	}
	if (n) {
		n->nlookup++;
		pthread_mutex_unlock(&table_lock);
		close(fd);
		inode_note_mode(n, st);
		return n;
	}
	n = inode_new(fd, st);
	if (!n) {
		pthread_mutex_unlock(&table_lock);
		close(fd);
		*err = ENOMEM;
		return NULL;
	}
	n->nlookup = 1;
	if (++table_count > table_size * 2)
		table_grow();
	s = slot_of(n->dev, n->ino, table_size);
	n->hnext = table[s];
	table[s] = n;
	pthread_mutex_unlock(&table_lock);
	return n;
}

void inode_unref(struct inode *n, uint64_t count)
{
	if (n == &accelfs.root)
		return;
	pthread_mutex_lock(&table_lock);
	if (count > n->nlookup)
		count = n->nlookup; /* never underflow on a confused kernel */
	n->nlookup -= count;
	if (n->nlookup) {
		pthread_mutex_unlock(&table_lock);
		return;
	}
	if (!n->retired) {
		unlink_locked(n);
	} else {
		struct inode **pp;

		for (pp = &retired; *pp && *pp != n; pp = &(*pp)->hnext)
			;
		if (*pp)
			*pp = n->hnext;
	}
	pthread_mutex_unlock(&table_lock);
	inode_free(n);
}

const char *proc_fd_path(int fd, char *buf)
{
	snprintf(buf, PROC_FD_LEN, "/proc/self/fd/%d", fd);
	return buf;
}

void handle_list_add(struct handle_link *head, struct handle_link *h, pthread_mutex_t *lock)
{
	pthread_mutex_lock(lock);
	if (!head->next)
		head->next = head->prev = head;
	h->next = head->next;
	h->prev = head;
	head->next->prev = h;
	head->next = h;
	pthread_mutex_unlock(lock);
}

void handle_list_del(struct handle_link *h, pthread_mutex_t *lock)
{
	pthread_mutex_lock(lock);
	h->prev->next = h->next;
	h->next->prev = h->prev;
	pthread_mutex_unlock(lock);
}
