// SPDX-License-Identifier: MIT
/*
 * options_table.c - every keyed -o option of accelfs, declared once: name,
 * type, bounds, where it is stored, its default and its help text (as
 * libfuse's passthrough_ll.c keeps a fuse_opt table with the help beside
 * it). Parsing (options.c), the "expected ..." part of every error, the
 * defaults and `accelfs --help` all come from this table, and the unit test
 * checks that accelfs(8) documents every name in it.
 *
 * A default is written as text and parsed like a user's value, so the help
 * can never show a default the daemon does not use.
 */
#include <stddef.h>

#include "options_i.h"
#include "tuning.h"

#define O(field) offsetof(struct accelfs_opts, field)
#define YEAR (365.0 * 86400.0)

static const struct opt_word backend_words[] = {
	{ "auto", BACKEND_AUTO },
	{ "uring", BACKEND_URING },
	{ "io_uring", BACKEND_URING },
	{ "sync", BACKEND_SYNC },
	{ NULL, 0 },
};
static const struct opt_word cache_words[] = {
	{ "auto", KERNEL_CACHE_AUTO },
	{ "always", KERNEL_CACHE_ALWAYS },
	{ "never", KERNEL_CACHE_NEVER },
	{ NULL, 0 },
};
static const struct opt_word uring_words[] = {
	{ "off", FUSE_URING_OFF },
	{ "auto", FUSE_URING_AUTO },
	{ "on", FUSE_URING_ON },
	{ NULL, 0 },
};
static const struct opt_word watch_words[] = {
	{ "auto", WATCH_AUTO },
	{ "fanotify", WATCH_FANOTIFY },
	{ "inotify", WATCH_INOTIFY },
	{ "off", WATCH_OFF },
	{ NULL, 0 },
};

static const struct opt_word shared_words[] = {
	{ "auto", SHARED_AUTO },
	{ "on", SHARED_ON },
	{ "off", SHARED_OFF },
	{ NULL, 0 },
};
static const struct opt_word lock_words[] = {
	{ "forward", LOCKS_FORWARD },
	{ "local", LOCKS_LOCAL },
	{ NULL, 0 },
};

static const struct opt_word pt_words[] = {
	{ "auto", PASSTHROUGH_AUTO },
	{ "always", PASSTHROUGH_ALWAYS },
	{ "never", PASSTHROUGH_NEVER },
	{ NULL, 0 },
};
static const struct opt_word sync_words[] = { { "relaxed", 1 }, { "strict", 0 }, { NULL, 0 } };
static const struct opt_word io_words[] = { { "direct", 1 }, { "buffered", 0 }, { NULL, 0 } };

