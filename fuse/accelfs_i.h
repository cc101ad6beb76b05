/* SPDX-License-Identifier: MIT */
/*
 * accelfs_i.h - state shared by the daemon's FUSE handlers.
 *
 * Each backing object we have told the kernel about is a struct inode that
 * operations reach through an O_PATH descriptor (as in libfuse's
 * passthrough_ll): names are resolved relative to descriptors, never to path
 * strings, so renames in SOURCE cannot send an operation to the wrong file.
 * The kernel's node id of an inode is a slot and generation (node_ids.c),
 * not its address, so an exported handle's id can be looked up again after
 * the kernel forgot it; inodes are de-duplicated on (st_dev, st_ino) and
 * file handle so hard links share one node and stat shows the backing inode
 * number.
 *
 * An inode is identified by its file handle (name_to_handle_at) and its
 * descriptor lives in a bounded cache (inode.c): a handler pins it with
 * inode_fd_get() and unpins it with inode_fd_put(); a descriptor is never
 * closed while pinned. Where SOURCE has no handles (or the daemon lacks
 * CAP_DAC_READ_SEARCH), each inode keeps its descriptor until FORGET.
 *
 * Lock order (all of the daemon's: docs/design.md, "The daemon's locks"):
 * inode table lock -> inode->lock (must_retire, inode.c); inode->wb_lock ->
 * inode->lock (writeback.c); inode->lock -> fs->pt_files.lock (passthrough.c). The
 * fd cache lock takes inode->fd_lock only with trylock; inode_fd_get() holds
 * fd_lock alone (across a reopen by handle) and takes the cache lock only
 * after dropping it; no other lock is held while either is taken. The mount
 * table and reaper locks (inode.c) are leaves. None is taken on the read or
 * write path; fd_lock, per inode, is the only one an operation on a known
 * inode takes.
 */
#ifndef ACCELFS_FUSE_ACCELFS_I_H
#define ACCELFS_FUSE_ACCELFS_I_H

#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include <fuse_lowlevel.h>

/*
 * What the libfuse we are built with can negotiate; against 3.14 these are
 * compiled out and the kernel's older protocol is used (accelfs --version).
 */
#if FUSE_MAJOR_VERSION > 3 || (FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION >= 18)
#define ACCEL_HAVE_KILLPRIV_V2 1 /* FUSE_CAP_HANDLE_KILLPRIV_V2, fi->kill_suidgid */
#define ACCEL_HAVE_FUSE_URING 1	 /* FUSE_CAP_OVER_IO_URING, -o io_uring */
#define ACCEL_HAVE_TMPFILE 1	 /* the tmpfile operation (O_TMPFILE) */
#endif
/* libfuse >= 3.16: fuse_passthrough_open, fi->backing_id */
#ifdef FUSE_CAP_PASSTHROUGH
#define ACCEL_HAVE_PASSTHROUGH 1
#endif

#include "backend.h"
#include "tuning.h"
#include "options.h"
#include "pool.h"
#include "watch_state.h"

struct pt_share;  /* passthrough.c */
struct pt_file;	  /* passthrough.c */
struct disk_tier; /* cache/disk.h */

/* A node's place in the descriptor cache's clock ring (inode.c). */
struct fd_link {
	struct fd_link *prev, *next;
};

/* Extended attribute names whose absence a node remembers (ops_xattr.c). */
enum xattr_absent { XA_CAPS, XA_SELINUX, XA_ACL_ACCESS, XA_ACL_DEFAULT, XA_COUNT };

struct inode {
	int fd;		       /* O_PATH descriptor, -1 if evicted; see the fd cache fields */
	fuse_ino_t nodeid;     /* the kernel's id (node_ids.c); immutable */
	dev_t dev;	       /* immutable */
	ino_t ino;	       /* immutable */
	mode_t type;	       /* S_IFMT bits; immutable */
	uint64_t nlookup;      /* kernel references; under the table lock */
	struct inode *hnext;   /* hash chain; under the table lock */
	bool retired;	       /* replaced by a newer node (see inode_ref); under the table lock */
	/* atomic: name i absent until then (ns), and the count of xattr
	 * changes that voids such answers (ops_xattr.c, learn_absent) */
	uint64_t xattr_absent_until[XA_COUNT];
	uint32_t xattr_gen;
	bool setid; /* atomic: last seen with bits a write must clear (inode_note_mode) */

