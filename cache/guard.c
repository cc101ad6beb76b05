// SPDX-License-Identifier: MIT
/*
 * guard.c - a pool segment truncated under a running daemon must not kill it.
 *
 * Anyone who may open the segment can ftruncate() it; every access to the
 * mapping past the new end then raises SIGBUS, whose default action would
 * kill the daemon and leave a dead mount. The handler here looks at si_addr:
 * inside a registered pool mapping, it marks that pool broken first, then
 * replaces the whole mapping with anonymous zero pages at the same address
 * (mmap is async-signal-safe in practice) and returns, so the faulting access
 * is retried and reads zeros. From then on every pool function sees the
 * broken flag and fails with -EIO, and pool_buf_read() checks it again after its
 * copy, so zeros are never handed out as file data. A SIGBUS anywhere else
 * gets the default action again and is re-raised.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool_i.h"

#define GUARD_MAX 8

static struct pool *guarded[GUARD_MAX]; /* atomic: registered pools */
static int installed;			/* atomic: handler in place */

/*
 * Anonymous zero pages in place of @base's mapping. The system call itself,
 * not libc's mmap: in a signal handler nothing but the kernel should run, and
 * ThreadSanitizer's mmap interceptor would count the new pages as a write by
 * this thread, racing with every lock-free reader of the segment (a reader
 * meeting the replaced pages is what the broken flag is for).
 */
static bool zero_map(void *base, size_t size, int prot)
{
	int flags = MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS;
#if defined(SYS_mmap) && UINTPTR_MAX > 0xffffffffu
	return syscall(SYS_mmap, base, size, prot, flags, -1, 0L) != -1;
#else
	return mmap(base, size, prot, flags, -1, 0) != MAP_FAILED;
#endif
}

static bool guard_hit(struct pool *pool, uintptr_t addr)
{
	uintptr_t base = (uintptr_t)pool->base;
	int prot = pool->readonly ? PROT_READ : PROT_READ | PROT_WRITE;

	if (addr < base || addr - base >= pool->size)
		return false;
	__atomic_store_n(&pool->broken, 1, __ATOMIC_SEQ_CST);
	return zero_map(pool->base, pool->size, prot);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)uc;
	for (int i = 0; i < GUARD_MAX; i++) {
		struct pool *pool = __atomic_load_n(&guarded[i], __ATOMIC_ACQUIRE);

		if (pool && si && guard_hit(pool, (uintptr_t)si->si_addr))
			return;
	}
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (!si || si->si_code <= 0)
		raise(sig); /* sent, not a fault: a fault simply happens again */
}

static int install(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	sigset_t bus;

	if (__atomic_load_n(&installed, __ATOMIC_ACQUIRE))
		return 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -errno;
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
	__atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
	return 0;
}

int pool_guard_sigbus(struct pool *pool)
{
	int ret = install();

	for (int i = 0; i < GUARD_MAX && !ret; i++) {
		struct pool *none = NULL;

		if (__atomic_compare_exchange_n(&guarded[i], &none, pool, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return 0;
	}
	return ret ? ret : -ENOSPC;
}

/* pool_close(): the mapping goes; so does its registration. */
void pool_guard_forget(struct pool *pool)
{
	for (int i = 0; i < GUARD_MAX; i++) {
		struct pool *p = pool;

		__atomic_compare_exchange_n(&guarded[i], &p, NULL, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	}
}

bool pool_guard_broken(const struct pool *pool)
{
	return pool && pool_is_broken(pool);
}

uint64_t pool_guard_lock_timeouts(const struct pool *pool)
{
	return pool ? __atomic_load_n(&pool->lock_timeouts, __ATOMIC_RELAXED) : 0;
}
