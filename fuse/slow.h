/* SPDX-License-Identifier: MIT */
/*
 * slow.h - requests that may wait long (a lock held by another owner, an
 * open that must break another user's lease) are finished in a thread of
 * their own, never in one of the workers that serve every user (slow.c).
 */
#ifndef ACCELFS_FUSE_SLOW_H
#define ACCELFS_FUSE_SLOW_H

#include <stdbool.h>

#include "accelfs_i.h"

#define SLOW_PER_UID 64 /* requests of one user waiting at once */
#define SLOW_MAX 1024	/* ... of all users but root */

/*
 * Embedded first in the caller's own state. @run does the work (its system
 * calls end with EINTR when the request is interrupted: check
 * slow_interrupted() and give up), calls slow_end() and then replies to
 * @req; it must not free: @done frees, after the thread is done with it.
 */
struct slow_req {
	fuse_req_t req;
	void (*run)(struct slow_req *s);
	void (*done)(struct slow_req *s);
	/* slow.c's own */
	uid_t uid;
	int kind; /* the request's kind, for its statistics (reqstat.h) */
	pid_t tid;
	timer_t kick;
	bool kick_ok; /* atomic: its waiter's timer may be armed for it (slow.c's lock to clear) */
	int interrupted; /* atomic */
	struct slow_req *next;
};

/*
 * Start @s's thread. Returns 0 (@run replies, @done frees), or -ENOLCK:
 * the user has SLOW_PER_UID requests waiting (or all users but root
 * SLOW_MAX), -EAGAIN or -ENOMEM: no thread; then nothing ran, and the caller
 * replies and frees.
 */
int slow_start(struct slow_req *s);

/* In @run, before its reply: no interrupt reaches @s after this. */
void slow_end(struct slow_req *s);

/* Was the request interrupted (FUSE INTERRUPT, or unmount)? */
bool slow_interrupted(const struct slow_req *s);

/* Before serving: the signal that ends a waiting system call. */
int slow_setup(void);

/* Before the session goes: interrupt every waiting request, wait for its reply. */
void slow_stop(void);

#endif