	/* Descriptor cache (inode.c): use fd only between inode_fd_get and _put. */
	struct file_handle *fh;	 /* NULL: fd is kept until FORGET (root, no handles); immutable */
	int mount_fd;		 /* opens fh (a descriptor on its mount); immutable */
	struct inode *fhnext;	 /* handle index chain (inode_fh.c); its index lock */
	bool fh_indexed;	 /* in that index; its index lock */
	bool changed_outside;	 /* atomic: the watcher, or an open (cache_policy), saw it change
				  * in SOURCE: the next lookup retires it (must_retire) */
	int watch_wd;		 /* inotify: > 0 watched, < 0 refused; watch_ino.c map_lock */
	bool watch_short;	 /* atomic: given where no inotify watch covers it */
	pthread_mutex_t fd_lock; /* protects fd (if fh), fd_pins, fd_ref, fd_idle */
	unsigned int fd_pins;	 /* callers using fd: never closed while > 0 */
	bool fd_ref;		 /* used since the cache's clock hand last passed */
	uint8_t fd_idle;	 /* reaper passes since the last use */
	bool fd_listed;		 /* fd is on the cache ring; fd cache lock */
	struct fd_link fd_link;	 /* fd cache lock */

	pthread_mutex_t lock; /* protects the fields below */
	unsigned int opens;   /* open files; changed under the lock, read atomically without it */
	/* of opens, those for writing: while there is one, the kernel's writeback
	 * cache may hold pages SOURCE has not seen (ops_seek.c); as opens */
	unsigned int wopens;
	bool stamp_valid; /* backing file state the kernel was last told about */
	struct timespec stamp_mtime;
	struct timespec stamp_ctime;
	off_t stamp_size;
	/* Times set while the file is open (atime, mtime; UTIME_OMIT: not set):
	 * set again after every write-back until the last close (ops_file.c,
	 * times_apply), since writing SOURCE moves its mtime. */
	struct timespec times[2];
	bool times_pending; /* also read without the lock as a hint */
	/* SOURCE has @times, as of its write count @times_gen: set where they
	 * were put on SOURCE (times_apply, set_times), so a close and its
	 * release set them once, not each (a futimens moves the ctime, which
	 * the next open's stamp check would take for a change behind our
	 * back). Any write to SOURCE since (source_writes moved) voids it. */
	bool times_on_source;
	uint64_t times_gen;
	/* atomic, no lock: writes to SOURCE so far (times_source_moved) */
	uint64_t source_writes;
	/* Kernel passthrough (passthrough.c): the inode's handles are all on one path. */
	unsigned int pt_opens; /* of opens, those in passthrough mode */
	int pt_backing_id;     /* the kernel's backing file id while pt_opens > 0, else 0 */
	/* The descriptors its passthrough handles share instead of one each,
	 * one per user and access mode (passthrough.c), NULL: none */
	struct pt_share *pt_shares;
	/* The process that opened the last writable passthrough handle, until
	 * that handle is released; else 0. Written under the lock, read by the
	 * watcher without it (atomic). */
	pid_t pt_writer;
	/* passthrough=auto by observed use (passthrough.c, tuning_use_bulk):
	 * the last handle served by the daemon that read it read in bulk, and
	 * nothing wrote it since; the opens passed through on that verdict
	 * since the daemon last served one to look again, and how many it
	 * lets pass before it looks again (0: the first interval). */
	bool pt_bulk;
	unsigned int pt_bulk_opens;
	unsigned int pt_bulk_every;
	/* its entry in the mount's list of files in passthrough mode while
	 * pt_opens > 0 (fs->pt_files), NULL: not listed */
	struct pt_file *pt_file;
	/* The file's tuning attributes as an open last read them (ops_file.c,
	 * tuning_memo): good while SOURCE shows ctime @tuning_ctime, since a
	 * setxattr or removexattr moves the ctime; one made through the mount
	 * clears @tuning_valid (ops_xattr.c). Spares each open an flistxattr,
	 * a round trip on a network SOURCE. */
	bool tuning_valid;
	struct timespec tuning_ctime;
	struct tuning_values tuning;
	/* A directory listed for the kernel's own open (ops_dir.c, dir_stateless):
	 * the offset past its last entry and when it was reached (0: not known). */
	off_t dir_eof;
	uint64_t dir_eof_ns;

