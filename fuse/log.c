// SPDX-License-Identifier: MIT
/*
 * log.c - one place that decides where the daemon's messages go: stderr
 * while starting, then the destination of -o log= once running. libfuse's
 * own messages are routed here too, so they get the same prefix and place.
 *
 * A daemon that drops or fails to write bytes must be able to say so, so
 * "auto" never picks a sink that swallows messages: syslog only when /dev/log
 * answers (a container often has none), stderr in the foreground, else a
 * file. The file is opened before the mount, so a bad path is a start-up
 * error, not a silent loss later. It is created O_EXCL | O_NOFOLLOW, or
 * appended to only when it is the daemon's own (a regular file of its uid
 * with one link): never through a name someone else planted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "accelfs_i.h"

enum log_dest { DEST_STDERR, DEST_SYSLOG, DEST_FILE };

/* Process-wide by nature: a process has one log, whatever it serves. */
static enum log_dest running_dest = DEST_STDERR; /* chosen by log_open() */
static enum log_dest dest = DEST_STDERR;	 /* in force: stderr until log_start() */
static int log_fd = -1;				 /* DEST_FILE */
static unsigned int fuse_errors;		 /* libfuse messages at LOG_ERR or worse */
static bool verbose, foreground;		 /* -o debug, -f: set by log_init() */

static const char *level_name(int level)
{
	static const char *const names[] = { "emerg", "alert", "crit",	 "error",
					     "warning", "notice", "info", "debug" };

	return names[level & 7];
}

/* One line per message, written with one write(2) so lines never interleave. */
static void log_file_v(int level, const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	int len;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	len = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ", &tm);
	len += snprintf(line + len, sizeof(line) - (size_t)len, " accelfs[%d]: %s: ", (int)getpid(),
			level_name(level));
	len += vsnprintf(line + len, sizeof(line) - (size_t)len, fmt, ap);
	if (len > (int)sizeof(line) - 2)
		len = (int)sizeof(line) - 2;
	line[len++] = '\n';
	(void)!write(log_fd, line, (size_t)len);
}

static void log_v(int level, const char *fmt, va_list ap)
{
	if (dest == DEST_SYSLOG) {
		vsyslog(level, fmt, ap);
	} else if (dest == DEST_FILE) {
		if (level <= LOG_INFO || verbose)
			log_file_v(level, fmt, ap);
	} else if (level <= LOG_NOTICE || verbose || foreground) {
		fputs("accelfs: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
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

/* Does a syslog daemon listen on /dev/log? */
static bool syslog_reachable(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* auto's file when daemonised without syslog: root's /var/log, else the user's runtime dir. */
static const char *default_log_file(char *buf, size_t len)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		return "/var/log/accelfs.log";
	if (!rt || rt[0] != '/')
		return NULL;
	snprintf(buf, len, "%s/accelfs.log", rt);
	return buf;
}

/*
 * Why an existing log file may not be appended to, or NULL. The daemon is
 * usually root and the name may lie in a directory others can write: a file
 * someone else planted there (to read the log, or a hard link to a file of
 * root's when protected_hardlinks is off) is refused, as a symlink is.
 */
static const char *log_file_refused(const struct stat *st, char *buf, size_t len)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file, not written";
	if (st->st_uid != geteuid()) {
		snprintf(buf, len, "owned by uid %u, not by the daemon's uid %u, not written",
			 (unsigned int)st->st_uid, (unsigned int)geteuid());
		return buf;
	}
	if (st->st_nlink != 1) {
		snprintf(buf, len, "has %lu hard links, not written", (unsigned long)st->st_nlink);
		return buf;
	}
	return NULL;
}

/*
 * Create the log file (O_EXCL, never through a symlink), or append to our
 * own existing one: -1 with errno, or the descriptor; @why for a refused one.
 */
static int log_file_fd(const char *path, const char **why, char *buf, size_t len)
{
	const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	struct stat st;
	int fd = -1;

	*why = NULL;
	for (int tries = 0; fd < 0 && tries < 3; tries++) {
		fd = open(path, flags | O_CREAT | O_EXCL, 0640);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* ours already: appended to, never truncated (ENOENT: it went, create it) */
		fd = open(path, flags);
		if (fd < 0 && errno != ENOENT)
			break;
	}
	if (fd < 0) {
		*why = errno == ELOOP ? "is a symbolic link, not written" : NULL;
		return -1;
	}
	*why = fstat(fd, &st) ? strerror(errno) : log_file_refused(&st, buf, len);
	if (*why) {
		close(fd);
		return -1;
	}
	return fd;
}

static int open_log_file(const char *path, char *err, size_t errlen)
{
	char buf[128];
	const char *why;

	log_fd = log_file_fd(path, &why, buf, sizeof(buf));
	if (log_fd < 0) {
		snprintf(err, errlen, "log file %s: %s", path, why ? why : strerror(errno));
		return -1;
	}
	running_dest = DEST_FILE;
	return 0;
}

int log_open(const char *t, char *err, size_t errlen)
{
	char buf[4096];

	if (t && !strcmp(t, "stderr"))
		running_dest = DEST_STDERR;
	else if (t && !strcmp(t, "syslog"))
		running_dest = DEST_SYSLOG;
	else if (t)
		return open_log_file(t, err, errlen);
	else if (foreground)
		running_dest = DEST_STDERR;
	else if (syslog_reachable())
		running_dest = DEST_SYSLOG;
	else if ((t = default_log_file(buf, sizeof(buf))))
		return open_log_file(t, err, errlen);
	return 0;
}

void log_start(void)
{
	if (running_dest == DEST_SYSLOG)
		openlog("accelfs", LOG_PID, LOG_DAEMON);
	dest = running_dest;
}

void log_init(const struct accelfs_opts *o)
{
	verbose = o->debug;
	foreground = o->foreground;
	fuse_set_log_func(log_from_fuse);
}
