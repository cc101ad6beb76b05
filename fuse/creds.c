// SPDX-License-Identifier: MIT
/*
 * creds.c - per-thread credential switch for requests of other users.
 *
 * setfsuid(2), setfsgid(2) and the raw setgroups system call change only the
 * calling thread's credentials (glibc's setgroups() wrapper changes every
 * thread of the process: it is not used). While the fsuid is not 0 the kernel
 * drops CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
 * CAP_FSETID, CAP_MKNOD and friends from the thread's effective set, and
 * gives them back when it returns to 0: exactly what makes the backing file
 * system treat the daemon's system calls as the user's. Capabilities outside
 * that set (CAP_SYS_ADMIN: trusted.* xattrs) stay, and the handlers deal with
 * them (ops_xattr.c).
 *
 * Order matters: groups and fsgid are set while the fsuid is still 0, and on
 * the way back the fsuid goes to 0 first, so the thread never holds the
 * user's fsuid with root's groups.
 *
 * The caller's supplementary groups are read by libfuse from
 * /proc/PID/task/PID/status; a busy process would pay that read on every
 * request, so each worker keeps the last few answers for about a second,
 * keyed by (pid, uid, gid). A group change takes effect within that second,
 * as an NFS server's group cache would.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "creds.h"

#define CREDS_GROUPS_MAX 64	  /* more than that: the first 64 (libfuse reads them all) */
#define CREDS_CACHE_SLOTS 4	  /* per worker thread */
#define CREDS_CACHE_NS 1000000000 /* how long a process's groups are reused */

struct groups_entry {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	uint64_t until; /* CLOCK_MONOTONIC_COARSE ns; 0: empty */
	int n;
	gid_t list[CREDS_GROUPS_MAX];
};

/* Per thread by nature (a worker's fsuid is its own): no lock. */
static __thread struct groups_entry groups_cache[CREDS_CACHE_SLOTS];
static __thread unsigned int groups_next;	    /* slot to replace next */
static __thread bool switched;			    /* creds_enter() changed this thread */
static __thread const struct groups_entry *current; /* whose credentials, while switched */

/* The daemon's own identity, set once (creds_once) and then read-only:
 * process-wide by nature, the credentials are the process's. */
static pthread_once_t creds_once = PTHREAD_ONCE_INIT;
static bool daemon_root;
static uid_t daemon_uid;
static gid_t daemon_gid;
static int daemon_ngroups;
static gid_t daemon_groups[CREDS_GROUPS_MAX];

static void creds_init(void)
{
	int n;

	daemon_uid = geteuid();
	daemon_gid = getegid();
	daemon_root = daemon_uid == 0;
	n = getgroups(CREDS_GROUPS_MAX, daemon_groups);
	daemon_ngroups = n < 0 ? 0 : n;
}

/* The supplementary groups of @req's process, from this thread's cache or /proc. */
static const struct groups_entry *groups_of(fuse_req_t req, const struct fuse_ctx *ctx)
{
	uint64_t now = now_ns();
	struct groups_entry *g;
	unsigned int i;
	int n;

	for (i = 0; i < CREDS_CACHE_SLOTS; i++) {
		g = &groups_cache[i];
		if (g->until > now && g->pid == ctx->pid && g->uid == ctx->uid &&
		    g->gid == ctx->gid)
			return g;
	}
	g = &groups_cache[groups_next++ % CREDS_CACHE_SLOTS];
	n = fuse_req_getgroups(req, CREDS_GROUPS_MAX, g->list);
	/* No /proc entry (the process is gone): no supplementary groups, never more rights. */
	g->n = n < 0 ? 0 : n > CREDS_GROUPS_MAX ? CREDS_GROUPS_MAX : n;
	g->pid = ctx->pid;
	g->uid = ctx->uid;
	g->gid = ctx->gid;
	g->until = now + CREDS_CACHE_NS;
	return g;
}

/* setfsuid/setfsgid report the previous value only: ask again to see what holds. */
static bool fsids_are(uid_t uid, gid_t gid)
{
	return (uid_t)setfsuid((uid_t)-1) == uid && (gid_t)setfsgid((gid_t)-1) == gid;
}

void creds_leave(void)
{
	if (!switched)
		return;
	/* fsuid first: it brings back the file system capabilities. */
	setfsuid(daemon_uid);
	setfsgid(daemon_gid);
	syscall(SYS_setgroups, daemon_ngroups, daemon_groups);
	switched = false;
}

/* Take @g's identity: groups and fsgid while the fsuid is still the daemon's. */
static int apply(const struct groups_entry *g)
{
	switched = true; /* from here on, creds_leave() has something to undo */
	current = g;
	if (syscall(SYS_setgroups, g->n, g->list))
		goto fail;
	setfsgid(g->gid);
	setfsuid(g->uid);
	if (!fsids_are(g->uid, g->gid))
		goto fail;
	return 0;
fail:
	creds_leave();
	return -EPERM;
}

int creds_enter(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	const struct groups_entry *g;

	pthread_once(&creds_once, creds_init);
	if (!daemon_root || (ctx->uid == daemon_uid && ctx->gid == daemon_gid))
		return 0;
	if (ctx->uid == (uid_t)-1 || ctx->gid == (gid_t)-1)
		return -EPERM; /* no valid identity: -1 would only query */
	g = groups_of(req, ctx);
	return apply(g);
}

bool creds_suspend(void)
{
	if (!switched)
		return false;
	creds_leave();
	return true;
}

int creds_resume(bool suspended)
{
	return suspended ? apply(current) : 0;
}

uid_t creds_write_as(uid_t uid)
{
	pthread_once(&creds_once, creds_init);
	if (!daemon_root || uid == daemon_uid || uid == (uid_t)-1)
		return (uid_t)-1;
	return (uid_t)setfsuid(uid); /* inside a switched request: that user's */
}

void creds_write_done(uid_t prev)
{
	if (prev != (uid_t)-1)
		setfsuid(prev);
}

bool creds_unprivileged(fuse_req_t req)
{
	return fuse_req_ctx(req)->uid != 0;
}
