// SPDX-License-Identifier: MIT
/*
 * options.c - parse and check the accelfs command line.
 *
 * A typo in a mount option must never mount something different from what
 * the user asked for, so every -o key is either ours, a kernel mount flag we
 * pass through, or an fstab-only word we knowingly ignore; anything else is a
 * usage error naming the option.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options_i.h"
#include "pool_name.h"
#include "tuning.h"

/* Kernel mount flags handed to libfuse unchanged (it turns them into MS_* or mount data). */
static const char *const passthrough_flags[] = {
	"allow_root",	 "nosuid",     "suid",	       "nodev",	   "dev",	 "noexec",
	"exec",		 "noatime",    "atime",	       "relatime", "norelatime", "strictatime",
	"nostrictatime", "nodiratime", "diratime",     "dirsync",  "sync",	 "async",
	"lazytime",	 "nolazytime", "auto_unmount", NULL,
};

/* Words that belong to mount(8)/fstab, not to the file system. */
static const char *const fstab_words[] = {
	"defaults", "auto",  "noauto",	"user",	  "users",	 "nouser",
	"owner",    "group", "_netdev", "nofail", "nosymfollow", NULL,
};

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

int opts_parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = (unsigned int)v;
	return 0;
}

int opts_parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || isnan(v))
		return -EINVAL;
	if (errno == ERANGE || v < 0 || v > OPTS_MAX_TIMEOUT)
		return -ERANGE;
	*out = v;
	return 0;
}

int opts_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "on", "yes", "true", "1", NULL };
	static const char *const no[] = { "off", "no", "false", "0", NULL };

	if (s && in_list(yes, s))
		*out = true;
	else if (s && in_list(no, s))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* "4096", "64K", "1M", "2GiB": bytes in [min, max]. */
static int opts_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int ret = s ? tuning_parse_size(s, &v) : -EINVAL; /* the one size grammar */

	if (ret)
		return ret;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int append_mount_opt(struct accelfs_opts *o, const char *opt)
{
	size_t old = o->mount_opts ? strlen(o->mount_opts) : 0;
	char *p = realloc(o->mount_opts, old + strlen(opt) + 2);

	if (!p)
		return -ENOMEM;
	if (old)
		p[old++] = ',';
	strcpy(p + old, opt);
	o->mount_opts = p;
	return 0;
}

/* Print "accelfs: option 'KEY=VAL': malformed value (expected ...)"; -EINVAL. */
static int opts_bad_value(const char *key, const char *val, int err, const char *expect)
{
	fprintf(stderr, "accelfs: option '%s=%s': %s (expected %s)\n", key, val,
		err == -ERANGE ? "value out of range" : "malformed value", expect);
	return -EINVAL;
}

/* "0", "4K", "1M", "1T": @v in the largest unit that divides it. */
static const char *size_text(uint64_t v, char *buf, size_t len)
{
	static const char units[] = " KMGT";
	unsigned int u = 0;

	while (v && u < 4 && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	snprintf(buf, len, "%llu%.*s", (unsigned long long)v, u ? 1 : 0, &units[u]);
	return buf;
}

/* "auto, uring or sync" (aliases of an earlier word are not shown). */
static const char *words_text(const struct opt_word *w, char *buf, size_t len)
{
	size_t n = 0, shown = 0, total = 0;

	for (size_t i = 0; w[i].word; i++)
		total += !(i && w[i].value == w[i - 1].value);
	buf[0] = '\0';
	for (size_t i = 0; w[i].word && n < len; i++) {
		if (i && w[i].value == w[i - 1].value)
			continue;
		shown++;
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      shown == 1 ? "" : shown == total ? " or " : ", ", w[i].word);
	}
	return buf;
}

/* The "expected ..." of an error about option @d. */
static const char *expect_text(const struct opt_def *d, char *buf, size_t len)
{
	char a[24], b[24];

	switch (d->type) {
	case OPT_BOOL:
		return d->words ? words_text(d->words, buf, len) : "on or off";
	case OPT_ENUM:
		return words_text(d->words, buf, len);
	case OPT_UINT:
		snprintf(buf, len, "a number from %llu to %llu", (unsigned long long)d->min,
			 (unsigned long long)d->max);
		return buf;
	case OPT_SIZE:
		snprintf(buf, len, "%s from %s to %s", d->pow2 ? "a power of two" : "a size",
			 size_text(d->min, a, sizeof(a)), size_text(d->max, b, sizeof(b)));
		return buf;
	case OPT_SECONDS:
		snprintf(buf, len, "seconds from %.10g to %.10g", d->dmin, d->dmax);
		return buf;
	default:
		return "a valid value";
	}
}