	/* Deferred write (writeback.c): this daemon's dirty bytes of the file. */
	pthread_mutex_t wb_lock; /* serialises deferrals, flushes and write-throughs of the file */
	int wb_err;		 /* atomic: a failed flush's -errno, for the next fsync/close */
	/* A write the kernel's writeback sent that failed: its bytes are gone
	 * from the page cache too. Every handle's next fsync (and a writer's
	 * close) reports it once, as the kernel's errseq does (ops_file.c). */
	int lost_err;	       /* atomic: the last such -errno */
	unsigned int lost_seq; /* atomic: how many there were */
	int wb_fd; /* wb_lock: the daemon's own O_WRONLY descriptor for write-back, -1: none yet */
	/* Deferred appends (wb_append.c), under wb_lock: the region
	 * [app_lo, app_hi) of the file where this mount placed them (app_lo ==
	 * app_hi: none; a flush that failed after part of it went moves app_lo
	 * past that part), and the daemon's O_APPEND descriptor for them (-1:
	 * none yet). */
	uint64_t app_lo, app_hi;
	uint64_t app_ns;    /* CLOCK_MONOTONIC when the region last grew */
	uint64_t app_check; /* SOURCE's end after the last region flush, to check; 0: none */
	int app_fd;
	bool app_moved; /* atomic: a flush found bytes of another writer where ours were */
	/* atomic: a request through the kernel's page cache was served since a
	 * direct write last had the kernel drop the file's pages (ops_file.c) */
	bool kernel_pages;
	/* atomic: an open of it failed with ESTALE (replaced on SOURCE by another
	 * host): the kernel's next lookup of a name leading to it asks SOURCE's
	 * server (ops_entry.c, name_revalidate) */
	bool stale;
};

/* Open files and directories are listed so shutdown can free what the
 * kernel never released (it does not send RELEASE after an unmount). */
struct handle_link {
	struct handle_link *prev, *next;
};

/* One open file: its own backing descriptor, so file status flags stay per
 * open; a kernel passthrough handle's is shared (fd_shared, passthrough.c). */
struct open_file {
	struct handle_link link; /* under the mount's open file list lock (fs->files) */
	struct accelfs *fs;	 /* the mount it is open on; immutable */
	struct inode *inode;	 /* the node it was opened on (holds a kernel reference) */
	int fd;			 /* changed once listed only by open_files_set_fd */
	struct stream *stream; /* buffer cache stream, NULL if not cached */
	int dfd; /* atomic: O_DIRECT descriptor for fills, -1, or FILL_FD_LATER (fill_fd.h) */
	bool wrote;	/* atomic: a write reached SOURCE or the pool */
	bool unsettled; /* atomic: it wrote since the state was last taken as ours
			 * (handle_settle, ops_file.c: at its close and release) */
	bool settled;	/* inode->lock: settled_st holds that state */
	struct stat settled_st; /* inode->lock: what SOURCE held when it settled */
	uint64_t
	    known_size; /* atomic: size last seen (open or fstat); reads below skip EOF checks */
	struct pool_file_id id; /* identity (immutable) and validator: written by the
				 * revalidating thread only, see revalidate() in cache_io.c */
	uint64_t next_check;	/* atomic: revalidate=S, CLOCK_MONOTONIC ns of the next check */
	bool changed;		/* atomic: the watcher saw SOURCE change it: check at next read */
	int flags;		/* open(2) flags */
	bool direct_io;	  /* opened FOPEN_DIRECT_IO: its I/O bypasses the page cache; immutable */
	bool defer;	  /* writes may be deferred (deferred_write, not O_SYNC unless relaxed) */
	bool relaxed;	  /* sync=relaxed: fsync/O_SYNC mean "within flush_interval" */
	bool deferred;	  /* atomic: this handle deferred a write (the flusher looks) */
	uint64_t wb_next; /* inode wb_lock: where its last deferred write ended */
	bool append;	  /* deferred writes go to SOURCE's end (wb_open); immutable */
	uint64_t readahead_max; /* read-ahead limit (readahead_max, or the file's attribute) */
	int rmw_fd;		/* O_NOATIME reader for read-modify-write, -1: none (yet) */
	bool rmw_tried;
	/* the kernel does its I/O (passthrough.c); immutable after open */
	bool passthrough;
	/* fd is not its own but one its inode's passthrough handles of its
	 * user and access mode share (passthrough.c: pt_share, freed with the
	 * last of them); both immutable after open */
	bool fd_shared;
	struct pt_share *pt_share;
	/* atomic: a fd_shared handle's own descriptor for flock, opened at its
	 * first flock (ops_lock.c); -1: none */
	int lock_fd;
	pid_t pt_pid;	   /* a writable passthrough handle's opener, else 0; immutable */
	unsigned int busy; /* open file list lock: walkers using it outside the lock */
	bool locked;	   /* atomic: a lock owner's descriptor was made through it (ops_lock.c) */
	uid_t uid;	   /* whose share of the daemon's descriptors it takes (uid_share.c) */
	unsigned int lost_seen; /* atomic: the inode's lost_seq last reported to it */
	/* atomic: READ requests it served and their bytes (passthrough.c,
	 * struct tuning_use: what the next opens are decided on) */
	uint64_t use_reads, use_bytes;
};

