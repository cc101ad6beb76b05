/* SPDX-License-Identifier: MIT */
/*
 * fill_fd.h - the descriptor bucket fills read SOURCE through: with
 * backend_io=direct a second, O_DIRECT one, opened at the first fill
 * (fill_fd.c); else the handle's own.
 */
#ifndef ACCELFS_FUSE_FILL_FD_H
#define ACCELFS_FUSE_FILL_FD_H

#include "accelfs_i.h"

/* open_file.dfd until the first fill: O_DIRECT wanted, not opened yet */
#define FILL_FD_LATER (-2)

/* The descriptor @of's fills read: the O_DIRECT one (opened now if not
 * yet), or of->fd where there is none or SOURCE refuses O_DIRECT. */
int fill_fd_get(struct open_file *of);

#endif
