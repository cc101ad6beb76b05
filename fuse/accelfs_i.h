/* SPDX-License-Identifier: MIT */
/*
 * accelfs_i.h - state shared by the daemon's FUSE handlers.
 *
 * Each backing object we have told the kernel about is a struct inode that
 * holds an O_PATH descriptor (as in libfuse's passthrough_ll): names are
 * resolved relative to descriptors, never to path strings, so renames in
 * SOURCE cannot send an operation to the wrong file. The kernel's node id of
 * an inode is its address; inodes are de-duplicated on (st_dev, st_ino) so
 * hard links share one node and stat shows the backing inode number.
 *
 * Lock order: inode table lock (inode.c) -> inode->lock. Neither is taken on
 * the read or write path.
 */
#ifndef ACCELFS_FUSE_ACCELFS_I_H
#define ACCELFS_FUSE_ACCELFS_I_H

#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <syslog.h>

#include <fuse_lowlevel.h>

/*
 * What the libfuse we are built with can negotiate; against 3.14 these are
 * compiled out and the kernel's older protocol is used (accelfs --version).
 */
#if FUSE_MAJOR_VERSION > 3 || (FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION >= 18)
#define ACCEL_HAVE_KILLPRIV_V2 1 /* FUSE_CAP_HANDLE_KILLPRIV_V2, fi->kill_suidgid */
#define ACCEL_HAVE_FUSE_URING 1	 /* FUSE_CAP_OVER_IO_URING, -o io_uring */
#endif

#include "backend.h"
#include "options.h"
#include "pool.h"

struct inode {
	int fd;		       /* O_PATH descriptor of the backing object; immutable */
	dev_t dev;	       /* immutable */
	ino_t ino;	       /* immutable */
	mode_t type;	       /* S_IFMT bits; immutable */
	uint64_t nlookup;      /* kernel references; under the table lock */
	struct inode *hnext;   /* hash chain; under the table lock */
	bool retired;	       /* replaced by a newer node (see inode_ref); under the table lock */
	uint64_t nocaps_until; /* no security.capability until then (ns); atomic */
	bool setid; /* atomic: last seen with bits a write must clear (inode_note_mode) */

	pthread_mutex_t lock; /* protects the fields below */
	unsigned int opens;   /* open files of this node */
	bool stamp_valid;     /* backing file state the kernel was last told about */
	struct timespec stamp_mtime;
	struct timespec stamp_ctime;
	off_t stamp_size;

	/* Deferred write (writeback.c): this daemon's dirty bytes of the file. */
	pthread_mutex_t wb_lock; /* serialises deferrals, flushes and write-throughs of the file */
	int wb_err;		 /* atomic: a failed flush's -errno, for the next fsync/close */
};

/* Open files and directories are listed so shutdown can free what the
 * kernel never released (it does not send RELEASE after an unmount). */
struct handle_link {
	struct handle_link *prev, *next;
};

/* One open file: its own backing descriptor, so file status flags stay per open. */
struct open_file {
	struct handle_link link; /* under the open file list lock (ops_file.c) */
	struct inode *inode;	 /* the node it was opened on (holds a kernel reference) */
	int fd;
	struct stream *stream; /* buffer cache stream, NULL if not cached */
	int dfd;	       /* O_DIRECT descriptor for buffer fills, or -1 */
	bool wrote;	       /* a write went through the stream (revalidate at close) */
	uint64_t known_size; /* atomic: size last seen (open or fstat); reads below skip EOF checks */
	struct pool_file_id id; /* identity (immutable) and validator: written by the
				 * revalidating thread only, see revalidate() in cache_io.c */
	uint64_t next_check;	/* atomic: revalidate=S, CLOCK_MONOTONIC ns of the next check */
	struct timespec pending_mtime; /* inode->lock: the kernel's mtime, set at release */
	bool mtime_pending;
	int flags;	  /* open(2) flags */
	bool defer;	  /* writes may be deferred (deferred_write, not O_SYNC unless relaxed) */
	bool relaxed;	  /* sync=relaxed: fsync/O_SYNC mean "within flush_interval" */
	bool deferred;	  /* atomic: this handle deferred a write (the flusher looks) */
	uint64_t wb_next; /* inode wb_lock: where its last deferred write ended */
	uint64_t ra_max;  /* read-ahead limit (readahead_max, or the file's attribute) */
	int rmw_fd;	  /* O_NOATIME reader for read-modify-write, -1: none (yet) */
	bool rmw_tried;
	unsigned int busy; /* open file list lock: walkers using it outside the lock */
};

struct dir_handle {
	struct handle_link link; /* under the directory list lock (ops_dir.c) */
	DIR *dp;
	struct dirent *entry; /* read but not yet returned to the kernel */
	off_t offset;
};

struct accelfs {
	struct accelfs_opts opts;
	char *source_real;     /* canonical SOURCE path */
	char *mountpoint_real; /* canonical MOUNTPOINT path */
	struct inode root;
	bool dont_mask;	  /* FUSE_DONT_MASK negotiated: we apply the umask */
	bool killpriv_v2; /* FUSE_HANDLE_KILLPRIV_V2 negotiated (see killpriv.c) */
	bool uring_wanted; /* FUSE over io_uring asked of libfuse (transport.c) */
	struct fuse_session *se;
};

extern struct accelfs accelfs;