static int store_word(const struct opt_word *w, const char *val, int *out)
{
	for (; w->word; w++) {
		if (!strcmp(w->word, val)) {
			*out = w->value;
			return 0;
		}
	}
	return -EINVAL;
}

static int store_number(const struct opt_def *d, void *field, const char *val)
{
	unsigned int u;
	uint64_t v;
	double sec;
	int ret;

	switch (d->type) {
	case OPT_UINT:
		ret = opts_parse_uint(val, (unsigned int)d->min, (unsigned int)d->max, &u);
		if (!ret)
			*(unsigned int *)field = u;
		return ret;
	case OPT_SIZE:
		ret = opts_parse_size(val, d->min, d->max, &v);
		if (!ret && d->pow2 && (v & (v - 1)))
			ret = -ERANGE;
		if (!ret && d->max >> 32)
			*(uint64_t *)field = v;
		else if (!ret)
			*(unsigned int *)field = (unsigned int)v;
		return ret;
	default: /* OPT_SECONDS */
		ret = opts_parse_seconds(val, &sec);
		if (!ret && (sec < d->dmin || sec > d->dmax))
			ret = -ERANGE;
		if (!ret)
			*(double *)field = sec;
		return ret;
	}
}

/* Parse @val into option @d's field. 0, -EINVAL or -ERANGE (not reported). */
static int store(struct accelfs_opts *o, const struct opt_def *d, const char *val)
{
	void *field = (char *)o + d->offset;
	int w, ret;

	switch (d->type) {
	case OPT_BOOL:
		if (!d->words)
			return opts_parse_bool(val, (bool *)field);
		ret = store_word(d->words, val, &w);
		if (!ret)
			*(bool *)field = w;
		return ret;
	case OPT_ENUM:
		return store_word(d->words, val, (int *)field);
	default:
		return store_number(d, field, val);
	}
}

static const struct opt_def *find_opt(const char *key)
{
	for (const struct opt_def *d = opt_table; d->name; d++)
		if (!strcmp(d->name, key))
			return d;
	return NULL;
}

/* key=value. Returns 0, -EINVAL (reported) or 1 (not ours). */
static int parse_keyed(struct accelfs_opts *o, const char *key, const char *val)
{
	const struct opt_def *d = find_opt(key);
	char expect[160];
	int ret;

	if (!d)
		return 1;
	if (d - opt_table < 64)
		o->given |= 1ULL << (d - opt_table);
	if (d->type == OPT_CUSTOM)
		return d->parse(o, key, val);
	ret = store(o, d, val);
	return ret ? opts_bad_value(key, val, ret, expect_text(d, expect, sizeof(expect))) : 0;
}

/* Every default comes from the table's text, parsed like the user's. */
static void defaults(struct accelfs_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (const struct opt_def *d = opt_table; d->name; d++)
		if (d->def && (d->type == OPT_CUSTOM ? d->parse(o, d->name, d->def)
						      : store(o, d, d->def)))
			abort(); /* a broken table: caught by every test */
}

/* pool=: the tools' grammar (cache/pool_name.c), so every name means one segment */
int opts_parse_pool(struct accelfs_opts *o, const char *key, const char *val)
{
	char name[POOL_NAME_LEN], why[128];

	if (pool_name_parse(val, name, why, sizeof(why)))
		return opts_bad_value(key, val, -EINVAL, why);
	free(o->pool_name);
	o->pool_name = strdup(name);
	return o->pool_name ? 0 : -ENOMEM;
}

/* auto, or on and off in every spelling of a boolean option (older fstab lines) */
int opts_parse_deferred(struct accelfs_opts *o, const char *key, const char *val)
{
	bool on;

	if (!strcmp(val, "auto"))
		o->deferred_mode = DEFERRED_AUTO;
	else if (!opts_parse_bool(val, &on))
		o->deferred_mode = on ? DEFERRED_ON : DEFERRED_OFF;
	else
		return opts_bad_value(key, val, -EINVAL, "auto, on or off");
	o->deferred_write = o->deferred_mode != DEFERRED_OFF;
	return 0;
}

int opts_parse_pool_mode(struct accelfs_opts *o, const char *key, const char *val)
{
	char *end;
	unsigned long m = strtoul(val, &end, 8);

	if (!*val || *end || m > 0777 || (m & 0600) != 0600)
		return opts_bad_value(key, val, -EINVAL, "octal permission bits including 0600");
	o->pool_mode = (unsigned int)m;
	return 0;
}

