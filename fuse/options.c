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

#include "options.h"
#include "tuning.h"

#define MAX_TIMEOUT (365.0 * 86400.0)

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
	if (errno == ERANGE || v < 0 || v > MAX_TIMEOUT)
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

int opts_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
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

static int parse_cache_mode(const char *s, enum kernel_cache_mode *out)
{
	if (!strcmp(s, "auto"))
		*out = KERNEL_CACHE_AUTO;
	else if (!strcmp(s, "always"))
		*out = KERNEL_CACHE_ALWAYS;
	else if (!strcmp(s, "never"))
		*out = KERNEL_CACHE_NEVER;
	else
		return -EINVAL;
	return 0;
}

static void defaults(struct accelfs_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threads = 4;
	o->clone_fd = true;
	o->backend = BACKEND_AUTO;
	o->queue_depth = 64;
	o->attr_timeout = 1.0;
	o->entry_timeout = 1.0;
	o->negative_timeout = 1.0;
	o->kernel_cache = KERNEL_CACHE_AUTO;
	o->writeback = true;
	o->readahead_kb = 1024;
	o->bdi_max_ratio = 10;
	o->cache = true;
	o->local_buffers = 2;
	o->pool_mode = 0600;
	o->pool_keep = true;
	o->deferred_write = true;
	o->flush_interval = 1.0;
	o->readahead_max = 1 << 20;
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

static int bad_value(const char *key, const char *val, int err, const char *expect)
{
	fprintf(stderr, "accelfs: option '%s=%s': %s (expected %s)\n", key, val,
		err == -ERANGE ? "value out of range" : "malformed value", expect);
	return -EINVAL;
}

/* Buffer cache options. Returns 0, -EINVAL (reported) or 1 (not ours). */
static int parse_cache_keyed(struct accelfs_opts *o, const char *key, const char *val)
{
	uint64_t v;
	int ret;

	if (!strcmp(key, "cache")) {
		ret = opts_parse_bool(val, &o->cache);
		return ret ? bad_value(key, val, ret, "on or off") : 0;
	}
	if (!strcmp(key, "pool")) {
		if (!*val || strlen(val) > 200 || strchr(val + (val[0] == '/'), '/'))
			return bad_value(key, val, -EINVAL, "a name without '/', up to 200 bytes");
		free(o->pool_name);
		o->pool_name = malloc(strlen(val) + 2);
		if (!o->pool_name)
			return -ENOMEM;
		sprintf(o->pool_name, "%s%s", val[0] == '/' ? "" : "/", val);
		return 0;
	}
	if (!strcmp(key, "global_buffers")) {
		ret = opts_parse_uint(val, 16, TUNING_GLOBAL_MAX, &o->global_buffers);
		return ret ? bad_value(key, val, ret, "a number from 16 to 268435456") : 0;
	}
	if (!strcmp(key, "global_cache")) {
		ret = opts_parse_size(val, 1 << 20, 1ULL << 40, &o->global_cache);
		return ret ? bad_value(key, val, ret, "a size from 1M to 1T") : 0;
	}
	if (!strcmp(key, "bucket_size")) {
		ret = opts_parse_size(val, 4096, 4 << 20, &v);
		if (!ret && (v & (v - 1)))
			ret = -ERANGE;
		if (!ret)
			o->bucket_size = (unsigned int)v;
		return ret ? bad_value(key, val, ret, "a power of two from 4K to 4M") : 0;
	}
	if (!strcmp(key, "local_buffers")) {
		ret = opts_parse_uint(val, 0, TUNING_LOCAL_MAX, &o->local_buffers);
		return ret ? bad_value(key, val, ret, "a number from 0 to 1024") : 0;
	}
	if (!strcmp(key, "pool_mode")) {
		char *end;
		unsigned long m = strtoul(val, &end, 8);

		if (!*val || *end || m > 0777 || (m & 0600) != 0600)
			return bad_value(key, val, -EINVAL, "octal permission bits including 0600");
		o->pool_mode = (unsigned int)m;
		return 0;
	}
	if (!strcmp(key, "pool_keep")) {
		ret = opts_parse_bool(val, &o->pool_keep);
		return ret ? bad_value(key, val, ret, "yes or no") : 0;
	}
	if (!strcmp(key, "backend_io")) {
		if (strcmp(val, "buffered") && strcmp(val, "direct"))
			return bad_value(key, val, -EINVAL, "buffered or direct");
		o->backend_direct = val[0] == 'd';
		return 0;
	}
	if (!strcmp(key, "deferred_write")) {
		ret = opts_parse_bool(val, &o->deferred_write);
		return ret ? bad_value(key, val, ret, "on or off") : 0;
	}
	if (!strcmp(key, "flush_interval")) {
		ret = opts_parse_seconds(val, &o->flush_interval);
		if (!ret && (o->flush_interval < 0.01 || o->flush_interval > 3600))
			ret = -ERANGE;
		return ret ? bad_value(key, val, ret, "seconds from 0.01 to 3600") : 0;
	}
	if (!strcmp(key, "sync")) { /* "sync" alone is the kernel flag */
		if (strcmp(val, "strict") && strcmp(val, "relaxed"))
			return bad_value(key, val, -EINVAL, "strict or relaxed");
		o->sync_relaxed = val[0] == 'r';
		return 0;
	}
	if (!strcmp(key, "readahead_max")) {
		ret = opts_parse_size(val, 0, TUNING_READAHEAD_LIMIT, &o->readahead_max);
		return ret ? bad_value(key, val, ret, "a size from 0 to 1G") : 0;
	}
	if (!strcmp(key, "revalidate")) {
		ret = opts_parse_seconds(val, &o->revalidate);
		return ret ? bad_value(key, val, ret, "seconds from 0 to 31536000") : 0;
	}
	return 1;
}

/* log=auto|syslog|stderr|/absolute/file */
static int parse_log_target(struct accelfs_opts *o, const char *key, const char *val)
{
	if (strcmp(val, "auto") && strcmp(val, "syslog") && strcmp(val, "stderr") &&
	    (val[0] != '/' || strlen(val) > 4000))
		return bad_value(key, val, -EINVAL, "auto, syslog, stderr or an absolute file path");
	free(o->log_target);
	o->log_target = strcmp(val, "auto") ? strdup(val) : NULL;
	return strcmp(val, "auto") && !o->log_target ? -ENOMEM : 0;
}

/* Options with a value: key=value. Returns 0, -EINVAL (reported) or 1 (not ours). */
static int parse_keyed(struct accelfs_opts *o, const char *key, const char *val)
{
	int ret;

	if (!strcmp(key, "backend")) {
		ret = backend_parse_kind(val, &o->backend);
		return ret ? bad_value(key, val, ret, "auto, uring or sync") : 0;
	}
	if (!strcmp(key, "threads")) {
		ret = opts_parse_uint(val, 1, 64, &o->threads);
		return ret ? bad_value(key, val, ret, "a number from 1 to 64") : 0;
	}
	if (!strcmp(key, "queue_depth")) {
		ret = opts_parse_uint(val, 1, 4096, &o->queue_depth);
		return ret ? bad_value(key, val, ret, "a number from 1 to 4096") : 0;
	}
	if (!strcmp(key, "attr_timeout") || !strcmp(key, "entry_timeout") ||
	    !strcmp(key, "negative_timeout")) {
		double *dst = key[0] == 'a'   ? &o->attr_timeout
			      : key[0] == 'e' ? &o->entry_timeout
					      : &o->negative_timeout;

		ret = opts_parse_seconds(val, dst);
		return ret ? bad_value(key, val, ret, "seconds from 0 to 31536000") : 0;
	}
	if (!strcmp(key, "readahead_kb")) {
		ret = opts_parse_uint(val, 0, 65536, &o->readahead_kb);
		return ret ? bad_value(key, val, ret, "KiB from 0 to 65536") : 0;
	}
	if (!strcmp(key, "dirty_ratio")) {
		ret = opts_parse_uint(val, 0, 100, &o->bdi_max_ratio);
		return ret ? bad_value(key, val, ret, "a percentage from 0 to 100") : 0;
	}
	if (!strcmp(key, "kernel_cache")) {
		ret = parse_cache_mode(val, &o->kernel_cache);
		return ret ? bad_value(key, val, ret, "auto, always or never") : 0;
	}
	if (!strcmp(key, "log"))
		return parse_log_target(o, key, val);
	if (!strcmp(key, "writeback") || !strcmp(key, "clone_fd")) {
		ret = opts_parse_bool(val, key[0] == 'w' ? &o->writeback : &o->clone_fd);
		return ret ? bad_value(key, val, ret, "on or off") : 0;
	}
	return parse_cache_keyed(o, key, val);
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

void opts_free(struct accelfs_opts *o)
{
	free(o->source);
	free(o->mountpoint);
	free(o->mount_opts);
	free(o->pool_name);
	free(o->log_target);
	memset(o, 0, sizeof(*o));
}

void opts_print_help(const char *prog)
{
	printf(
	    "usage: %s SOURCE MOUNTPOINT [-o opt[,opt...]] [-f] [-d] [-s]\n"
	    "\n"
	    "Mount directory SOURCE at MOUNTPOINT through the accelfs I/O accelerator.\n"
	    "\n"
	    "general options:\n"
	    "    -f                     stay in the foreground, log to stderr\n"
	    "    -d, -o debug           foreground, and trace every FUSE request\n"
	    "    -s                     single-threaded session loop\n"
	    "    -h, --help             print this help and exit\n"
	    "    -V, --version          print the version and exit\n"
	    "\n"
	    "accelfs options (-o):\n"
	    "    backend=auto|uring|sync  backend I/O: io_uring, plain pread/pwrite, or io_uring\n"
	    "                           with a fallback to sync (default: auto)\n"
	    "    queue_depth=N          io_uring entries per worker thread, 1-4096 (default: 64)\n"
	    "    threads=N              worker threads, 1-64 (default: 4)\n"
	    "    clone_fd=on|off        one /dev/fuse descriptor per worker (default: on)\n"
	    "    kernel_cache=auto|always|never\n"
	    "                           keep the kernel page cache across opens while the\n"
	    "                           backing file is unchanged (auto), always, or bypass\n"
	    "                           it with direct I/O (never) (default: auto)\n"
	    "    writeback=on|off       kernel writeback cache for writes (default: on)\n"
	    "    attr_timeout=S         seconds attributes are cached (default: 1)\n"
	    "    entry_timeout=S        seconds names are cached (default: 1)\n"
	    "    negative_timeout=S     seconds a missing name is cached (default: 1)\n"
	    "    log=auto|syslog|stderr|FILE\n"
	    "                           where messages go once running: auto is syslog when\n"
	    "                           daemonised and /dev/log answers, else stderr in the\n"
	    "                           foreground, else /var/log/accelfs.log (root) or\n"
	    "                           $XDG_RUNTIME_DIR/accelfs.log (default: auto)\n"
	    "\n"
	    "write-back and read-ahead options (-o; see accelfs(8) and docs/tuning.md):\n"
	    "    deferred_write=on|off  keep small writes in dirty pool buffers and write\n"
	    "                           them back as large I/Os (default: on)\n"
	    "    flush_interval=S       longest wait of a deferred write, 0.01-3600 s\n"
	    "                           (default: 1); also flushed at fsync and close\n"
	    "    sync=strict|relaxed    relaxed: fsync and O_SYNC only mean \"on SOURCE\n"
	    "                           within flush_interval\" -- opt-in, a crash may lose\n"
	    "                           that much acknowledged data (default: strict)\n"
	    "    readahead_max=SIZE     the daemon's read-ahead window limit, 0 = off\n"
	    "                           (default: 1M)\n"
	    "\n"
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
	    "    /etc/fstab:  /srv/data  /mnt/data  fuse.accelfs  defaults,allow_other  0 0\n",
	    prog);
}
