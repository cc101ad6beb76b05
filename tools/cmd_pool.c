// SPDX-License-Identifier: MIT
/*
 * cmd_pool.c - `accel pool`: the global buffer pools of this host.
 *
 *   accel pool [NAME] [--json]          one pool's geometry, totals, users
 *   accel pool --list [--json]          every accelfs pool in /dev/shm
 *   accel pool --reset NAME [--force]   remove a pool (pool_unlink)
 *   accel pool --recover [NAME]         write dead daemons' deferred bytes back
 *
 * A pool is sized once and outlives its daemons (RMS KEEP); removing one is
 * how an incompatible (older layout) or corrupt pool is cleared, or a pool
 * is resized at the next mount. Whether daemons still use a pool is told by
 * /proc/PID/maps: the segment is mapped for as long as a daemon is attached,
 * whatever happened to its handles. --reset refuses while any process maps
 * it: those keep their (unlinked) mapping, and the next mount would create
 * a second pool beside it, so the two would no longer share buffers.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "cmd.h"
#include "json.h"
#include "pool.h"
#include "pool_name.h"
#include "poolseg.h"
#include "poolsnap.h"
#include "progress.h"
#include "util.h"

#define MAX_USERS 16

struct pool_opts {
	bool json, list, reset, force, recover;
	unsigned int recovered, lost, kept; /* --recover: what happened */
	struct progress prog;		    /* --recover on a terminal: buffers done */
	char name[POOL_NAME_LEN];
};

static void help(void)
{
	printf("Usage: accel pool [NAME] [--json]\n"
	       "       accel pool --list [--json]\n"
	       "       accel pool --reset NAME [--force]\n"
	       "       accel pool --recover [NAME]\n\n"
	       "Show a global buffer pool: geometry, quotas, active streams, resident\n"
	       "buffers, hits and the processes attached to it (default: the pool this\n"
	       "user's daemons use, /accelfs-default for root, /accelfs-default-UID else).\n"
	       "NAME is a shared-memory name, \"/name\" or \"name\" (/dev/shm/name).\n\n"
	       "  --list        list the accelfs pools in /dev/shm and whether this\n"
	       "                version of accelfs can use them (untrusted: not ours)\n"
	       "  --reset NAME  remove pool NAME (incompatible, corrupt, or to be\n"
	       "                recreated with another size at the next mount); refused\n"
	       "                while processes have it mapped\n"
	       "  --force       with --reset: remove it even so; attached daemons keep\n"
	       "                their mapping, and the next mount creates a new pool\n"
	       "  --recover     write the deferred bytes of daemons that died back to\n"
	       "                their files when each is provably the same file, drop\n"
	       "                them when not; one line per file (needs the rights of\n"
	       "                the daemons: CAP_DAC_READ_SEARCH to open file handles)\n"
	       "  --json        one JSON object (schemas in accel-pool(1))\n"
	       "  -h, --help\n\n"
	       "Exit status: 0 done, 1 pool missing, unusable or in use, 2 usage error.\n");
}

static const struct cli_cmd cli = { .name = "pool", .help = help, .own_operands = true };

/* "/name" from "name" or "/name" into o->name; EXIT_USAGE if it cannot be a pool name. */
static int take_name(struct pool_opts *o, const char *arg)
{
	char why[160];

	if (pool_name_parse(arg, o->name, why, sizeof(why))) {
		util_err("pool", NULL, "%s", why);
		return EXIT_USAGE;
	}
	return 0;
}

/* Why the options and @nargs arguments do not go together, or NULL. */
static const char *conflict(const struct pool_opts *o, int nargs)
{
	if (nargs > 1)
		return "one pool NAME at a time";
	if (o->reset && !nargs)
		return "--reset needs a pool NAME";
	if (o->list && (o->reset || nargs))
		return "--list takes no NAME and no --reset";
	if (o->force && !o->reset)
		return "--force goes with --reset";
	if (o->reset && o->json)
		return "--reset has no --json";
	if (o->recover && (o->json || o->list || o->reset || o->force))
		return "--recover goes with nothing but a NAME";
	return NULL;
}

