// SPDX-License-Identifier: MIT
/*
 * locks.c - whether a lock taken through one path of a file excludes a lock
 * asked for through another path of the same file: two hosts' mounts of a
 * shared volume, or a mount and its SOURCE on one host (tests/shared).
 * KIND is fcntl (POSIX record locks), ofd (open file description locks) or
 * flock; every lock is a write lock on the whole file.
 *
 *   locks cross KIND HOLDER_PATH ASKER_PATH
 *       A process holds the lock through HOLDER_PATH; through ASKER_PATH
 *       another process asks without waiting (refused with EAGAIN, EACCES or
 *       EWOULDBLOCK), asks F_GETLK (reports the conflict; not for flock),
 *       waits (blocked until the holder unlocks, then granted), and after a
 *       new holder is killed with SIGKILL takes the lock. One line per check:
 *       "yes lock.KIND.CHECK 1|0 DETAIL", as lib.sh compares them.
 *   locks hold KIND PATH
 *       takes the lock, prints "held", keeps it until standard input ends
 *   locks wait KIND PATH
 *       waits for the lock, prints "granted MS" (ms waited), unlocks
 *
 * Exit 0 unless the harness itself failed (exit 1: a path cannot be opened,
 * the holder cannot lock); 2 on usage.
 */
#include "shutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK_MS 1000  /* how long a waiter must stay blocked while the lock is held */
#define GRANT_MS 10000 /* how long a freed lock may take to reach the waiter */

struct child {
	pid_t pid;
	int to, from; /* pipes to and from the child */
};

static int open_rw(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	return fd;
}

static int refused(int ret)
{
	return ret == -EAGAIN || ret == -EACCES || ret == -EWOULDBLOCK;
}

/* a byte from @fd within @ms ms, or -1 */
static int read_byte(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, ms) <= 0 || read(fd, &c, 1) != 1)
		return -1;
	return (unsigned char)c;
}

static void send_byte(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		die("pipe: %s", strerror(errno));
}

/* runs @fn(kind, path, in, out) in a child with two pipes to it */
static struct child spawn(void (*fn)(const char *, const char *, int, int), const char *kind,
			  const char *path)
{
	int to[2], from[2];
	struct child c;

	if (pipe(to) < 0 || pipe(from) < 0)
		die("pipe: %s", strerror(errno));
	c.pid = fork();
	if (c.pid < 0)
		die("fork: %s", strerror(errno));
	if (c.pid == 0) {
		close(to[1]);
		close(from[0]);
		fn(kind, path, to[0], from[1]);
		exit(0);
	}
	close(to[0]);
	close(from[1]);
	c.to = to[1];
	c.from = from[0];
	return c;
}

static void reap(struct child *c)
{
	close(c->to);
	close(c->from);
	waitpid(c->pid, NULL, 0);
}

/* child: lock, say 'L'; on 'u' unlock and say 'U'; exit when the pipe ends */
static void holder(const char *kind, const char *path, int in, int out)
{
	int fd = open_rw(path);
	int ret = lock_set(fd, kind, F_WRLCK, 0, 0, false);

	if (ret)
		die("holder cannot lock %s (%s): %s", path, kind, err_name(ret));
	send_byte(out, 'L');
	while (read_byte(in, -1) == 'u') {
		ret = lock_set(fd, kind, F_UNLCK, 0, 0, false);
		send_byte(out, ret ? 'E' : 'U');
	}
}

/* child: wait for the lock, say 'G', unlock */
static void waiter(const char *kind, const char *path, int in, int out)
{
	int fd = open_rw(path);
	int ret = lock_set(fd, kind, F_WRLCK, 0, 0, true);

	(void)in;
	send_byte(out, ret ? 'E' : 'G');
	lock_set(fd, kind, F_UNLCK, 0, 0, false);
}

static struct child hold(const char *kind, const char *path)
{
	struct child h = spawn(holder, kind, path);

	if (read_byte(h.from, GRANT_MS) != 'L')
		die("the holder did not lock %s", path);
	return h;
}

/* a non-blocking request through @fd: 1 if refused; a granted lock is given back */
static int try_refused(int fd, const char *kind, int *err)
{
	int ret = lock_set(fd, kind, F_WRLCK, 0, 0, false);

	*err = ret;
	if (!ret)
		lock_set(fd, kind, F_UNLCK, 0, 0, false);
	return refused(ret);
}