const struct opt_def opt_table[] = {
	/* general */
	{ "backend", OPT_ENUM, O(backend), .words = backend_words, .def = "auto",
	  .syntax = "auto|uring|sync", .section = OPT_SEC_GENERAL,
	  .help = "file data through io_uring (uring), pread/pwrite\n"
		  "(sync), or io_uring falling back to sync (auto)" },
	{ "queue_depth", OPT_UINT, O(queue_depth), 1, 4096, .def = "64", .syntax = "N",
	  .section = OPT_SEC_GENERAL, .help = "io_uring entries per worker" },
	{ "threads", OPT_UINT, O(threads), 1, 64, .def = "4", .syntax = "N",
	  .section = OPT_SEC_GENERAL, .help = "worker threads" },
	{ "clone_fd", OPT_BOOL, O(clone_fd), .def = "on", .syntax = "on|off",
	  .section = OPT_SEC_GENERAL, .help = "one /dev/fuse descriptor per worker" },
	{ "io_uring", OPT_ENUM, O(io_uring), .words = uring_words, .def = "auto",
	  .syntax = "auto|on|off", .section = OPT_SEC_GENERAL,
	  .help = "FUSE requests over io_uring instead of /dev/fuse\n"
		  "reads (libfuse >= 3.18; the fuse module's\n"
		  "enable_uring=Y): when offered and locks=local (auto),\n"
		  "or required (on)" },
	{ "kernel_cache", OPT_ENUM, O(kernel_cache), .words = cache_words, .def = "auto",
	  .syntax = "auto|always|never", .section = OPT_SEC_GENERAL,
	  .help = "keep the kernel page cache across opens while the\n"
		  "backing file is unchanged (auto), always, or bypass\n"
		  "it with direct I/O (never)" },
	{ "writeback", OPT_BOOL, O(writeback), .def = "on", .syntax = "on|off",
	  .section = OPT_SEC_GENERAL, .help = "kernel writeback cache for writes" },
	{ "passthrough", OPT_ENUM, O(passthrough), .words = pt_words, .def = "auto",
	  .syntax = "auto|always|never", .section = OPT_SEC_GENERAL,
	  .help = "kernel passthrough of file data (libfuse >= 3.16,\n"
		  "CAP_SYS_ADMIN): auto for files that need nothing of\n"
		  "the daemon, or that it saw read in bulk, on\n"
		  "writeback=off mounts; always (turns the writeback\n"
		  "cache off); never" },
	{ "attr_timeout", OPT_SECONDS, O(attr_timeout), .dmin = 0, .dmax = YEAR, .def = "1",
	  .syntax = "S", .section = OPT_SEC_GENERAL,
	  .help = "seconds attributes are cached (3600 with a\nwatcher, 10 with inotify, when not "
		  "set)" },
	{ "entry_timeout", OPT_SECONDS, O(entry_timeout), .dmin = 0, .dmax = YEAR, .def = "1",
	  .syntax = "S", .section = OPT_SEC_GENERAL,
	  .help =
	      "seconds names are cached (3600 with a watcher,\n10 with inotify, when not set)" },
	{ "negative_timeout", OPT_SECONDS, O(negative_timeout), .dmin = 0, .dmax = YEAR, .def = "1",
	  .syntax = "S", .section = OPT_SEC_GENERAL, .help = "seconds a missing name is cached" },
	{ "watch", OPT_ENUM, O(watch), .words = watch_words, .def = "auto",
	  .syntax = "auto|fanotify|inotify|off", .section = OPT_SEC_GENERAL,
	  .help = "tell the kernel at once what changed in SOURCE\n"
		  "behind the mount: fanotify on its file system\n"
		  "(root, local SOURCE), inotify on each directory\n"
		  "looked up (timeouts 10 s), fanotify else inotify\n"
		  "(auto), or no watcher (off)" },
	{ "shared", OPT_ENUM, O(shared), .words = shared_words, .def = "auto",
	  .syntax = "auto|on|off", .section = OPT_SEC_GENERAL,
	  .help = "other hosts share SOURCE (network or cluster file\n"
		  "system): no watcher, no writeback cache, byte-exact\n"
		  "write-back, close-to-open; auto: from SOURCE's\n"
		  "file system type (docs/shared.md)" },
	{ "locks", OPT_ENUM, O(locks), .words = lock_words, .def = "forward",
	  .syntax = "forward|local", .section = OPT_SEC_GENERAL,
	  .help = "fcntl, OFD and flock locks taken on SOURCE, where\n"
		  "other hosts and programs using SOURCE see them\n"
		  "(forward), or kept among this mount's users (local)" },
	{ "readahead_kb", OPT_UINT, O(readahead_kb), 0, 65536, .def = "1024", .syntax = "N",
	  .section = OPT_SEC_GENERAL,
	  .help = "the mount's kernel read-ahead in KiB (root only;\n0: the kernel's)" },
	{ "dirty_ratio", OPT_UINT, O(bdi_max_ratio), 0, 100, .def = "10", .syntax = "PCT",
	  .section = OPT_SEC_GENERAL,
	  .help = "the mount's share of the kernel's dirty limit, %\n(root only; 0: the "
		  "kernel's)" },
	{ "log", OPT_CUSTOM, 0, .parse = opts_parse_log, .def = "auto",
	  .syntax = "auto|syslog|stderr|FILE", .section = OPT_SEC_GENERAL,
	  .help = "where messages go once running: auto is syslog when\n"
		  "daemonised and /dev/log answers, else stderr in the\n"
		  "foreground, else /var/log/accelfs.log (root) or\n"
		  "$XDG_RUNTIME_DIR/accelfs.log" },
	/* buffer cache */
	{ "cache", OPT_BOOL, O(cache), .def = "on", .syntax = "on|off", .section = OPT_SEC_CACHE,
	  .help = "use the global buffer pool at all" },
	{ "pool", OPT_CUSTOM, 0, .parse = opts_parse_pool, .def = NULL, .syntax = "NAME",
	  .section = OPT_SEC_CACHE,
	  .help = "shared-memory pool to attach to (default:\n"
		  "accelfs-default; accelfs-default-UID for non-root)" },
	{ "global_cache", OPT_SIZE, O(global_cache), 1 << 20, 1ULL << 40, .def = NULL,
	  .syntax = "SIZE", .section = OPT_SEC_CACHE,
	  .help = "data size of a new pool (default: 64M)" },
	{ "global_buffers", OPT_UINT, O(global_buffers), 16, TUNING_GLOBAL_MAX, .def = NULL,
	  .syntax = "N", .section = OPT_SEC_CACHE,
	  .help = "buffers of a new pool (instead of\nglobal_cache)" },
	{ "bucket_size", OPT_SIZE, O(bucket_size), 4096, 4 << 20, .pow2 = true, .def = NULL,
	  .syntax = "SIZE", .section = OPT_SEC_CACHE,
	  .help = "bytes per buffer of a new pool (default: 64K)" },
	{ "local_buffers", OPT_UINT, O(local_buffers), 0, TUNING_LOCAL_MAX, .def = "2",
	  .syntax = "N", .section = OPT_SEC_CACHE, .help = "private buffers per open file" },
	{ "pool_mode", OPT_CUSTOM, 0, .parse = opts_parse_pool_mode, .def = "0600",
	  .syntax = "MODE", .section = OPT_SEC_CACHE,
	  .help = "permission bits of a new pool segment\n(0660: share it with the group)" },
	{ "pool_keep", OPT_BOOL, O(pool_keep), .def = "yes", .syntax = "yes|no",
	  .section = OPT_SEC_CACHE, .help = "keep the pool after unmount (warm restart)" },
	{ "backend_io", OPT_BOOL, O(backend_direct), .words = io_words, .def = "buffered",
	  .syntax = "buffered|direct", .section = OPT_SEC_CACHE,
	  .help = "fill buffers with O_DIRECT reads (no double caching)" },
	{ "revalidate", OPT_SECONDS, O(revalidate), .dmin = 0, .dmax = YEAR, .def = "0",
	  .syntax = "S", .section = OPT_SEC_CACHE,
	  .help = "seconds between checks of an open file for changes\n"
		  "made behind accelfs (0: at open only)" },
	{ "disk_cache", OPT_CUSTOM, 0, .parse = opts_parse_disk_cache, .def = "off",
	  .syntax = "off|auto|DIR", .section = OPT_SEC_CACHE,
	  .help = "keep buckets read from SOURCE in DIR too (a disk\n"
		  "tier below the pool: survives restarts and\n"
		  "reboots; DIR mode 0700, the daemon user's own);\n"
		  "auto: on a shared SOURCE only, in /var/cache/accelfs\n"
		  "(root) or ~/.cache/accelfs" },
	{ "disk_cache_size", OPT_SIZE, O(disk_cache_size), 1 << 20, 1ULL << 50, .def = "1G",
	  .syntax = "SIZE", .section = OPT_SEC_CACHE,
	  .help = "bytes the disk tier may take in DIR (auto: at most\n"
		  "a tenth of DIR's file system unless given)" },
	/* write-back and read-ahead */
	{ "deferred_write", OPT_CUSTOM, 0, .parse = opts_parse_deferred, .def = "auto",
	  .syntax = "auto|on|off", .section = OPT_SEC_WRITEBACK,
	  .help = "keep small writes in dirty pool buffers and write\n"
		  "them back as large I/Os; auto: not under the\n"
		  "writeback cache (unless sync=relaxed)" },
	{ "flush_interval", OPT_SECONDS, O(flush_interval), .dmin = 0.01, .dmax = 3600, .def = "1",
	  .syntax = "S", .section = OPT_SEC_WRITEBACK,
	  .help = "longest wait of a deferred write; also flushed at\nfsync and close" },
	{ "sync", OPT_BOOL, O(sync_relaxed), .words = sync_words, .def = "strict",
	  .syntax = "strict|relaxed", .section = OPT_SEC_WRITEBACK,
	  .help = "relaxed: fsync and O_SYNC only mean \"on SOURCE\n"
		  "within flush_interval\" -- opt-in, a crash may lose\n"
		  "that much acknowledged data (bare \"sync\" is the\n"
		  "kernel's mount flag)" },
	{ "readahead_max", OPT_SIZE, O(readahead_max), 0, TUNING_READAHEAD_LIMIT, .def = "1M",
	  .syntax = "SIZE", .section = OPT_SEC_WRITEBACK,
	  .help = "the daemon's read-ahead window limit, 0 = off" },
	{ "readahead_latency_max", OPT_SIZE, O(readahead_latency_max), 0, TUNING_READAHEAD_LIMIT,
	  .def = "8M", .syntax = "SIZE", .section = OPT_SEC_WRITEBACK,
	  .help = "where SOURCE is slow to answer, the window\n"
		  "grows by its measured delay (1 MB per ms, in\n"
		  "whole readahead_max), up to this (0: no growth)" },
	{ .name = NULL },
};