static int parse(int argc, char **argv, struct pool_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "json", .flag = &o->json },	    { .name = "list", .flag = &o->list },
		{ .name = "reset", .flag = &o->reset },	    { .name = "force", .flag = &o->force },
		{ .name = "recover", .flag = &o->recover }, { NULL },
	};
	int ret = cli_parse(&cli, opts, argc, argv);
	const char *why;

	if (ret != CLI_GO_ON)
		return ret;
	why = conflict(o, argc - optind);
	if (why) {
		util_err("pool", NULL, "%s (see 'accel pool --help')", why);
		return EXIT_USAGE;
	}
	if (argc > optind)
		return take_name(o, argv[optind]) ? EXIT_USAGE : -1;
	poolseg_default_name(o->name, sizeof(o->name));
	return -1;
}

/* The processes that map a pool, from poolseg_users(). */
struct users {
	pid_t pid[MAX_USERS];
	int n;			       /* how many map it (may exceed MAX_USERS), or -errno */
	char text[MAX_USERS * 12 + 8]; /* "12 34" */
};

static void users_get(const char *name, struct users *u)
{
	size_t at = 0;

	u->n = poolseg_users(name, u->pid, MAX_USERS);
	u->text[0] = '\0';
	for (int i = 0; i < u->n && i < MAX_USERS; i++)
		at += (size_t)snprintf(u->text + at, sizeof(u->text) - at, "%s%d", i ? " " : "",
				       (int)u->pid[i]);
	if (u->n > MAX_USERS)
		snprintf(u->text + at, sizeof(u->text) - at, " ...");
}

/*
 * A daemon goes on with the pool mapped for a moment after `fusermount3 -u`
 * returns (it writes its deferred bytes back, then detaches), so `fusermount3
 * -u MNT; accel pool --reset NAME` would race it: wait up to RESET_WAIT_MS
 * for @u's processes to go, then let the caller refuse if they have not.
 */
enum { RESET_WAIT_MS = 3000, RESET_POLL_MS = 50 };

