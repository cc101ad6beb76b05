// SPDX-License-Identifier: MIT
/*
 * inode_fh.c - the inode table's second index: file handle -> node id.
 *
 * The watcher (watch.c) learns of a change in SOURCE as file handles
 * (fanotify's FAN_REPORT_FID / FAN_REPORT_DFID_NAME), the same encoding
 * name_to_handle_at() gave the node at lookup (inode.c). This index turns
 * such a handle into the kernel's node id without a system call, also for a
 * file that is already gone. It holds node ids, never pointers it
 * dereferences: a caller may use an id after the node was forgotten, and the
 * kernel answers a notification about an unknown id with ENOENT.
 *
 * Its lock (fh_index.lock, the table's) is a leaf: inode.c adds and removes nodes under the
 * table lock (table lock -> index lock); the watcher takes it alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accelfs_i.h"

static size_t fh_slot(const struct file_handle *fh, size_t size)
{
	uint64_t h = 1469598103934665603ULL ^ (uint32_t)fh->handle_type;

	for (unsigned int i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 1099511628211ULL;
	return (size_t)(h ^ h >> 29) & (size - 1);
}

static bool fh_equal(const struct file_handle *a, const struct file_handle *b)
{
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/* Double (or create) the index; on ENOMEM keep the old one (chains grow). */
static void index_grow(struct fh_index *x)
{
	size_t nsize = x->size ? x->size * 2 : 4096;
	struct inode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (size_t i = 0; i < x->size; i++) {
		struct inode *n, *next;

		for (n = x->tab[i]; n; n = next) {
			size_t s = fh_slot(n->fh, nsize);

			next = n->fhnext;
			n->fhnext = nt[s];
			nt[s] = n;
		}
	}
	free(x->tab);
	x->tab = nt;
	x->size = nsize;
}

void inode_fh_add(struct inode_table *t, struct inode *n)
{
	struct fh_index *x = &t->fh;
	size_t s;

	if (!n->fh)
		return;
	pthread_mutex_lock(&x->lock);
	if (x->count >= x->size * 2)
		index_grow(x);
	if (x->size) {
		s = fh_slot(n->fh, x->size);
		n->fhnext = x->tab[s];
		x->tab[s] = n;
		n->fh_indexed = true;
		x->count++;
	}
	pthread_mutex_unlock(&x->lock);
}

void inode_fh_del(struct inode_table *t, struct inode *n)
{
	struct fh_index *x = &t->fh;
	struct inode **pp;

	if (!n->fh_indexed)
		return;
	pthread_mutex_lock(&x->lock);
	for (pp = &x->tab[fh_slot(n->fh, x->size)]; *pp; pp = &(*pp)->fhnext) {
		if (*pp == n) {
			*pp = n->fhnext;
			x->count--;
			break;
		}
	}
	n->fh_indexed = false;
	pthread_mutex_unlock(&x->lock);
}

int inode_fh_set_root(struct inode_table *t, const struct file_handle *fh)
{
	struct fh_index *x = &t->fh;

	x->root = malloc(sizeof(*fh) + fh->handle_bytes);
	if (!x->root)
		return -ENOMEM;
	memcpy(x->root, fh, sizeof(*fh) + fh->handle_bytes);
	return 0;
}

fuse_ino_t inode_fh_find(struct inode_table *t, const struct file_handle *fh, bool changed,
			 pid_t *pt_writer)
{
	struct fh_index *x = &t->fh;
	fuse_ino_t ino = 0;
	struct inode *n;

	if (x->root && fh_equal(fh, x->root))
		return FUSE_ROOT_ID;
	pthread_mutex_lock(&x->lock);
	if (x->size)
		for (n = x->tab[fh_slot(fh, x->size)]; n && !ino; n = n->fhnext)
			if (fh_equal(n->fh, fh)) {
				ino = n->nodeid;
				/* indexed, so not freed (inode_fh_del comes first) */
				if (changed) {
					__atomic_store_n(&n->changed_outside, true,
							 __ATOMIC_RELAXED);
					xattr_absent_forget(n);
				}
				if (pt_writer)
					*pt_writer =
					    __atomic_load_n(&n->pt_writer, __ATOMIC_RELAXED);
			}
	pthread_mutex_unlock(&x->lock);
	return ino;
}

void inode_fh_destroy(struct inode_table *t)
{
	struct fh_index *x = &t->fh;

	pthread_mutex_lock(&x->lock);
	free(x->tab);
	x->tab = NULL;
	x->size = x->count = 0;
	pthread_mutex_unlock(&x->lock);
	free(x->root);
	x->root = NULL;
}
