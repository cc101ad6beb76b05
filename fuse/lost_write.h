/* SPDX-License-Identifier: MIT */
/*
 * lost_write.h - a write that failed on its way to SOURCE after the
 * program's write() succeeded (the kernel's write-back of a page, a
 * background sync under sync=relaxed): its error is kept on the inode and
 * reported once to each handle's next fsync and writer's close, as the
 * kernel's errseq does for a local file system (docs/daemon-death.md).
 */
#ifndef ACCELFS_FUSE_LOST_WRITE_H
#define ACCELFS_FUSE_LOST_WRITE_H

#include "accelfs_i.h"

/* @of's file lost written bytes (-@err, e.g. -ENOSPC); logged once per file and error. */
void lost_write_note(struct open_file *of, int err);
/* A lost write this handle has not been told of: its -errno, once; else 0. */
int lost_write_check(struct open_file *of);

#endif
