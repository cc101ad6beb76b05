// SPDX-License-Identifier: MIT
/*
 * node_ids.c - the kernel's node ids: slots with generations, and the
 * ghosts of forgotten nodes (node_ids.h).
 *
 * Why not the node's address, as libfuse's examples do: a handle exported
 * from the mount (name_to_handle_at, an NFS export) holds the node id, and
 * once the kernel has forgotten the node it asks for that id again with a
 * LOOKUP of "." (fs/fuse/inode.c, fuse_get_dentry). An address then names
 * freed memory, or another file's node. So an id is a slot index and the
 * slot's generation; the slot of a freed node keeps the file's handle (on
 * SOURCE) as a ghost, which the LOOKUP of "." reopens, and a later lookup
 * of the same file by name takes the ghost's id again, so a file keeps one
 * id for as long as it is known or a ghost. Slots are reused oldest-freed
 * first, and only while NODE_GHOSTS freed slots are waiting; the next
 * occupant's generation is one more, so an old id never names it.
 *
 * Slots live in chunks of NODE_ID_CHUNK, published once and never moved or
 * freed before the table, so node_id_node() reads them with no lock (the
 * read and write path turn every request's id into its node). The rest is
 * under the inode table lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "node_ids.h"

#define NODE_ID_CHUNK_BITS 12
#define NODE_ID_CHUNK (1U << NODE_ID_CHUNK_BITS)
#define NODE_ID_CHUNKS (1U << 16) /* 2^28 slots */
#define NODE_ID_FIRST 2		  /* 0 is no node, 1 the root */
#define NONE UINT32_MAX
#define GHOST_BUCKETS NODE_GHOSTS /* power of two */

struct node_slot {
	struct inode *node;  /* atomic: the live node, or NULL */
	uint32_t gen;	     /* of the id the slot gives now (or gave last, if free) */
	uint32_t prev, next; /* the free list, oldest first, while free */
	uint32_t gnext;	     /* ghost chain, while a ghost */
	bool free;
	/* a ghost: the forgotten file, to reopen (mount_fd is the handle mount's,
	 * open until the table goes: fd_cache.c) */
	struct file_handle *fh;
	int mount_fd;
	dev_t dev;
	ino_t ino;
};

static struct node_slot *slot_at(const struct node_ids *ids, uint32_t i)
{
	struct node_slot *c;

	if (i >> NODE_ID_CHUNK_BITS >= NODE_ID_CHUNKS)
		return NULL;
	c = __atomic_load_n(&ids->chunks[i >> NODE_ID_CHUNK_BITS], __ATOMIC_ACQUIRE);
	return c ? &c[i & (NODE_ID_CHUNK - 1)] : NULL;
}

static fuse_ino_t id_of(uint32_t i, uint32_t gen)
{
	return (fuse_ino_t)gen << 32 | i;
}

static size_t ghost_bucket(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> 20) & (GHOST_BUCKETS - 1);
}

int node_ids_init(struct node_ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	ids->chunks = calloc(NODE_ID_CHUNKS, sizeof(*ids->chunks));
	ids->ghosts = malloc(GHOST_BUCKETS * sizeof(*ids->ghosts));
	if (!ids->chunks || !ids->ghosts) {
		free(ids->chunks);
		free(ids->ghosts);
		return -ENOMEM;
	}
	for (size_t b = 0; b < GHOST_BUCKETS; b++)
		ids->ghosts[b] = NONE;
	ids->next = NODE_ID_FIRST;
	ids->head = ids->tail = NONE;
	return 0;
}

void node_ids_destroy(struct node_ids *ids)
{
	if (!ids->chunks)
		return;
	for (uint32_t c = 0; c < NODE_ID_CHUNKS && ids->chunks[c]; c++) {
		for (uint32_t i = 0; i < NODE_ID_CHUNK; i++)
			free(ids->chunks[c][i].fh);
		free(ids->chunks[c]);
	}
	free(ids->chunks);
	free(ids->ghosts);
	memset(ids, 0, sizeof(*ids));
}

/* Unchain ghost slot @i (its handle goes). */
static void ghost_drop(struct node_ids *ids, uint32_t i)
{
	struct node_slot *s = slot_at(ids, i);
	uint32_t *pp = &ids->ghosts[ghost_bucket(s->dev, s->ino)];

	if (!s->fh)
		return;
	while (*pp != NONE && *pp != i)
		pp = &slot_at(ids, *pp)->gnext;
	if (*pp == i)
		*pp = s->gnext;
	free(s->fh);
	s->fh = NULL;
}

