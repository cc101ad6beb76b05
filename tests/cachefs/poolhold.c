// SPDX-License-Identifier: MIT
/*
 * poolhold.c - play a peer daemon that is stopped while it holds the pool's
 * shard locks, for pool-stuck.sh (issue #12).
 *
 *   poolhold POOL READY-FILE
 *
 * Attaches to POOL read-write, takes every shard lock, marks every buffer
 * descriptor as being written (odd seq, I1), so lock-free hits fail over to
 * the locked path, writes READY-FILE and stops itself (SIGSTOP). On SIGCONT
 * it undoes the marks, releases the locks and exits 0: the pool is then as
 * it was. Exit 1 if the pool cannot be attached or a lock taken.
 *
 *   poolhold POOL READY-FILE corrupt
 *
 * Damages the pool instead, as root writing into the segment could: every
 * lock word (files lock, shard locks) names thread 1 (init: alive, and never
 * going to unlock) as its owner; then exits at once.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_i.h"

int main(int argc, char **argv)
{
	struct pool_config cfg = { .no_create = true };
	char err[512] = "";
	struct pool *pool;
	uint32_t *marked;
	FILE *f;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "corrupt")))
		return 2;
	cfg.name = argv[1];
	cfg.err = err;
	cfg.errlen = sizeof(err);
	if (pool_open(&cfg, &pool)) {
		fprintf(stderr, "poolhold: %s\n", err);
		return 1;
	}
	if (argc == 4) {
		int corrupt_word =
		    getenv("POOLHOLD_WORD") ? (int)strtoul(getenv("POOLHOLD_WORD"), NULL, 0) : 1;

		pool->hdr->files_lock.m.__data.__lock = corrupt_word;
		for (uint32_t s = 0; s < pool->nshards; s++)
			pool->shards[s].lock.m.__data.__lock = corrupt_word;
		pool_close(pool); /* (the words stay: they are in the segment) */
		f = fopen(argv[2], "w");
		return !f || fclose(f);
	}
	marked = calloc(pool->nbufs, sizeof(*marked));
	for (uint32_t s = 0; s < pool->nshards; s++)
		if (!marked || pool_shard_lock(pool, s))
			return 1;
	for (uint32_t i = 0; i < pool->nbufs; i++)
		if (!(pool->bufs[i].seq & 1))
			marked[i] = ++pool->bufs[i].seq;
	f = fopen(argv[2], "w");
	if (!f || fclose(f))
		return 1;
	raise(SIGSTOP);
	for (uint32_t i = 0; i < pool->nbufs; i++)
		if (marked[i] && pool->bufs[i].seq == marked[i])
			pool->bufs[i].seq++;
	for (uint32_t s = pool->nshards; s-- > 0;)
		pool_shard_unlock(pool, s);
	pool_close(pool);
	free(marked);
	return 0;
}
