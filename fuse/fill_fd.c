// SPDX-License-Identifier: MIT
/*
 * fill_fd.c - the descriptor bucket fills read SOURCE through (fill_fd.h),
 * for demand fills (cache_io.c) and read-ahead (readahead_io.c) alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "fill_fd.h"

/*
 * backend_io=direct: a second descriptor with O_DIRECT, used only to fill
 * whole buckets (aligned offsets and lengths, page-aligned buffers), so
 * SOURCE's data lives in the pool instead of also in the page cache. A file
 * system that refuses O_DIRECT (tmpfs, some FUSE and network ones) gets
 * buffered fills and one warning. Opened at the first fill, not at open:
 * most opens of a file being created or written never fill a bucket, and on
 * a network SOURCE each open is a round trip (a gluster OPEN per file of an
 * untar). of->dfd: FILL_FD_LATER until then; parallel first fills race with a
 * compare-and-swap, the loser closing its own.
 */
int fill_fd_get(struct open_file *of)
{
	static bool warned;
	char proc[PROC_FD_LEN];
	int expected = FILL_FD_LATER, fd = __atomic_load_n(&of->dfd, __ATOMIC_ACQUIRE);

	if (fd == FILL_FD_LATER) {
		fd = open(proc_fd_path(of->fd, proc), O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0 && !__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			log_msg(LOG_WARNING,
				"backend_io=direct: %s refuses O_DIRECT (%s); using buffered reads",
				of->fs->source_real, strerror(errno));
		if (fd < 0)
			fd = -1;
		if (!__atomic_compare_exchange_n(&of->dfd, &expected, fd, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			if (fd >= 0)
				close(fd);
			fd = expected; /* the winner's */
		}
	}
	return fd >= 0 ? fd : of->fd;
}
