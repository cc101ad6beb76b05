// SPDX-License-Identifier: MIT
/*
 * test_node_ids.c - the kernel's node ids (fuse/node_ids.c): an id names one
 * file for as long as it is known or a ghost, a forgotten file takes its id
 * again, an id never names another file, and ghosts are bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "node_ids.h"

/* fd_cache.c's, which the unit does not link */
bool fd_cache_handle_equal(const struct file_handle *a, const struct file_handle *b)
{
	if (!a || !b)
		return a == b;
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/* A node of inode @ino whose handle is @tag (0: none), as inode.c makes them. */
static struct inode *node(ino_t ino, unsigned int tag)
{
	struct inode *n = calloc(1, sizeof(*n));

	n->dev = 7;
	n->ino = ino;
	n->mount_fd = 3;
	if (tag) {
		n->fh = calloc(1, sizeof(*n->fh) + 8);
		n->fh->handle_bytes = 8;
		n->fh->handle_type = 1;
		memcpy(n->fh->f_handle, &tag, sizeof(tag));
	}
	return n;
}

static void node_free(struct inode *n)
{
	free(n->fh);
	free(n);
}

static void test_ids(void)
{
	struct node_ids ids;
	struct inode *a = node(10, 100), *b = node(11, 101);
	fuse_ino_t ida, idb;

	CU_ASSERT_EQUAL_FATAL(node_ids_init(&ids), 0);
	CU_ASSERT_TRUE(node_id_assign(&ids, a));
	CU_ASSERT_TRUE(node_id_assign(&ids, b));
	ida = a->nodeid;
	idb = b->nodeid;
	CU_ASSERT(ida > FUSE_ROOT_ID && idb > FUSE_ROOT_ID && ida != idb);
	CU_ASSERT_PTR_EQUAL(node_id_node(&ids, ida), a);
	CU_ASSERT_PTR_EQUAL(node_id_node(&ids, idb), b);
	/* ids the table never gave name nothing (no dereference of garbage) */
	CU_ASSERT_PTR_NULL(node_id_node(&ids, 0));
	CU_ASSERT_PTR_NULL(node_id_node(&ids, ida + ((fuse_ino_t)1 << 32)));
	CU_ASSERT_PTR_NULL(node_id_node(&ids, 0xffffffffULL));
	CU_ASSERT_PTR_NULL(node_id_node(&ids, 5000));
	node_ids_destroy(&ids);
	node_free(a);
	node_free(b);
}

static void test_ghost_revived(void)
{
	struct node_ids ids;
	struct inode *a = node(10, 100), *again = node(10, 100), *reused = node(10, 200);
	struct fh_buf fh;
	int mfd = -1;
	fuse_ino_t ida;

	CU_ASSERT_EQUAL_FATAL(node_ids_init(&ids), 0);
	CU_ASSERT_TRUE(node_id_assign(&ids, a));
	ida = a->nodeid;
	node_id_release(&ids, a, true);
	/* forgotten: no live node, but the ghost keeps the handle */
	CU_ASSERT_PTR_NULL(node_id_node(&ids, ida));
	CU_ASSERT_TRUE(node_id_ghost(&ids, ida, &fh, &mfd));
	CU_ASSERT_EQUAL(mfd, 3);
	CU_ASSERT_TRUE(fd_cache_handle_equal(&fh.h, a->fh));
	CU_ASSERT_FALSE(node_id_ghost(&ids, ida + ((fuse_ino_t)1 << 32), &fh, &mfd));
	/* the same file found again by name takes its old id */
	CU_ASSERT_TRUE(node_id_assign(&ids, again));
	CU_ASSERT_EQUAL(again->nodeid, ida);
	CU_ASSERT_PTR_EQUAL(node_id_node(&ids, ida), again);
	CU_ASSERT_FALSE(node_id_ghost(&ids, ida, &fh, &mfd));
	node_id_release(&ids, again, true);
	/* the inode number reused by another file (another handle): a new id */
	CU_ASSERT_TRUE(node_id_assign(&ids, reused));
	CU_ASSERT_NOT_EQUAL(reused->nodeid, ida);
	CU_ASSERT_TRUE(node_id_ghost(&ids, ida, &fh, &mfd));
	node_ids_destroy(&ids);
	node_free(a);
	node_free(again);
	node_free(reused);
}

static void test_not_kept(void)
{
	struct node_ids ids;
	struct inode *a = node(10, 100), *nofh = node(12, 0), *again = node(10, 100);
	struct fh_buf fh;
	int mfd;
	fuse_ino_t ida;

	CU_ASSERT_EQUAL_FATAL(node_ids_init(&ids), 0);
	CU_ASSERT_TRUE(node_id_assign(&ids, a));
	CU_ASSERT_TRUE(node_id_assign(&ids, nofh));
	ida = a->nodeid;
	node_id_release(&ids, a, false); /* retired: a newer node has the file */
	node_id_release(&ids, nofh, true);
	CU_ASSERT_FALSE(node_id_ghost(&ids, ida, &fh, &mfd));
	CU_ASSERT_FALSE(node_id_ghost(&ids, nofh->nodeid, &fh, &mfd));
	CU_ASSERT_TRUE(node_id_assign(&ids, again));
	CU_ASSERT_NOT_EQUAL(again->nodeid, ida);
	node_ids_destroy(&ids);
	node_free(a);
	node_free(nofh);
	node_free(again);
}

/* Past NODE_GHOSTS, the oldest ghost's slot is reused with a new generation. */
static void test_ghosts_bounded(void)
{
	struct node_ids ids;
	const unsigned int total = NODE_GHOSTS + 2;
	struct inode **v = calloc(total, sizeof(*v));
	struct inode *late = node(1000000, 999999);
	struct fh_buf fh;
	int mfd;

	CU_ASSERT_EQUAL_FATAL(node_ids_init(&ids), 0);
	for (unsigned int i = 0; i < total; i++) {
		v[i] = node(100 + i, i + 1);
		CU_ASSERT_TRUE(node_id_assign(&ids, v[i]));
	}
	for (unsigned int i = 0; i < total; i++)
		node_id_release(&ids, v[i], true);
	CU_ASSERT_TRUE(node_id_ghost(&ids, v[0]->nodeid, &fh, &mfd));
	CU_ASSERT_TRUE(node_id_assign(&ids, late));
	/* the oldest ghost's slot, one generation on */
	CU_ASSERT_EQUAL((uint32_t)late->nodeid, (uint32_t)v[0]->nodeid);
	CU_ASSERT_NOT_EQUAL(late->nodeid, v[0]->nodeid);
	CU_ASSERT_FALSE(node_id_ghost(&ids, v[0]->nodeid, &fh, &mfd));
	CU_ASSERT_PTR_NULL(node_id_node(&ids, v[0]->nodeid));
	CU_ASSERT_PTR_EQUAL(node_id_node(&ids, late->nodeid), late);
	/* the newer ghosts are still there */
	CU_ASSERT_TRUE(node_id_ghost(&ids, v[1]->nodeid, &fh, &mfd));
	CU_ASSERT_TRUE(node_id_ghost(&ids, v[total - 1]->nodeid, &fh, &mfd));
	node_ids_destroy(&ids);
	for (unsigned int i = 0; i < total; i++)
		node_free(v[i]);
	free(v);
	node_free(late);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("node_ids", NULL, NULL);
	CU_add_test(s, "ids name live nodes only", test_ids);
	CU_add_test(s, "a forgotten file keeps its id", test_ghost_revived);
	CU_add_test(s, "retired and handle-less nodes leave no ghost", test_not_kept);
	CU_add_test(s, "ghosts are bounded", test_ghosts_bounded);
	return cunit_run();
}
