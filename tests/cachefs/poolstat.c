// SPDX-License-Identifier: MIT
/*
 * poolstat.c - print a global buffer pool's counters, for the cachefs tests.
 *
 *   poolstat POOL                    pool counters, geometry, active streams
 *   poolstat POOL -i [DEV:]INO       the counters of one file slot
 *   poolstat POOL -p SUBSTRING       the counters of the one slot whose path
 *                                    contains SUBSTRING
 *   ... [KEY]                        only the value of KEY
 *
 * Output is one `key=value` line per counter (names from pool_stats_counter_name()),
 * so a test takes a snapshot before and after a workload and compares. The
 * pool is attached read-only and never locked, exactly as the monitor does,
 * so running it beside live daemons changes nothing. Exits 0; 1 if the pool
 * cannot be opened or no file (or more than one) matches; 2 on usage errors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

struct match {
	uint64_t dev, ino;
	bool by_ino, by_dev;
	const char *substr;
	struct pool_stats_file st;
	unsigned int found;
};

static int match_one(const struct pool_stats_file *st, void *arg)
{
	struct match *m = arg;

	if (m->by_ino && (st->ino != m->ino || (m->by_dev && st->dev != m->dev)))
		return 0;
	if (m->substr && !strstr(st->path, m->substr))
		return 0;
	if (m->found++ == 0)
		m->st = *st;
	return 0;
}

/* Print "key=value", or only the value when @key names it. */
static void put(const char *key, const char *name, uint64_t v, bool *shown)
{
	if (!key)
		printf("%s=%" PRIu64 "\n", name, v);
	else if (!strcmp(key, name)) {
		printf("%" PRIu64 "\n", v);
		*shown = true;
	}
}

static int print_pool(struct pool *pool, const char *key)
{
	struct pool_info info;
	struct pool_stats st;
	bool shown = false;

	pool_info(pool, &info);
	pool_stats_get(pool, &st);
	put(key, "bucket_size", info.bucket_size, &shown);
	put(key, "nbufs", info.nbufs, &shown);
	put(key, "nshards", info.nshards, &shown);
	put(key, "nfiles", info.nfiles, &shown);
	put(key, "files_used", info.files_used, &shown);
	put(key, "reserved", info.reserved, &shown);
	put(key, "opens", st.opens, &shown);
	put(key, "resident", st.resident, &shown);
	for (int c = 0; c < POOL_C_POOL_MAX; c++)
		put(key, pool_stats_counter_name(c), st.c[c], &shown);
	return key && !shown ? 2 : 0;
}

static int print_file(const struct pool_stats_file *st, const char *key)
{
	bool shown = false;

	if (!key)
		printf("path=%s\n", st->path);
	put(key, "dev", st->dev, &shown);
	put(key, "ino", st->ino, &shown);
	put(key, "slot", st->slot, &shown);
	put(key, "opens", st->opens, &shown);
	put(key, "quota", st->quota, &shown);
	put(key, "resident", st->resident, &shown);
	put(key, "ndirty", st->ndirty, &shown);
	put(key, "relaxed", !!(st->flags & POOL_FILE_F_RELAXED), &shown);
	for (int c = 0; c < POOL_C_FILE_MAX; c++)
		put(key, pool_stats_counter_name(c), st->c[c], &shown);
	return key && !shown ? 2 : 0;
}

static int parse_id(const char *s, struct match *m)
{
	const char *colon = strchr(s, ':');
	char *end;

	m->by_ino = true;
	if (colon) {
		m->by_dev = true;
		m->dev = strtoull(s, &end, 0);
		if (end != colon)
			return -1;
		s = colon + 1;
	}
	m->ino = strtoull(s, &end, 0);
	return *s && !*end ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: poolstat POOL [-i [DEV:]INO | -p SUBSTRING] [KEY]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct match m = { 0 };
	struct pool *pool;
	char err[256] = "";
	const char *key = NULL;
	int i = 2, ret;

	if (argc < 2)
		return usage();
	if (argc > 3 && !strcmp(argv[2], "-i")) {
		if (parse_id(argv[3], &m))
			return usage();
		i = 4;
	} else if (argc > 3 && !strcmp(argv[2], "-p")) {
		m.substr = argv[3];
		i = 4;
	}
	if (argc > i + 1)
		return usage();
	key = argc > i ? argv[i] : NULL;
	ret = pool_open_readonly(argv[1], &pool, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "poolstat: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	if (!m.by_ino && !m.substr) {
		ret = print_pool(pool, key);
	} else {
		pool_stats_file_iter(pool, match_one, &m);
		if (m.found == 1)
			ret = print_file(&m.st, key);
		else
			fprintf(stderr, "poolstat: %u file slots match\n", m.found);
		ret = m.found == 1 ? ret : 1;
	}
	if (ret == 2)
		fprintf(stderr, "poolstat: no counter named '%s'\n", key);
	pool_close(pool);
	return ret;
}
