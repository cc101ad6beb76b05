// SPDX-License-Identifier: MIT
/*
 * transport.c - how requests reach the daemon: read()/write() on
 * /dev/fuse by the workers, or FUSE over io_uring (-o io_uring=auto|on).
 *
 * With io_uring (libfuse >= 3.18, Linux >= 6.14) libfuse runs one ring per
 * CPU whose threads fetch a request and commit its reply in one
 * io_uring_enter, instead of one read and one write system call on
 * /dev/fuse per request. The kernel offers it only while the fuse module's
 * enable_uring parameter is Y, so "auto" asks for it exactly then, and "on"
 * refuses to start without it rather than silently serving over /dev/fuse.
 * Measured, it halves the time of metadata-heavy work (docs/benchmarks.md).
 *
 * But libfuse 3.18 does not route FUSE INTERRUPT to a request it took from
 * a ring (only those read from /dev/fuse are on its list), so a signal
 * could not end a wait the daemon finishes later (fuse/slow.c): a lock
 * wait with locks=forward would hold its process until the lock came, where
 * F_SETLKW must return EINTR. So "auto" takes the ring only with
 * locks=local (the kernel's own lock waits), and "on" with locks=forward
 * serves over it with a warning in the log. A reply from another thread
 * (a lock wait, a lease break: fuse/slow.c) is taken by libfuse under its
 * queue lock, but its ring thread flushes the submission queue outside it,
 * so such replies are left to /dev/fuse where they can be (kinval.c asks
 * transport_foreign_replies()); slow.c's are the exception io_uring=on
 * accepts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "accelfs_i.h"

#define ENABLE_URING "/sys/module/fuse/parameters/enable_uring"

#ifdef ACCEL_HAVE_FUSE_URING
/* 1 if the fuse module lets servers use io_uring, 0 if not or unknown. */
static int kernel_offers_uring(void)
{
	char c = 0;
	int fd = open(ENABLE_URING, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 && (c == 'Y' || c == 'y' || c == '1');
}
#endif

/*
 * Decide before mounting; sets fs->uring_wanted. Returns 0, or -1 with
 * the reason in @why when io_uring=on cannot be had.
 */
int transport_choose(struct accelfs *fs, char *why, size_t len)
{
	enum fuse_transport t = fs->opts.io_uring;

	fs->uring_wanted = false;
	if (t == FUSE_URING_OFF)
		return 0;
#ifdef ACCEL_HAVE_FUSE_URING
	if (kernel_offers_uring()) {
		if (fs->opts.locks == LOCKS_FORWARD && t == FUSE_URING_AUTO)
			return 0; /* a signal must end a lock wait (see the top) */
		if (fs->opts.locks == LOCKS_FORWARD)
			log_msg(LOG_WARNING,
				"io_uring=on: a signal cannot end a lock wait over the "
				"ring (libfuse delivers no INTERRUPT there): processes "
				"wait for their locks; io_uring=auto or locks=local "
				"avoid it");
		fs->uring_wanted = true;
		return 0;
	}
	if (t == FUSE_URING_ON) {
		snprintf(why, len,
			 "io_uring=on: the kernel does not offer FUSE over io_uring (%s is not Y; "
			 "as root: echo Y > %s)",
			 ENABLE_URING, ENABLE_URING);
		return -1;
	}
#else
	if (t == FUSE_URING_ON) {
		snprintf(why, len, "io_uring=on needs libfuse >= 3.18 (accelfs is built with %s)",
			 fuse_pkgversion());
		return -1;
	}
#endif
	return 0;
}

/* libfuse's session option for the choice; NULL: none. */
const char *transport_fuse_opt(struct accelfs *fs)
{
	return fs->uring_wanted ? "io_uring" : NULL;
}

/* At INIT: note whether requests come over io_uring (transport_foreign_replies). */
void transport_init(struct accelfs *fs, const struct fuse_conn_info *conn)
{
#ifdef ACCEL_HAVE_FUSE_URING
	bool ring = fs->uring_wanted && (conn->capable & FUSE_CAP_OVER_IO_URING);

	__atomic_store_n(&fs->uring_active, ring, __ATOMIC_RELAXED);
#else
	(void)fs;
	(void)conn;
#endif
}

/*
 * Over FUSE's io_uring transport libfuse (3.18) takes a reply from a thread
 * other than the ring's own under a lock its ring thread does not hold while
 * it submits: two threads then fill one submission queue, and replies were
 * lost or garbled (a SEEK_HOLE answered -1, ECANCELED, a writer hung in the
 * tests of kinval.c). Over /dev/fuse any thread may reply.
 */
bool transport_foreign_replies(struct accelfs *fs)
{
	return !__atomic_load_n(&fs->uring_active, __ATOMIC_RELAXED);
}

/* At INIT: what the kernel agreed to, for the log. */
const char *transport_describe(struct accelfs *fs, const struct fuse_conn_info *conn)
{
#ifdef ACCEL_HAVE_FUSE_URING
	if (fs->uring_wanted && (conn->capable & FUSE_CAP_OVER_IO_URING))
		return "FUSE over io_uring";
	if (fs->uring_wanted)
		return "/dev/fuse (the kernel did not offer io_uring)";
#else
	(void)fs;
	(void)conn;
#endif
	return "/dev/fuse";
}
