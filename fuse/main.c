// SPDX-License-Identifier: MIT
/*
 * main.c - the accelfs daemon: check everything, mount, serve, shut down.
 *
 * All checks that can fail for a user's mistake run before anything is
 * mounted, each ending in one "accelfs: ..." line and a non-zero exit.
 * Shutdown on SIGTERM/SIGINT/SIGHUP first fsyncs every file open for
 * writing through the mount and syncs it (pushing the kernel's writeback
 * cache through us to SOURCE) while the workers still serve requests
 * (shutdown.c), and only then leaves the loop and unmounts, so no write an
 * application saw acknowledged is lost.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accelfs_i.h"
#include "disk_auto.h"
#include "caps.h"
#include "fair.h"
#include "shared.h"
#include "slow.h"
#include "uid_share.h"
#include "mountinfo.h"
#include "watch.h"

#define EXIT_RUNTIME 1

/* Process-wide by nature: signals reach the process, and the thread that
 * turns one into an unmount (shutdown_thread) is the process's one. */
static int shutdown_pipe[2] = { -1, -1 };
static pthread_t main_thread;
static pthread_t shutdown_tid;
static bool shutdown_started;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("accelfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int check_source(struct accelfs *fs, const char *src)
{
	struct stat st;
	int fd;

	if (stat(src, &st))
		return fail("%s: %s", src, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail("%s: source is not a directory", src);
	fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail("%s: cannot read source: %s", src, strerror(errno));
	close(fd);
	fs->source_real = realpath(src, NULL);
	if (!fs->source_real)
		return fail("%s: %s", src, strerror(errno));
	return 0;
}

/*
 * A second accelfs on the same mount point would silently hide the first
 * (and its open files) under a new mount: refuse, as mount(8) refuses a
 * device that is already mounted there.
 */
static int check_not_mounted(const char *mnt, const char *real)
{
	struct mountinfo_entry *m = malloc(sizeof(*m));
	int ret = 0;

	if (!m)
		return fail("out of memory");
	if (!mountinfo_find(NULL, real, m) && !strcmp(m->fstype, "fuse.accelfs"))
		ret =
		    fail("%s: already an accelfs mount of %s (unmount it first: fusermount3 -u %s)",
			 mnt, m->source, real);
	free(m);
	return ret;
}

static void warn_later(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As mount(8) lets one, but a user should hear that files are hidden. */
static void warn_if_not_empty(const char *mnt)
{
	DIR *d = opendir(mnt);
	struct dirent *de;
	unsigned int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	if (n)
		warn_later("%s is not empty: its %u entr%s hidden while the mount is there", mnt, n,
			   n == 1 ? "y is" : "ies are");
}

static int check_mountpoint(struct accelfs *fs, const char *mnt)
{
	const char *src = fs->source_real;
	size_t len = strlen(src);
	char *real;
	struct stat st;

	if (stat(mnt, &st)) {
		if (errno == ENOTCONN)
			return fail("%s: stale mount point (run: fusermount3 -u %s)", mnt, mnt);
		return fail("%s: mount point: %s", mnt, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return fail("%s: mount point is not a directory", mnt);
	real = realpath(mnt, NULL);
	if (!real)
		return fail("%s: mount point: %s", mnt, strerror(errno));
	if (!strcmp(real, src) || (!strncmp(real, src, len) && (real[len] == '/' || len == 1))) {
		fail("%s: mount point is inside the source %s (the mount would recurse)", mnt, src);
		free(real);
		return -1;
	}
	/* The daemon changes to / when it detaches: keep the absolute path. */
	fs->mountpoint_real = real;
	warn_if_not_empty(mnt);
	return check_not_mounted(mnt, real);
}

static int check_fuse_device(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
		return fail("/dev/fuse: %s (is the fuse module loaded? try: modprobe fuse)",
			    strerror(errno));
	if (geteuid() == 0)
		return fail("/dev/fuse: %s", strerror(errno));
	return 0; /* unprivileged: libfuse mounts through the set-uid fusermount3 */
}

/* Warnings about a degraded start, printed once the mount exists (to the
 * process's stderr, before it detaches: process-wide by nature). */
static char warnings[3][512];

static void warn_later(const char *fmt, ...)
{
	va_list ap;
	unsigned int i;

	for (i = 0; i < 3 && warnings[i][0]; i++)
		;
	if (i == 3)
		return;
	va_start(ap, fmt);
	vsnprintf(warnings[i], sizeof(warnings[i]), fmt, ap);
	va_end(ap);
}

static int setup_backend(struct accelfs *fs)
{
	char why[160];

	if (backend_init(fs->opts.backend, fs->opts.queue_depth, why, sizeof(why)))
		return fail("io_uring is not usable (%s); use -o backend=auto or backend=sync",
			    why);
	/* Said once the mount exists: a failed start must print only its cause. */
	if (fs->opts.backend == BACKEND_AUTO && backend_active() == BACKEND_SYNC)
		warn_later("io_uring is not usable (%s); using pread/pwrite instead", why);
	return 0;
}

static int setup_root(struct accelfs *fs)
{
	struct inode *r = &fs->root;
	struct stat st;

	r->fd = open(fs->source_real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->fd < 0 || fstat(r->fd, &st))
		return fail("%s: %s", fs->source_real, strerror(errno));
	r->nodeid = FUSE_ROOT_ID;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->type = S_IFDIR;
	r->wb_fd = -1;
	r->nlookup = 2;
	pthread_mutex_init(&r->lock, NULL);
	if (inode_table_init(fs))
		return fail("out of memory");
	return 0;
}

/*
 * global_cache=, global_buffers= and bucket_size= shape a new pool only: an
 * existing pool keeps its geometry, and asking for another must not pass in
 * silence.
 */
static void warn_pool_geometry(struct accelfs *fs)
{
	const struct accelfs_opts *o = &fs->opts;
	struct pool_info in;

	if (!fs->pool)
		return;
	pool_info(fs->pool, &in);
	if (in.created || ((!o->global_cache || o->global_cache == in.data_size) &&
			   (!o->global_buffers || o->global_buffers == in.nbufs) &&
			   (!o->bucket_size || o->bucket_size == in.bucket_size)))
		return;
	warn_later("pool %s already exists with %u buffers of %u KiB (%llu MiB): the "
		   "global_cache/global_buffers/bucket_size asked for apply only to a new pool "
		   "(to resize: unmount every user, accel pool --reset %s)",
		   cache_io_pool_name(fs), in.nbufs, in.bucket_size >> 10,
		   (unsigned long long)(in.data_size >> 20), cache_io_pool_name(fs));
}

/*
 * A pool named with pool= must work; the default one may be unusable (made
 * by another user, too big for /dev/shm), and then accelfs runs without
 * global buffers and says so.
 */
static int setup_cache(struct accelfs *fs)
{
	char why[4200] = "";
	bool named = fs->opts.pool_name != NULL;
	int ret;

	if (!named && geteuid() != 0 &&
	    asprintf(&fs->opts.pool_name, "%s-%u", POOL_DEFAULT_NAME, (unsigned)geteuid()) < 0)
		return fail("out of memory");
	ret = cache_io_init(fs, why, sizeof(why));
	if (ret && !why[0])
		snprintf(why, sizeof(why), "pool %s: %s", cache_io_pool_name(fs), strerror(-ret));
	if (ret && named)
		return fail("%s", why);
	if (ret)
		warn_later("%s; running without global buffers", why);
	warn_pool_geometry(fs);
	/* asked for by name: no disk tier is no mount */
	if (fs->opts.disk_cache && (ret = cache_io_disk_init(fs, why, sizeof(why))) != 0)
		return fail("%s", why);
	/* disk_cache=auto asked for nothing by name: without it is a warning */
	if (fs->opts.disk_cache_auto && (ret = disk_auto_setup(fs, why, sizeof(why))) != 0) {
		if (ret < 0)
			return fail("disk_cache=auto: %s", strerror(-ret));
		log_msg(LOG_WARNING, "%s", why);
		warn_later("%s", why);
	}
	return 0;
}

/* Arguments for libfuse: our checked options rewritten as kernel mount options. */
static int build_fuse_args(struct accelfs *fs, struct fuse_args *args)
{
	struct accelfs_opts *o = &fs->opts;
	char *fsname;
	int ret = 0;

	if (fuse_opt_add_arg(args, "accelfs") || (o->debug && fuse_opt_add_arg(args, "-d")))
		return -ENOMEM;
	if (asprintf(&fsname, "fsname=%s", fs->source_real) < 0)
		return -ENOMEM;
	if (!o->mount_opts || !strstr(o->mount_opts, "fsname="))
		ret = fuse_opt_add_opt_escaped(&o->mount_opts, fsname);
	free(fsname);
	if (!ret)
		ret = fuse_opt_add_opt(&o->mount_opts, "subtype=accelfs");
	if (!ret && o->allow_other)
		ret = fuse_opt_add_opt(&o->mount_opts, "allow_other");
	if (!ret && o->default_permissions)
		ret = fuse_opt_add_opt(&o->mount_opts, "default_permissions");
	if (!ret && o->read_only)
		ret = fuse_opt_add_opt(&o->mount_opts, "ro");
	if (!ret && transport_fuse_opt(fs)) /* a libfuse session option: see transport.c */
		ret = fuse_opt_add_opt(&o->mount_opts, transport_fuse_opt(fs));
	if (!ret && (fuse_opt_add_arg(args, "-o") || fuse_opt_add_arg(args, o->mount_opts)))
		ret = -ENOMEM;
	return ret;
}

static void on_shutdown_signal(int sig)
{
	char c = (char)sig;

	(void)!write(shutdown_pipe[1], &c, 1);
}

static void on_wakeup_signal(int sig)
{
	(void)sig; /* only interrupts the session loop's wait */
}

/*
 * Sync the mount through the still-running workers (shutdown.c), then stop
 * the loop. A 0 byte (stop_shutdown_thread) means the loop ended without a
 * signal: nothing to do.
 */
static void *shutdown_thread(void *arg)
{
	struct accelfs *fs = arg;
	char c = 0;

	while (read(shutdown_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	if (!c)
		return NULL;
	log_msg(LOG_NOTICE, "signal %d: flushing and unmounting %s", c, fs->mountpoint_real);
	shutdown_sync(fs);
	/* While the workers still serve: an invalidation of a file with dirty
	 * pages makes the kernel write them back through us first. */
	watch_stop(fs);
	fuse_session_exit(fs->se);
	pthread_kill(main_thread, SIGUSR2);
	return NULL;
}

/* Before mounting, so a signal during start-up is not lost. */
static int setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_shutdown_signal };
	struct sigaction wake = { .sa_handler = on_wakeup_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	if (pipe2(shutdown_pipe, O_CLOEXEC))
		return fail("pipe: %s", strerror(errno));
	sigemptyset(&sa.sa_mask);
	sigemptyset(&wake.sa_mask);
	sigemptyset(&ign.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL) || sigaction(SIGUSR2, &wake, NULL) ||
	    sigaction(SIGPIPE, &ign, NULL) ||
	    /* a write past RLIMIT_FSIZE fails with EFBIG, reported to its
	     * writer; the signal would kill the daemon and its deferred bytes */
	    sigaction(SIGXFSZ, &ign, NULL))
		return fail("sigaction: %s", strerror(errno));
	return 0;
}

/* After detaching: threads do not survive fork(). */
static int start_shutdown_thread(struct accelfs *fs)
{
	main_thread = pthread_self();
	if (pthread_create(&shutdown_tid, NULL, shutdown_thread, fs)) {
		log_msg(LOG_ERR, "cannot start the shutdown thread");
		return -1;
	}
	shutdown_started = true;
	return 0;
}

/*
 * Joined, not detached, so that main's frees happen after its last use of
 * the daemon's state. Called once the mount is gone: a signal that comes
 * this late finds no file through the mount to sync, so the join cannot
 * wait on a loop that no longer serves.
 */
static void stop_shutdown_thread(void)
{
	char c = 0;

	if (!shutdown_started)
		return;
	(void)!write(shutdown_pipe[1], &c, 1);
	pthread_join(shutdown_tid, NULL);
	shutdown_started = false;
}

static int serve(struct accelfs *fs, struct fuse_session *se)
{
	struct fuse_loop_config *cfg;
	int ret;

	if (fs->opts.single_thread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, fs->opts.clone_fd);
	fuse_loop_cfg_set_max_threads(cfg, fs->opts.threads);
	/* Keep idle workers: each owns an io_uring ring worth keeping. */
	fuse_loop_cfg_set_idle_threads(cfg, fs->opts.threads);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

/*
 * Every open file costs a descriptor, and without file handles so does every
 * name the kernel holds (inode.c): take the whole hard limit, since the soft
 * one (often 1024) would run out in any sizeable tree. The inode descriptor
 * cache sizes itself from the result.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int prepare(struct accelfs *fs)
{
	struct accelfs_opts *o = &fs->opts;
	char why[4200];

	raise_nofile();
	/* before any thread: no write of a user's goes past root's reserve or a quota */
	if (caps_drop_sysres())
		return fail("cannot drop CAP_SYS_RESOURCE: %s", strerror(errno));
	uid_share_init();
	if (check_source(fs, o->source) || check_mountpoint(fs, o->mountpoint) ||
	    check_fuse_device())
		return -1;
	if (log_open(o->log_target, why, sizeof(why)))
		return fail("%s", why);
	if (geteuid() == 0) {
		if (o->allow_other && !o->default_permissions) {
			/* a root daemon would otherwise let every user act as root */
			o->default_permissions = true;
		}
	}
	if (shared_setup(fs, why, sizeof(why)) || transport_choose(fs, why, sizeof(why)) ||
	    passthrough_check(fs, why, sizeof(why)))
		return fail("%s", why);
	if (setup_backend(fs) || setup_root(fs) || setup_cache(fs))
		return -1;
	if (fair_init(fs)) /* after shared_setup, which may set threads */
		return fail("out of memory");
	watch_setup(fs); /* never fails the mount: off at worst */
	return 0;
}

static int run(struct accelfs *fs)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_lowlevel_ops ops;
	int ret = EXIT_RUNTIME;
	unsigned int errors;

	ops_fill(fs, &ops);
	if (build_fuse_args(fs, &args)) {
		fail("out of memory");
		goto out;
	}
	fs->se = fuse_session_new(&args, &ops, sizeof(ops), fs);
	if (!fs->se)
		goto out;
	if (setup_signals())
		goto out_destroy;
	errors = log_fuse_errors();
	if (fuse_session_mount(fs->se, fs->mountpoint_real)) {
		if (log_fuse_errors() == errors) /* else libfuse has named the cause */
			fail("%s: mount failed", fs->opts.mountpoint);
		cache_io_abandon(fs);
		goto out_destroy;
	}
	bdi_tune(fs);
	for (unsigned int i = 0; i < 3 && warnings[i][0]; i++)
		fprintf(stderr, "accelfs: warning: %s\n", warnings[i]);
	if (fuse_daemonize(fs->opts.foreground))
		goto out_unmount;
	log_start();
	if (start_shutdown_thread(fs))
		goto out_unmount;
	if (wb_start(fs)) /* after daemonising: the flusher's pid owns the dirty buffers */
		log_msg(LOG_ERR, "cannot start the flusher: deferred writes wait for fsync/close");
	if (readahead_io_start(fs))
		log_msg(LOG_WARNING, "cannot start the prefetch engine: no read-ahead");
	cache_io_disk_start(fs); /* after daemonising, as every thread of ours */
	watch_start(fs); /* after daemonising: its pid is the one fanotify reports */
	if (slow_setup())
		log_msg(LOG_WARNING, "cannot set up waits: an interrupted wait may last");
	ret = serve(fs, fs->se) < 0 ? EXIT_RUNTIME : 0;
	slow_stop();  /* every waiting request has its reply before the session goes */
	watch_stop(fs); /* no notification may race the session's end */
	fair_stop(fs); /* every parked request answered; after the watcher, which reads its count */
	readahead_io_stop(fs);
	wb_stop(fs);
	log_msg(LOG_INFO, "unmounting %s", fs->mountpoint_real);
out_unmount:
	fuse_session_unmount(fs->se);
	stop_shutdown_thread();
out_destroy:
	fuse_session_destroy(fs->se);
out:
	fuse_opt_free_args(&args);
	return ret;
}

/* "accelfs 0.1.0 (libfuse 3.18.3: +killpriv_v2 ...)": the features compiled in. */
static void print_version(void)
{
	char features[128];

	ops_features(features, sizeof(features));
	printf("accelfs %s (libfuse %s: %s)\n", ACCELFS_VERSION, fuse_pkgversion(), features);
}

int main(int argc, char **argv)
{
	/* The daemon's state: every other file reaches it through a handle
	 * (accelfs_i.h), the session's userdata first. */
	static struct accelfs mount = {
		.inodes = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .fh = { .lock = PTHREAD_MUTEX_INITIALIZER } },
		.files = { .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER },
		.dirs = { .lock = PTHREAD_MUTEX_INITIALIZER },
		.owners = { .lock = PTHREAD_MUTEX_INITIALIZER },
		.pt_files = { .lock = PTHREAD_MUTEX_INITIALIZER },
		.flusher = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER },
		.watch = WATCH_STATE_INIT,
	};
	struct accelfs *fs = &mount;
	int ret = opts_parse(argc, argv, &fs->opts);

	if (ret < 0)
		return OPTS_EXIT_USAGE;
	if (ret > 0) {
		if (fs->opts.show_help)
			opts_print_help("accelfs");
		else
			print_version();
		return 0;
	}
	umask(0); /* the kernel already applied the caller's umask to every mode */
	log_init(&fs->opts);
	ret = prepare(fs) ? EXIT_RUNTIME : run(fs);
	watch_stop(fs);
	ops_file_release_all(fs);
	ops_dir_release_all(fs);
	inode_table_destroy(fs);
	cache_io_shutdown(fs);
	free(fs->source_real);
	free(fs->mountpoint_real);
	opts_free(&fs->opts);
	return ret;
}