struct dir_handle {
	struct handle_link link; /* under the mount's directory list lock (fs->dirs) */
	DIR *dp;
	struct dirent *entry; /* read but not yet returned to the kernel */
	off_t offset;
};

/* The nodes the kernel holds, hashed on (st_dev, st_ino) (inode.c). */
/* The mount's open files (open_files.h): a handle_link list of struct open_file. */
struct open_files {
	struct handle_link head;
	pthread_mutex_t lock; /* the list, each handle's busy */
	pthread_cond_t idle;  /* a handle's busy fell */
};

/* The mount's files in kernel passthrough mode now, and why (passthrough.c),
 * for accel stat. */
struct pt_files {
	pthread_mutex_t lock; /* the list, count, gen; a leaf, taken under inode->lock */
	struct pt_file *head;
	unsigned int count;
	uint64_t gen;	  /* moves at every change of the list */
	uint64_t learned; /* atomic: opens passed through by observed use (pt_bulk) */
};

/* Lock owners' descriptors (ops_lock.c, locks=forward), hashed on (node, owner). */
#define LOCK_OWNER_BUCKETS 256
struct lock_owner;
struct lock_owners {
	pthread_mutex_t lock; /* the table, each owner's refs */
	struct lock_owner *buckets[LOCK_OWNER_BUCKETS];
	unsigned int count; /* atomic: a FLUSH with none skips the table */
};

/* The mount's open directories (ops_dir.c), and what INIT settled for them. */
struct open_dirs {
	struct handle_link head;
	pthread_mutex_t lock; /* the list */
	bool no_opendir_ok;   /* set at INIT (atomic): the kernel may open directories itself */
	bool no_opendir;      /* it was told so, logged once (atomic: any worker may) */
};

struct readahead;
struct fair;

/* The mount's flusher thread (writeback.c). */
struct wb_flusher {
	pthread_t thread;
	bool running;
	pthread_mutex_t lock; /* stop, with cond */
	pthread_cond_t cond;
	bool stop;
	/*
	 * sync=relaxed: fsync(2) returns at once, and the flusher's next
	 * background sync (relaxed_sync) makes what it covered durable: a power
	 * cut loses at most about flush_interval of what relaxed fsyncs
	 * acknowledged. The count of syncs owed; atomic.
	 */
	uint64_t relaxed_debt;
};

/* The table's second index, file handle -> node (inode_fh.c). */
struct fh_index {
	pthread_mutex_t lock; /* the index lock: protects the fields below */
	struct inode **tab;   /* chains through fhnext */
	size_t size;	      /* power of two, 0 before the first add */
	size_t count;
	struct file_handle *root; /* SOURCE's root; set before the watcher starts */
};

/* The kernel's node ids (node_ids.c): under the table lock, but a chunk's
 * slots are read without it (node_id_node). */
struct node_slot;
struct node_ids {
	struct node_slot **chunks; /* each published once, never moved */
	uint32_t *ghosts;	   /* (dev, ino) -> ghost slot chains */
	uint32_t next;		   /* the first slot never used */
	uint32_t head, tail;	   /* freed slots, oldest first */
	uint32_t nfree;
};

struct inode_table {
	pthread_mutex_t lock; /* the table lock: protects the fields below but fh */
	struct node_ids ids;
	struct inode **slots; /* chains through hnext */
	size_t size;	      /* power of two */
	size_t count;
	struct inode *retired; /* retired nodes the kernel still holds, via hnext */
	/* atomic: nodes marked stale (inode_mark_stale), so that a lookup finding
	 * none takes no table lock to ask (inode_take_stale) */
	unsigned int stale_marks;
	/* set once before serving (inode_set_free_hook), then read only */
	void (*free_hook)(struct accelfs *fs, struct inode *n);
	struct fh_index fh;
};