/* log=auto|syslog|stderr|/absolute/file */
int opts_parse_log(struct accelfs_opts *o, const char *key, const char *val)
{
	if (strcmp(val, "auto") && strcmp(val, "syslog") && strcmp(val, "stderr") &&
	    (val[0] != '/' || strlen(val) > 4000))
		return opts_bad_value(key, val, -EINVAL,
				      "auto, syslog, stderr or an absolute file path");
	free(o->log_target);
	o->log_target = strcmp(val, "auto") ? strdup(val) : NULL;
	return strcmp(val, "auto") && !o->log_target ? -ENOMEM : 0;
}

/* disk_cache=off|auto|/absolute/directory */
int opts_parse_disk_cache(struct accelfs_opts *o, const char *key, const char *val)
{
	bool dir = strcmp(val, "off") && strcmp(val, "auto");

	if (dir && (val[0] != '/' || strlen(val) > 4000))
		return opts_bad_value(key, val, -EINVAL, "off, auto or an absolute directory path");
	free(o->disk_cache);
	o->disk_cache = dir ? strdup(val) : NULL;
	o->disk_cache_auto = !strcmp(val, "auto");
	return dir && !o->disk_cache ? -ENOMEM : 0;
}

/* One element of an -o list. */
static int parse_one(struct accelfs_opts *o, char *opt)
{
	char *eq = strchr(opt, '=');
	int ret;

	if (!*opt)
		return 0;
	if (eq) {
		*eq = '\0';
		ret = parse_keyed(o, opt, eq + 1);
		if (ret <= 0)
			return ret;
		if (!strcmp(opt, "fsname") || !strcmp(opt, "max_read")) {
			*eq = '=';
			return append_mount_opt(o, opt);
		}
		/* mount.fuse3 adds subtype=; fstab may carry comment= and x-* */
		if (!strcmp(opt, "subtype") || !strcmp(opt, "comment") || !strncmp(opt, "x-", 2))
			return 0;
		*eq = '=';
	} else if (!strcmp(opt, "allow_other")) {
		o->allow_other = true;
		return 0;
	} else if (!strcmp(opt, "default_permissions")) {
		o->default_permissions = true;
		return 0;
	} else if (!strcmp(opt, "ro") || !strcmp(opt, "rw")) {
		o->read_only = opt[0] == 'r' && opt[1] == 'o';
		return 0;
	} else if (!strcmp(opt, "debug")) {
		o->debug = true;
		return 0;
	} else if (in_list(passthrough_flags, opt)) {
		return append_mount_opt(o, opt);
	} else if (in_list(fstab_words, opt) || !strncmp(opt, "x-", 2)) {
		return 0;
	}
	fprintf(stderr, "accelfs: unknown option '%s' (see accelfs --help)\n", opt);
	return -EINVAL;
}

static int parse_list(struct accelfs_opts *o, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save))
		ret = parse_one(o, tok);
	free(copy);
	return ret;
}

static int parse_positional(struct accelfs_opts *o, const char *arg)
{
	if (!o->source)
		o->source = strdup(arg);
	else if (!o->mountpoint)
		o->mountpoint = strdup(arg);
	else {
		fprintf(stderr, "accelfs: unexpected argument '%s' (see accelfs --help)\n", arg);
		return -EINVAL;
	}
	return 0;
}

/* Returns 0 or -EINVAL (reported); advances *i past a separate -o value. */
static int parse_arg(struct accelfs_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-h") || !strcmp(a, "--help"))
		o->show_help = true;
	else if (!strcmp(a, "-V") || !strcmp(a, "--version"))
		o->show_version = true;
	else if (!strcmp(a, "-f"))
		o->foreground = true;
	else if (!strcmp(a, "-d"))
		o->debug = o->foreground = true;
	else if (!strcmp(a, "-s"))
		o->single_thread = true;
	else if (!strcmp(a, "-o")) {
		if (++*i >= argc) {
			fprintf(stderr, "accelfs: option '-o' needs a value\n");
			return -EINVAL;
		}
		return parse_list(o, argv[*i]);
	} else if (!strncmp(a, "-o", 2))
		return parse_list(o, a + 2);
	else if (a[0] == '-' && a[1]) {
		fprintf(stderr, "accelfs: unknown option '%s' (see accelfs --help)\n", a);
		return -EINVAL;
	} else
		return parse_positional(o, a);
	return 0;
}

