// SPDX-License-Identifier: MIT
/*
 * shared.c - shared mode (-o shared=auto|on|off): SOURCE is a network or
 * cluster file system that other hosts change too, each perhaps with an
 * accelfs of its own. The mount must then never be weaker than SOURCE's own
 * clients (docs/shared.md):
 *
 *   - no watcher: neither fanotify nor inotify hears of another host's
 *     change, and a watcher's long timeouts would hide it for that long;
 *     names and attributes are trusted for entry_timeout/attr_timeout (1 s
 *     unless set), what NFS and FUSE clients give by default;
 *   - no kernel writeback cache: it writes back whole pages, and so bytes
 *     of a page the application never wrote, read before another host
 *     changed them (two hosts writing records of one page lose each
 *     other's); deferred write keeps one exact dirty range per bucket
 *     (stream_set_exact);
 *   - the daemon's reads bypass SOURCE's client cache (backend_io=direct):
 *     they would leave pages there that no program on this host read and
 *     that another host's writes make stale for this host's plain readers;
 *   - close-to-open: what a handle wrote is on SOURCE at its close
 *     (FLUSH is always handled, ops_lock.c needs it too), and an open
 *     compares SOURCE's state to drop stale kernel pages and pool buffers;
 *     open files are rechecked every attr_timeout (revalidate);
 *   - locks taken on SOURCE (ops_lock.c, also outside shared mode) and
 *     lock-based coherence.
 * auto decides from SOURCE's file system type (statfs), which is what the
 * kernel can tell; a local file system that is also exported (an NFS
 * server's export) is not detected: shared=on says so.
 */
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "accelfs_i.h"
#include "mountinfo.h"
#include "shared.h"

/* File systems whose changes may come from elsewhere than this kernel. */
static const struct {
	long magic;
	const char *name;
} remote_types[] = {
	{ 0x6969, "nfs" },
	{ 0x517b, "smb" },
	{ (long)0xff534d42, "cifs" },
	{ (long)0xfe534d42, "smb2" },
	{ 0x65735546, "fuse" },
	{ 0x01021997, "9p" },
	{ 0x00c36400, "ceph" },
	{ 0x5346414f, "afs" },
	{ 0x6b414653, "kafs" },
	{ 0x47504653, "gpfs" },
	{ 0x0bd00bd0, "lustre" },
	{ 0x7461636f, "ocfs2" },
	{ 0x01161970, "gfs2" },
	{ 0x73757245, "coda" },
	{ 0x20030528, "orangefs" },
	{ 0x19830326, "beegfs" },
	{ 0x564c, "ncpfs" },
};

/* The mount table's name of the file system holding @path (e.g. fuse.glusterfs). */
static void fstype_name(const char *path, char *name, size_t len)
{
	struct mountinfo_entry *m = malloc(sizeof(*m));
	char *p = strdup(path), *slash;

	while (m && p && p[0]) {
		if (!mountinfo_find(NULL, p, m)) {
			snprintf(name, len, "%s", m->fstype);
			break;
		}
		slash = strrchr(p, '/');
		if (!slash)
			break;
		slash[slash == p] = '\0'; /* "/a" -> "/", "/" -> "" */
	}
	free(m);
	free(p);
}

bool shared_fs_remote(const char *path, char *name, size_t len)
{
	struct statfs sf;

	snprintf(name, len, "unknown");
	if (statfs(path, &sf))
		return true;
	snprintf(name, len, "type 0x%lx", (unsigned long)sf.f_type);
	fstype_name(path, name, len);
	for (size_t i = 0; i < sizeof(remote_types) / sizeof(remote_types[0]); i++)
		if ((long)sf.f_type == remote_types[i].magic)
			return true;
	return false;
}

bool shared_mode(struct accelfs *fs)
{
	return fs->shared;
}

