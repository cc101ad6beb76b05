// SPDX-License-Identifier: MIT
/*
 * tuning.c - the user.accelfs.* tuning attributes: what they may hold and
 * how they are read and written. The stored forms are what the daemon's
 * parser (fuse/cache_io.c) accepts; nothing here writes a value the daemon
 * would silently ignore.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/xattr.h>

#include "tuning.h"
#include "util.h"

static const struct tuning_attr attrs[TUNING_N] = {
	[TUNING_GLOBAL_BUFFERS] = { "global_buffers", "global-buffers",
				    "N (0..268435456), all or default", false },
	[TUNING_LOCAL_BUFFERS] = { "local_buffers", "local-buffers", "N (0..1024) or default",
				   false },
	[TUNING_STATS] = { "stats", "stats", "on, off or default", true },
	[TUNING_DEFERRED_WRITE] = { "deferred_write", "deferred-write", "on, off or default",
				    false },
	[TUNING_SYNC] = { "sync", "sync", "strict, relaxed or default", false },
	[TUNING_READAHEAD_MAX] = { "readahead_max", "readahead-max",
				   "SIZE (0..1G, suffix K, M or G) or default", false },
};

const struct tuning_attr *tuning_attr(enum tuning_key k)
{
	return &attrs[k];
}

int tuning_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMG";
	const char *u;
	char num[24];
	size_t n = strspn(s, "0123456789");
	uint64_t v;
	int ret;

	if (!n || n >= sizeof(num))
		return n ? -ERANGE : -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	ret = util_parse_u64(num, &v);
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
	int ret = util_parse_u64(in, &v);

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
		return parse_word(in, onoff, out);
	case TUNING_SYNC:
		return parse_word(in, sync, out);
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