int opts_parse(int argc, char **argv, struct accelfs_opts *o)
{
	int i, ret;

	defaults(o);
	for (i = 1; i < argc; i++) {
		ret = parse_arg(o, argc, argv, &i);
		if (ret)
			return ret == -ENOMEM ? -EINVAL : ret;
	}
	if (o->debug)
		o->foreground = true;
	if (o->show_help || o->show_version)
		return 1;
	if (!o->source || !o->mountpoint) {
		fprintf(stderr, "accelfs: expected SOURCE and MOUNTPOINT (see accelfs --help)\n");
		return -EINVAL;
	}
	return 0;
}

bool opts_given(const struct accelfs_opts *o, const char *name)
{
	const struct opt_def *d = find_opt(name);

	return d && d - opt_table < 64 && (o->given >> (d - opt_table) & 1);
}

void opts_free(struct accelfs_opts *o)
{
	free(o->source);
	free(o->mountpoint);
	free(o->mount_opts);
	free(o->pool_name);
	free(o->log_target);
	free(o->disk_cache);
	memset(o, 0, sizeof(*o));
}

static const char *const section_title[OPT_SEC_N] = {
	[OPT_SEC_GENERAL] = "accelfs options (-o)",
	[OPT_SEC_CACHE] = "buffer cache options (-o; see accelfs(8) and docs/cache.md)",
	[OPT_SEC_WRITEBACK] = "write-back and read-ahead options (-o; see accelfs(8) and "
			      "docs/tuning.md)",
};

/* One option: "    name=SYNTAX   help..." with the range and default after the help. */
static void print_opt(const struct opt_def *d)
{
	char head[64], extra[96] = "";
	const char *h = d->help, *nl;
	size_t col;

	snprintf(head, sizeof(head), "%s=%s", d->name, d->syntax);
	if (d->type == OPT_UINT)
		snprintf(extra, sizeof(extra), ", %llu-%llu", (unsigned long long)d->min,
			 (unsigned long long)d->max);
	if (d->def)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), " (default: %s)",
			 d->def);
	if (strlen(head) <= 22)
		printf("    %-22s ", head);
	else
		printf("    %s\n%27s", head, "");
	for (; (nl = strchr(h, '\n')); h = nl + 1)
		printf("%.*s\n%27s", (int)(nl - h), h, "");
	col = 27 + strlen(h);
	/* the range and default go on the last line, or one of their own */
	if (col + strlen(extra) > 79 && extra[0] == ',')
		printf("%s%s\n", h, extra);
	else if (col + strlen(extra) > 79)
		printf("%s\n%27s%s\n", h, "", extra + 1);
	else
		printf("%s%s\n", h, extra);
}

void opts_print_help(const char *prog)
{
	printf("usage: %s SOURCE MOUNTPOINT [-o opt[,opt...]] [-f] [-d] [-s]\n"
	       "\n"
	       "Mount directory SOURCE at MOUNTPOINT through the accelfs I/O accelerator.\n"
	       "\n"
	       "general options:\n"
	       "    -f                     stay in the foreground, log to stderr\n"
	       "    -d, -o debug           foreground, and trace every FUSE request\n"
	       "    -s                     single-threaded session loop\n"
	       "    -h, --help             print this help and exit\n"
	       "    -V, --version          print the version and exit\n",
	       prog);
	for (int sec = 0; sec < OPT_SEC_N; sec++) {
		printf("\n%s:\n", section_title[sec]);
		for (const struct opt_def *d = opt_table; d->name; d++)
			if ((int)d->section == sec)
				print_opt(d);
	}
	printf("\n"
	       "FUSE and mount options (-o):\n"
	       "    allow_other            let other users use the mount (implies\n"
	       "                           default_permissions when run as root)\n"
	       "    default_permissions    the kernel checks permissions from file modes\n"
	       "    ro, rw                 read-only or read-write mount (default: rw)\n"
	       "    fsname=NAME            source shown in /proc/mounts (default: SOURCE)\n"
	       "    nosuid, nodev, noexec, noatime, relatime, sync, dirsync, auto_unmount, ...\n"
	       "                           passed to the kernel mount\n"
	       "    defaults, auto, noauto, user, users, _netdev, nofail, x-*, comment=\n"
	       "                           fstab words, accepted and ignored\n"
	       "\n"
	       "Examples:\n"
	       "    accelfs /srv/data /mnt/data\n"
	       "    mount -t fuse.accelfs /srv/data /mnt/data -o allow_other\n"
	       "    /etc/fstab:  /srv/data  /mnt/data  fuse.accelfs  defaults,allow_other  0 0\n");
}
