// SPDX-License-Identifier: MIT
/*
 * monmount.c - the mount view's state (see monmount.h).
 */
#include <stdlib.h>
#include <unistd.h>

#include "monmount.h"
#include "mountstat.h"
#include "util.h"

void monmount_sample(struct mon_mounts *mm)
{
	free(mm->prev);
	mm->prev = mm->now;
	mm->nprev = mm->n;
	mm->tprev = mm->t;
	if (mstate_list((unsigned int)geteuid(), &mm->now, &mm->n))
		mm->now = NULL, mm->n = 0;
	mm->t = util_now();
}

/* The daemon @pid in the list @ms of @n, or NULL. */
static const struct mstate *find(const struct mstate *ms, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (ms[i].pid == pid)
			return &ms[i];
	return NULL;
}

void monmount_choose(struct mon_mounts *mm, const struct mstate *s)
{
	mm->want = true;
	mm->pid = s->pid;
	mountstat_printable(s->mountpoint, mm->label, sizeof(mm->label));
}

void monmount_view(const struct mon_mounts *mm, struct mon_view *v)
{
	v->want_mount = mm->want;
	v->mount_label = mm->label;
	v->mount = find(mm->now, mm->n, mm->pid);
	v->mount_prev = find(mm->prev, mm->nprev, mm->pid);
	v->mount_dt = mm->t - mm->tprev;
	v->mount_picking = mm->picking;
	v->mounts = mm->now;
	v->nmounts = mm->n;
	v->mount_sel = mm->sel;
}

void monmount_free(struct mon_mounts *mm)
{
	free(mm->now);
	free(mm->prev);
	mm->now = mm->prev = NULL;
	mm->n = mm->nprev = 0;
}
