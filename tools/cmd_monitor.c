// SPDX-License-Identifier: MIT
/*
 * cmd_monitor.c - `accel monitor [--file PATH | --mount MNT] [--pool NAME]
 * [--interval S]`: the live cache statistics of one file (or of the whole
 * pool) as OpenVMS MONITOR RMS/ITEM=CAC shows them, above a list of the
 * hottest files; or, as MONITOR's per-node views, one mount's daemon: its
 * requests by kind (the state files of cache/mstate.h, read each sample).
 *
 * Every interval it takes a read-only snapshot of the pool (no lock, so the
 * daemons never wait for it), feeds the shown target's counters to monstat
 * and computes each file's I/O rate from the previous snapshot. Keys are
 * read with a short timeout so a signal (SIGINT, SIGTERM, SIGHUP: the
 * dispatcher's handlers only set util_stop_sig) ends the loop within 0.2 s;
 * the terminal is then restored with endwin() outside any handler.
 */
#include <curses.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "monmount.h"
#include "monscreen.h"
#include "monstat.h"
#include "mountstat.h"
#include "poolsnap.h"
#include "util.h"

#define POLL_MS 200 /* longest wait for a key before looking at the signal flag */

enum mon_sort { SORT_RATE, SORT_TOTAL, SORT_GHIT, SORT_READ, SORT_PATH, SORT_MAX };

static const char *const sort_names[SORT_MAX] = { "IO/s", "IOs", "GHIT%", "READ%", "path" };

/* Intervals '+' and '-' step through. */
static const double steps[] = { 0.5, 1, 2, 3, 5, 10, 15, 30, 60, 120, 300 };
#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

struct monitor {
	struct pool *pool;
	const char *name;
	char host[256];
	struct poolsnap snap, prev; /* this sample and the one before */
	struct monstat ms;
	bool want_file;
	const char *file_label;
	uint64_t dev, ino;
	char label[POOL_PATH_LEN]; /* for a file chosen in the picker */
	struct mon_hot *hot;
	const struct pool_stats_file **pick;
	size_t nhot;
	enum mon_sort sort;
	double interval, next;
	bool paused, help, picking, quit;
	size_t pick_sel;
	const char *mount_arg; /* --mount MNT */
	struct mon_mounts mm;  /* the mount view */
};

static void help(void)
{
	printf("Usage: accel monitor [--file PATH | --mount MNT] [--pool NAME] [--interval S]\n\n"
	       "Live cache statistics, as OpenVMS MONITOR RMS/ITEM=CAC shows them: hit\n"
	       "percentages and attempt and buffer I/O rates (CUR, AVE, MIN, MAX) of one\n"
	       "file or of the whole pool, above the hot files sorted by I/O rate with\n"
	       "their hit percentages, read share, quota and global buffering candidates\n"
	       "(G: >= 75 %% of their I/O reads). The mount view shows one daemon: its\n"
	       "request rate, totals, errors and pool hits, and its requests by kind\n"
	       "with their rates and latency percentiles.\n\n"
	       "  --file PATH     start on PATH (inside an accelfs mount: its backing file)\n"
	       "  --pool NAME     the pool, \"name\" or \"/name\" (default: the pool of the\n"
	       "                  mount --file is in; else the one this user's daemons use,\n"
	       "                  %s for root, %s-UID else)\n"
	       "  --mount MNT     start on the mount view of the daemon serving MNT (and\n"
	       "                  its pool, unless --pool names another)\n"
	       "  --interval S    seconds between samples (default 3, 0.1 to 3600)\n"
	       "  -h, --help\n\n"
	       "Keys: q quit, f choose the file (or the pool), m choose a mount, s sort\n"
	       "key, p pause, + and - interval,\n"
	       "h or ? help. Needs a terminal; for scripts use 'accel stat --json'.\n"
	       "Exit status: 0 quit, 1 pool or file unavailable, 2 usage error or no\n"
	       "terminal, 128+N stopped by signal N.\n",
	       POOL_DEFAULT_NAME, POOL_DEFAULT_NAME);
}

static const struct cli_cmd cli = { .name = "monitor", .help = help };

static int take_interval(const struct cli_opt *opt, const char *arg)
{
	return util_parse_seconds("monitor", opt->name, arg, 0.1, 3600, opt->to);
}