static void users_wait_gone(const char *name, struct users *u)
{
	for (int waited = 0; u->n > 0 && waited < RESET_WAIT_MS; waited += RESET_POLL_MS) {
		nanosleep(&(struct timespec){ .tv_nsec = RESET_POLL_MS * 1000000L }, NULL);
		users_get(name, u);
	}
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* Why @name cannot be used, with the remedy for a pool that is in the way. */
static int open_error(const char *name, int ret, const char *msg)
{
	if (ret == -EPROTO || ret == -EUCLEAN)
		util_err("pool", NULL, "%s; remove it with 'accel pool --reset %s'", msg, name);
	else
		util_err("pool", NULL, "%s", msg);
	return ret == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
}

static void text_pool(const char *name, const struct poolsnap *s, const struct pool_header *h,
		      const struct users *u)
{
	const struct pool_info *in = &s->info;
	const uint64_t *c = s->st.c;
	char b1[32], b2[32], b3[32], when[32];
	time_t t = (time_t)(h->created_ns / 1000000000ULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	printf("Pool %s (/dev/shm%s), layout version %u\n", name, name, h->version);
	printf("  %-14s %u buffers x %s = %s data + %s metadata, %u shards\n", "geometry",
	       in->nbufs, util_bytes(in->bucket_size, b1, sizeof(b1)),
	       util_bytes(in->data_size, b2, sizeof(b2)), util_bytes(in->meta_size, b3, sizeof(b3)),
	       in->nshards);
	printf("  %-14s %u of %u in use\n", "file slots", in->files_used, in->nfiles);
	printf("  %-14s %u buffers reserved (at most 7/8 of the pool)\n", "quotas", in->reserved);
	printf("  %-14s %llu active streams, %llu resident buffers\n", "now", ull(s->st.opens),
	       ull(s->st.resident));
	printf("  %-14s local %llu of %llu, global %llu of %llu; %llu backend reads\n", "hits",
	       ull(c[POOL_C_LOCAL_HITS]), ull(c[POOL_C_LOCAL_ATTEMPTS]), ull(c[POOL_C_GLOBAL_HITS]),
	       ull(c[POOL_C_GLOBAL_ATTEMPTS]), ull(c[POOL_C_BACKEND_READS]));
	printf("  %-14s %s by pid %u\n", "created", when, h->creator_pid);
	if (u->n >= 0)
		printf("  %-14s %d process%s%s%s%s\n", "attached", u->n, u->n == 1 ? "" : "es",
		       u->n ? " (pid " : "", u->text, u->n ? ")" : "");
}

static void json_pool(const char *name, const struct poolsnap *s, const struct pool_header *h,
		      const struct users *u)
{
	const struct pool_info *in = &s->info;
	const uint64_t *c = s->st.c;

	printf("{\"schema\": \"accelfs-pool/1\", \"name\": \"%s\", \"version\": %u, "
	       "\"total_bytes\": %llu, \"data_bytes\": %llu, \"meta_bytes\": %llu, "
	       "\"bucket_size\": %u, \"buffers\": %u, \"shards\": %u, \"file_slots\": %u, "
	       "\"file_slots_used\": %u, \"reserved_buffers\": %u, \"active_streams\": %llu, "
	       "\"resident_buffers\": %llu, \"local_attempts\": %llu, \"local_hits\": %llu, "
	       "\"global_attempts\": %llu, \"global_hits\": %llu, \"backend_reads\": %llu, "
	       "\"created_ns\": %llu, \"creator_pid\": %u, \"attached_pids\": [",
	       name, h->version, ull(in->total_size), ull(in->data_size), ull(in->meta_size),
	       in->bucket_size, in->nbufs, in->nshards, in->nfiles, in->files_used, in->reserved,
	       ull(s->st.opens), ull(s->st.resident), ull(c[POOL_C_LOCAL_ATTEMPTS]),
	       ull(c[POOL_C_LOCAL_HITS]), ull(c[POOL_C_GLOBAL_ATTEMPTS]),
	       ull(c[POOL_C_GLOBAL_HITS]), ull(c[POOL_C_BACKEND_READS]), ull(h->created_ns),
	       h->creator_pid);
	for (int i = 0; i < u->n && i < MAX_USERS; i++)
		printf("%s%d", i ? ", " : "", (int)u->pid[i]);
	printf("]}\n");
}

static int show_pool(const struct pool_opts *o)
{
	struct poolsnap s = { 0 };
	struct pool_header h;
	struct pool *pool;
	struct users u;
	char msg[512];
	uint64_t size;
	int ret = poolsnap_open(o->name, &pool, msg, sizeof(msg));

	if (ret)
		return open_error(o->name, ret, msg);
	ret = poolsnap_take(pool, &s);
	pool_close(pool);
	if (!ret)
		ret = poolseg_header(o->name, &h, &size);
	if (ret) {
		util_err("pool", NULL, "pool %s: %s", o->name, strerror(-ret));
		poolsnap_free(&s);
		return EXIT_FAIL;
	}
	users_get(o->name, &u);
	if (o->json)
		json_pool(o->name, &s, &h, &u);
	else
		text_pool(o->name, &s, &h, &u);
	poolsnap_free(&s);
	return 0;
}

/* The verdict on segment @name with header @h: "ok", "incompatible" or "corrupt". */
static const char *verdict(const char *name, char *why, size_t len)
{
	struct pool *pool;
	int ret = pool_open_readonly(name, &pool, why, len);

	if (!ret) {
		pool_close(pool);
		return "ok";
	}
	if (!why[0])
		snprintf(why, len, "%s", strerror(-ret));
	return ret == -EPROTO ? "incompatible" : ret == -EUCLEAN ? "corrupt" : "unreadable";
}

static void list_one(const struct pool_opts *o, const char *name, const struct pool_header *h,
		     uint64_t size, bool *first)
{
	bool ours = h->version == POOL_LAYOUT_VERSION && h->endian == POOL_ENDIAN_TAG;
	char why[256], b1[32], b2[32];
	const char *v = verdict(name, why, sizeof(why));

	if (o->json) {
		printf("%s\n    {\"name\": \"%s\", \"total_bytes\": %llu, \"version\": %u, "
		       "\"bucket_size\": %u, \"buffers\": %u, \"status\": \"%s\"}",
		       *first ? "" : ",", name, ull(size), h->version, ours ? h->bucket_size : 0,
		       ours ? h->nbufs : 0, v);
	} else {
		if (*first)
			printf("%-28s %10s %9s %8s %7s  %s\n", "NAME", "SIZE", "BUCKET", "BUFFERS",
			       "VERSION", "STATUS");
		snprintf(b2, sizeof(b2), "-");
		if (ours)
			util_bytes(h->bucket_size, b2, sizeof(b2));
		printf("%-28s %10s %9s %8u %7u  %s%s%s\n", name, util_bytes(size, b1, sizeof(b1)),
		       b2, ours ? h->nbufs : 0, h->version, v, strcmp(v, "ok") ? ": " : "",
		       strcmp(v, "ok") ? why : "");
	}
	*first = false;
}

/* A segment named like ours that fails the trust check: named, not read. */
static void list_untrusted(const struct pool_opts *o, const char *name, const char *why,
			   bool *first)
{
	if (o->json) {
		printf("%s\n    {\"name\": \"%s\", \"status\": \"untrusted\", \"why\": ",
		       *first ? "" : ",", name);
		json_string(why);
		printf("}");
	} else {
		if (*first)
			printf("%-28s %10s %9s %8s %7s  %s\n", "NAME", "SIZE", "BUCKET", "BUFFERS",
			       "VERSION", "STATUS");
		printf("%-28s %10s %9s %8s %7s  untrusted: %s\n", name, "-", "-", "-", "-", why);
	}
	*first = false;
}

static int list_pools(const struct pool_opts *o)
{
	DIR *dir = opendir("/dev/shm");
	struct pool_header h;
	struct dirent *d;
	char name[POOL_NAME_LEN], why[320];
	bool first = true;
	uint64_t size;

	if (!dir) {
		util_err("pool", "/dev/shm", "%s", strerror(errno));
		return EXIT_FAIL;
	}
	if (o->json)
		printf("{\"schema\": \"accelfs-pool-list/1\", \"pools\": [");
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || strlen(d->d_name) + 2 > sizeof(name))
			continue;
		name[0] = '/';
		memcpy(name + 1, d->d_name, strlen(d->d_name) + 1); /* length checked above */
		if (poolseg_trust(name, why, sizeof(why)) == -EPERM) {
			if (!strncmp(d->d_name, "accel", 5))
				list_untrusted(o, name, why, &first);
		} else if (poolseg_header(name, &h, &size) == 0) {
			list_one(o, name, &h, size, &first);
		}
	}
	closedir(dir);
	if (o->json)
		printf("%s]}\n", first ? "" : "\n  ");
	else if (first)
		printf("no accelfs pools in /dev/shm\n");
	return 0;
}

