// SPDX-License-Identifier: MIT
/* open_files.c - the list of files open through the mount (open_files.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "open_files.h"

static struct handle_link open_files; /* list head */
static pthread_mutex_t open_files_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t open_files_idle = PTHREAD_COND_INITIALIZER; /* a handle's busy fell */

void open_files_add(struct open_file *of)
{
	handle_list_add(&open_files, &of->link, &open_files_lock);
}

void open_files_remove(struct open_file *of)
{
	handle_list_del(&of->link, &open_files_lock);
	pthread_mutex_lock(&open_files_lock);
	while (of->busy) /* the flusher is writing it back: wait for it */
		pthread_cond_wait(&open_files_idle, &open_files_lock);
	pthread_mutex_unlock(&open_files_lock);
}

struct open_file *open_files_first(void)
{
	struct open_file *of = NULL;

	pthread_mutex_lock(&open_files_lock);
	if (open_files.next && open_files.next != &open_files)
		of = (struct open_file *)open_files.next;
	pthread_mutex_unlock(&open_files_lock);
	return of;
}

void open_files_foreach(void (*fn)(struct open_file *of, void *arg), void *arg)
{
	pthread_mutex_lock(&open_files_lock);
	for (struct handle_link *h = open_files.next; h && h != &open_files; h = h->next)
		fn((struct open_file *)h, arg);
	pthread_mutex_unlock(&open_files_lock);
}

/* open_files_lock held */
static void unpin_locked(struct open_file **pinned, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pinned[i]->busy--;
	pthread_cond_broadcast(&open_files_idle);
}

int open_files_fstat(struct inode *n, struct stat *st, int err)
{
	struct open_file *pinned = NULL;

	pthread_mutex_lock(&open_files_lock);
	for (struct handle_link *h = open_files.next; h && h != &open_files; h = h->next)
		if (((struct open_file *)h)->inode == n) {
			pinned = (struct open_file *)h;
			pinned->busy++;
			break;
		}
	pthread_mutex_unlock(&open_files_lock);
	if (!pinned)
		return err;
	err = fstat(pinned->fd, st) ? -errno : 0;
	pthread_mutex_lock(&open_files_lock);
	unpin_locked(&pinned, 1);
	pthread_mutex_unlock(&open_files_lock);
	return err;
}

void open_files_foreach_pinned(enum open_files_which which,
			       void (*fn)(struct open_file *of, void *arg), void *arg)
{
	struct open_file **pinned = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&open_files_lock);
	for (struct handle_link *h = open_files.next; h && h != &open_files; h = h->next) {
		struct open_file *of = (struct open_file *)h;
		bool *flag = which == OPEN_FILES_WRITTEN ? &of->wrote : &of->deferred;

		if (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct open_file **p = realloc(pinned, ncap * sizeof(*p));

			if (!p)
				break; /* the rest waits for the next tick */
			pinned = p;
			cap = ncap;
		}
		of->busy++;
		pinned[n++] = of;
	}
	pthread_mutex_unlock(&open_files_lock);
	for (size_t i = 0; i < n; i++)
		fn(pinned[i], arg);
	pthread_mutex_lock(&open_files_lock);
	unpin_locked(pinned, n);
	pthread_mutex_unlock(&open_files_lock);
	free(pinned);
}
