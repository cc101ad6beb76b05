/* SPDX-License-Identifier: MIT */
/*
 * node_ids.h - the kernel's node ids (node_ids.c): the contract between the
 * inode table (inode.c), which gives and takes them, and the handlers, which
 * turn them back into nodes (inode_get) and answer the kernel's LOOKUP of
 * "." in an id it forgot (an exported handle, FUSE_CAP_EXPORT_SUPPORT).
 *
 * An id is (generation << 32) | slot. A slot freed by FORGET keeps the
 * file's handle (a ghost) until NODE_GHOSTS slots freed after it are
 * waiting, and its next occupant gets the next generation: an id never
 * names another file, and a forgotten one can be looked up again while it
 * is a ghost.
 *
 * Locks: everything but node_id_node() is called under the inode table
 * lock; node_id_node() takes none (slots never move once published).
 */
#ifndef ACCELFS_FUSE_NODE_IDS_H
#define ACCELFS_FUSE_NODE_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "accelfs_i.h"
#include "fd_cache.h"

/* Forgotten nodes whose ids stay valid (their handles are kept). */
#define NODE_GHOSTS 16384

int node_ids_init(struct node_ids *ids);
void node_ids_destroy(struct node_ids *ids);
/* Give @n (new, with dev, ino and fh set) an id: the ghost of its file if
 * there is one, else a slot; false: none left (ENOMEM). */
bool node_id_assign(struct node_ids *ids, struct inode *n);
/* @n is freed: its slot waits, as a ghost of its file if @keep. */
void node_id_release(struct node_ids *ids, struct inode *n, bool keep);
/* The live node with id @id, or NULL. No lock: see the top. */
struct inode *node_id_node(const struct node_ids *ids, fuse_ino_t id);
/* The handle of the ghost with id @id into @fh and its mount descriptor;
 * false: @id names no ghost. */
bool node_id_ghost(const struct node_ids *ids, fuse_ino_t id, struct fh_buf *fh, int *mount_fd);

#endif
