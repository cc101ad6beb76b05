// SPDX-License-Identifier: MIT
/*
 * watch_inval.c - what a change in SOURCE makes the kernel forget.
 *
 * A name that appeared, went or moved: the entry (parent, name), whatever
 * the kernel cached for it (a negative entry too), and the directory's
 * attributes and cached listing (ops_dir.c caches listings while a watcher
 * runs). Attributes: the node's attributes. Data: its attributes and
 * page cache, and the buffer pool's buckets of the file for the handles
 * open on it (they revalidate at their next read; a later open compares the
 * pool's validator anyway).
 *
 * With the writeback cache the kernel keeps a regular file's size and times
 * as its own and ignores ours even after an invalidation, so a changed
 * regular file's name is invalidated as well: the next lookup finds the
 * file changed and gives it a new node (must_retire, inode.c), which the
 * kernel then reads fresh.
 *
 * Deadlock: a notification may wait in the kernel for something a FUSE
 * request in flight holds, and that request for a worker; so notifications
 * are sent only from the watcher thread, holding no lock of the daemon.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "open_files.h"
#include "probes.h"
#include "watch_i.h"

enum { INVAL_ENTRY = 1, INVAL_ATTR = 2, INVAL_DATA = 3, INVAL_ALL = 4 };

static void counted(struct accelfs *fs, int kind, fuse_ino_t ino, int ret)
{
	(void)ret; /* -ENOENT: the kernel did not hold it, which is fine */
	__atomic_add_fetch(&fs->watch.counters.invalidations, 1, __ATOMIC_RELAXED);
	ACCEL_PROBE2(watch_invalidate, kind, (uint64_t)ino);
}

static void inval_entry(struct accelfs *fs, fuse_ino_t parent, const char *name)
{
	counted(fs, INVAL_ENTRY, parent,
		fuse_lowlevel_notify_inval_entry(fs->se, parent, name, strlen(name)));
}

static void inval_inode(struct accelfs *fs, fuse_ino_t ino, bool data)
{
	counted(fs, data ? INVAL_DATA : INVAL_ATTR, ino,
		fuse_lowlevel_notify_inval_inode(fs->se, ino, data ? 0 : -1, 0));
}

/* Open handles of @arg's node (NULL: all) re-check the pool at their next read. */
static void mark_changed(struct open_file *of, void *arg)
{
	if (!arg || of->inode->nodeid == *(fuse_ino_t *)arg)
		__atomic_store_n(&of->changed, true, __ATOMIC_RELAXED);
}

/*
 * A write of @c's process through the kernel passthrough handle it opened
 * on the mount: the kernel has grown the size and invalidated the times
 * itself, and the file has no pages in FUSE's cache. Telling it again is a
 * notification per write of every program writing through passthrough.
 * The same process writing SOURCE directly meanwhile is not told apart;
 * another process, or another thread of a multi-threaded opener (FUSE names
 * the thread, fanotify the process), gets the invalidation.
 */
static bool own_passthrough_write(const struct watch_change *c)
{
	return c->what == WATCH_DATA && c->ino && c->pid && c->pid == c->pt_writer;
}

void watch_apply(struct accelfs *fs, const struct watch_change *c)
{
	bool data = c->what & WATCH_DATA;

	__atomic_add_fetch(&fs->watch.counters.events, 1, __ATOMIC_RELAXED);
	if (own_passthrough_write(c))
		return;
	if ((c->what & WATCH_NAME) && c->parent && c->name) {
		inval_entry(fs, c->parent, c->name);
		inval_inode(fs, c->parent, true); /* its attributes and cached listing */
	}
	if (!(c->what & (WATCH_ATTR | WATCH_DATA)))
		return;
	if (c->ino) {
		inval_inode(fs, c->ino, data);
		if (data) {
			fuse_ino_t ino = c->ino;

			open_files_foreach(fs, mark_changed, &ino);
		}
	}
	/* Also when the object is not (or no longer) in the index: the name
	 * may still lead the kernel to a retired node of it. */
	if (__atomic_load_n(&fs->opts.writeback, __ATOMIC_RELAXED) && !c->dir && c->parent &&
	    c->name)
		inval_entry(fs, c->parent, c->name);
}

/*
 * Events were lost: every node's attributes and pages, and every name the
 * kernel caches (the connection's epoch, kernel >= 6.16 with libfuse >=
 * 3.18; without it names stay cached until their timeout, docs/design.md).
 */
void watch_overflow(struct accelfs *fs)
{
	fuse_ino_t *ids;
	size_t n = inode_all_ids(fs, &ids);

	__atomic_add_fetch(&fs->watch.counters.overflows, 1, __ATOMIC_RELAXED);
#if FUSE_MAJOR_VERSION > 3 || (FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION >= 18)
	counted(fs, INVAL_ALL, 0, fuse_lowlevel_notify_increment_epoch(fs->se));
#endif
	inode_all_xattrs_changed(fs); /* names known absent (ops_xattr.c) */
	for (size_t i = 0; ids && i < n; i++)
		inval_inode(fs, ids[i], true);
	free(ids);
	open_files_foreach(fs, mark_changed, NULL);
}
