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
 * Its lock (index_lock) is a leaf: inode.c adds and removes nodes under the
 * table lock (table lock -> index_lock); the watcher takes it alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accelfs_i.h"

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inode **index_tab;    /* chains through fhnext; index_lock */
static size_t index_size;	    /* power of two, 0 before the first add; index_lock */
static size_t index_count;	    /* index_lock */
static struct file_handle *root_fh; /* SOURCE's root; set before the watcher starts */

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
static void index_grow(void)
{
	size_t nsize = index_size ? index_size * 2 : 4096;
	struct inode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (size_t i = 0; i < index_size; i++) {
		struct inode *n, *next;

		for (n = index_tab[i]; n; n = next) {
			size_t s = fh_slot(n->fh, nsize);

			next = n->fhnext;
			n->fhnext = nt[s];
			nt[s] = n;
		}
	}
	free(index_tab);
	index_tab = nt;
	index_size = nsize;
}

void inode_fh_add(struct inode *n)
{
	size_t s;

	if (!n->fh)
		return;
	pthread_mutex_lock(&index_lock);
	if (index_count >= index_size * 2)
		index_grow();
	if (index_size) {
		s = fh_slot(n->fh, index_size);
		n->fhnext = index_tab[s];
		index_tab[s] = n;
		n->fh_indexed = true;
		index_count++;
	}
	pthread_mutex_unlock(&index_lock);
}

void inode_fh_del(struct inode *n)
{
	struct inode **pp;

	if (!n->fh_indexed)
		return;
	pthread_mutex_lock(&index_lock);
	for (pp = &index_tab[fh_slot(n->fh, index_size)]; *pp; pp = &(*pp)->fhnext) {
		if (*pp == n) {
			*pp = n->fhnext;
			index_count--;
			break;
		}
	}
	n->fh_indexed = false;
	pthread_mutex_unlock(&index_lock);
}

int inode_fh_set_root(const struct file_handle *fh)
{
	root_fh = malloc(sizeof(*fh) + fh->handle_bytes);
	if (!root_fh)
		return -ENOMEM;
	memcpy(root_fh, fh, sizeof(*fh) + fh->handle_bytes);
	return 0;
}

fuse_ino_t inode_fh_find(const struct file_handle *fh, bool changed, pid_t *pt_writer)
{
	fuse_ino_t ino = 0;
	struct inode *n;

	if (root_fh && fh_equal(fh, root_fh))
		return FUSE_ROOT_ID;
	pthread_mutex_lock(&index_lock);
	if (index_size)
		for (n = index_tab[fh_slot(fh, index_size)]; n && !ino; n = n->fhnext)
			if (fh_equal(n->fh, fh)) {
				ino = (fuse_ino_t)(uintptr_t)n;
				/* indexed, so not freed (inode_fh_del comes first) */
				if (changed)
					__atomic_store_n(&n->changed_outside, true,
							 __ATOMIC_RELAXED);
				if (pt_writer)
					*pt_writer =
					    __atomic_load_n(&n->pt_writer, __ATOMIC_RELAXED);
			}
	pthread_mutex_unlock(&index_lock);
	return ino;
}

void inode_fh_destroy(void)
{
	pthread_mutex_lock(&index_lock);
	free(index_tab);
	index_tab = NULL;
	index_size = index_count = 0;
	pthread_mutex_unlock(&index_lock);
	free(root_fh);
	root_fh = NULL;
}
