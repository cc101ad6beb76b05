// SPDX-License-Identifier: MIT
/*
 * local.c - a handle's private buffers. N is small (RMS defaults to 2), so a
 * linear scan beats any index; replacement is least recently used.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "local.h"

struct local_buf {
	uint64_t bucket;
	struct pool_ticket t; /* ticket when the data was taken */
	uint64_t used;	      /* lc->tick at last use */
	uint32_t len;
	bool valid;
	uint8_t *data;
};

struct local {
	uint32_t bsize;
	unsigned int n;
	unsigned int next; /* the buffer local_prepare() handed out */
	uint64_t tick;
	struct local_buf b[];
};

int local_create(uint32_t bucket_size, unsigned int n, struct local **out)
{
	struct local *lc;

	if (!bucket_size || n > 4096)
		return -EINVAL;
	lc = calloc(1, sizeof(*lc) + (size_t)n * sizeof(lc->b[0]));
	if (!lc)
		return -ENOMEM;
	lc->bsize = bucket_size;
	lc->n = n;
	*out = lc;
	return 0;
}

void local_destroy(struct local *lc)
{
	if (!lc)
		return;
	for (unsigned int i = 0; i < lc->n; i++)
		free(lc->b[i].data);
	free(lc);
}

static bool ticket_eq(const struct pool_ticket *a, const struct pool_ticket *b)
{
	return a->epoch == b->epoch && a->wseq == b->wseq;
}

ssize_t local_read(struct local *lc, const struct pool_ticket *cur, uint64_t bucket, void *buf,
		   size_t off, size_t len)
{
	for (unsigned int i = 0; i < lc->n; i++) {
		struct local_buf *lb = &lc->b[i];
		size_t n = 0;

		if (!lb->valid || lb->bucket != bucket)
			continue;
		if (!ticket_eq(&lb->t, cur)) {
			lb->valid = false; /* the file changed since */
			return -ENOENT;
		}
		if (off < lb->len)
			n = len < lb->len - off ? len : lb->len - off;
		memcpy(buf, lb->data + off, n);
		lb->used = ++lc->tick;
		return (ssize_t)n;
	}
	return -ENOENT;
}

void *local_prepare(struct local *lc)
{
	struct local_buf *lb;
	unsigned int victim = 0;

	if (!lc->n)
		return NULL;
	for (unsigned int i = 0; i < lc->n; i++) {
		if (!lc->b[i].valid) {
			victim = i;
			break;
		}
		if (lc->b[i].used < lc->b[victim].used)
			victim = i;
	}
	lb = &lc->b[victim];
	lb->valid = false;
	if (!lb->data)
		lb->data = malloc(lc->bsize);
	lc->next = victim;
	return lb->data;
}

void local_commit(struct local *lc, const struct pool_ticket *t, uint64_t bucket, size_t len)
{
	struct local_buf *lb = &lc->b[lc->next];

	if (!lc->n || !lb->data || len > lc->bsize)
		return;
	local_invalidate(lc, bucket); /* never two copies of one bucket */
	lb->bucket = bucket;
	lb->t = *t;
	lb->len = (uint32_t)len;
	lb->used = ++lc->tick;
	lb->valid = true;
}

int local_invalidate(struct local *lc, uint64_t bucket)
{
	int n = 0;

	for (unsigned int i = 0; i < lc->n; i++) {
		if (lc->b[i].valid && (bucket == UINT64_MAX || lc->b[i].bucket == bucket)) {
			lc->b[i].valid = false;
			n++;
		}
	}
	return n;
}

unsigned int local_count(const struct local *lc)
{
	return lc->n;
}
