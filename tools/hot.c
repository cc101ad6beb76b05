// SPDX-License-Identifier: MIT
/*
 * hot.c - per-file I/O counts for --hot-first, read from the global pool's
 * per-file statistics (read-only, lock-free: the daemons are not slowed).
 * The pool is attached once per process and kept: a defrag run asks for
 * every file it considers.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "hot.h"
#include "pool.h"
#include "poolseg.h"

struct hot_match {
	dev_t dev;
	ino_t ino;
	uint64_t score;
};

static int match(const struct pool_stats_file *st, void *arg)
{
	struct hot_match *m = arg;

	if (st->dev != (uint64_t)m->dev || st->ino != (uint64_t)m->ino)
		return 0;
	m->score = st->c[POOL_C_BACKEND_READS] + st->c[POOL_C_BACKEND_WRITES] +
		   st->c[POOL_C_GLOBAL_HITS] + st->c[POOL_C_LOCAL_HITS];
	return 1;
}

uint64_t hot_score(const char *path)
{
	static struct pool *pool;
	static bool tried;
	struct hot_match m = { 0 };
	struct stat st;
	char name[256];

	if (!tried) {
		tried = true;
		poolseg_default_name(name, sizeof(name));
		if (pool_open_readonly(name, &pool, NULL, 0))
			pool = NULL;
	}
	if (!pool || stat(path, &st))
		return 0;
	m.dev = st.st_dev;
	m.ino = st.st_ino;
	pool_stats_file_iter(pool, match, &m);
	return m.score;
}
