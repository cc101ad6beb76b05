// SPDX-License-Identifier: MIT
/*
 * cmd_show.c - `accel show FILE... [--json] [--pool NAME]`: a file's tuning
 * attributes (accel set) with what the daemon will make of them, and the
 * file's live entry in the global buffer pool: active streams, quota asked
 * and granted, resident buffers, hits. The pool is read without a lock
 * (poolsnap.h), so showing never slows a daemon; a pool that cannot be read
 * is mentioned, and only an explicitly named one makes the command fail.
 *
 * Each file is looked up in the pool poolseg_choose() picks for it: --pool,
 * else the pool of the mount the file is in, else the default; every pool
 * is snapshot once per run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "json.h"
#include "mountres.h"
#include "pool_name.h"
#include "poolseg.h"
#include "poolsnap.h"
#include "tuning.h"
#include "util.h"

#define SHOW_POOLS 8 /* pools one run looks into; the files of a ninth are shown without */

/* A pool as this run found it. */
struct pool_view {
	char name[POOL_NAME_LEN];
	struct poolsnap snap; /* valid if have_snap */
	bool have_snap;
	char msg[512]; /* why there is no snapshot */
};

struct show_opts {
	bool json;
	const char *pool_arg; /* --pool as given, or NULL */
	struct pool_view views[SHOW_POOLS];
	size_t nviews;
	struct pool_view none; /* a file whose mount uses no pool, or a ninth pool */
	bool head;	       /* JSON: the head is printed */
	bool first;	       /* JSON: no file printed yet */
};

/* What one file looks like: path, backing file, attributes, pool entry. */
struct show_file {
	const char *path;
	char backing[PATH_MAX];
	bool resolved; /* path was inside an accelfs mount */
	int xattr_err; /* -ENOTSUP etc. from reading the attributes, or 0 */
	bool set[TUNING_N];
	char val[TUNING_N][TUNING_VALUE_LEN];
	bool regular;
	struct tuning_values tv;	     /* as the daemon reads them (valid values only) */
	bool tv_read;			     /* tv could be read (the file could be opened) */
	const struct pool_view *view;	     /* the pool it was looked up in */
	const struct pool_stats_file *entry; /* NULL: not in the pool */
};

static void help(void)
{
	printf("Usage: accel show FILE... [--json] [--pool NAME]\n\n"
	       "Show each FILE's per-file tuning (the user.accelfs.* attributes that\n"
	       "'accel set' writes; '(mount default)' where none is set) and, if the pool\n"
	       "can be read, the file's entry in it: active streams, quota asked and\n"
	       "granted, resident buffers, local and global hits. A FILE inside an accelfs\n"
	       "mount is shown as its backing file.\n\n"
	       "  --pool NAME   the pool, \"name\" or \"/name\" (default: the pool of the\n"
	       "                mount FILE is in; else /accelfs-default for root,\n"
	       "                /accelfs-default-UID for others, as the daemon)\n"
	       "  --json        one JSON object, schema \"accelfs-show/1\" (accel-show(1))\n"
	       "  -h, --help\n\n"
	       "Exit status: 0 shown, 1 a file or the named pool could not be read,\n"
	       "2 usage error.\n");
}

static const struct cli_cmd cli = { .name = "show", .help = help, .operands = "FILE" };

static int parse(int argc, char **argv, struct show_opts *o)
{
	const struct cli_opt opts[] = {
		{ .name = "json", .flag = &o->json },
		{ .name = "pool", .string = &o->pool_arg },
		{ NULL },
	};

	return cli_parse(&cli, opts, argc, argv);
}

/* Attach to pool @v->name and take the one snapshot of this run. 0, or -errno. */
static int take_pool(struct pool_view *v)
{
	struct pool *pool;
	int ret;

	ret = poolsnap_open(v->name, &pool, v->msg, sizeof(v->msg));
	if (ret)
		return ret;
	ret = poolsnap_take(pool, &v->snap);
	pool_close(pool);
	if (ret) {
		char msg[sizeof(v->msg)];

		snprintf(msg, sizeof(msg), "pool %s: %s", v->name, strerror(-ret));
		memcpy(v->msg, msg, sizeof(msg));
	}
	v->have_snap = !ret;
	return ret;
}

