// SPDX-License-Identifier: MIT
/*
 * test_thread_buf.c - cache/thread_buf.c: a use's buffer is reused while it
 * is large enough (no allocation per request), grows when asked for more,
 * is page-aligned, differs between uses and between threads, and is freed
 * when its thread exits (the ASan pass's leak check).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cache_test.h"
#include "thread_buf.h"

static void test_reuse(void)
{
	void *a = thread_buf_get(THREAD_BUF_FLUSH, 1 << 20);

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL((uintptr_t)a % 4096, 0);
	memset(a, 0xa5, 1 << 20); /* all of it is ours */
	CU_ASSERT_PTR_EQUAL(thread_buf_get(THREAD_BUF_FLUSH, 1 << 20), a);
	CU_ASSERT_PTR_EQUAL(thread_buf_get(THREAD_BUF_FLUSH, 4096), a);
	CU_ASSERT_PTR_EQUAL(thread_buf_get(THREAD_BUF_FLUSH, 0), a);
}

static void test_grow(void)
{
	void *a = thread_buf_get(THREAD_BUF_BUCKET, 4096), *b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	b = thread_buf_get(THREAD_BUF_BUCKET, 3 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL((uintptr_t)b % 4096, 0);
	memset(b, 0x5a, 3 << 20);
	CU_ASSERT_PTR_EQUAL(thread_buf_get(THREAD_BUF_BUCKET, 65536), b);
}

static void test_uses_apart(void)
{
	void *r = thread_buf_get(THREAD_BUF_REPLY, 65536);
	void *f = thread_buf_get(THREAD_BUF_FLUSH, 65536);
	void *k = thread_buf_get(THREAD_BUF_BUCKET, 65536);

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(k);
	CU_ASSERT(r != f && f != k && r != k);
}

static void *other_thread(void *arg)
{
	void *mine = thread_buf_get(THREAD_BUF_FLUSH, 1 << 20);

	memset(mine, 1, 1 << 20);
	return mine != arg && mine ? (void *)1 : NULL;
}

/* A thread gets its own; what it took is freed at its exit (LSan). */
static void test_threads_apart(void)
{
	void *mine = thread_buf_get(THREAD_BUF_FLUSH, 1 << 20), *ok = NULL;

	for (int i = 0; i < 8; i++) {
		pthread_t t;

		CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, other_thread, mine), 0);
		CU_ASSERT_EQUAL(pthread_join(t, &ok), 0);
		CU_ASSERT_PTR_NOT_NULL(ok);
	}
	CU_ASSERT_PTR_EQUAL(thread_buf_get(THREAD_BUF_FLUSH, 1 << 20), mine);
}

int main(void)
{
	CU_pSuite s = ct_suite("thread_buf");

	if (!s)
		return 2;
	CU_add_test(s, "reused while large enough", test_reuse);
	CU_add_test(s, "grows on demand", test_grow);
	CU_add_test(s, "one buffer per use", test_uses_apart);
	CU_add_test(s, "one buffer per thread, freed at exit", test_threads_apart);
	return ct_run();
}
