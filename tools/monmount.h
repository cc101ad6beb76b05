/* SPDX-License-Identifier: MIT */
/*
 * monmount.h - the state of `accel monitor`'s mount view: the running
 * daemons' states (cache/mstate.h) at the last two samples, for rates, and
 * which one is shown. No drawing (monscreen.c) and no keys (cmd_monitor.c).
 */
#ifndef ACCELFS_TOOLS_MONMOUNT_H
#define ACCELFS_TOOLS_MONMOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monscreen.h"
#include "mstate.h"

struct mon_mounts {
	struct mstate *now, *prev; /* malloc'ed, pid order; NULL: none */
	size_t n, nprev;
	double t, tprev;	     /* when they were read (util_now()) */
	bool want;		     /* the mount view is shown */
	bool picking;		     /* the mount picker is open */
	size_t sel;		     /* the picker's line */
	uint32_t pid;		     /* the daemon shown */
	char label[MSTATE_PATH_LEN]; /* its mount point, printable */
};

/* Read the daemons' states now; the last ones become the previous. */
void monmount_sample(struct mon_mounts *mm);

/* Show the daemon @s from now on. */
void monmount_choose(struct mon_mounts *mm, const struct mstate *s);

/* The mount view's part of @v. */
void monmount_view(const struct mon_mounts *mm, struct mon_view *v);

void monmount_free(struct mon_mounts *mm);

#endif
