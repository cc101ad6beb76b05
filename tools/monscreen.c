// SPDX-License-Identifier: MIT
/*
 * monscreen.c - the screens of `accel monitor`, drawn with ncurses.
 *
 * The cache display copies MONITOR RMS/ITEM=CAC line for line (rows, labels
 * and column positions), with a Totals block under it giving the counters
 * behind the percentages so they can be checked against `accel stat`. The
 * hot-files view fills the rest of the screen. In 80x24 all of it fits, with
 * seven hot files; a bigger window shows more files and longer paths.
 */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "monscreen.h"
#include "mountstat.h"
#include "util.h"

#define ROW_Y 3	 /* first MONITOR row */
#define HOT_Y 14 /* hot files title */

/* @s fitted in @width columns, keeping its tail ("...c/d/file"). */
static const char *fit(const char *s, int width, char *buf, size_t len)
{
	size_t n = strlen(s);

	if (width < 4 || (int)n <= width)
		return s;
	snprintf(buf, len, "...%s", s + n - (size_t)(width - 3));
	return buf;
}

static void draw_title(const struct mon_view *v, const char *what)
{
	char when[32], line[160];
	time_t t = (time_t)(v->snap->realtime_ns / 1000000000LL);
	struct tm tm;
	int n;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	n = snprintf(line, sizeof(line), "accelfs %s STATISTICS   on node %s   %s", what, v->host,
		     when);
	attron(A_BOLD);
	mvaddstr(0, n < COLS ? (COLS - n) / 2 : 0, line);
	attroff(A_BOLD);
}

/* printf at (@y, @x), clipped at the right edge instead of wrapping. */
static void putf(int y, int x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void putf(int y, int x, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mvaddnstr(y, x, buf, COLS - x);
}

static void draw_target(const struct mon_view *v)
{
	char buf[512];
	const char *name = v->want_file ? v->file_label : v->pool;
	unsigned long long streams =
	    v->want_file ? (v->file ? v->file->opens : 0) : v->snap->st.opens;
	int x;

	putf(1, 0, "%s %s%s", v->want_file ? "(File)" : "(Pool)",
	     fit(name, COLS - 48, buf, sizeof(buf)),
	     v->want_file && !v->file ? "  (not in the pool)" : "");
	x = getcurx(stdscr) + 2;
	putf(1, x < 39 ? 39 : x, "Active Streams: %llu", streams);
}

static void draw_rows(const struct mon_view *v)
{
	putf(ROW_Y - 1, 0, "%35s%9s%9s%9s", "CUR", "AVE", "MIN", "MAX");
	for (int r = 0; r < MONSTAT_NROWS; r++) {
		struct monstat_val x = monstat_get(v->ms, r);

		putf(ROW_Y + r, 0, "  %-25s%8.2f %8.2f %8.2f %8.2f", monstat_label(r), x.cur, x.ave,
		     x.min, x.max);
	}
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* "50.00" or "-" when nothing was attempted; @prec decimals. */
static const char *pct(uint64_t num, uint64_t den, int prec, char *buf, size_t len)
{
	if (!den)
		return "-";
	snprintf(buf, len, "%.*f", prec, monstat_pct(num, den));
	return buf;
}

/* The file's read share, "-" without I/O. */
static const char *share(const uint64_t *c, char *buf, size_t len)
{
	uint64_t r = monstat_reads(c);

	return pct(r, r + monstat_writes(c), 1, buf, len);
}

/* The counters behind the percentages, as `accel stat` shows them. */
static void draw_totals(const struct mon_view *v)
{
	const uint64_t *c = v->want_file ? (v->file ? v->file->c : NULL) : v->snap->st.c;
	char p1[16], p2[16], p3[16];

	if (!c)
		return;
	putf(ROW_Y + MONSTAT_NROWS, 0,
	     "  Totals   local hits %llu/%llu (%s %%)   global hits %llu/%llu (%s %%)",
	     ull(c[POOL_C_LOCAL_HITS]), ull(c[POOL_C_LOCAL_ATTEMPTS]),
	     pct(c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS], 2, p1, sizeof(p1)),
	     ull(c[POOL_C_GLOBAL_HITS]), ull(c[POOL_C_GLOBAL_ATTEMPTS]),
	     pct(c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS], 2, p2, sizeof(p2)));
	putf(ROW_Y + MONSTAT_NROWS + 1, 0,
	     "           reads %llu  writes %llu  read share %s %%  backend reads %llu",
	     ull(monstat_reads(c)), ull(monstat_writes(c)), share(c, p3, sizeof(p3)),
	     ull(c[POOL_C_BACKEND_READS]));
}

