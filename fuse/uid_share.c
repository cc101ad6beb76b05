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
 * The table maps uid -> descriptors held. Entries are never removed (a host
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

struct share_entry {
	uid_t uid;
	bool used;
	unsigned int opens;
};

/* Process-wide by nature: the shares are of the process's descriptors (RLIMIT_NOFILE). */
static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static struct share_entry shares[UID_SHARE_SLOTS + 1]; /* share_lock; the last: overflow */
static unsigned int share_limit;		       /* set once, before serving */
static uint64_t share_logged_ns;		       /* share_lock */

void uid_share_init(void)
{
	struct rlimit rl;
	rlim_t per = getrlimit(RLIMIT_NOFILE, &rl) ? 0 : rl.rlim_cur / 2 / UID_SHARE_DIV;

	share_limit = per > UINT32_MAX ? UINT32_MAX : (unsigned int)per;
	if (share_limit < UID_SHARE_MIN)
		share_limit = UID_SHARE_MIN;
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

/* Root, and the daemon's own user (a user's own mount serves only her), are not counted. */
static bool counted(uid_t uid)
{
	return uid != 0 && uid != geteuid();
}

int uid_share_take(uid_t uid, int err)
{
	struct share_entry *e;
	bool log = false;
	int ret = 0;

	if (!counted(uid))
		return 0;
	pthread_mutex_lock(&share_lock);
	e = entry_of(uid);
	if (e->opens >= share_limit) {
		uint64_t now = now_ns();

		ret = -err;
		log = now - share_logged_ns >= UID_SHARE_LOG_NS || !share_logged_ns;
		if (log)
			share_logged_ns = now;
	} else {
		e->opens++;
	}
	pthread_mutex_unlock(&share_lock);
	if (log)
		log_msg(LOG_WARNING,
			"uid %u holds %u of the daemon's descriptors (files open and locks "
			"through the mount), its share: %s",
			(unsigned int)uid, share_limit, err == ENOLCK ? "ENOLCK" : "EMFILE");
	return ret;
}

void uid_share_give(uid_t uid)
{
	if (!counted(uid))
		return;
	pthread_mutex_lock(&share_lock);
	struct share_entry *e = entry_of(uid);

	if (e->opens)
		e->opens--;
	pthread_mutex_unlock(&share_lock);
}
