// SPDX-License-Identifier: MIT
/*
 * log.c - one place that decides where the daemon's messages go: stderr
 * while starting or in the foreground, syslog once daemonised. libfuse's own
 * messages are routed here too, so they get the same prefix and destination.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "accelfs_i.h"

static bool use_syslog;
static unsigned int fuse_errors; /* libfuse messages at LOG_ERR or worse */

static void log_v(int level, const char *fmt, va_list ap)
{
	if (use_syslog) {
		vsyslog(level, fmt, ap);
		return;
	}
	if (level > LOG_NOTICE && !accelfs.opts.debug && !accelfs.opts.foreground)
		return;
	fputs("accelfs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v(level, fmt, ap);
	va_end(ap);
}

static void log_from_fuse(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t len;

	vsnprintf(line, sizeof(line), fmt, ap);
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[len - 1] = '\0';
	if ((int)level <= LOG_ERR)
		__atomic_add_fetch(&fuse_errors, 1, __ATOMIC_RELAXED);
	log_msg((int)level, "%s", line);
}

unsigned int log_fuse_errors(void)
{
	return __atomic_load_n(&fuse_errors, __ATOMIC_RELAXED);
}

void log_to_syslog(void)
{
	openlog("accelfs", LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

void log_init(void)
{
	fuse_set_log_func(log_from_fuse);
}