struct accelfs {
	struct accelfs_opts opts;
	char *source_real;     /* canonical SOURCE path */
	char *mountpoint_real; /* canonical MOUNTPOINT path */
	struct inode root;
	struct inode_table inodes; /* every node but the root */
	struct open_files files;
	struct open_dirs dirs;
	struct lock_owners owners;
	struct readahead *ra; /* readahead_io.c's, while it runs; else NULL */
	struct wb_flusher flusher;
	bool closing;	    /* atomic: past shutdown's final sync, nothing new is acknowledged */
	struct watch watch; /* the watcher's (watch_state.h) */
	/* The buffer cache's pool (cache_io.c opens and closes it before and
	 * after serving; read without a lock), NULL when the cache is off. */
	struct pool *pool;
	/* The disk tier below it (disk_cache=), opened and closed with it; NULL: none */
	struct disk_tier *disk;
	bool dont_mask;	   /* FUSE_DONT_MASK negotiated: we apply the umask */
	bool killpriv_v2;  /* FUSE_HANDLE_KILLPRIV_V2 negotiated (see killpriv.c) */
	bool uring_wanted; /* FUSE over io_uring asked of libfuse (transport.c) */
	bool uring_active; /* atomic: ... and the kernel agreed (set at INIT) */
	/* FUSE_PASSTHROUGH asked at INIT (passthrough.c) */
	bool passthrough;
	struct pt_files pt_files;
	/* each user's share of the workers (fair.c), made before serving */
	struct fair *fair;
	/* shared mode (shared.c), settled before mounting */
	bool shared;
	/* shared mode: a LOOKUP's statx asks SOURCE's server (AT_STATX_FORCE_SYNC);
	 * false where SOURCE's client answers that from its caches anyway (shared.c) */
	bool lookup_forced;
	char shared_why[160];
	struct fuse_session *se;
};

/*
 * The daemon's state is one struct accelfs, made by main() and reached
 * through a handle, never a global: a handler takes it from its request
 * (fuse_req_userdata, the session's userdata), an open file from of->fs, a
 * thread from its start argument, and helpers receive it as @fs.
 */

/* inode.c */
int inode_table_init(struct accelfs *fs);
void inode_table_destroy(struct accelfs *fs);
struct inode *inode_get(struct accelfs *fs, fuse_ino_t ino);
/* Take (or find) the inode for @fd/@st and add one lookup; consumes @fd. */
struct inode *inode_ref(struct accelfs *fs, int fd, const struct stat *st, int *err);
/* A reference on the node that already stands for @st's object, found by its
 * inode number and trusted because its descriptor is open (an open
 * descriptor keeps the number from being reused); NULL: none, or its
 * descriptor is closed — then open the name and use inode_ref(). */
struct inode *inode_ref_known(struct accelfs *fs, const struct stat *st);
/* An O_PATH descriptor of what node id @id names, for the kernel's LOOKUP of
 * "." (an exported handle): the live node's, or its ghost's reopened by
 * handle (node_ids.c). -ENOENT: @id names nothing; it is checked, never
 * taken on trust. */
int inode_open_id(struct accelfs *fs, fuse_ino_t id);
/* Whether @st's object has a node whose open failed with ESTALE since the
 * last call (clears it): its name must be looked up at SOURCE's server. */
/* An open of @n failed with ESTALE: the next lookup leading to it asks SOURCE's server. */
void inode_mark_stale(struct accelfs *fs, struct inode *n);
bool inode_take_stale(struct accelfs *fs, const struct stat *st);
void inode_unref(struct accelfs *fs, struct inode *inode, uint64_t n);
/* Called with each node the table frees, before it goes (the watcher's
 * inotify watch); set once before serving. */
void inode_set_free_hook(struct accelfs *fs, void (*fn)(struct accelfs *fs, struct inode *n));
/* The backing state the kernel knows, under inode->lock. */
/* The timeouts a failing watcher shortens while workers reply (watch.c): read atomically. */
static inline double opt_entry_timeout(struct accelfs *fs)
{
	double v;

	__atomic_load(&fs->opts.entry_timeout, &v, __ATOMIC_RELAXED);
	return v;
}

static inline double opt_attr_timeout(struct accelfs *fs)
{
	double v;

	__atomic_load(&fs->opts.attr_timeout, &v, __ATOMIC_RELAXED);
	return v;
}

bool stamp_equal(const struct inode *n, const struct stat *st);
/* ... in size or mtime: the data changed (our own metadata changes move ctime) */
bool stamp_data_differs(const struct inode *n, const struct stat *st);
void stamp_set(struct inode *n, const struct stat *st);
/* Remember whether @st's mode has set-ID bits an unprivileged write clears. */
void inode_note_mode(struct inode *n, const struct stat *st);
/*
 * The O_PATH descriptor of @n, pinned for the caller until inode_fd_put():
 * >= 0, or -errno (-ESTALE: the backing file is gone). Reopened by handle if
 * the cache closed it. Pin for as long as a proc_fd_path() of it is in use.
 */
int inode_fd_get(struct inode *n);
/* @n's file is gone (ESTALE): close its cached descriptor if unpinned. */
void inode_fd_drop(struct inode *n);
/* Unpin what inode_fd_get() returned; a failed get (@fd < 0) is ignored.
 * Never changes errno. */