static int reset(const struct pool_opts *o)
{
	struct pool_header h;
	struct users u;
	char path[128], msg[512];
	uint64_t size;
	struct stat st;
	int ret;

	snprintf(path, sizeof(path), "/dev/shm%s", o->name);
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			poolseg_missing(o->name, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "pool %s: %s", o->name, strerror(errno));
		util_err("pool", NULL, "%s", msg);
		return EXIT_FAIL;
	}
	ret = poolseg_header(o->name, &h, &size);
	if (ret == -EPROTO && strncmp(o->name, "/accel", 6) && !o->force) {
		util_err("pool", NULL, "%s is not an accelfs pool; use --force to remove it anyway",
			 o->name);
		return EXIT_FAIL;
	}
	users_get(o->name, &u);
	if (u.n > 0 && !o->force)
		users_wait_gone(o->name, &u);
	if (u.n > 0 && !o->force) {
		util_err("pool", NULL,
			 "pool %s is in use by %d process%s (pid %s): unmount first, or use "
			 "--force (they keep their mapping; the next mount creates a new pool)",
			 o->name, u.n, u.n == 1 ? "" : "es", u.text);
		return EXIT_FAIL;
	}
	if (u.n > 0)
		util_err("pool", NULL,
			 "warning: %d process%s (pid %s) keep%s the old pool mapped until they "
			 "exit; the next mount creates a new pool",
			 u.n, u.n == 1 ? "" : "es", u.text, u.n == 1 ? "s" : "");
	/* a squatter's directory in place of the pool goes too */
	ret = S_ISDIR(st.st_mode) ? (rmdir(path) ? -errno : 0) : pool_unlink(o->name);
	if (ret) {
		util_err("pool", NULL, "pool %s: cannot remove: %s", o->name, strerror(-ret));
		return EXIT_FAIL;
	}
	printf("removed pool %s\n", o->name);
	return 0;
}

