/* SPDX-License-Identifier: MIT */
/*
 * progress.h - a one-line progress bar on stderr for long runs, drawn only
 * when stderr is a terminal (never in logs or pipes) and at most ten times
 * a second. Messages printed meanwhile call progress_clear() first.
 */
#ifndef ACCELFS_TOOLS_PROGRESS_H
#define ACCELFS_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool on;
	unsigned int files_total;
	unsigned int files_done;
	uint64_t bytes_total;
	uint64_t bytes_done; /* of finished files */
	uint64_t bytes_file; /* of the current file */
	double last;
};

void progress_init(struct progress *p, unsigned int files, uint64_t bytes, bool allowed);

/* copy_ctl-style callback: @bytes done so far in the current file. */
void progress_update(uint64_t bytes, void *p);

void progress_file_done(struct progress *p, uint64_t file_bytes);

void progress_clear(struct progress *p);

#endif