/* The defaults shared mode changes; an option the user gave is kept, or refused. */
static int shared_defaults(struct accelfs *fs, struct accelfs_opts *o, char *err, size_t len)
{
	if (o->watch == WATCH_FANOTIFY || o->watch == WATCH_INOTIFY) {
		snprintf(err, len,
			 "watch=%s cannot see changes other hosts make to a shared SOURCE "
			 "(%s): use watch=off, or shared=off if only this host changes it",
			 o->watch == WATCH_FANOTIFY ? "fanotify" : "inotify", fs->shared_why);
		return -1;
	}
	o->watch = WATCH_OFF;
	if (!opts_given(o, "writeback"))
		o->writeback = false;
	if (!opts_given(o, "revalidate"))
		o->revalidate = o->attr_timeout > 0 ? o->attr_timeout : 1;
	/* The daemon's own reads (bucket fills, read-modify-write) must not
	 * fill the SOURCE client's page cache with pages another host then
	 * changes: a plain reader of SOURCE on this host would be served
	 * them, stale (seen with glusterfs). O_DIRECT where SOURCE has it. */
	if (!opts_given(o, "backend_io"))
		o->backend_direct = true;
	/* Every call on a network SOURCE waits for a round trip, so requests
	 * in flight, not CPU, bound what parallel programs get (git's index
	 * preload lstat()s with up to 20 threads, as on the bare mount). */
	if (!opts_given(o, "threads"))
		o->threads = SHARED_THREADS;
	return 0;
}

/*
 * Whether a stat forced to SOURCE's server (AT_STATX_FORCE_SYNC) reaches it
 * through SOURCE's client of type @type. GlusterFS's answers it from its
 * md-cache like any other stat (a git status of 5,000 files: 5,155 forced
 * GETATTRs through its FUSE client, 4 STATs at the brick), so there the
 * force is one request more through that client per LOOKUP and no fresher
 * answer: the name's own revalidation (its LOOKUP, at the brick) is what
 * refreshes the cache. NFS, CIFS, Ceph and the rest do ask their server.
 */
static bool forced_stat_reaches_server(const char *type)
{
	return strcmp(type, "fuse.glusterfs") != 0;
}

int shared_setup(struct accelfs *fs, char *err, size_t len)
{
	struct accelfs_opts *o = &fs->opts;
	char type[80];
	bool remote = shared_fs_remote(fs->source_real, type, sizeof(type));

	switch (o->shared) {
	case SHARED_ON:
		fs->shared = true;
		snprintf(fs->shared_why, sizeof(fs->shared_why), "shared=on, SOURCE is %s", type);
		break;
	case SHARED_OFF:
		fs->shared = false;
		snprintf(fs->shared_why, sizeof(fs->shared_why), "shared=off, SOURCE is %s", type);
		break;
	default:
		fs->shared = remote;
		snprintf(fs->shared_why, sizeof(fs->shared_why), "SOURCE is %s%s", type,
			 remote ? ", which other hosts may change" : "");
	}
	fs->lookup_forced = fs->shared && forced_stat_reaches_server(type);
	return fs->shared ? shared_defaults(fs, o, err, len) : 0;
}

void shared_log(struct accelfs *fs)
{
	const struct accelfs_opts *o = &fs->opts;

	if (!fs->shared) {
		log_msg(LOG_INFO, "shared mode: off (%s); locks %s", fs->shared_why,
			o->locks == LOCKS_FORWARD ? "taken on SOURCE" : "kept in the kernel");
		return;
	}
	log_msg(LOG_INFO,
		"shared mode: on (%s): no watcher, entry_timeout %gs, attr_timeout %gs, "
		"open files rechecked every %gs, %u worker threads, locks %s, lookups %s",
		fs->shared_why, o->entry_timeout, o->attr_timeout, o->revalidate, o->threads,
		o->locks == LOCKS_FORWARD ? "taken on SOURCE" : "kept in the kernel (locks=local)",
		fs->lookup_forced ? "forced to SOURCE's server"
				  : "as SOURCE's client answers them (it answers forced ones "
				    "from its caches too)");
	if (o->writeback)
		log_msg(LOG_WARNING,
			"shared mode with writeback=on: the kernel writes back whole pages, so "
			"bytes other hosts wrote to a page this host also wrote may be lost");
	if (o->locks == LOCKS_LOCAL)
		log_msg(LOG_WARNING, "shared mode with locks=local: locks taken through this "
				     "mount do not exclude other hosts");
}