/* G: a global buffering candidate, R: open with sync=relaxed (its risk), B: both. */
static char flag_char(const struct pool_stats_file *f)
{
	bool g = monstat_candidate(f->c), r = f->flags & POOL_FILE_F_RELAXED;

	return g && r ? 'B' : r ? 'R' : g ? 'G' : ' ';
}

static void draw_hot_row(int y, const struct mon_view *v, const struct mon_hot *h)
{
	const struct pool_stats_file *f = h->f;
	const uint64_t *c = f->c;
	char p1[16], p2[16], p3[16], q[16], path[512];
	bool shown = v->want_file && f == v->file;

	if (f->quota == POOL_QUOTA_ALL)
		snprintf(q, sizeof(q), "all");
	else
		snprintf(q, sizeof(q), "%u", f->quota);
	if (shown)
		attron(A_BOLD);
	putf(y, 0, "%8.2f %8llu %6s %6s %5s %5s %5u %3u %c %s", h->rate,
	     ull(monstat_reads(c) + monstat_writes(c)),
	     pct(c[POOL_C_LOCAL_HITS], c[POOL_C_LOCAL_ATTEMPTS], 1, p1, sizeof(p1)),
	     pct(c[POOL_C_GLOBAL_HITS], c[POOL_C_GLOBAL_ATTEMPTS], 1, p2, sizeof(p2)),
	     share(c, p3, sizeof(p3)), q, f->resident, f->opens, flag_char(f),
	     fit(f->path, COLS - 56, path, sizeof(path)));
	if (shown)
		attroff(A_BOLD);
}

/* Hot files from line HOT_Y to line @last (inclusive). */
static void draw_hot(const struct mon_view *v, int last)
{
	int y = HOT_Y + 2;

	attron(A_BOLD);
	putf(HOT_Y, 0, "Hot files by %s: %zu of %zu", v->sort_name,
	     v->nhot < (size_t)(last - y + 1) ? v->nhot : (size_t)(last - y + 1), v->nhot);
	attroff(A_BOLD);
	putf(HOT_Y, getcurx(stdscr),
	     "   (G: >= %.0f %% reads, a global buffering candidate; R: sync=relaxed; B: both)",
	     MONSTAT_CANDIDATE_PCT);
	attron(A_UNDERLINE);
	putf(HOT_Y + 1, 0, "%8s %8s %6s %6s %5s %5s %5s %3s %c %-*s", "IO/s", "IOs", "LHIT%",
	     "GHIT%", "READ%", "QUOTA", "RES", "STR", 'G', COLS - 56 > 4 ? COLS - 56 : 4, "PATH");
	attroff(A_UNDERLINE);
	for (size_t i = 0; i < v->nhot && y <= last; i++, y++)
		draw_hot_row(y, v, &v->hot[i]);
}

static void draw_keys(const struct mon_view *v)
{
	char state[64];

	snprintf(state, sizeof(state), "%s every %g s", v->paused ? "PAUSED," : "sampling",
		 v->interval);
	attron(A_REVERSE);
	move(LINES - 1, 0);
	clrtoeol();
	if (v->help)
		putf(LINES - 1, 0,
		     "q quit  f pick file  s sort: IO/s IOs GHIT%% READ%% path  p pause  +/- "
		     "interval");
	else
		putf(LINES - 1, 0, "q quit  f file  m mount  s sort  p pause  +/-  h help   [%s]",
		     state);
	attroff(A_REVERSE);
	if (v->help)
		putf(LINES - 2, 0, "m pick mount  [%s]  pool %s, %llu files  (h, ? hide this)",
		     state, v->pool, ull(v->snap->nfiles));
}

