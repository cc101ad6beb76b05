// SPDX-License-Identifier: MIT
/*
 * sysgen_cpu.c - the idle CPU and a FUSE round trip: haltpoll.
 *
 * Every FUSE request wakes a daemon thread and every reply wakes the
 * caller. In a KVM guest an idle vCPU halts, and waking a halted vCPU is an
 * exit to the host: on the machine docs/benchmarks.md was measured on, that
 * wait was a large part of a small file's ten round trips. The guest's
 * cpuidle driver "haltpoll" polls for up to guest_halt_poll_ns before
 * halting (adaptively: it grows and shrinks the window with the wake-ups it
 * sees); 0 turns the polling off. Polling burns host CPU while the guest is
 * idle, so this row is informational unless asked for (--halt-poll); then
 * 0 is LOW and --apply writes the kernel's default.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sysgen_i.h"

#define HALT_POLL_NS 200000 /* the haltpoll module's own default */

int sysgen_cpu_rows(struct sysgen_ctx *ctx)
{
	struct sysgen_row *row = sysgen_row_add(ctx, "haltpoll.guest_halt_poll_ns");
	char path[PATH_MAX], driver[64] = "";
	uint64_t v;

	if (!row)
		return -ENOMEM;
	sysgen_set(row->needed, ctx->cfg->halt_poll ? "%u" : "- (%u for --halt-poll)",
		   HALT_POLL_NS);
	row->status = SYSGEN_INFO;
	sysgen_path(path, sizeof(path), ctx->sys, "devices/system/cpu/cpuidle/current_driver");
	if (sysgen_read_line(path, driver, sizeof(driver)) || strcmp(driver, "haltpoll")) {
		sysgen_set(row->current, "absent");
		row->status = SYSGEN_OK;
		sysgen_set(row->why, "cpuidle driver %s: not a KVM guest polling before halt",
			   driver[0] ? driver : "none");
		return 0;
	}
	sysgen_path(path, sizeof(path), ctx->sys, "module/haltpoll/parameters/guest_halt_poll_ns");
	if (sysgen_read_u64(path, &v)) {
		sysgen_set(row->current, "unreadable");
		sysgen_set(row->why, "haltpoll driver without its governor's parameters");
		return 0;
	}
	sysgen_set(row->current, "%llu", (unsigned long long)v);
	if (v) {
		row->status = SYSGEN_OK;
		sysgen_set(row->why, "idle vCPUs poll up to %llu us before they halt",
			   (unsigned long long)(v / 1000));
		return 0;
	}
	sysgen_set(row->why, "idle vCPUs halt at once: each FUSE wake-up exits to the host");
	if (!ctx->cfg->halt_poll)
		return 0;
	row->status = SYSGEN_LOW;
	snprintf(row->set_path, sizeof(row->set_path), "%s", path);
	row->set_value = HALT_POLL_NS;
	sysgen_set(row->manual,
		   "costs host CPU while idle; lost at reboot: "
		   "haltpoll.guest_halt_poll_ns=%u on the kernel command line",
		   HALT_POLL_NS);
	return 0;
}
