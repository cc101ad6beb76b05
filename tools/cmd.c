// SPDX-License-Identifier: MIT
/*
 * cmd.c - what the accel subcommands share (see cmd.h): opening a file to
 * read without surprises, the words for its errors, and the exit code after
 * a signal. Here, not in accel.c, so the commands need nothing of the
 * dispatcher that calls them.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

int cmd_open_source(const char *path, int flags)
{
	int fd = open(path, flags | O_NOATIME | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	int err;

	if (fd < 0 && errno == EPERM) /* O_NOATIME needs ownership */
		fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENXIO ? -CMD_ENOTREG : -errno; /* a FIFO nobody writes, a socket */
	err = fstat(fd, &st)	    ? errno
	      : S_ISREG(st.st_mode) ? 0
	      : S_ISDIR(st.st_mode) ? EISDIR
				    : CMD_ENOTREG;
	if (!err && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		err = errno;
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

const char *cmd_strerror(int err)
{
	return err == -CMD_ENOTREG ? "not a regular file" : strerror(-err);
}

int cmd_signal_exit(void)
{
	return util_stop_sig ? 128 + util_stop_sig : 0;
}
