// SPDX-License-Identifier: MIT
/*
 * killpriv.c - what a write or a truncation takes away from a file: its
 * set-user-ID bit, its set-group-ID bit when group execute is set (as
 * setattr_should_drop_suidgid), and its file capabilities (as
 * file_remove_privs), exactly as a local file system does.
 *
 * Who does it depends on what was negotiated at INIT (ops.c):
 * - FUSE_HANDLE_KILLPRIV_V2 (libfuse >= 3.18): the kernel marks the file
 *   system "no setid checks needed" (SB_NOSEC) and so stops sending a
 *   GETXATTR security.capability before every write; in exchange it flags
 *   each WRITE, truncating SETATTR and O_TRUNC OPEN whose caller lacks
 *   CAP_FSETID (fi->kill_suidgid, FUSE_SET_ATTR_KILL_SUID), and the server
 *   removes the bits and the capability.
 * - Otherwise (libfuse 3.14, or a kernel without it) the kernel clears the
 *   bits itself before a cached write (a SETATTR of the mode), but a
 *   direct_io write (kernel_cache=never, O_DIRECT without writeback) reaches
 *   us untouched: the bits are cleared here when the writer is not root.
 * Either way the work is done with the daemon's rights (the writer need not
 * own the file; the kernel has checked its right to write), and costs one
 * atomic load and a clock read when the file has nothing to remove.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "creds.h"

/* The bits of @mode a write by an unprivileged caller clears. */
static mode_t setid_bits(mode_t mode)
{
	mode_t kill = mode & S_ISUID;

	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		kill |= S_ISGID;
	return S_ISREG(mode) ? kill : 0;
}

static int clear_setid(struct accelfs *fs, fuse_ino_t ino, struct inode *n, int fd)
{
	char path[PROC_FD_LEN];
	struct stat st;
	mode_t kill;
	int ret;

	ret = fd >= 0 ? fstat(fd, &st) : fstat(n->fd, &st);
	if (ret)
		return -errno;
	kill = setid_bits(st.st_mode);
	if (kill) {
		ret = fd >= 0 ? fchmod(fd, st.st_mode & 07777 & ~kill)
			      : chmod(proc_fd_path(n->fd, path), st.st_mode & 07777 & ~kill);
		if (ret)
			return -errno;
		st.st_mode &= ~kill;
		/* the kernel's cached mode must not show the bits any more */
		if (ino)
			fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	}
	inode_note_mode(n, &st);
	return 0;
}

/*
 * Remove the set-ID bits (when the node was last seen with some) and, if
 * @caps, security.capability (unless known absent) of @n, through @fd or,
 * if -1, its O_PATH descriptor. @ino: the kernel's node id to refresh its
 * cached mode, 0 when the reply carries the new attributes. 0 or -errno.
 */
int killpriv_now(struct accelfs *fs, fuse_ino_t ino, struct inode *n, int fd, bool caps)
{
	int ret = 0;

	if (__atomic_load_n(&n->setid, __ATOMIC_RELAXED))
		ret = clear_setid(fs, ino, n, fd);
	if (!ret && caps)
		ret = xattr_caps_kill(fs, n, fd);
	return ret;
}

/*
 * Whether a WRITE must remove privileges: with killpriv_v2 the kernel says
 * so; without, only a direct_io write by a user other than root reaches us
 * with bits to clear (the kernel cleared them before a cached write, and the
 * writes its write-back sends, writepage, were checked when the application
 * wrote).
 */
static bool write_asks_kill(fuse_req_t req, const struct fuse_file_info *fi)
{
#ifdef ACCEL_HAVE_KILLPRIV_V2
	struct accelfs *fs = fuse_req_userdata(req);

	if (fs->killpriv_v2)
		return fi->kill_suidgid;
#endif
	return !fi->writepage && creds_unprivileged(req);
}

/*
 * Before a WRITE of @of. A failure is logged, not returned: the data is the
 * caller's, and a local file system would not refuse the write either.
 */
void killpriv_on_write(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		       struct open_file *of)
{
	struct accelfs *fs = fuse_req_userdata(req);
	int ret;

	if (!write_asks_kill(req, fi))
		return;
	ret = killpriv_now(fs, ino, of->inode, of->fd, fs->killpriv_v2);
	if (ret)
		log_msg(LOG_WARNING, "inode %llu: cannot clear set-ID bits or capabilities: %s",
			(unsigned long long)of->inode->ino, strerror(-ret));
}

/* The SETATTR or OPEN flag that asks the server to kill (killpriv_v2 only). */
bool killpriv_setattr_asked(struct accelfs *fs, int valid)
{
#ifdef ACCEL_HAVE_KILLPRIV_V2
	return fs->killpriv_v2 && (valid & FUSE_SET_ATTR_KILL_SUID);
#else
	(void)fs;
	(void)valid;
	return false;
#endif
}

bool killpriv_open_asked(struct accelfs *fs, const struct fuse_file_info *fi)
{
#ifdef ACCEL_HAVE_KILLPRIV_V2
	return fs->killpriv_v2 && fi->kill_suidgid;
#else
	(void)fs;
	(void)fi;
	return false;
#endif
}