void inode_fd_put(struct inode *n, int fd);
/* @call (using pinned @fd), or -1 with errno set from a failed pin. */
#define INODE_FD_OR(fd, call) ((fd) < 0 ? (errno = -(fd), -1) : (call))
/* At INIT: one log line on how inodes are kept (a warning in fallback). */
void inode_fd_log_mode(void);
/* Are nodes kept by file handle (set at init)? */
bool inode_handles_used(void);
/* "/proc/self/fd/N" for a descriptor; @buf must hold PROC_FD_LEN bytes. */
#define PROC_FD_LEN 32
static inline const char *proc_fd_path(int fd, char *buf)
{
	snprintf(buf, PROC_FD_LEN, "/proc/self/fd/%d", fd);
	return buf;
}

/* inode_fh.c: file handle -> node id, for the watcher (see there) */
void inode_fh_add(struct inode_table *t, struct inode *n);
void inode_fh_del(struct inode_table *t, struct inode *n);
/* Remember SOURCE root's handle; 0 or -ENOMEM. */
int inode_fh_set_root(struct inode_table *t, const struct file_handle *fh);
/* The node id with handle @fh (FUSE_ROOT_ID for the root), or 0: none known;
 * @changed: mark the node changed_outside and forget its xattrs known absent
 * (not the root's: the caller does); *@pt_writer (if not NULL): its
 * pt_writer, read while the node cannot go (else left alone). */
fuse_ino_t inode_fh_find(struct inode_table *t, const struct file_handle *fh, bool changed,
			 pid_t *pt_writer);
void inode_fh_destroy(struct inode_table *t);
/* inode.c, for the watcher: the node id of (@dev, @ino), or 0: none known;
 * @changed: mark the node changed_outside and forget its xattrs known absent. */
fuse_ino_t inode_find_id(struct accelfs *fs, dev_t dev, ino_t ino, bool changed);
/* Every known node id (the root first) into *@out (malloc'ed, NULL on ENOMEM); the count. */
size_t inode_all_ids(struct accelfs *fs, fuse_ino_t **out);
/* Events were lost: any node's extended attributes may have changed. */
void inode_all_xattrs_changed(struct accelfs *fs);

/* killpriv.c: what a write or truncation removes from a file (see there) */
int killpriv_now(struct accelfs *fs, fuse_ino_t ino, struct inode *n, int fd, bool caps);
void killpriv_on_write(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		       struct open_file *of);
bool killpriv_setattr_asked(struct accelfs *fs, int valid);
bool killpriv_open_asked(struct accelfs *fs, const struct fuse_file_info *fi);
/* ops_xattr.c: remove security.capability unless known absent; 0 or -errno */
int xattr_caps_kill(struct accelfs *fs, struct inode *n, int fd);
/* @n's file was just created (O_EXCL): capabilities are never inherited, so
 * it has none, known for attr_timeout as if a getxattr had said so. */
void xattr_caps_created(struct accelfs *fs, struct inode *n);
/* @n's extended attributes changed (through the mount or, the watcher says,
 * in SOURCE): forget the names known absent. Atomics only: any lock may be held. */
void xattr_absent_forget(struct inode *n);
/* transport.c: /dev/fuse or FUSE over io_uring (see there) */
int transport_choose(struct accelfs *fs, char *why, size_t len);
const char *transport_fuse_opt(struct accelfs *fs);
const char *transport_describe(struct accelfs *fs, const struct fuse_conn_info *conn);
void transport_init(struct accelfs *fs, const struct fuse_conn_info *conn);
/* May a thread other than the one a request came to reply to it? */
bool transport_foreign_replies(struct accelfs *fs);
/* passthrough.c: per-file kernel passthrough (see there) */
struct tuning_values;
void passthrough_init(struct accelfs *fs, struct fuse_conn_info *conn, bool writeback_cache);
/* What the rule says of an open, before the inode's state is weighed. */
struct pt_choice {
	const char *why; /* passthrough, and why ("attribute always", ...); NULL: not */
	bool by_use;	 /* else passthrough=auto may still choose it by observed use */
};
void passthrough_wanted(struct accelfs *fs, const struct inode *n, const struct tuning_values *t,
			struct pt_choice *c);
/*
 * Under inode->lock, before the open is counted in n->opens: 1 passthrough,
 * 0 not. *@swap: the inode's shared descriptor the handle is to use from
 * now on instead of its own (the caller closes its own), or -1.
 */
