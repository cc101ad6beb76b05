// SPDX-License-Identifier: MIT
/*
 * probes.c - the USDT semaphores: one counter per probe in the .probes
 * section, raised by the kernel while a tracer is attached (see probes.h).
 */
#include "probes.h"

#ifdef ACCEL_HAVE_SDT
#define ACCEL_PROBE_DEFINE(name) \
	unsigned short ACCEL_PROBE_SEMAPHORE(name) __attribute__((section(".probes"), used));
ACCEL_PROBES(ACCEL_PROBE_DEFINE)
#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int accel_probes_disabled;
#endif
