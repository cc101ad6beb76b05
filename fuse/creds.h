/* SPDX-License-Identifier: MIT */
/*
 * creds.h - act with the requesting process's file system credentials.
 *
 * A root daemon mounted with allow_other serves every user of the host. The
 * handlers that create, open, remove, rename, link or change a name bracket
 * their system calls with creds_enter()/creds_leave(), so the backing file
 * system answers exactly as it would answer that user locally (permissions,
 * ownership of new objects, set-group-ID directories, sticky directories,
 * protected hard links, capabilities). See docs/security.md.
 */
#ifndef ACCELFS_FUSE_CREDS_H
#define ACCELFS_FUSE_CREDS_H

#include <stdbool.h>

#include "accelfs_i.h"

/*
 * Switch the calling worker thread to @req's uid, gid and supplementary
 * groups. Nothing is switched for a caller with the daemon's own uid and
 * gid, or when the daemon is not root (it could not, and serves only its
 * user). Returns 0, or -EPERM if the switch did not take (then nothing is
 * switched). Every 0 must be paired with creds_leave() before the reply's
 * thread takes another request.
 */
int creds_enter(fuse_req_t req);

/* Back to the daemon's own credentials; a no-op if creds_enter() switched nothing. */
void creds_leave(void);

/*
 * The daemon's own work done in the middle of a switched request (opening
 * its write-back descriptor while a user's SETATTR settles deferred bytes):
 * creds_suspend() goes back to the daemon's credentials and returns whether
 * it had to; creds_resume(true) puts the caller's back (same groups, from
 * this thread's cache). Returns 0, or -EPERM if the caller's did not take
 * again (the thread is then the daemon's, and creds_leave() is a no-op).
 */
bool creds_suspend(void);
int creds_resume(bool suspended);

/*
 * A write of a user's open file to SOURCE (WRITE, fallocate, a deferred
 * write-back) runs with the opener's fsuid @uid: file systems keep a reserve
 * for root by fsuid (ext4's resuid, 0 by default), and the kernel's
 * write-back requests carry root's ids whoever wrote. Only the fsuid
 * changes (access was checked at open). Returns what creds_write_done()
 * puts back: the previous fsuid, or (uid_t)-1 when nothing changed (root's
 * and the daemon's own files; a daemon that is not root).
 */
uid_t creds_write_as(uid_t uid);
void creds_write_done(uid_t prev);

/* True if @req comes from a process without the daemon's privileges (uid != 0). */
bool creds_unprivileged(fuse_req_t req);

#endif