int passthrough_open_locked(fuse_req_t req, struct open_file *of, const struct pt_choice *c,
			    struct fuse_file_info *fi, int *swap);
/* What a handle's release leaves to do once inode->lock is dropped. */
struct pt_leftover {
	int backing_id; /* > 0: the inode's last passthrough handle: passthrough_close() it */
	int fd;		/* >= 0: a shared descriptor's last user: close it, give @uid's share */
	uid_t uid;
};
/* Under inode->lock: a handle goes. */
void passthrough_release_locked(struct open_file *of, struct pt_leftover *left);
/* The files in passthrough mode now as "WHY\tPATH" lines into @f, their count. */
unsigned int passthrough_files_write(struct accelfs *fs, FILE *f);
/* Unregister @backing_id (> 0) through the session's device: needs no
 * request, so an open whose reply found its opener gone closes it too. */
void passthrough_close(struct accelfs *fs, int backing_id);
/* Before mounting: -1 with the reason in @why if the options ask what this build lacks. */
int passthrough_check(struct accelfs *fs, char *why, size_t len);
/* ops.c: the optional features this build has, "+name -name ..." (accelfs --version) */
void ops_features(char *buf, size_t len);

/* ops_entry.c: how a lookup learns what a name is now on SOURCE */
enum lookup_how {
	LOOKUP_ASK,    /* a LOOKUP: in shared mode SOURCE's client asks its server */
	LOOKUP_LISTED, /* from a listing just read from SOURCE: its client's caches are as new */
	LOOKUP_MADE,   /* the caller just made the object: no node stands for it yet */
};
/* Look up @name in @parent and fill @e (adds a lookup). */
int entry_lookup(struct accelfs *fs, fuse_ino_t parent, const char *name,
		 struct fuse_entry_param *e, enum lookup_how how);
/* The mode to create with, handling the caller's umask (see ops_entry.c). */
mode_t entry_mode(fuse_req_t req, mode_t mode);
/* Fill @e for the object open as @fd (adds a lookup); the name is not looked up again. */
int entry_from_fd(struct accelfs *fs, int fd, struct fuse_entry_param *e);

/* Monotonic time in ns, to the clock tick (a few ms): for intervals, not order. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Handler tables, one per object kind, merged in ops.c. */
void ops_entry_fill(struct fuse_lowlevel_ops *ops);
void ops_file_fill(struct accelfs *fs, struct fuse_lowlevel_ops *ops);
void ops_dir_fill(struct fuse_lowlevel_ops *ops);
/* At INIT, after the ACL choice: may the kernel open directories without
 * asking (ops_dir.c)? */
void ops_dir_init(struct accelfs *fs, struct fuse_conn_info *conn);
void ops_xattr_fill(struct fuse_lowlevel_ops *ops);
/* ops_seek.c: lseek (SEEK_DATA/SEEK_HOLE answered from SOURCE, see there) */
void ops_seek_fill(struct fuse_lowlevel_ops *ops);
void ops_fill(struct accelfs *fs, struct fuse_lowlevel_ops *ops);
/* At exit: free the open files and directories the kernel still held. */
void ops_file_release_all(struct accelfs *fs);
void ops_dir_release_all(struct accelfs *fs);

/* A handle list (open files, open directories) under its @lock. */
static inline void handle_list_add(struct handle_link *head, struct handle_link *h,
				   pthread_mutex_t *lock)
{
	pthread_mutex_lock(lock);
	if (!head->next)
		head->next = head->prev = head;
	h->next = head->next;
	h->prev = head;
	head->next->prev = h;
	head->next = h;
	pthread_mutex_unlock(lock);
}

static inline void handle_list_del(struct handle_link *h, pthread_mutex_t *lock)
{
	pthread_mutex_lock(lock);
	h->prev->next = h->next;
	h->next->prev = h->prev;
	pthread_mutex_unlock(lock);
}

/* The pool's name as the mount asked for it (-o pool=), or the default. */
static inline const char *cache_io_pool_name(const struct accelfs *fs)
{
	return fs->opts.pool_name ? fs->opts.pool_name : POOL_DEFAULT_NAME;
}

/* cache_io.c: file data through the buffer cache (see there) */
int cache_io_init(struct accelfs *fs, char *err, size_t errlen);
int cache_io_disk_init(struct accelfs *fs, char *err, size_t errlen);
void cache_io_disk_start(struct accelfs *fs);
void cache_io_shutdown(struct accelfs *fs);
void cache_io_abandon(struct accelfs *fs);
void cache_io_describe(struct accelfs *fs, char *buf, size_t len);
/* @t: the file's tuning if already read, else NULL */
int cache_io_open(struct open_file *of, const struct stat *st, const struct tuning_values *t);
/* Count an open the rule sent to passthrough: @ok, or served by the daemon (a fallback). */
void cache_io_count_passthrough(struct accelfs *fs, bool ok);
/* The handle goes: its deferred bytes first, then its stream and descriptors. */
void cache_io_close(struct open_file *of);
/* @st: what SOURCE held when the handle's writes were done (handle_settle):
 * the pool's buffers are valid for it. At the release, before cache_io_close. */
