// SPDX-License-Identifier: MIT
/*
 * uid_share.c - each user's share of the daemon's descriptors for open
 * files (issue 27).
 *
 * An open through the mount costs the daemon a backing descriptor, and a
 * lock one more (ops_lock.c). A user's processes each stay within their
 * own RLIMIT_NOFILE, but together they could use up the daemon's, and then
 * every other user's and root's opens and creates would fail with EMFILE.
 * So a user other than root may hold at most UID_SHARE_DIV-th of the
 * descriptors the daemon keeps for open files (half its RLIMIT_NOFILE; the
 * other half is the inode descriptor cache, inode.c); past that her open
 * gets EMFILE, as a local process gets at its own limit, and her lock
 * ENOLCK, as the kernel's lock table answers when full; one log line says
 * so. Root is not counted, nor the daemon's own user (a user's own mount
 * serves her alone). What is counted is descriptors, not opens: kernel
 * passthrough handles of one file share one (passthrough.c), counted once.
 *
 * The pool's file slots are shared the same way: an open with the pool
 * holds one while it is open (cache_io.c), every slot busy means an open
 * that finds its file without one goes uncached, and one user opening
 * many files would so take the buffer cache from everyone. A user other
 * than root may hold UID_POOL_DIV-th of the slots; past that her opens are
 * served from SOURCE without the pool (not an error), one log line.
 *
 * The table maps uid -> descriptors and pool file handles held. Entries are never removed (a host
 * has few users); a full table sends further users to one shared entry,
 * which only makes them stricter. Lock: share_lock, a leaf.
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "uid_share.h"

#define UID_SHARE_DIV 4	     /* a user may take 1/4 of the open-file descriptors */
#define UID_SHARE_MIN 16     /* ... and at least this many */
#define UID_SHARE_SLOTS 1024 /* distinct users counted apart */
#define UID_SHARE_LOG_NS (10ULL * 1000000000ULL)
#define UID_POOL_DIV 4 /* a user may hold 1/4 of the pool's file slots */
#define UID_POOL_MIN 4 /* ... and at least this many */

/* What is shared out: the descriptors for open files, the pool's file slots. */
enum share_res { RES_FDS, RES_POOL, RES_N };

struct share_entry {
	uid_t uid;
	bool used;
	unsigned int held[RES_N]; /* descriptors; cached opens (pool file handles) */
};

/* Process-wide by nature: the shares are of the process's descriptors
 * (RLIMIT_NOFILE) and of the one pool it attaches. */
static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static struct share_entry shares[UID_SHARE_SLOTS + 1]; /* share_lock; the last: overflow */
static unsigned int limits[RES_N];		       /* set before serving */
static uint64_t logged_ns[RES_N];		       /* share_lock */
static uid_t daemon_uid;			       /* set once, before serving */

void uid_share_init(void)
{
	struct rlimit rl;
	rlim_t per = getrlimit(RLIMIT_NOFILE, &rl) ? 0 : rl.rlim_cur / 2 / UID_SHARE_DIV;

	daemon_uid = geteuid();
	limits[RES_FDS] = per > UINT32_MAX ? UINT32_MAX : (unsigned int)per;
	if (limits[RES_FDS] < UID_SHARE_MIN)
		limits[RES_FDS] = UID_SHARE_MIN;
}

/* share_lock held: @uid's entry */
static struct share_entry *entry_of(uid_t uid)
{
	unsigned int i = (unsigned int)(uid * 2654435761U) % UID_SHARE_SLOTS;

	for (unsigned int n = 0; n < UID_SHARE_SLOTS; n++, i = (i + 1) % UID_SHARE_SLOTS) {
		if (!shares[i].used) {
			shares[i].used = true;
			shares[i].uid = uid;
		}
		if (shares[i].uid == uid)
			return &shares[i];
	}
	return &shares[UID_SHARE_SLOTS];
}

bool uid_share_counted(uid_t uid)
{
	return uid != 0 && uid != daemon_uid;
}

/* One more of @res for @uid: true, or false past its share (and whether to log). */
static bool share_take(uid_t uid, enum share_res res, bool *log)
{
	struct share_entry *e;
	bool ok = true;

	*log = false;
	if (!uid_share_counted(uid))
		return true;
	pthread_mutex_lock(&share_lock);
	e = entry_of(uid);
	if (e->held[res] >= limits[res]) {
		uint64_t now = now_ns();

		ok = false;
		*log = now - logged_ns[res] >= UID_SHARE_LOG_NS || !logged_ns[res];
		if (*log)
			logged_ns[res] = now;
	} else {
		e->held[res]++;
	}
	pthread_mutex_unlock(&share_lock);
	return ok;
}

static void share_give(uid_t uid, enum share_res res)
{
	struct share_entry *e;

	if (!uid_share_counted(uid))
		return;
	pthread_mutex_lock(&share_lock);
	e = entry_of(uid);
	if (e->held[res])
		e->held[res]--;
	pthread_mutex_unlock(&share_lock);
}

int uid_share_take(uid_t uid, int err)
{
	bool log;

	if (share_take(uid, RES_FDS, &log))
		return 0;
	if (log)
		log_msg(LOG_WARNING,
			"uid %u holds %u of the daemon's descriptors (files open and locks "
			"through the mount), its share: %s",
			(unsigned int)uid, limits[RES_FDS], err == ENOLCK ? "ENOLCK" : "EMFILE");
	return -err;
}

void uid_share_give(uid_t uid)
{
	share_give(uid, RES_FDS);
}

void uid_share_pool_init(unsigned int nfiles)
{
	limits[RES_POOL] =
	    nfiles / UID_POOL_DIV < UID_POOL_MIN ? UID_POOL_MIN : nfiles / UID_POOL_DIV;
}

bool uid_share_pool_take(uid_t uid)
{
	bool log;

	if (share_take(uid, RES_POOL, &log))
		return true;
	if (log)
		log_msg(LOG_WARNING,
			"uid %u has %u cached files open, its share of the pool's file slots: "
			"further opens are served from SOURCE without the pool",
			(unsigned int)uid, limits[RES_POOL]);
	return false;
}

void uid_share_pool_give(uid_t uid)
{
	share_give(uid, RES_POOL);
}