int monscreen_pick_page(void)
{
	return LINES - 4 > 1 ? LINES - 4 : 1;
}

static void draw_picker(const struct mon_view *v)
{
	int page = monscreen_pick_page();
	size_t first = v->pick_sel / (size_t)page * (size_t)page;
	char path[512];

	attron(A_BOLD);
	putf(0, 0, "Choose what to monitor (Enter), Esc to go back: %zu files in %s", v->npick,
	     v->pool);
	attroff(A_BOLD);
	for (size_t i = first; i <= v->npick && i < first + (size_t)page; i++) {
		const struct pool_stats_file *f = i ? v->pick[i - 1] : NULL;
		int y = 2 + (int)(i - first);

		if (i == v->pick_sel)
			attron(A_REVERSE);
		if (f)
			putf(y, 0, " %-*s %3u:%-3u %10llu %3u", COLS - 24 > 8 ? COLS - 24 : 8,
			     fit(f->path, COLS - 24, path, sizeof(path)), major(f->dev),
			     minor(f->dev), ull(f->ino), f->opens);
		else
			putf(y, 0, " (Pool) all files of %-*s", COLS - 22 > 8 ? COLS - 22 : 8,
			     v->pool);
		if (i == v->pick_sel)
			attroff(A_REVERSE);
	}
}

/* One line a mount: the picker's, and the header (@m NULL). */
static void mount_line(int y, const struct mstate *m)
{
	char raw[512], path[512], hit[16];
	uint64_t n, err;
	int w = COLS - 40 > 8 ? COLS - 40 : 8;
	double h;

	if (!m) {
		putf(y, 0, " %-*s %7s %10s %6s %6s", w, "MOUNTPOINT", "PID", "REQUESTS", "ERRORS",
		     "HIT%");
		return;
	}
	mstate_req_totals(m, &n, &err);
	h = mountstat_hit_pct(m);
	if (h < 0)
		snprintf(hit, sizeof(hit), "-");
	else
		snprintf(hit, sizeof(hit), "%.1f", h);
	mountstat_printable(m->mountpoint, raw, sizeof(raw));
	putf(y, 0, " %-*s %7u %10llu %6llu %6s", w, fit(raw, w, path, sizeof(path)), m->pid, ull(n),
	     ull(err), hit);
}

static void draw_mount_picker(const struct mon_view *v)
{
	int page = monscreen_pick_page();
	size_t first = v->mount_sel / (size_t)page * (size_t)page;

	attron(A_BOLD);
	putf(0, 0, "Choose a mount (Enter), Esc to go back: %zu accelfs daemon%s", v->nmounts,
	     v->nmounts == 1 ? "" : "s");
	attroff(A_BOLD);
	attron(A_UNDERLINE);
	mount_line(1, NULL);
	attroff(A_UNDERLINE);
	for (size_t i = first; i < v->nmounts && i < first + (size_t)page; i++) {
		if (i == v->mount_sel)
			attron(A_REVERSE);
		mount_line(2 + (int)(i - first), &v->mounts[i]);
		if (i == v->mount_sel)
			attroff(A_REVERSE);
	}
	if (!v->nmounts)
		putf(2, 1, "(no accelfs daemon you can see is running)");
}

/* Requests of kind @r per second over the last interval, from @prev. */
static double kind_rate(const struct mon_view *v, const struct mstate_req *r)
{
	const struct mstate *p = v->mount_prev;

	for (unsigned int i = 0; p && i < p->nreq; i++)
		if (!strcmp(p->req[i].name, r->name))
			return monstat_rate(r->count, p->req[i].count, v->mount_dt);
	return p ? monstat_rate(r->count, 0, v->mount_dt) : 0;
}

