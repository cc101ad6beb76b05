// SPDX-License-Identifier: MIT
/*
 * ops_xattr.c - extended attributes, passed to the backing object.
 *
 * An O_PATH descriptor cannot carry f*xattr calls, so these go through
 * /proc/self/fd/N, which names the backing object itself. Symbolic links
 * cannot be reached that way without following them; Linux allows only
 * trusted.* and security.* attributes on links, so they report none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/xattr.h>

#include "accelfs_i.h"
#include "creds.h"
#include "thread_buf.h"

#define XATTR_MAX (64 * 1024)

static void reply_size_or_data(fuse_req_t req, ssize_t ret, const char *buf, size_t size)
{
	if (ret < 0)
		fuse_reply_err(req, errno);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)ret);
	else
		fuse_reply_buf(req, buf, (size_t)ret);
}

/*
 * Names a node remembers as absent for attr_timeout, the time the kernel
 * trusts its other attributes. Without FUSE_HANDLE_KILLPRIV_V2 (libfuse
 * 3.14) the kernel asks for security.capability before every write(2); with
 * it, after each attribute refresh, and killpriv.c asks on every write of a
 * caller without CAP_FSETID. ls -l asks for the SELinux label and an ACL of
 * every entry at every listing (the kernel keeps no ACL a getxattr read).
 * Most files have none of them, and on a network SOURCE each question went
 * through a second FUSE client (GlusterFS's answers them from its md-cache,
 * so the bare mount pays one hop for them, not two). Reading them needs no
 * right but the lookup the kernel has checked, so one answer holds for
 * every caller. Any xattr change through the mount forgets them, and so
 * does a change the watcher reports; one made in SOURCE otherwise shows
 * after attr_timeout.
 */
static const char *const absent_names[XA_COUNT] = {
	[XA_CAPS] = "security.capability",
	[XA_SELINUX] = "security.selinux",
	[XA_ACL_ACCESS] = "system.posix_acl_access",
	[XA_ACL_DEFAULT] = "system.posix_acl_default",
};

static int absent_slot(const char *name)
{
	for (int i = 0; i < XA_COUNT; i++)
		if (!strcmp(name, absent_names[i]))
			return i;
	return -1;
}

static bool known_absent(struct inode *n, int slot)
{
	return slot >= 0 &&
	       now_ns() < __atomic_load_n(&n->xattr_absent_until[slot], __ATOMIC_RELAXED);
}

/*
 * Name @slot was found absent by a call begun at change count @gen. A
 * change through the mount (xattr_absent_forget) bumps the count before it
 * clears: a call that raced with one stores, sees the count moved, and
 * takes its answer back, so no stale "absent" outlives the change.
 */
static void learn_absent(struct accelfs *fs, struct inode *n, int slot, uint32_t gen)
{
	if (slot < 0)
		return;
	__atomic_store_n(&n->xattr_absent_until[slot],
			 now_ns() + (uint64_t)(opt_attr_timeout(fs) * 1e9), __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&n->xattr_gen, __ATOMIC_SEQ_CST) != gen)
		__atomic_store_n(&n->xattr_absent_until[slot], 0, __ATOMIC_SEQ_CST);
}

static uint32_t absent_gen(struct inode *n)
{
	return __atomic_load_n(&n->xattr_gen, __ATOMIC_SEQ_CST);
}

void xattr_absent_forget(struct inode *n)
{
	__atomic_add_fetch(&n->xattr_gen, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < XA_COUNT; i++)
		__atomic_store_n(&n->xattr_absent_until[i], 0, __ATOMIC_SEQ_CST);
}

void xattr_caps_created(struct accelfs *fs, struct inode *n)
{
	learn_absent(fs, n, XA_CAPS, absent_gen(n));
}

/* An attribute set or removed through the mount: what was known of them goes. */
static void xattrs_changed(struct inode *n)
{
	xattr_absent_forget(n);
	pthread_mutex_lock(&n->lock);
	n->tuning_valid = false; /* ops_file.c, tuning_memo */
	pthread_mutex_unlock(&n->lock);
}

/*
 * A write or truncation removes file capabilities (killpriv.c); most files
 * have none, and then this costs a clock read, not a system call.
 */
int xattr_caps_kill(struct accelfs *fs, struct inode *n, int fd)
{
	const char *name = absent_names[XA_CAPS];
	char path[PROC_FD_LEN];
	uint32_t gen;
	int ret;

	if (known_absent(n, XA_CAPS))
		return 0;
	gen = absent_gen(n);
	ret = fd >= 0 ? fremovexattr(fd, name) : removexattr(proc_fd_path(n->fd, path), name);
	if (ret && errno != ENODATA && errno != EOPNOTSUPP)
		return -errno;
	learn_absent(fs, n, XA_CAPS, gen); /* gone now */
	return 0;
}

