// SPDX-License-Identifier: MIT
/* lost_write.c - write-back errors kept for the next fsync and close (lost_write.h). */
#include <string.h>
#include <unistd.h>

#include "lost_write.h"

/*
 * The kernel's writeback of a page failed on SOURCE (ENOSPC, EDQUOT, EIO):
 * the page is clean again, so its bytes exist nowhere. Logged once per file
 * and error, and kept for every handle's next fsync and writer's close.
 */
void lost_write_note(struct open_file *of, int err)
{
	struct inode *n = of->inode;
	char proc[PROC_FD_LEN], path[512];
	ssize_t len;

	if (__atomic_exchange_n(&n->lost_err, err, __ATOMIC_RELAXED) != err) {
		len = readlink(proc_fd_path(of->fd, proc), path, sizeof(path) - 1);
		path[len > 0 ? len : 0] = '\0';
		log_msg(LOG_ERR, "%s: write-back failed: %s; reported at the next fsync and close",
			path, strerror(-err));
	}
	__atomic_add_fetch(&n->lost_seq, 1, __ATOMIC_RELEASE);
}

int lost_write_check(struct open_file *of)
{
	unsigned int seq = __atomic_load_n(&of->inode->lost_seq, __ATOMIC_ACQUIRE);

	if (__atomic_exchange_n(&of->lost_seen, seq, __ATOMIC_RELAXED) == seq)
		return 0;
	return __atomic_load_n(&of->inode->lost_err, __ATOMIC_RELAXED);
}