/* inode.c */
int inode_table_init(void);
void inode_table_destroy(void);
struct inode *inode_get(fuse_ino_t ino);
/* Take (or find) the inode for @fd/@st and add one lookup; consumes @fd. */
struct inode *inode_ref(int fd, const struct stat *st, int *err);
void inode_unref(struct inode *inode, uint64_t n);
/* The backing state the kernel knows, under inode->lock. */
bool stamp_equal(const struct inode *n, const struct stat *st);
void stamp_set(struct inode *n, const struct stat *st);
/* Remember whether @st's mode has set-ID bits an unprivileged write clears. */
void inode_note_mode(struct inode *n, const struct stat *st);
/* "/proc/self/fd/N" for a descriptor; @buf must hold PROC_FD_LEN bytes. */
#define PROC_FD_LEN 32
const char *proc_fd_path(int fd, char *buf);

/* killpriv.c: what a write or truncation removes from a file (see there) */
int killpriv_now(fuse_ino_t ino, struct inode *n, int fd, bool caps);
void killpriv_on_write(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		       struct open_file *of);
bool killpriv_setattr_asked(int valid);
bool killpriv_open_asked(const struct fuse_file_info *fi);
/* ops_xattr.c: remove security.capability unless known absent; 0 or -errno */
int xattr_caps_kill(struct inode *n, int fd);
/* transport.c: /dev/fuse or FUSE over io_uring (see there) */
int transport_choose(char *why, size_t len);
const char *transport_fuse_opt(void);
const char *transport_describe(const struct fuse_conn_info *conn);
/* ops.c: the optional features this build has, "+name -name ..." (accelfs --version) */
void ops_features(char *buf, size_t len);

/* ops_entry.c: look up @name in @parent and fill @e (adds a lookup). */
int entry_lookup(fuse_ino_t parent, const char *name, struct fuse_entry_param *e);
void entry_fill_timeouts(struct fuse_entry_param *e);
/* The mode to create with, handling the caller's umask (see ops_entry.c). */
mode_t entry_mode(fuse_req_t req, mode_t mode);
/* Fill @e for the object open as @fd (adds a lookup); the name is not looked up again. */
int entry_from_fd(int fd, struct fuse_entry_param *e);

/* Per-thread scratch buffer for reads and directory listings (never shrinks). */
void *scratch_get(size_t size);

/* Handler tables, one per object kind, merged in ops.c. */
void ops_entry_fill(struct fuse_lowlevel_ops *ops);
void ops_file_fill(struct fuse_lowlevel_ops *ops);
void ops_dir_fill(struct fuse_lowlevel_ops *ops);
void ops_xattr_fill(struct fuse_lowlevel_ops *ops);
void ops_fill(struct fuse_lowlevel_ops *ops);
/* At exit: free the open files and directories the kernel still held. */
void ops_file_release_all(void);
void ops_dir_release_all(void);
void handle_list_add(struct handle_link *head, struct handle_link *h, pthread_mutex_t *lock);
void handle_list_del(struct handle_link *h, pthread_mutex_t *lock);

/* cache_io.c: file data through the buffer cache (see there) */
int cache_io_init(char *err, size_t errlen);
void cache_io_shutdown(void);
void cache_io_abandon(void);
const char *cache_io_pool_name(void);
void cache_io_describe(char *buf, size_t len);
int cache_io_open(struct open_file *of, const struct stat *st);
void cache_io_close(struct open_file *of);
ssize_t cache_io_read(struct open_file *of, void *buf, size_t size, off_t off);
struct pool *cache_io_pool(void);
int cache_io_write_begin(struct open_file *of, uint64_t off, uint64_t len);
void cache_io_write_end(struct open_file *of, uint64_t off, ssize_t res);
void cache_io_truncated(struct open_file *of, uint64_t size);
int cache_io_truncate_inode(struct inode *n, off_t size, int (*fn)(struct inode *, off_t));

/* writeback.c: deferred write of small writes through the pool (see there) */
void wb_open(struct open_file *of, int deferred_attr, int sync_attr);
ssize_t wb_write(struct open_file *of, struct fuse_bufvec *in, off_t off);
int wb_sync(struct open_file *of);
void wb_last_close(struct open_file *of);
int wb_flush_now(struct open_file *of);
int wb_write_through_begin(struct open_file *of);
void wb_write_through_end(struct open_file *of);
int wb_fsync_relaxed(struct open_file *of);
void wb_fix_attr(struct stat *st);
bool wb_pending(struct open_file *of);
uint64_t wb_end(struct open_file *of);
int wb_start(void);
void wb_stop(void);
void wb_flush_all(void);
/* readahead_io.c: adaptive read-ahead into the pool (see there) */
int ra_start(void);
void ra_stop(void);
void cache_io_readahead(struct open_file *of, uint64_t off, size_t len);
/* ops_file.c: call @fn for every open file, under the open file list lock */
void ops_file_foreach_deferred(void (*fn)(struct open_file *of, void *arg), void *arg);

/* mountinfo.c: the newest mount at @mnt (an absolute path); 0 or -errno (-ENOENT: none). */
struct mountinfo_entry {
	char devno[32];	 /* "MAJ:MIN" */
	char fstype[64]; /* "fuse.accelfs", "ext4", ... */
	char point[4096];
	char source[4096];
};
int mountinfo_find(const char *mnt, struct mountinfo_entry *out);

/* bdi.c: raise the mount's read-ahead and dirty share (root only) */
void bdi_tune(void);

/* log.c */
void log_init(void);
/* How many errors libfuse itself has reported (it prints its own cause). */
unsigned int log_fuse_errors(void);
/* Choose where messages go once running (-o log=); before mounting, so a bad
 * log file is a start-up error. Returns 0, or -1 with a message in @err. */
int log_open(char *err, size_t errlen);
/* Switch to that destination (after daemonising). */
void log_start(void);
const char *log_describe(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
