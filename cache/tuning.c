// SPDX-License-Identifier: MIT
/*
 * tuning.c - the user.accelfs.* tuning attributes: what they may hold, how
 * sizes are written, and how they are read and written. The daemon and the
 * tools both go through here, so nothing the tools store is silently
 * ignored by the daemon, and one size grammar serves every input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/xattr.h>

#include "pool_layout.h"
#include "tuning.h"

static const struct tuning_attr attrs[TUNING_N] = {
	[TUNING_GLOBAL_BUFFERS] = { "global_buffers", "global-buffers",
				    "N (0..268435456), all or default", false },
	[TUNING_LOCAL_BUFFERS] = { "local_buffers", "local-buffers", "N (0..1024) or default",
				   false },
	[TUNING_STATS] = { "stats", "stats", "on, off or default", false },
	[TUNING_DEFERRED_WRITE] = { "deferred_write", "deferred-write", "on, off or default",
				    false },
	[TUNING_SYNC] = { "sync", "sync", "strict, relaxed or default", false },
	[TUNING_READAHEAD_MAX] = { "readahead_max", "readahead-max",
				   "SIZE (0..1G, suffix K, M or G) or default", false },
	[TUNING_PASSTHROUGH] = { "passthrough", "passthrough",
				 "auto, always, never (on, off) or default", false },
	[TUNING_DISK_CACHE] = { "disk_cache", "disk-cache", "on, off or default", false },
};

const struct tuning_attr *tuning_attr(enum tuning_key k)
{
	return &attrs[k];
}

/* Decimal digits only, no sign, no space: 0, -EINVAL or -ERANGE. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	char num[24];
	char *end;

	if (!len || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	if (len >= sizeof(num))
		return -ERANGE;
	memcpy(num, s, len);
	num[len] = '\0';
	errno = 0;
	*out = strtoull(num, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	return *end ? -EINVAL : 0;
}

int tuning_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	size_t n = strspn(s, "0123456789");
	const char *u;
	uint64_t v;
	int ret = parse_u64(s, n, &v);

	if (ret)
		return ret;
	if (s[n]) {
		u = strchr(units, s[n] & ~0x20); /* upper case */
		if (!u || !*u ||
		    (s[n + 1] && strcasecmp(s + n + 1, "iB") && strcasecmp(s + n + 1, "B")))
			return -EINVAL;
		for (long i = 0; i <= u - units; i++) {
			if (v > (1ULL << 52))
				return -ERANGE;
			v <<= 10;
		}
	}
	if (v > (1ULL << 62))
		return -ERANGE;
	*out = v;
	return 0;
}