/*
 * trusted.* is for CAP_SYS_ADMIN only. The daemon keeps that capability even
 * with the caller's fsuid (it is not a file system capability), and the
 * backing file system asks the daemon, not the caller: without these checks
 * listxattr would show every user root's trusted.* names. Answers as ext4
 * gives an unprivileged caller: absent on get, EPERM on set and remove,
 * left out of lists. (uid 0 stands for the capability, as for the rest of
 * the daemon's privilege checks.)
 */
static const char trusted_prefix[] = "trusted.";

static bool trusted_hidden(fuse_req_t req, const char *name)
{
	return !strncmp(name, trusted_prefix, sizeof(trusted_prefix) - 1) &&
	       creds_unprivileged(req);
}

/* Drop trusted.* names from the list in @buf (@len bytes); returns the new length. */
static size_t drop_trusted(char *buf, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		size_t n = strnlen(buf + in, len - in) + 1;

		if (strncmp(buf + in, trusted_prefix, sizeof(trusted_prefix) - 1)) {
			memmove(buf + out, buf + in, n);
			out += n;
		}
		in += n;
	}
	return out;
}

static void accel_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);
	char path[PROC_FD_LEN], *buf = NULL;
	int fd, slot = absent_slot(name);
	uint32_t gen;
	ssize_t ret;

	if (S_ISLNK(n->type) || known_absent(n, slot) || trusted_hidden(req, name)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (size > XATTR_MAX)
		size = XATTR_MAX;
	if (size && !(buf = thread_buf_reply(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	gen = absent_gen(n);
	fd = inode_fd_get(n);
	ret = INODE_FD_OR(fd, getxattr(proc_fd_path(fd, path), name, buf, size));
	if (ret < 0 && errno == ENODATA)
		learn_absent(fs, n, slot, gen);
	inode_fd_put(n, fd);
	reply_size_or_data(req, ret, buf, size);
}

/*
 * For an unprivileged caller the whole list is read (also when only its
 * size is asked), so that the size excludes the trusted.* names.
 */
static void accel_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);
	bool filter = creds_unprivileged(req);
	size_t want = size, bufsize = filter ? XATTR_MAX : size;
	char path[PROC_FD_LEN], *buf = NULL;
	ssize_t ret;
	int fd;

	if (S_ISLNK(n->type)) {
		reply_size_or_data(req, 0, "", size);
		return;
	}
	if (bufsize > XATTR_MAX)
		bufsize = XATTR_MAX;
	if (bufsize && !(buf = thread_buf_reply(bufsize))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = inode_fd_get(n);
	ret = INODE_FD_OR(fd, listxattr(proc_fd_path(fd, path), buf, bufsize));
	inode_fd_put(n, fd);
	if (ret >= 0 && filter) {
		ret = (ssize_t)drop_trusted(buf, (size_t)ret);
		if (want && (size_t)ret > want) {
			fuse_reply_err(req, ERANGE);
			return;
		}
	}
	reply_size_or_data(req, ret, buf, want);
}

static void accel_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			   size_t size, int flags)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);
	char path[PROC_FD_LEN];
	int err, fd;

	if (S_ISLNK(n->type) || trusted_hidden(req, name)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	/* pinned with the daemon's rights; set with the caller's: owner for
	 * security.* and ACLs, write access for user.* */
	fd = inode_fd_get(n);
	err = fd < 0 ? -fd : -creds_enter(req);
	if (!err) {
		err = setxattr(proc_fd_path(fd, path), name, value, size, flags) ? errno : 0;
		creds_leave();
	}
	inode_fd_put(n, fd);
	xattrs_changed(n); /* before the reply: a getxattr after it must see the change */
	fuse_reply_err(req, err);
}

static void accel_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct accelfs *fs = fuse_req_userdata(req);
	struct inode *n = inode_get(fs, ino);
	char path[PROC_FD_LEN];
	int err, fd;

	if (S_ISLNK(n->type)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (trusted_hidden(req, name)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fd = inode_fd_get(n);
	err = fd < 0 ? -fd : -creds_enter(req);
	if (!err) {
		err = removexattr(proc_fd_path(fd, path), name) ? errno : 0;
		creds_leave();
	}
	inode_fd_put(n, fd);
	xattrs_changed(n);
	fuse_reply_err(req, err);
}

void ops_xattr_fill(struct fuse_lowlevel_ops *ops)
{
	ops->getxattr = accel_getxattr;
	ops->listxattr = accel_listxattr;
	ops->setxattr = accel_setxattr;
	ops->removexattr = accel_removexattr;
}