/* Take free slot @i off the free list. */
static void free_unlink(struct node_ids *ids, uint32_t i)
{
	struct node_slot *s = slot_at(ids, i);

	if (s->prev == NONE)
		ids->head = s->next;
	else
		slot_at(ids, s->prev)->next = s->next;
	if (s->next == NONE)
		ids->tail = s->prev;
	else
		slot_at(ids, s->next)->prev = s->prev;
	s->free = false;
	ids->nfree--;
}

/* The ghost of @n's file (same inode and handle), or NONE. */
static uint32_t ghost_find(const struct node_ids *ids, const struct inode *n)
{
	uint32_t i = ids->ghosts[ghost_bucket(n->dev, n->ino)];

	for (; i != NONE; i = slot_at(ids, i)->gnext) {
		const struct node_slot *s = slot_at(ids, i);

		if (s->dev == n->dev && s->ino == n->ino && fd_cache_handle_equal(s->fh, n->fh))
			return i;
	}
	return NONE;
}

/* A slot never used, its chunk made if need be; NONE when out of memory or slots. */
static uint32_t slot_fresh(struct node_ids *ids)
{
	uint32_t i = ids->next, c = i >> NODE_ID_CHUNK_BITS;
	struct node_slot *chunk;

	if (c >= NODE_ID_CHUNKS)
		return NONE;
	if (!ids->chunks[c]) {
		chunk = calloc(NODE_ID_CHUNK, sizeof(*chunk));
		if (!chunk)
			return NONE;
		__atomic_store_n(&ids->chunks[c], chunk, __ATOMIC_RELEASE);
	}
	ids->next++;
	slot_at(ids, i)->gen = 1;
	return i;
}

bool node_id_assign(struct node_ids *ids, struct inode *n)
{
	uint32_t i = n->fh ? ghost_find(ids, n) : NONE;
	struct node_slot *s;

	if (i != NONE) { /* the file's forgotten id, again */
		s = slot_at(ids, i);
		free_unlink(ids, i);
		ghost_drop(ids, i);
	} else if (ids->nfree > NODE_GHOSTS) { /* the oldest ghost goes */
		i = ids->head;
		s = slot_at(ids, i);
		free_unlink(ids, i);
		ghost_drop(ids, i);
		if (++s->gen == 0)
			s->gen = 1;
	} else {
		i = slot_fresh(ids);
		if (i == NONE)
			return false;
		s = slot_at(ids, i);
	}
	n->nodeid = id_of(i, s->gen);
	__atomic_store_n(&s->node, n, __ATOMIC_RELEASE);
	return true;
}

void node_id_release(struct node_ids *ids, struct inode *n, bool keep)
{
	uint32_t i = (uint32_t)n->nodeid;
	struct node_slot *s = slot_at(ids, i);
	size_t b;

	if (!s || s->node != n)
		return;
	__atomic_store_n(&s->node, NULL, __ATOMIC_RELEASE);
	if (keep && n->fh) {
		s->fh = malloc(sizeof(*n->fh) + n->fh->handle_bytes);
		if (s->fh) {
			memcpy(s->fh, n->fh, sizeof(*n->fh) + n->fh->handle_bytes);
			s->mount_fd = n->mount_fd;
			s->dev = n->dev;
			s->ino = n->ino;
			b = ghost_bucket(s->dev, s->ino);
			s->gnext = ids->ghosts[b];
			ids->ghosts[b] = i;
		}
	}
	s->free = true;
	s->next = NONE;
	s->prev = ids->tail;
	if (ids->tail == NONE)
		ids->head = i;
	else
		slot_at(ids, ids->tail)->next = i;
	ids->tail = i;
	ids->nfree++;
}

struct inode *node_id_node(const struct node_ids *ids, fuse_ino_t id)
{
	struct node_slot *s = slot_at(ids, (uint32_t)id);
	struct inode *n = s ? __atomic_load_n(&s->node, __ATOMIC_ACQUIRE) : NULL;

	return n && n->nodeid == id ? n : NULL;
}

bool node_id_ghost(const struct node_ids *ids, fuse_ino_t id, struct fh_buf *fh, int *mount_fd)
{
	const struct node_slot *s = slot_at(ids, (uint32_t)id);

	if (!s || !s->free || !s->fh || s->gen != (uint32_t)(id >> 32))
		return false;
	memcpy(&fh->h, s->fh, sizeof(*s->fh) + s->fh->handle_bytes);
	*mount_fd = s->mount_fd;
	return true;
}