static void check_try(const char *kind, int fd)
{
	int err, ok = try_refused(fd, kind, &err);

	printf("yes lock.%s.refused %d %s\n", kind, ok, err ? err_name(err) : "granted");
}

static void check_getlk(const char *kind, int fd)
{
	int ret = lock_test(fd, kind, 0, 0);

	if (ret == -ENOTSUP)
		return;
	printf("yes lock.%s.getlk %d %s\n", kind, ret == 1,
	       ret < 0 ? err_name(ret)
	       : ret   ? "conflict"
		       : "no conflict reported");
}

/* a waiter blocks while @h holds the lock and gets it once @h unlocks */
static void check_wait(const char *kind, const char *path, struct child *h)
{
	struct child w = spawn(waiter, kind, path);
	double released;
	int c = read_byte(w.from, BLOCK_MS);

	if (c >= 0) {
		printf("yes lock.%s.waits 0 granted while held (%c)\n", kind, c);
		reap(&w);
		return;
	}
	send_byte(h->to, 'u');
	if (read_byte(h->from, GRANT_MS) != 'U')
		die("the holder could not unlock %s", path);
	released = mono_ms();
	c = read_byte(w.from, GRANT_MS);
	if (c == 'G')
		printf("yes lock.%s.waits 1 blocked %d ms, granted %.0f ms after the unlock\n",
		       kind, BLOCK_MS, mono_ms() - released);
	else
		printf("yes lock.%s.waits 0 not granted within %d ms of the unlock\n", kind,
		       GRANT_MS);
	if (c < 0)
		kill(w.pid, SIGKILL);
	reap(&w);
}

/* a holder killed with SIGKILL: its lock is freed */
static void check_kill9(const char *kind, const char *hpath, int fd)
{
	struct child h = hold(kind, hpath);
	int err, before = try_refused(fd, kind, &err);
	double killed, end;
	int got = 0;

	kill(h.pid, SIGKILL);
	reap(&h);
	killed = mono_ms();
	end = killed + GRANT_MS;
	while (!got && mono_ms() < end) {
		got = lock_set(fd, kind, F_WRLCK, 0, 0, false) == 0;
		if (!got)
			sleep_ms(10);
	}
	if (got)
		lock_set(fd, kind, F_UNLCK, 0, 0, false);
	if (!before)
		printf("yes lock.%s.kill9 0 not refused while the holder lived (%s)\n", kind,
		       err ? err_name(err) : "granted");
	else if (!got)
		printf("yes lock.%s.kill9 0 still refused %d ms after SIGKILL\n", kind, GRANT_MS);
	else
		printf("yes lock.%s.kill9 1 granted %.0f ms after SIGKILL\n", kind,
		       mono_ms() - killed);
}

static int cmd_cross(const char *kind, const char *hpath, const char *apath)
{
	struct child h = hold(kind, hpath);
	int fd = open_rw(apath);

	check_try(kind, fd);
	check_getlk(kind, fd);
	fflush(stdout);
	check_wait(kind, apath, &h);
	reap(&h);
	fflush(stdout);
	check_kill9(kind, hpath, fd);
	close(fd);
	return 0;
}

static int cmd_hold(const char *kind, const char *path)
{
	int fd = open_rw(path);
	int ret = lock_set(fd, kind, F_WRLCK, 0, 0, false);
	char c;

	if (ret)
		die("cannot lock %s (%s): %s", path, kind, err_name(ret));
	printf("held\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

static int cmd_wait(const char *kind, const char *path)
{
	int fd = open_rw(path);
	double start = mono_ms();
	int ret = lock_set(fd, kind, F_WRLCK, 0, 0, true);

	if (ret)
		die("waiting for %s (%s): %s", path, kind, err_name(ret));
	printf("granted %.0f\n", mono_ms() - start);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 4 && lock_kind_ok(argv[2])) {
		if (argc == 5 && !strcmp(argv[1], "cross"))
			return cmd_cross(argv[2], argv[3], argv[4]);
		if (argc == 4 && !strcmp(argv[1], "hold"))
			return cmd_hold(argv[2], argv[3]);
		if (argc == 4 && !strcmp(argv[1], "wait"))
			return cmd_wait(argv[2], argv[3]);
	}
	fprintf(stderr, "usage: locks cross KIND HOLDER_PATH ASKER_PATH\n"
			"       locks hold KIND PATH\n"
			"       locks wait KIND PATH\n"
			"KIND: fcntl, ofd or flock\n");
	return 2;
}