static int parse(int argc, char **argv, struct monitor *m)
{
	const struct cli_opt opts[] = {
		{ .name = "file", .string = &m->file_label },
		{ .name = "pool", .string = &m->name },
		{ .name = "interval", .take = take_interval, .to = &m->interval },
		{ .name = "mount", .string = &m->mount_arg },
		{ NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);

	m->want_file = m->file_label != NULL;
	if (ret == CLI_GO_ON && m->mount_arg && m->file_label) {
		util_err("monitor", NULL, "--mount and --file are two views: choose one");
		return EXIT_USAGE;
	}
	return ret;
}

static int compare_hot(const void *a, const void *b, void *arg)
{
	const struct mon_hot *x = a, *y = b;
	const uint64_t *cx = x->f->c, *cy = y->f->c;
	double kx = 0, ky = 0;

	switch (*(enum mon_sort *)arg) {
	case SORT_PATH:
		return strcmp(x->f->path, y->f->path);
	case SORT_RATE:
		kx = x->rate, ky = y->rate;
		break;
	case SORT_GHIT:
		kx = monstat_pct(cx[POOL_C_GLOBAL_HITS], cx[POOL_C_GLOBAL_ATTEMPTS]);
		ky = monstat_pct(cy[POOL_C_GLOBAL_HITS], cy[POOL_C_GLOBAL_ATTEMPTS]);
		break;
	case SORT_READ:
		kx = monstat_read_share(cx), ky = monstat_read_share(cy);
		break;
	default:
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	/* Ties (and SORT_TOTAL): most I/O first, then slot order. */
	kx = (double)(monstat_reads(cx) + monstat_writes(cx));
	ky = (double)(monstat_reads(cy) + monstat_writes(cy));
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->f->slot < y->f->slot ? -1 : x->f->slot > y->f->slot;
}

static int compare_path(const void *a, const void *b)
{
	const struct pool_stats_file *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/*
 * The previous snapshot of @f, or NULL. Both snapshots are in slot order, so
 * one cursor @j walks the previous one as build_lists() walks the current.
 */
static const struct pool_stats_file *before(const struct monitor *m,
					    const struct pool_stats_file *f, size_t *j)
{
	const struct pool_stats_file *p;

	while (*j < m->prev.nfiles && m->prev.files[*j].slot < f->slot)
		(*j)++;
	if (*j == m->prev.nfiles)
		return NULL;
	p = &m->prev.files[*j];
	return p->slot == f->slot && p->dev == f->dev && p->ino == f->ino ? p : NULL;
}

/* Rebuild the hot list and the picker's list from the current snapshot. */
static int build_lists(struct monitor *m)
{
	size_t n = m->snap.nfiles;
	double dt = m->snap.t - m->prev.t;
	size_t j = 0;

	free(m->hot);
	free(m->pick);
	m->hot = calloc(n + 1, sizeof(*m->hot));
	m->pick = calloc(n + 1, sizeof(*m->pick));
	if (!m->hot || !m->pick)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct pool_stats_file *f = &m->snap.files[i], *p = before(m, f, &j);

		m->hot[i].f = f;
		m->hot[i].rate = p ? monstat_rate(monstat_reads(f->c) + monstat_writes(f->c),
						  monstat_reads(p->c) + monstat_writes(p->c), dt)
				   : 0;
		m->pick[i] = f;
	}
	m->nhot = n;
	qsort_r(m->hot, n, sizeof(*m->hot), compare_hot, &m->sort);
	qsort(m->pick, n, sizeof(*m->pick), compare_path);
	return 0;
}

/* The counters of what the cache display shows, or NULL (file not cached). */
static const uint64_t *target_counters(const struct monitor *m)
{
	const struct pool_stats_file *f;

	if (!m->want_file)
		return m->snap.st.c;
	f = poolsnap_find(&m->snap, m->dev, m->ino);
	return f ? f->c : NULL;
}

/* Take a new snapshot; the old one becomes the previous. */
static int sample(struct monitor *m)
{
	struct poolsnap t = m->prev;
	const uint64_t *c;
	int ret;

	m->prev = m->snap;
	m->snap = t;
	ret = poolsnap_take(m->pool, &m->snap);
	if (ret)
		return ret;
	monmount_sample(&m->mm);
	c = target_counters(m);
	if (c)
		monstat_feed(&m->ms, m->snap.t, c);
	return build_lists(m);
}

/* Show @f (NULL: the whole pool) from now on, with fresh statistics. */
static void choose(struct monitor *m, const struct pool_stats_file *f)
{
	const uint64_t *c;

	m->want_file = f != NULL;
	if (f) {
		m->dev = f->dev;
		m->ino = f->ino;
		snprintf(m->label, sizeof(m->label), "%s", f->path);
		m->file_label = m->label;
	}
	monstat_init(&m->ms);
	c = target_counters(m);
	if (c)
		monstat_feed(&m->ms, m->snap.t, c);
}

static void draw(const struct monitor *m)
{
	struct mon_view v = {
		.pool = m->name,
		.host = m->host,
		.snap = &m->snap,
		.want_file = m->want_file,
		.file_label = m->file_label,
		.ms = &m->ms,
		.hot = m->hot,
		.nhot = m->nhot,
		.sort_name = sort_names[m->sort],
		.interval = m->interval,
		.paused = m->paused,
		.help = m->help,
		.picking = m->picking,
		.pick = m->pick,
		.npick = m->snap.nfiles,
		.pick_sel = m->pick_sel,
	};

	monmount_view(&m->mm, &v);
	if (m->want_file)
		v.file = poolsnap_find(&m->snap, m->dev, m->ino);
	monscreen_draw(&v);
}

static void step_interval(struct monitor *m, int dir)
{
	double t = m->interval;

	for (size_t i = 0; i < N_STEPS; i++) {
		size_t k = dir > 0 ? i : N_STEPS - 1 - i;

		if (dir > 0 ? steps[k] > t + 1e-9 : steps[k] < t - 1e-9) {
			m->interval = steps[k];
			break;
		}
	}
	m->next = m->snap.t + m->interval;
}

/* Move the selection @sel of a list of @n lines by key @ch; true if it was such a key. */
static bool nav_key(size_t *sel, size_t n, int ch)
{
	size_t page = (size_t)monscreen_pick_page(), last = n ? n - 1 : 0;

	if (ch == KEY_UP || ch == 'k')
		*sel = *sel ? *sel - 1 : 0;
	else if (ch == KEY_DOWN || ch == 'j')
		*sel = *sel + 1 < n ? *sel + 1 : last;
	else if (ch == KEY_PPAGE)
		*sel = *sel > page ? *sel - page : 0;
	else if (ch == KEY_NPAGE)
		*sel = *sel + page < n ? *sel + page : last;
	else if (ch == KEY_HOME || ch == 'g')
		*sel = 0;
	else if (ch == KEY_END || ch == 'G')
		*sel = last;
	else
		return false;
	return true;
}

static bool enter_key(int ch)
{
	return ch == '\n' || ch == '\r' || ch == KEY_ENTER;
}

/* A key while the file picker is open. */
static void pick_key(struct monitor *m, int ch)
{
	if (nav_key(&m->pick_sel, m->snap.nfiles + 1, ch))
		return;
	if (enter_key(ch)) {
		m->mm.want = false;
		choose(m, m->pick_sel ? m->pick[m->pick_sel - 1] : NULL);
	}
	if (enter_key(ch) || ch == 27 || ch == 'q' || ch == 'f')
		m->picking = false;
}

/* A key while the mount picker is open. */
static void mount_pick_key(struct monitor *m, int ch)
{
	struct mon_mounts *mm = &m->mm;

	if (nav_key(&mm->sel, mm->n, ch))
		return;
	if (enter_key(ch) && mm->sel < mm->n)
		monmount_choose(mm, &mm->now[mm->sel]);
	if (enter_key(ch) || ch == 27 || ch == 'q' || ch == 'm')
		mm->picking = false;
}

static void key(struct monitor *m, int ch)
{
	if (m->picking) {
		pick_key(m, ch);
	} else if (m->mm.picking) {
		mount_pick_key(m, ch);
	} else if (ch == 'q' || ch == 'Q') {
		m->quit = true;
	} else if (ch == 'f') {
		m->picking = true;
		m->pick_sel = 0;
	} else if (ch == 'm') {
		m->mm.picking = true;
		m->mm.sel = 0;
	} else if (ch == 's') {
		m->sort = (m->sort + 1) % SORT_MAX;
		qsort_r(m->hot, m->nhot, sizeof(*m->hot), compare_hot, &m->sort);
	} else if (ch == 'p') {
		m->paused = !m->paused;
		m->next = util_now(); /* on resume, sample at once */
	} else if (ch == '+' || ch == '=') {
		step_interval(m, 1);
	} else if (ch == '-') {
		step_interval(m, -1);
	} else if (ch == 'h' || ch == '?') {
		m->help = !m->help;
	}
	/* KEY_RESIZE: ncurses has updated LINES and COLS; the loop redraws. */
}

/* Milliseconds to wait for a key before the next sample or signal check. */
static int wait_ms(const struct monitor *m)
{
	double left = (m->next - util_now()) * 1000;

	if (m->paused || left > POLL_MS)
		return POLL_MS;
	return left > 0 ? (int)left + 1 : 0;
}

static int run(struct monitor *m)
{
	int ret = sample(m);

	m->next = m->snap.t + m->interval;
	while (!ret && !m->quit && !util_stop_sig) {
		int ch;

		draw(m);
		timeout(wait_ms(m));
		ch = getch();
		if (ch != ERR)
			key(m, ch);
		if (!m->paused && util_now() >= m->next) {
			ret = sample(m);
			m->next += m->interval;
			if (m->next <= m->snap.t)
				m->next = m->snap.t + m->interval;
		}
	}
	return ret;
}

/* Curses on the terminal; NULL (and a message) when it cannot be used. */
static SCREEN *screen_start(void)
{
	SCREEN *scr = newterm(NULL, stdout, stdin);

	if (!scr) {
		util_err("monitor", NULL, "cannot drive terminal type '%s'",
			 getenv("TERM") ? getenv("TERM") : "(TERM unset)");
		return NULL;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	return scr;
}

static void host_name(char *buf, size_t len)
{
	char *dot;

	if (gethostname(buf, len - 1) < 0)
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
}

static void monitor_free(struct monitor *m)
{
	poolsnap_free(&m->snap);
	poolsnap_free(&m->prev);
	free(m->hot);
	free(m->pick);
	monmount_free(&m->mm);
	pool_close(m->pool);
}

/* With the pool open: the screen until q or a signal; the exit status. */
static int monitor_screen(struct monitor *m)
{
	SCREEN *scr = screen_start();
	int ret;

	if (!scr)
		return EXIT_FAIL;
	ret = run(m);
	endwin();
	delscreen(scr);
	if (ret) {
		util_err("monitor", NULL, "pool %s: %s", m->name, strerror(-ret));
		return EXIT_FAIL;
	}
	return cmd_signal_exit();
}

/*
 * --mount MNT: start on its daemon's view, with the pool it uses (unless
 * --pool names another). CLI_GO_ON, or the exit status after one line.
 */
static int start_mount(struct monitor *m)
{
	static struct mstate s; /* one, read once */

	if (!m->mount_arg)
		return CLI_GO_ON;
	if (mountstat_find("monitor", m->mount_arg, &s))
		return EXIT_FAIL;
	monmount_choose(&m->mm, &s);
	if (!m->name && s.pool[0])
		m->name = s.pool;
	return CLI_GO_ON;
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor m = { .interval = 3 };
	char msg[512], name[POOL_NAME_LEN];
	int ret = parse(argc, argv, &m);

	if (ret >= 0)
		return ret;
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		util_err("monitor", NULL,
			 "not a terminal; use 'accel stat' (or 'accel stat --json') instead");
		return EXIT_USAGE;
	}
	ret = start_mount(&m);
	if (ret >= 0)
		return ret;
	ret = poolsnap_target(m.name, m.file_label, name, &m.dev, &m.ino, msg, sizeof(msg));
	if (ret) {
		util_err("monitor", NULL, "%s", msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	m.name = name;
	ret = poolsnap_open(m.name, &m.pool, msg, sizeof(msg));
	if (ret) {
		util_err("monitor", NULL, "%s", msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	host_name(m.host, sizeof(m.host));
	ret = monitor_screen(&m);
	monitor_free(&m);
	return ret;
}
