// SPDX-License-Identifier: MIT
/* open_files.c - the list of files open through the mount (open_files.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "open_files.h"

void open_files_add(struct open_file *of)
{
	struct open_files *l = &of->fs->files;

	handle_list_add(&l->head, &of->link, &l->lock);
}

void open_files_remove(struct open_file *of)
{
	struct open_files *l = &of->fs->files;

	handle_list_del(&of->link, &l->lock);
	pthread_mutex_lock(&l->lock);
	while (of->busy) /* the flusher is writing it back: wait for it */
		pthread_cond_wait(&l->idle, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

int open_files_set_fd(struct open_file *of, int fd)
{
	struct open_files *l = &of->fs->files;
	int old;

	pthread_mutex_lock(&l->lock);
	while (of->busy) /* a walker is using the old one */
		pthread_cond_wait(&l->idle, &l->lock);
	old = of->fd;
	of->fd = fd;
	pthread_mutex_unlock(&l->lock);
	return old;
}

struct open_file *open_files_first(struct accelfs *fs)
{
	struct open_files *l = &fs->files;
	struct open_file *of = NULL;

	pthread_mutex_lock(&l->lock);
	if (l->head.next && l->head.next != &l->head)
		of = (struct open_file *)l->head.next;
	pthread_mutex_unlock(&l->lock);
	return of;
}

void open_files_foreach(struct accelfs *fs, void (*fn)(struct open_file *of, void *arg), void *arg)
{
	struct open_files *l = &fs->files;

	pthread_mutex_lock(&l->lock);
	for (struct handle_link *h = l->head.next; h && h != &l->head; h = h->next)
		fn((struct open_file *)h, arg);
	pthread_mutex_unlock(&l->lock);
}

/* l->lock held */
static void unpin_locked(struct open_files *l, struct open_file **pinned, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pinned[i]->busy--;
	pthread_cond_broadcast(&l->idle);
}

int open_files_fstat(struct accelfs *fs, struct inode *n, struct stat *st, int err)
{
	struct open_files *l = &fs->files;
	struct open_file *pinned = NULL;

	pthread_mutex_lock(&l->lock);
	for (struct handle_link *h = l->head.next; h && h != &l->head; h = h->next)
		if (((struct open_file *)h)->inode == n) {
			pinned = (struct open_file *)h;
			pinned->busy++;
			break;
		}
	pthread_mutex_unlock(&l->lock);
	if (!pinned)
		return err;
	err = fstat(pinned->fd, st) ? -errno : 0;
	pthread_mutex_lock(&l->lock);
	unpin_locked(l, &pinned, 1);
	pthread_mutex_unlock(&l->lock);
	return err;
}

void open_files_foreach_pinned(struct accelfs *fs, enum open_files_which which,
			       void (*fn)(struct open_file *of, void *arg), void *arg)
{
	struct open_files *l = &fs->files;
	struct open_file **pinned = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&l->lock);
	for (struct handle_link *h = l->head.next; h && h != &l->head; h = h->next) {
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
	pthread_mutex_unlock(&l->lock);
	for (size_t i = 0; i < n; i++)
		fn(pinned[i], arg);
	pthread_mutex_lock(&l->lock);
	unpin_locked(l, pinned, n);
	pthread_mutex_unlock(&l->lock);
	free(pinned);
}
