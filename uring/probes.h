/* SPDX-License-Identifier: MIT */
/*
 * probes.h - USDT probes (sys/sdt.h) for bpftrace, in every layer.
 *
 * A probe site is one nop when no tracer is attached. Each probe has a
 * semaphore, which the kernel raises while a uprobe is attached, so a site
 * whose arguments cost something (a clock read, a pointer chase) computes
 * them only behind ACCEL_PROBE_ENABLED(). Without sys/sdt.h (-Dprobes=disabled)
 * every macro compiles to nothing. The probes and their arguments are
 * documented in docs/probes.md; this is the lowest directory, so uring/,
 * cache/ and fuse/ can all include it.
 */
#ifndef ACCELFS_URING_PROBES_H
#define ACCELFS_URING_PROBES_H

#ifdef ACCEL_HAVE_SDT
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define ACCEL_PROBE_SEMAPHORE(name) accelfs_##name##_semaphore
#define ACCEL_PROBE_ENABLED(name) __builtin_expect(ACCEL_PROBE_SEMAPHORE(name) != 0, 0)
#define ACCEL_PROBE1(n, a) DTRACE_PROBE1(accelfs, n, a)
#define ACCEL_PROBE2(n, a, b) DTRACE_PROBE2(accelfs, n, a, b)
#define ACCEL_PROBE3(n, a, b, c) DTRACE_PROBE3(accelfs, n, a, b, c)
#define ACCEL_PROBE4(n, a, b, c, d) DTRACE_PROBE4(accelfs, n, a, b, c, d)
#define ACCEL_PROBE5(n, a, b, c, d, e) DTRACE_PROBE5(accelfs, n, a, b, c, d, e)
#else
#define ACCEL_PROBE_ENABLED(name) 0
#define ACCEL_PROBE1(n, a) \
	do {               \
	} while (0)
#define ACCEL_PROBE2(n, a, b) \
	do {                  \
	} while (0)
#define ACCEL_PROBE3(n, a, b, c) \
	do {                     \
	} while (0)
#define ACCEL_PROBE4(n, a, b, c, d) \
	do {                        \
	} while (0)
#define ACCEL_PROBE5(n, a, b, c, d, e) \
	do {                           \
	} while (0)
#endif

/* The semaphores, defined once in probes.c. */
#define ACCEL_PROBES(X)      \
	X(backend_submit)    \
	X(backend_complete)  \
	X(cache_lookup)      \
	X(cache_evict)       \
	X(cache_invalidate)  \
	X(file_open)         \
	X(file_close)        \
	X(prefetch_submit)   \
	X(prefetch_complete) \
	X(readahead_plan)    \
	X(disk_lookup)       \
	X(deferred_flush)    \
	X(watch_invalidate)  \
	X(passthrough_open)  \
	X(passthrough_verdict)

#ifdef ACCEL_HAVE_SDT
#define ACCEL_PROBE_EXTERN(name) extern unsigned short ACCEL_PROBE_SEMAPHORE(name);
ACCEL_PROBES(ACCEL_PROBE_EXTERN)
#undef ACCEL_PROBE_EXTERN
#endif

#endif