/* The mount view: the daemon, its totals and rates, its requests by kind. */
static void draw_mount(const struct mon_view *v)
{
	const struct mstate *m = v->mount, *p = v->mount_prev;
	char buf[512], b1[32], b2[32], line[128];
	uint64_t n, err, pn = 0, perr;
	int y = 5;

	draw_title(v, "MOUNT");
	putf(1, 0, "(Mount) %s%s", fit(v->mount_label, COLS - 40, buf, sizeof(buf)),
	     m ? "" : "  (its daemon is gone)");
	if (!m)
		return;
	putf(1, getcurx(stdscr) + 2, "pid %u  pool %s", m->pid, m->pool[0] ? m->pool : "-");
	mstate_req_totals(m, &n, &err);
	if (p)
		mstate_req_totals(p, &pn, &perr);
	putf(2, 0, "  Requests %.2f/s  total %llu  errors %llu   read %s/s  written %s/s",
	     p ? monstat_rate(n, pn, v->mount_dt) : 0, ull(n), ull(err),
	     util_bytes((uint64_t)(p ? monstat_rate(m->read_bytes, p->read_bytes, v->mount_dt) : 0),
			b1, sizeof(b1)),
	     util_bytes(
		 (uint64_t)(p ? monstat_rate(m->write_bytes, p->write_bytes, v->mount_dt) : 0), b2,
		 sizeof(b2)));
	putf(3, 0, "  Pool     local hits %llu  global hits %llu  backend reads %llu  hit %s %%",
	     ull(m->c[POOL_C_LOCAL_HITS]), ull(m->c[POOL_C_GLOBAL_HITS]),
	     ull(m->c[POOL_C_BACKEND_READS]),
	     mountstat_hit_pct(m) < 0 ? "-"
				      : pct(m->c[POOL_C_LOCAL_HITS] + m->c[POOL_C_GLOBAL_HITS],
					    monstat_reads(m->c), 2, b1, sizeof(b1)));
	if (m->disk[0])
		putf(4, 0,
		     "  Disk     hits %llu  misses %llu  kept %llu  corrupt %llu  evicted %llu  %s",
		     ull(m->ds.hits), ull(m->ds.misses), ull(m->ds.puts), ull(m->ds.corrupt),
		     ull(m->ds.evicted), util_bytes(m->ds.used, b2, sizeof(b2)));
	mountstat_req_line(NULL, line, sizeof(line));
	attron(A_UNDERLINE);
	putf(y++, 0, "%9s %s", "REQ/s", line);
	attroff(A_UNDERLINE);
	for (unsigned int i = 0; i < m->nreq && y < LINES - (v->help ? 2 : 1); i++, y++) {
		mountstat_req_line(&m->req[i], line, sizeof(line));
		putf(y, 0, "%9.2f %s", kind_rate(v, &m->req[i]), line);
	}
}

void monscreen_draw(const struct mon_view *v)
{
	erase();
	if (COLS < MONSCREEN_MIN_COLS || LINES < MONSCREEN_MIN_LINES) {
		putf(0, 0, "accel monitor needs %dx%d;", MONSCREEN_MIN_COLS, MONSCREEN_MIN_LINES);
		putf(1, 0, "this window is %dx%d (q quits)", COLS, LINES);
	} else if (v->picking) {
		draw_picker(v);
		draw_keys(v);
	} else if (v->mount_picking) {
		draw_mount_picker(v);
		draw_keys(v);
	} else if (v->want_mount) {
		draw_mount(v);
		draw_keys(v);
	} else {
		draw_title(v, "CACHE");
		draw_target(v);
		draw_rows(v);
		draw_totals(v);
		draw_keys(v);
		draw_hot(v, LINES - (v->help ? 3 : 2));
	}
	refresh();
}