/* One line per file pool_recover_all() met. */
static void recover_line(void *arg, const struct pool_recover_note *n)
{
	struct pool_opts *o = arg;
	const char *sep = n->err ? ": " : "", *err = n->err ? strerror(n->err) : "";

	o->recovered += n->recovered;
	o->lost += n->lost;
	progress_clear(&o->prog);
	if (n->lost)
		printf("%s (dev %llu inode %llu): %u buffers dropped: %s%s%s\n", n->path,
		       ull(n->dev), ull(n->ino), n->lost, n->why, sep, err);
	else if (n->why && ++o->kept)
		printf("%s (dev %llu inode %llu): %u buffers written back, the rest kept: %s%s%s\n",
		       n->path, ull(n->dev), ull(n->ino), n->recovered, n->why, sep, err);
	else
		printf("%s (dev %llu inode %llu): %u buffers written back\n", n->path, ull(n->dev),
		       ull(n->ino), n->recovered);
	fflush(stdout);
	progress_done(&o->prog, n->recovered + n->lost, 0); /* shown while the next file is done */
}

/* --recover: cache/'s recovery (pool_recover_all), on a pool this user may write. */
static int recover(struct pool_opts *o)
{
	char err[512] = "";
	struct pool_config cfg = {
		.name = o->name, .no_create = true, .mode = 0660, .err = err, .errlen = sizeof(err)
	};
	struct pool *pool;
	int ret = pool_open(&cfg, &pool);

	if (ret == -ENOENT)
		poolseg_missing(o->name, err, sizeof(err));
	if (ret) {
		util_err("pool", NULL, "%s", err[0] ? err : strerror(-ret));
		return EXIT_FAIL;
	}
	progress_init(&o->prog, "pool --recover", "buffers", 0, 0, true);
	progress_update(0, &o->prog); /* the first file may take long: say we are at it */
	ret = pool_recover_all(pool, recover_line, o);
	progress_clear(&o->prog);
	pool_close(pool);
	if (ret < 0) {
		util_err("pool", NULL, "pool %s: recovery failed: %s", o->name, strerror(-ret));
		return EXIT_FAIL;
	}
	printf("pool %s: %u deferred buffers written back, %u dropped\n", o->name, o->recovered,
	       o->lost);
	return o->kept ? EXIT_FAIL : 0;
}

int cmd_pool(int argc, char **argv)
{
	struct pool_opts o = { 0 };
	int ret = parse(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.reset)
		ret = reset(&o);
	else if (o.recover)
		ret = recover(&o);
	else if (o.list)
		ret = list_pools(&o);
	else
		ret = show_pool(&o);
	if (fflush(stdout))
		ret = EXIT_FAIL;
	return ret;
}
