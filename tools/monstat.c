// SPDX-License-Identifier: MIT
/*
 * monstat.c - CUR/AVE/MIN/MAX of the cache display from counter snapshots.
 * No I/O and no clock of its own: the caller supplies times, so the test can
 * check every figure exactly. The semantics are stated in monstat.h.
 */
#include <string.h>

#include "monstat.h"

/* A row: a percentage of @num over @den, or a rate of @num. */
static const struct {
	const char *label;
	bool pct;
	enum pool_counter num, den;
} rows[MONSTAT_NROWS] = {
	[MONSTAT_LOCAL_HIT_PCT] = { "Local Cache Hit Percent", true, POOL_C_LOCAL_HITS,
				    POOL_C_LOCAL_ATTEMPTS },
	[MONSTAT_LOCAL_ATTEMPT_RATE] = { "Local Cache Attempt Rate", false, POOL_C_LOCAL_ATTEMPTS,
					 0 },
	[MONSTAT_GLOBAL_HIT_PCT] = { "Global Cache Hit Percent", true, POOL_C_GLOBAL_HITS,
				     POOL_C_GLOBAL_ATTEMPTS },
	[MONSTAT_GLOBAL_ATTEMPT_RATE] = { "Global Cache Attempt Rate", false,
					  POOL_C_GLOBAL_ATTEMPTS, 0 },
	[MONSTAT_GBUF_READ_RATE] = { "Global Buf Read I/O Rate", false, POOL_C_GBUF_READ_IOS, 0 },
	[MONSTAT_GBUF_WRITE_RATE] = { "Global Buf Write I/O Rate", false, POOL_C_GBUF_WRITE_IOS,
				      0 },
	[MONSTAT_LBUF_READ_RATE] = { "Local Buf Read I/O Rate", false, POOL_C_LBUF_READ_IOS, 0 },
	[MONSTAT_LBUF_WRITE_RATE] = { "Local Buf Write I/O Rate", false, POOL_C_LBUF_WRITE_IOS, 0 },
};

void monstat_init(struct monstat *m)
{
	memset(m, 0, sizeof(*m));
}

double monstat_pct(uint64_t hits, uint64_t attempts)
{
	if (!attempts)
		return 0.0;
	/* Counters are read one by one (I7): a hit may show before its attempt. */
	if (hits > attempts)
		return 100.0;
	return 100.0 * (double)hits / (double)attempts;
}

double monstat_rate(uint64_t now, uint64_t before, double seconds)
{
	if (seconds <= 0 || now < before)
		return 0.0;
	return (double)(now - before) / seconds;
}

/* The value of row @r between snapshots @a (older) and @b over @seconds. */
static double row_value(enum monstat_row r, const uint64_t *a, const uint64_t *b, double seconds)
{
	if (rows[r].pct)
		return monstat_pct(b[rows[r].num] - a[rows[r].num],
				   b[rows[r].den] - a[rows[r].den]);
	return monstat_rate(b[rows[r].num], a[rows[r].num], seconds);
}

static bool went_back(const struct monstat *m, const uint64_t *c)
{
	for (int i = 0; i < POOL_C_FILE_MAX; i++) {
		if (c[i] < m->cprev[i])
			return true;
	}
	return false;
}

static void first_sample(struct monstat *m, double t, const uint64_t *c)
{
	monstat_init(m);
	m->samples = 1;
	m->t0 = m->tprev = t;
	memcpy(m->c0, c, sizeof(m->c0));
	memcpy(m->cprev, c, sizeof(m->cprev));
}

int monstat_feed(struct monstat *m, double t, const uint64_t c[POOL_C_FILE_MAX])
{
	if (!m->samples || went_back(m, c)) {
		first_sample(m, t, c);
		return 0;
	}
	if (t <= m->tprev)
		return 0;
	for (int r = 0; r < MONSTAT_NROWS; r++) {
		struct monstat_val *v = &m->row[r];

		v->cur = row_value(r, m->cprev, c, t - m->tprev);
		v->ave = row_value(r, m->c0, c, t - m->t0);
		if (!m->intervals || v->cur < v->min)
			v->min = v->cur;
		if (!m->intervals || v->cur > v->max)
			v->max = v->cur;
	}
	m->samples++;
	m->intervals++;
	m->tprev = t;
	memcpy(m->cprev, c, sizeof(m->cprev));
	return 1;
}

struct monstat_val monstat_get(const struct monstat *m, enum monstat_row r)
{
	struct monstat_val zero = { 0 };

	return (unsigned int)r < MONSTAT_NROWS ? m->row[r] : zero;
}

unsigned int monstat_intervals(const struct monstat *m)
{
	return m->intervals;
}

const char *monstat_label(enum monstat_row r)
{
	return (unsigned int)r < MONSTAT_NROWS ? rows[r].label : "?";
}

bool monstat_is_pct(enum monstat_row r)
{
	return (unsigned int)r < MONSTAT_NROWS && rows[r].pct;
}

/*
 * The application's bucket reads: each is a local hit or goes on to the pool,
 * where it hits or misses (and the backend is read). Not backend_reads:
 * read-ahead and deferred write's read-modify-write read the backend too.
 */
uint64_t monstat_reads(const uint64_t c[POOL_C_FILE_MAX])
{
	return c[POOL_C_LOCAL_HITS] + c[POOL_C_GLOBAL_ATTEMPTS];
}

/* The application's writes: straight to the backend, or deferred (whose
 * write-backs are backend writes too, counted once here). */
uint64_t monstat_writes(const uint64_t c[POOL_C_FILE_MAX])
{
	uint64_t through = c[POOL_C_BACKEND_WRITES] - c[POOL_C_FLUSH_WRITES];

	return (through <= c[POOL_C_BACKEND_WRITES] ? through : 0) + c[POOL_C_DEFERRED_WRITES];
}

double monstat_read_share(const uint64_t c[POOL_C_FILE_MAX])
{
	uint64_t r = monstat_reads(c), w = monstat_writes(c);

	return r + w ? monstat_pct(r, r + w) : -1.0;
}

bool monstat_candidate(const uint64_t c[POOL_C_FILE_MAX])
{
	return monstat_read_share(c) >= MONSTAT_CANDIDATE_PCT;
}
