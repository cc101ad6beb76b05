// SPDX-License-Identifier: MIT
/*
 * thread_buf.c - per-thread work buffers (see thread_buf.h): grown on
 * demand, never shrunk, freed by the thread-specific key's destructor.
 */
#include <pthread.h>
#include <stdlib.h>

#include "thread_buf.h"

struct thread_bufs {
	void *buf[THREAD_BUF_USES];
	size_t size[THREAD_BUF_USES];
};

static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;
static __thread struct thread_bufs *bufs;

static void bufs_free(void *arg)
{
	struct thread_bufs *b = arg;

	for (int i = 0; i < THREAD_BUF_USES; i++)
		free(b->buf[i]);
	free(b);
	bufs = NULL;
}

static void bufs_key_create(void)
{
	pthread_key_create(&bufs_key, bufs_free);
}

void *thread_buf_get(enum thread_buf_use use, size_t size)
{
	void *p;

	if (bufs && size <= bufs->size[use])
		return bufs->buf[use];
	if (!bufs) {
		pthread_once(&bufs_once, bufs_key_create);
		bufs = calloc(1, sizeof(*bufs));
		if (!bufs)
			return NULL;
		pthread_setspecific(bufs_key, bufs);
	}
	if (posix_memalign(&p, 4096, size ? size : 1))
		return NULL;
	free(bufs->buf[use]);
	bufs->buf[use] = p;
	bufs->size[use] = size;
	return p;
}
