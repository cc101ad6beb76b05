// SPDX-License-Identifier: MIT
/*
 * util.c - messages, sizes, clock and signal flags shared by the accel
 * subcommands; see util.h for why signals only set flags.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

volatile sig_atomic_t util_stop_sig;
volatile sig_atomic_t util_lease_broken;

static void on_stop(int sig)
{
	util_stop_sig = sig;
}

static void on_lease(int sig)
{
	(void)sig;
	util_lease_broken = 1;
}

void util_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_lease;
	sigaction(SIGIO, &sa, NULL);
}

void util_err(const char *cmd, const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "accel %s: ", cmd);
	if (path)
		fprintf(stderr, "%s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

char *util_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned int i = 0;

	while (v >= 1024 && i < sizeof(unit) / sizeof(unit[0]) - 1) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

double util_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int util_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int util_parse_seconds(const char *cmd, const char *opt, const char *arg, double min, double max,
		       double *out)
{
	char *end;

	*out = strtod(arg, &end);
	if (*end || end == arg || !(*out >= min && *out <= max)) {
		util_err(cmd, NULL, "--%s '%s': need seconds from %g to %g", opt, arg, min, max);
		return -EINVAL;
	}
	return 0;
}

int util_test_flag(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "1") == 0;
}

void util_test_pause(const char *name)
{
	const char *v = getenv(name);
	struct timespec ts = { v ? atoi(v) : 0, 0 };

	while (ts.tv_sec > 0 && !util_stop_sig && !util_lease_broken && nanosleep(&ts, &ts) < 0 &&
	       errno == EINTR)
		;
}

int util_open_parent(const char *path, char *name, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	if (slash && slash[1] == '\0')
		return -EISDIR; /* "dir/" names a directory */
	if (snprintf(name, len, "%s", slash ? slash + 1 : path) >= (int)len)
		return -ENAMETOOLONG;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
			  path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