void cache_io_settle(struct open_file *of, const struct stat *st);
ssize_t cache_io_read(struct open_file *of, void *buf, size_t size, off_t off);
int cache_io_write_begin(struct open_file *of, uint64_t off, uint64_t len);
void cache_io_write_end(struct open_file *of, uint64_t off, ssize_t res);
void cache_io_truncated(struct open_file *of, uint64_t size);
int cache_io_truncate_inode(struct accelfs *fs, struct inode *n, off_t size,
			    int (*fn)(struct inode *, off_t));

/* writeback.c: deferred write of small writes through the pool (see there) */
void wb_open(struct open_file *of, int deferred_attr, int sync_attr);
ssize_t wb_write(struct open_file *of, struct fuse_bufvec *in, off_t off);
int wb_sync(struct open_file *of);
int wb_fsync(struct open_file *of, int datasync);
int wb_close(struct open_file *of);
void wb_last_close(struct open_file *of);
void wb_last_handle(struct inode *n);
int wb_flush_now(struct open_file *of);
void wb_flush_file(struct accelfs *fs, const struct inode *n);
int wb_write_through_begin(struct open_file *of);
void wb_write_through_end(struct open_file *of);
int wb_fsync_relaxed(struct open_file *of);
void wb_fix_attr(struct accelfs *fs, struct stat *st);
uint64_t wb_end(struct open_file *of);
int wb_start(struct accelfs *fs);
/* Log one line for a file whose dead daemon's deferred bytes were recovered or dropped. */
struct pool_recover_note;
void wb_recover_log(void *arg, const struct pool_recover_note *n);
void wb_stop(struct accelfs *fs);
void wb_flush_all(struct accelfs *fs);
/* readahead_io.c: adaptive read-ahead into the pool (see there) */
int readahead_io_start(struct accelfs *fs);
void readahead_io_stop(struct accelfs *fs);
void cache_io_readahead(struct open_file *of, uint64_t off, size_t len);
/* Before a read of [@off, +@len): wait (bounded) for reads in flight of its buckets */
void readahead_wait(struct open_file *of, uint64_t off, size_t len);
/*
 * A READ reads [@off, +@len) from SOURCE itself (the pool did not have it):
 * published until readahead_read_done, so other READs wait for it and
 * read-ahead leaves it out. @held: what the READ's previous call returned
 * (-1 at first). Returns the entry to pass on, or -1 (not published).
 */
int readahead_reading(struct open_file *of, uint64_t off, size_t len, int held);
void readahead_read_done(struct accelfs *fs, int held);
/* SOURCE's delay per read as read-ahead measured it (ns; 0: none seen, or no read-ahead) */
uint64_t readahead_delay_ns(const struct accelfs *fs);

/* ops_lock.c: locks taken on SOURCE (locks=forward; see there) */
void ops_lock_fill(struct accelfs *fs, struct fuse_lowlevel_ops *ops);
/* close(2) by lock owner @owner (FLUSH): its locks on the file go */
void lock_flush(struct open_file *of, uint64_t owner);
/* The handle goes: the locks of owners that are the handle itself (OFD) go */
void lock_release_handle(struct open_file *of);

/* shutdown.c: before the session ends (see there) */
void shutdown_sync(struct accelfs *fs);
/* Past the final sync: writes and writable opens are refused (-EIO), else 0. */
int shutdown_refuse(struct accelfs *fs, const struct inode *n, const char *what);

/* bdi.c: raise the mount's read-ahead and dirty share (root only) */
void bdi_tune(struct accelfs *fs);

/* log.c: the process's one log */
/* Before anything logs: how verbose, and whether in the foreground (@o's). */
void log_init(const struct accelfs_opts *o);
/* How many errors libfuse itself has reported (it prints its own cause). */
unsigned int log_fuse_errors(void);
/* Choose where messages go once running (-o log=@target, NULL: the default);
 * before mounting, so a bad log file is a start-up error. Returns 0, or -1
 * with a message in @err. */
int log_open(const char *target, char *err, size_t errlen);
/* Switch to that destination (after daemonising). */
void log_start(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