/* @in must be one of the NULL-terminated @words; copy it to @out. */
static int parse_word(const char *in, const char *const *words, char *out)
{
	for (; *words; words++) {
		if (!strcmp(in, *words)) {
			snprintf(out, TUNING_VALUE_LEN, "%s", *words);
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_count(const char *in, uint64_t max, char *out)
{
	uint64_t v;
	int ret = parse_u64(in, strlen(in), &v);

	if (ret)
		return ret;
	if (v > max)
		return -ERANGE;
	snprintf(out, TUNING_VALUE_LEN, "%llu", (unsigned long long)v);
	return 0;
}

int tuning_parse(enum tuning_key k, const char *in, char *out)
{
	static const char *const onoff[] = { "on", "off", NULL };
	static const char *const sync[] = { "strict", "relaxed", NULL };
	static const char *const pt[] = { "auto", "always", "never", NULL };
	uint64_t v;
	int ret;

	out[0] = '\0';
	if (!strcmp(in, "default"))
		return 0;
	switch (k) {
	case TUNING_GLOBAL_BUFFERS:
		if (!strcmp(in, "all")) {
			snprintf(out, TUNING_VALUE_LEN, "all");
			return 0;
		}
		return parse_count(in, TUNING_GLOBAL_MAX, out);
	case TUNING_LOCAL_BUFFERS:
		return parse_count(in, TUNING_LOCAL_MAX, out);
	case TUNING_STATS:
	case TUNING_DEFERRED_WRITE:
	case TUNING_DISK_CACHE:
		return parse_word(in, onoff, out);
	case TUNING_SYNC:
		return parse_word(in, sync, out);
	case TUNING_PASSTHROUGH:
		/* on/off are spellings of always/never: one stored form each */
		return parse_word(!strcmp(in, "on")    ? "always"
				  : !strcmp(in, "off") ? "never"
						       : in,
				  pt, out);
	case TUNING_READAHEAD_MAX:
		ret = tuning_parse_size(in, &v);
		if (!ret && v > TUNING_READAHEAD_LIMIT)
			ret = -ERANGE;
		if (!ret)
			snprintf(out, TUNING_VALUE_LEN, "%llu", (unsigned long long)v);
		return ret;
	default:
		return -EINVAL;
	}
}

bool tuning_stored_valid(enum tuning_key k, const char *stored)
{
	char canon[TUNING_VALUE_LEN];

	/* the daemon and later readers accept what accel set writes, and sizes with suffixes */
	return strcmp(stored, "default") && tuning_parse(k, stored, canon) == 0;
}

static void attr_name(enum tuning_key k, char *buf, size_t len)
{
	snprintf(buf, len, TUNING_PREFIX "%s", attrs[k].name);
}

/* The canonical stored form of attribute @k of @fd in @canon, or false. */
static bool read_canon(int fd, enum tuning_key k, char *canon)
{
	char name[64], val[TUNING_VALUE_LEN];
	ssize_t len;

	attr_name(k, name, sizeof(name));
	len = fgetxattr(fd, name, val, sizeof(val) - 1);
	if (len <= 0)
		return false;
	val[len] = '\0';
	return strcmp(val, "default") && tuning_parse(k, val, canon) == 0;
}

static int64_t read_number(int fd, enum tuning_key k)
{
	char c[TUNING_VALUE_LEN];

	if (!read_canon(fd, k, c))
		return -1;
	return !strcmp(c, "all") ? (int64_t)POOL_QUOTA_ALL : (int64_t)strtoull(c, NULL, 10);
}

/* 1 for the first word of the attribute's pair, 0 for the second, -1 not set. */
static int read_word(int fd, enum tuning_key k, const char *yes)
{
	char c[TUNING_VALUE_LEN];

	return read_canon(fd, k, c) ? !strcmp(c, yes) : -1;
}

static int read_pt(int fd)
{
	char c[TUNING_VALUE_LEN];

	if (!read_canon(fd, TUNING_PASSTHROUGH, c))
		return TUNING_PT_AUTO;
	return !strcmp(c, "always")  ? TUNING_PT_ALWAYS
	       : !strcmp(c, "never") ? TUNING_PT_NEVER
				     : TUNING_PT_AUTO;
}

void tuning_none(struct tuning_values *t)
{
	*t = (struct tuning_values){ -1, -1, -1, -1, -1, TUNING_PT_AUTO, -1, -1 };
}

void tuning_read_fd(int fd, struct tuning_values *t)
{
	char names[1024];
	ssize_t len = flistxattr(fd, names, sizeof(names));

	tuning_none(t);
	/* most files have no tuning: one call decides (ERANGE: many attributes, look) */
	if ((len < 0 && errno != ERANGE) || len == 0 ||
	    (len > 0 && !memmem(names, (size_t)len, TUNING_PREFIX, sizeof(TUNING_PREFIX) - 1)))
		return;
	t->global_buffers = read_number(fd, TUNING_GLOBAL_BUFFERS);
	t->local_buffers = read_number(fd, TUNING_LOCAL_BUFFERS);
	t->deferred_write = read_word(fd, TUNING_DEFERRED_WRITE, "on");
	t->sync_relaxed = read_word(fd, TUNING_SYNC, "relaxed");
	t->readahead_max = read_number(fd, TUNING_READAHEAD_MAX);
	t->stats = read_word(fd, TUNING_STATS, "on");
	t->disk_cache = read_word(fd, TUNING_DISK_CACHE, "on");
	t->passthrough = read_pt(fd);
}

const char *tuning_passthrough_need(const struct tuning_values *t, const struct tuning_mount *m)
{
	if (t->deferred_write == 1 || (t->deferred_write < 0 && m && m->deferred_write))
		return "deferred_write";
	if (t->sync_relaxed == 1 || (t->sync_relaxed < 0 && m && m->sync_relaxed))
		return "sync=relaxed";
	if (t->global_buffers > 0)
		return "global_buffers";
	if (t->local_buffers > 0)
		return "local_buffers";
	if (t->stats == 1)
		return "stats";
	if (t->readahead_max > 0)
		return "readahead_max";
	return NULL;
}

bool tuning_use_bulk(const struct tuning_use *u)
{
	return !u->wrote && u->reads && u->read_bytes >= TUNING_BULK_BYTES &&
	       u->read_bytes / u->reads >= TUNING_BULK_REQUEST;
}

uint64_t tuning_readahead_delay(uint64_t elapsed_ns, uint64_t len)
{
	return elapsed_ns > len ? elapsed_ns - len : 0; /* 1 byte a ns */
}

uint64_t tuning_readahead_window(uint64_t base, uint64_t delay_ns, uint64_t cap)
{
	uint64_t n;

	if (!base || cap <= base)
		return base;
	/* whole bases of delay: windows stay aligned with the kernel's own reads
	 * of that size, and a delay shorter than one base's worth adds nothing
	 * (each window then goes through the prefetch thread's hop for little) */
	n = delay_ns / base;
	return n >= cap / base ? cap : (n + 1) * base; /* (n + 1) * base <= cap: no wrap */
}

int tuning_get(const char *path, enum tuning_key k, char *val)
{
	char name[64];
	ssize_t len;

	attr_name(k, name, sizeof(name));
	len = getxattr(path, name, val, TUNING_VALUE_LEN - 1);
	if (len < 0) {
		val[0] = '\0';
		return errno == ENODATA ? 0 : -errno;
	}
	val[len] = '\0';
	return 1;
}

int tuning_put(const char *path, enum tuning_key k, const char *val)
{
	char name[64];

	attr_name(k, name, sizeof(name));
	if (!val[0])
		return removexattr(path, name) && errno != ENODATA ? -errno : 0;
	return setxattr(path, name, val, strlen(val), 0) ? -errno : 0;
}
