// SPDX-License-Identifier: MIT
/*
 * watch_fan.c - the fanotify watcher: every change on SOURCE's file system,
 * reported as the directory's file handle and the name (FAN_REPORT_DFID_NAME)
 * and the object's handle (FAN_REPORT_FID), which the inode table's handle
 * index (inode_fh.c) turns into the kernel's node ids.
 *
 * A filesystem mark (FAN_MARK_FILESYSTEM, kernel >= 5.9 with these report
 * flags, CAP_SYS_ADMIN) sees every change however it is made; where the file
 * system refuses one, a mount mark sees changes made through SOURCE's mount.
 * Events about objects the mount does not know (elsewhere on the file
 * system, or never looked up) cost one hash lookup and are dropped.
 *
 * Echoes: the daemon's own operations change SOURCE too; fanotify names the
 * process (thread group) that made each change, so events of our own pid are
 * dropped. A second daemon on the same SOURCE is another pid: its changes
 * are seen.
 *
 * The queue is the kernel's; everything read from it is checked against the
 * lengths it gives before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "shared.h"
#include "watch_i.h"

#define FAN_BUF 65536
/* More than the largest event: metadata, a directory handle with a name
 * (NAME_MAX) and an object handle, each at most MAX_HANDLE_SZ. */
#define FAN_EVENT_ROOM 1024

#define FAN_EVENTS                                                                           \
	(FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ATTRIB | FAN_MODIFY | \
	 FAN_ONDIR)

int watch_fan_open(const char *source, char *why, size_t len)
{
	char type[80];
	int fd, err;

	if (shared_fs_remote(source, type, sizeof(type))) {
		snprintf(why, len, "SOURCE is on %s, a network or FUSE file system", type);
		return -EREMOTE;
	}
	fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME |
			       FAN_REPORT_FID,
			   O_RDONLY | O_LARGEFILE);
	if (fd < 0) {
		err = errno;
		snprintf(why, len, "fanotify_init: %s%s", strerror(err),
			 err == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return -err;
	}
	if (!fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_EVENTS, AT_FDCWD, source))
		return fd;
	if (!fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_EVENTS, AT_FDCWD, source)) {
		snprintf(why, len, "mount mark: changes made through other mounts are not seen");
		return fd;
	}
	err = errno;
	snprintf(why, len, "fanotify_mark: %s", strerror(err));
	close(fd);
	return -err;
}

/* The handle in a fid record of @len bytes, or NULL if it does not fit. */
static const struct file_handle *fid_handle(const struct fanotify_event_info_fid *fid, size_t len,
					    const char **name)
{
	const struct file_handle *fh = (const struct file_handle *)fid->handle;
	size_t off = sizeof(*fid) + sizeof(*fh);

	if (len < off || fh->handle_bytes > MAX_HANDLE_SZ || len < off + fh->handle_bytes)
		return NULL;
	*name = NULL;
	if (fid->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
		const char *s = (const char *)fh->f_handle + fh->handle_bytes;
		size_t room = len - off - fh->handle_bytes;

		if (!room || !memchr(s, '\0', room))
			return NULL;
		*name = s;
	}
	return fh;
}

/* Map one event's records to node ids and apply it. */
static void fan_event(struct accelfs *fs, const struct fanotify_event_metadata *md)
{
	const char *p = (const char *)(md + 1), *end = (const char *)md + md->event_len;
	struct watch_change c = { 0 };
	const struct file_handle *fh;
	const char *name;

	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_fid *fid = (const void *)p;
		size_t len = fid->hdr.len;

		if (len < sizeof(fid->hdr) || len > (size_t)(end - p))
			return;
		p += len;
		if (fid->hdr.info_type != FAN_EVENT_INFO_TYPE_DFID_NAME &&
		    fid->hdr.info_type != FAN_EVENT_INFO_TYPE_FID)
			continue;
		fh = fid_handle(fid, len, &name);
		if (!fh)
			return;
		if (name && strcmp(name, ".")) {
			c.parent = inode_fh_find(&fs->inodes, fh, false, NULL);
			c.name = name;
		} else if (name || fid->hdr.info_type == FAN_EVENT_INFO_TYPE_FID) {
			c.ino = inode_fh_find(&fs->inodes, fh, md->mask & (FAN_ATTRIB | FAN_MODIFY),
					      &c.pt_writer);
			if (c.ino == FUSE_ROOT_ID && (md->mask & FAN_ATTRIB))
				xattr_absent_forget(&fs->root); /* not in the index */
		}
	}
	if (md->mask & (FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO))
		c.what |= WATCH_NAME;
	if (md->mask & FAN_ATTRIB)
		c.what |= WATCH_ATTR;
	if (md->mask & FAN_MODIFY)
		c.what |= WATCH_DATA;
	c.dir = md->mask & FAN_ONDIR;
	c.pid = (pid_t)md->pid;
	if (c.parent || c.ino)
		watch_apply(fs, &c);
}

/*
 * The event at @p (@left bytes on), copied where its 64-bit fields are
 * aligned (the kernel packs events at 4-byte boundaries); NULL if it is
 * malformed or not of this metadata version.
 */
static const struct fanotify_event_metadata *fan_copy(const char *p, size_t left)
{
	static union {
		struct fanotify_event_metadata md;
		char bytes[FAN_BUF];
	} ev; /* one watcher thread per daemon */

	memcpy(&ev.md, p, FAN_EVENT_METADATA_LEN);
	if (ev.md.vers != FANOTIFY_METADATA_VERSION || ev.md.event_len < FAN_EVENT_METADATA_LEN ||
	    ev.md.event_len > left)
		return NULL;
	memcpy(ev.bytes, p, ev.md.event_len);
	return &ev.md;
}

int watch_fan_read(struct accelfs *fs, int fd, pid_t self)
{
	/* one watcher thread per daemon */
	static char buf[FAN_BUF]
	    __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	ssize_t n;

	while ((n = read(fd, buf, FAN_BUF)) > 0) {
		size_t off = 0;

		while (off + FAN_EVENT_METADATA_LEN <= (size_t)n) {
			const struct fanotify_event_metadata *md =
			    fan_copy(buf + off, (size_t)n - off);

			if (!md)
				return -EPROTO;
			off += md->event_len;
			if (md->fd >= 0)
				close(md->fd); /* not with FID reports, but never leak one */
			if (md->mask & FAN_Q_OVERFLOW)
				watch_overflow(fs);
			else if ((pid_t)md->pid != self)
				fan_event(fs, md);
		}
		/* room for another event was left: the queue was empty, and
		 * poll() says when it is not (saves a read per wake-up) */
		if ((size_t)n + FAN_EVENT_ROOM <= FAN_BUF)
			break;
	}
	return n < 0 && errno != EAGAIN && errno != EINTR ? -errno : 0;
}