/* The view of pool @name, taken at its first use. */
static struct pool_view *view_of(struct show_opts *o, const char *name)
{
	struct pool_view *v;

	for (size_t i = 0; i < o->nviews; i++)
		if (!strcmp(o->views[i].name, name))
			return &o->views[i];
	if (o->nviews == SHOW_POOLS) {
		snprintf(o->none.msg, sizeof(o->none.msg), "more than %d pools in one run",
			 SHOW_POOLS);
		return &o->none;
	}
	v = &o->views[o->nviews++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	take_pool(v);
	return v;
}

/* The pool @f is looked up in (poolseg_choose(): --pool, its mount's, the default). */
static const struct pool_view *choose_view(struct show_opts *o, const char *mountpoint)
{
	char name[POOL_NAME_LEN];

	if (poolseg_choose(o->pool_arg, mountpoint, name, o->none.msg, sizeof(o->none.msg)))
		return &o->none; /* a mount without a pool; --pool was checked before */
	return view_of(o, name);
}

/* The attributes as the daemon reads them at open (for the passthrough verdict). */
static void look_tuning(struct show_file *f)
{
	int fd = f->regular ? open(f->backing, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) : -1;

	f->tv_read = fd >= 0;
	if (fd >= 0) {
		tuning_read_fd(fd, &f->tv);
		close(fd);
	}
}

/*
 * Whether the file's opens go to kernel passthrough, as the daemon decides
 * (fuse/passthrough.c, rule: tuning_passthrough_need). The mount's own
 * options are the daemon's to know: the verdict names what they must be.
 * @why receives the reason of a "no".
 */
static const char *pt_verdict(const struct show_file *f, const char **why)
{
	*why = NULL;
	if (!f->regular)
		return "no";
	if (!f->tv_read)
		return "unknown";
	if (f->tv.passthrough == TUNING_PT_NEVER)
		return "never";
	if (f->tv.passthrough == TUNING_PT_ALWAYS)
		return "always";
	*why = tuning_passthrough_need(&f->tv, NULL);
	return *why ? "no" : "auto";
}

static void text_passthrough(const struct show_file *f)
{
	const char *why, *v = pt_verdict(f, &why);

	printf("  %-17s ", "kernel passthrough");
	if (!strcmp(v, "never"))
		printf("never: every open is served by the daemon\n");
	else if (!strcmp(v, "always"))
		printf("yes on mounts that negotiated passthrough (passthrough=auto\n"
		       "                    with writeback=off, or always)\n");
	else if (!strcmp(v, "auto"))
		printf("yes on mounts with passthrough=always, or =auto with\n"
		       "                    writeback=off whose deferred_write and sync do not\n"
		       "                    apply (deferred_write=off or cache=off, sync=strict);\n"
		       "                    on other writeback=off mounts its read-only opens\n"
		       "                    once the daemon saw it read in bulk (accel stat\n"
		       "                    --mount lists the files passed through now)\n");
	else if (why)
		printf("no under passthrough=auto (%s asks for the daemon); yes\n"
		       "                    under passthrough=always\n",
		       why);
	else
		printf("%s\n", f->regular ? "unknown (the file cannot be opened to read its "
					    "attributes)"
					  : "no (not a regular file)");
}

/* Fill @f for @f->path. 0, or -errno if the file cannot be looked at. */
static int look(struct show_opts *o, struct show_file *f, struct mountres *r)
{
	struct stat st;
	int ret;

	ret = mountres_resolve(f->path, r);
	if (ret < 0)
		return ret;
	f->resolved = r->mountpoint[0] != '\0';
	snprintf(f->backing, sizeof(f->backing), "%s", r->path);
	if (stat(f->backing, &st))
		return -errno;
	for (int k = 0; k < TUNING_N && !f->xattr_err; k++) {
		ret = tuning_get(f->backing, k, f->val[k]);
		if (ret == -ERANGE) { /* longer than any valid value */
			snprintf(f->val[k], TUNING_VALUE_LEN, "(too long)");
			ret = 1;
		}
		if (ret < 0)
			f->xattr_err = ret;
		f->set[k] = ret > 0;
	}
	f->regular = S_ISREG(st.st_mode);
	look_tuning(f);
	f->view = choose_view(o, r->mountpoint);
	f->entry = f->view->have_snap ? poolsnap_find(&f->view->snap, st.st_dev, st.st_ino) : NULL;
	return 0;
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

static void text_hits(const char *what, uint64_t hits, uint64_t attempts)
{
	printf("    %-15s %llu of %llu", what, ull(hits), ull(attempts));
	if (attempts)
		printf(" (%.1f %%)", 100.0 * (double)hits / (double)attempts);
	putchar('\n');
}

static void text_entry(const struct show_file *f)
{
	const struct pool_stats_file *e = f->entry;

	if (!f->view->have_snap) {
		printf("  pool entry        none: %s\n", f->view->msg);
		return;
	}
	if (!e) {
		printf("  pool entry        none in pool %s (not opened through accelfs since\n"
		       "                    the pool was created, or its slot was reused)\n",
		       f->view->name);
		return;
	}
	printf("  pool entry        pool %s, slot %u\n", f->view->name, e->slot);
	printf("    %-15s %u\n", "active streams", e->opens);
	if (e->quota == POOL_QUOTA_ALL)
		printf("    %-15s all", "quota");
	else
		printf("    %-15s %u", "quota", e->quota);
	printf(" (granted %u buffers)\n", e->reserve);
	printf("    %-15s %u buffers\n", "resident", e->resident);
	text_hits("local hits", e->c[POOL_C_LOCAL_HITS], e->c[POOL_C_LOCAL_ATTEMPTS]);
	text_hits("global hits", e->c[POOL_C_GLOBAL_HITS], e->c[POOL_C_GLOBAL_ATTEMPTS]);
}

static void text_attr(const struct show_file *f, enum tuning_key k)
{
	const struct tuning_attr *a = tuning_attr(k);
	char size[32];
	uint64_t v;

	printf("  %-17s ", a->name);
	if (!f->set[k])
		printf("(mount default)");
	else if (!tuning_stored_valid(k, f->val[k]))
		printf("%s (invalid: the mount default applies)", f->val[k]);
	else if (k == TUNING_READAHEAD_MAX && !tuning_parse_size(f->val[k], &v))
		printf("%s (%s)", f->val[k], util_bytes(v, size, sizeof(size)));
	else
		printf("%s", f->val[k]);
	printf("%s\n", a->later ? "  [stored; not used yet]" : "");
}

static void text_file(const struct show_file *f)
{
	printf("%s\n", f->path);
	if (f->resolved)
		printf("  %-17s %s\n", "backing file", f->backing);
	if (f->xattr_err == -ENOTSUP)
		printf("  (the file system has no user extended attributes: mount defaults)\n");
	else if (f->xattr_err)
		printf("  (attributes unreadable: %s)\n", strerror(-f->xattr_err));
	for (int k = 0; k < TUNING_N; k++)
		text_attr(f, k);
	text_passthrough(f);
	text_entry(f);
}

/* The pool a file was looked up in, and why it could not be read: "pool", "pool_error". */
static void json_pool(const struct pool_view *v)
{
	json_key("", "pool");
	json_string_or_null(v->name[0] ? v->name : NULL);
	json_key(", ", "pool_error");
	json_string_or_null(v->have_snap ? NULL : v->msg);
}

static void json_entry(const struct show_file *f)
{
	const struct pool_stats_file *e = f->entry;

	printf(",\n     ");
	json_pool(f->view);
	printf(", \"pool_entry\": ");
	if (!e) {
		printf("null");
		return;
	}
	printf("{\"slot\": %u, \"active_streams\": %u, \"quota\": %lld, \"quota_granted\": %u",
	       e->slot, e->opens, e->quota == POOL_QUOTA_ALL ? -1LL : (long long)e->quota,
	       e->reserve);
	printf(", \"resident_buffers\": %u, \"local_attempts\": %llu, \"local_hits\": %llu, "
	       "\"global_attempts\": %llu, \"global_hits\": %llu}",
	       e->resident, ull(e->c[POOL_C_LOCAL_ATTEMPTS]), ull(e->c[POOL_C_LOCAL_HITS]),
	       ull(e->c[POOL_C_GLOBAL_ATTEMPTS]), ull(e->c[POOL_C_GLOBAL_HITS]));
}

/* {"verdict": "auto|always|never|no|unknown", "auto_needs": REASON|null} */
static void json_passthrough(const struct show_file *f)
{
	const char *why, *v = pt_verdict(f, &why);

	printf("{\"verdict\": \"%s\", \"auto_needs\": ", v);
	json_string_or_null(why);
	printf("}");
}

static void json_file(struct show_opts *o, const struct show_file *f)
{
	printf("%s\n    {\"path\": ", o->first ? "" : ",");
	o->first = false;
	json_string(f->path);
	printf(", \"backing\": ");
	json_string(f->backing);
	printf(", \"xattrs\": %s,\n     \"tuning\": {", f->xattr_err == -ENOTSUP ? "\"unsupported\""
							: f->xattr_err		 ? "\"error\""
										 : "\"ok\"");
	for (int k = 0; k < TUNING_N; k++) {
		json_key(k ? ", " : "", tuning_attr(k)->name);
		printf("{\"value\": ");
		json_string_or_null(f->set[k] ? f->val[k] : NULL);
		printf(", \"valid\": %s, \"used\": %s}",
		       !f->set[k] || tuning_stored_valid(k, f->val[k]) ? "true" : "false",
		       tuning_attr(k)->later ? "false" : "true");
	}
	printf("},\n     \"passthrough\": ");
	json_passthrough(f);
	json_entry(f);
	printf("}");
}

/* The head names the pool of --pool, else the first file's. */
static void json_head(const struct show_opts *o, const struct show_file *f)
{
	printf("{\n  \"schema\": \"accelfs-show/1\",\n  ");
	json_pool(o->nviews ? &o->views[0] : f ? f->view : &o->none);
	printf(",\n  \"files\": [");
}

static int show_file(struct show_opts *o, const char *path)
{
	struct show_file f = { .path = path };
	struct mountres r;
	int ret = look(o, &f, &r);

	if (o->json && !o->head)
		json_head(o, ret ? NULL : &f);
	o->head = true;
	if (ret) {
		util_err("show", path, "%s", ret == -ENOENT ? "no such file" : strerror(-ret));
		return EXIT_FAIL;
	}
	if (o->json)
		json_file(o, &f);
	else
		text_file(&f);
	return 0;
}

/* --pool: a bad name is a usage error; a pool that cannot be read fails the run. */
static int named_pool(struct show_opts *o)
{
	char name[POOL_NAME_LEN];
	const struct pool_view *v;

	if (!o->pool_arg)
		return 0;
	if (pool_name_parse(o->pool_arg, name, o->none.msg, sizeof(o->none.msg))) {
		util_err("show", NULL, "%s", o->none.msg);
		return EXIT_USAGE;
	}
	v = view_of(o, name);
	if (v->have_snap)
		return 0;
	util_err("show", NULL, "%s", v->msg);
	return EXIT_FAIL;
}

int cmd_show(int argc, char **argv)
{
	struct show_opts o = { .first = true };
	int ret = parse(argc, argv, &o), status;

	if (ret >= 0)
		return ret;
	status = named_pool(&o);
	if (status == EXIT_USAGE)
		return status;
	for (int i = optind; i < argc; i++) {
		if (!o.json && i > optind)
			putchar('\n');
		if (show_file(&o, argv[i]))
			status = EXIT_FAIL;
	}
	if (o.json)
		printf("%s]\n}\n", o.first ? "" : "\n  ");
	for (size_t i = 0; i < o.nviews; i++)
		poolsnap_free(&o.views[i].snap);
	return fflush(stdout) ? EXIT_FAIL : status;
}
