// SPDX-License-Identifier: MIT
/*
 * fair.c - each user's share of the workers (issue 27; fair.h).
 *
 * The workers serve every user of an allow_other mount. A request that
 * blocks in SOURCE (a stalled network server, a FUSE file system below
 * SOURCE that stopped answering, a slow disk) holds its worker for as long
 * as it blocks, and a user with a few such requests would hold them all:
 * every other user's requests would queue behind hers. Waits the daemon
 * knows in advance (locks, lease breaks) go to threads of their own
 * (slow.c); this bounds the rest. A user other than root (and the daemon's
 * own user: uid_share_counted) runs at most FAIR_SHARE(threads) requests
 * at once, all workers but one; a request past that is *parked*: its
 * arguments are copied (names, write data, the file info) and the worker
 * returns to serve others at once. When one of the user's running requests
 * ends, the worker that ran it takes her oldest parked request and runs it
 * (a user's requests stay in order of arrival). So a user whose requests
 * all block holds at most that share, and the last worker serves the
 * others. A parked request the caller gives up on (FUSE INTERRUPT: a
 * signal, the caller killed) is answered EINTR at once. Past
 * FAIR_PARKED_MAX parked requests, or FAIR_PARKED_BYTES of parked write
 * data, the user's next one fails with EAGAIN
 * and a log line.
 *
 * Not under FUSE over io_uring, where the request a worker's ring entry
 * brings must be answered through that entry's thread; nor with one
 * worker (threads=1): there is no worker to keep. FORGETs are never held
 * (no reply, and the kernel's nodes wait for them).
 *
 * Locks: each user's lock (her running count and her queue) is taken per
 * request of that user only: root's and the daemon's own requests take
 * none; a user is added to the table under the table lock, found without
 * it (a slot's uid is set before the count that publishes it). Order:
 * libfuse's request lock -> a user's lock (on_interrupt runs under the
 * former); no other lock is held with either.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fair.h"
#include "uid_share.h"

#define FAIR_USERS 1024 /* users counted apart; past that they share one more slot */

/* One user's share. */
struct fair_user {
	uid_t uid; /* set before `used` publishes the slot */
	bool used; /* atomic (release once uid is set): the slot is taken */
	pthread_mutex_t lock;
	unsigned int running;	      /* her requests in handlers; lock */
	unsigned int parked;	      /* lock */
	size_t parked_bytes;	      /* lock: write data of her parked requests */
	struct fair_job *head, *tail; /* parked, oldest first; lock */
	uint64_t logged_ns;	      /* lock */
};

struct fair {
	bool on;	      /* immutable after fair_init */
	unsigned int share;   /* immutable */
	uint64_t parked;      /* atomic: requests parked so far (accel stat) */
	pthread_mutex_t lock; /* the table: adding a user */
	unsigned int nusers;  /* the table lock: slots taken */
	struct fair_user users[FAIR_USERS + 1];
};

/* The request kinds that may be parked (FORGET never is). */
enum fair_op {
	OP_LOOKUP,
	OP_GETATTR,
	OP_SETATTR,
	OP_READLINK,
	OP_MKNOD,
	OP_MKDIR,
	OP_UNLINK,
	OP_RMDIR,
	OP_SYMLINK,
	OP_RENAME,
	OP_LINK,
	OP_OPEN,
	OP_READ,
	OP_WRITE_BUF,
	OP_FLUSH,
	OP_RELEASE,
	OP_FSYNC,
	OP_OPENDIR,
	OP_READDIR,
	OP_READDIRPLUS,
	OP_RELEASEDIR,
	OP_FSYNCDIR,
	OP_STATFS,
	OP_SETXATTR,
	OP_GETXATTR,
	OP_LISTXATTR,
	OP_REMOVEXATTR,
	OP_ACCESS,
	OP_CREATE,
	OP_GETLK,
	OP_SETLK,
	OP_FLOCK,
	OP_FALLOCATE,
	OP_LSEEK,
	OP_COPY_FILE_RANGE,
	OP_TMPFILE,
};

enum job_state { JOB_NEW, JOB_QUEUED, JOB_RUNNING };

/* A parked request: its arguments, owned. */
struct fair_job {
	struct fair_job *next;
	fuse_req_t req;
	struct fair_user *u;
	enum fair_op op;
	enum job_state state; /* u->lock */
	bool cancel;	      /* u->lock: interrupted before it was queued */
	fuse_ino_t ino, ino2;
	uint64_t n1, n2, n3, n4; /* sizes, offsets, modes, flags, as the kind has them */
	char *s1, *s2;		 /* names; s2 of setxattr: the value (n1 bytes) */
	struct fuse_file_info fi, fi2;
	bool has_fi, has_fi2;
	struct stat st;
	struct flock lk;
	struct fuse_bufvec *bv; /* write data, one memory buffer */
	size_t bytes;		/* its size (counted in the user's parked_bytes) */
};

/* Process-wide by nature: the handler table is wrapped once per process. */
static struct fuse_lowlevel_ops inner; /* the handlers wrapped; read only once serving */

int fair_init(struct accelfs *fs)
{
	struct fair *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->share = FAIR_SHARE(fs->opts.threads);
	f->on = !fs->opts.single_thread && fs->opts.threads > 1 && !fs->uring_wanted;
	pthread_mutex_init(&f->lock, NULL);
	for (unsigned int i = 0; i <= FAIR_USERS; i++)
		pthread_mutex_init(&f->users[i].lock, NULL);
	fs->fair = f;
	return 0;
}

/* @uid's slot (added if new), NULL: not counted, or fairness is off. Open
 * addressing: a taken slot never changes, so a lookup takes no lock. */
static struct fair_user *user_of(struct accelfs *fs, uid_t uid)
{
	struct fair *f = fs->fair;
	unsigned int i, n, h;

	if (!f || !f->on || __atomic_load_n(&fs->uring_active, __ATOMIC_RELAXED) ||
	    !uid_share_counted(uid))
		return NULL;
	h = (unsigned int)uid * 2654435761U;
	for (n = 0, i = h; n < FAIR_USERS; n++, i++) {
		struct fair_user *u = &f->users[i % FAIR_USERS];

		if (!__atomic_load_n(&u->used, __ATOMIC_ACQUIRE))
			break; /* not there: add it */
		if (u->uid == uid)
			return u;
	}
	pthread_mutex_lock(&f->lock);
	for (n = 0, i = h; n < FAIR_USERS; n++, i++) {
		struct fair_user *u = &f->users[i % FAIR_USERS];

		if (!u->used) {
			if (f->nusers + 1 >= FAIR_USERS)
				break; /* keep a free slot: lookups end at one */
			u->uid = uid;
			__atomic_store_n(&u->used, true, __ATOMIC_RELEASE);
			f->nusers++;
			pthread_mutex_unlock(&f->lock);
			return u;
		}
		if (u->uid == uid) {
			pthread_mutex_unlock(&f->lock);
			return u;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return &f->users[FAIR_USERS]; /* the table is full: the shared slot */
}

/* May @req run now? Then it counts as running until leave(). */
static bool admit(struct accelfs *fs, fuse_req_t req, struct fair_user **out)
{
	struct fair_user *u = user_of(fs, fuse_req_ctx(req)->uid);
	bool ok;

	*out = u;
	if (!u)
		return true;
	pthread_mutex_lock(&u->lock);
	ok = u->running < fs->fair->share && !u->head;
	if (ok)
		u->running++;
	pthread_mutex_unlock(&u->lock);
	return ok;
}

static void job_free(struct fair_job *j)
{
	free(j->s1);
	free(j->s2);
	free(j->bv);
	free(j);
}

static void run_job(struct fair_job *j);

/* One of @u's requests ended: run her parked ones while she is under her share. */
static void leave(struct accelfs *fs, struct fair_user *u)
{
	struct fair_job *j;

	if (!u)
		return;
	for (;;) {
		pthread_mutex_lock(&u->lock);
		u->running--;
		j = u->running < fs->fair->share ? u->head : NULL;
		if (j) {
			u->head = j->next;
			if (!u->head)
				u->tail = NULL;
			u->parked--;
			u->parked_bytes -= j->bytes;
			u->running++;
			j->state = JOB_RUNNING;
		}
		pthread_mutex_unlock(&u->lock);
		if (!j)
			return;
		run_job(j);
	}
}

/* FUSE INTERRUPT for a parked request: answer it now (libfuse's request lock held). */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct fair_job *j = data, **pp;
	struct fair_user *u = j->u;
	bool drop = false;

	pthread_mutex_lock(&u->lock);
	if (j->state == JOB_NEW) {
		j->cancel = true; /* park() answers it */
	} else if (j->state == JOB_QUEUED) {
		struct fair_job *prev = NULL;

		for (pp = &u->head; *pp && *pp != j; pp = &(*pp)->next)
			prev = *pp;
		if (*pp) {
			*pp = j->next;
			if (u->tail == j)
				u->tail = prev;
			u->parked--;
			u->parked_bytes -= j->bytes;
			drop = true;
		}
	}
	pthread_mutex_unlock(&u->lock);
	if (drop) {
		fuse_reply_err(req, EINTR);
		job_free(j);
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Queue @j behind @u's running requests (or run it, if she is under her share by now). */
static void park(struct accelfs *fs, struct fair_job *j)
{
	struct fair_user *u = j->u;
	fuse_req_t req = j->req;
	enum { QUEUED, RUN, CANCELLED, FULL } act;
	bool log = false;
	unsigned int nparked = 0;
	size_t nbytes = 0;

	fuse_req_interrupt_func(req, on_interrupt, j);
	pthread_mutex_lock(&u->lock);
	if (j->cancel) {
		act = CANCELLED;
	} else if (u->parked >= FAIR_PARKED_MAX || u->parked_bytes + j->bytes > FAIR_PARKED_BYTES) {
		act = FULL;
		log = mono_ns() - u->logged_ns >= 10000000000ULL || !u->logged_ns;
		if (log)
			u->logged_ns = mono_ns();
		nparked = u->parked;
		nbytes = u->parked_bytes;
	} else if (u->running < fs->fair->share && !u->head) {
		act = RUN;
		u->running++;
		j->state = JOB_RUNNING;
	} else {
		/* from here on @j is the queue's: another thread may run and free it */
		act = QUEUED;
		j->state = JOB_QUEUED;
		if (u->tail)
			u->tail->next = j;
		else
			u->head = j;
		u->tail = j;
		u->parked++;
		u->parked_bytes += j->bytes;
		__atomic_add_fetch(&fs->fair->parked, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&u->lock);
	if (log)
		log_msg(LOG_WARNING,
			"uid %u has %u requests (%zu bytes of data) waiting for her share of "
			"the workers: EAGAIN",
			(unsigned int)u->uid, nparked, nbytes);
	if (act == CANCELLED || act == FULL) {
		fuse_req_interrupt_func(req, NULL, NULL);
		fuse_reply_err(req, act == CANCELLED ? EINTR : EAGAIN);
		job_free(j);
	} else if (act == RUN) {
		run_job(j);
		leave(fs, u);
	}
}

static struct fair_job *job_new(fuse_req_t req, struct fair_user *u, enum fair_op op)
{
	struct fair_job *j = calloc(1, sizeof(*j));

	if (j) {
		j->req = req;
		j->u = u;
		j->op = op;
	}
	return j;
}

static bool keep_name(char **to, const char *name)
{
	*to = strdup(name);
	return *to != NULL;
}

static void keep_fi(struct fair_job *j, const struct fuse_file_info *fi)
{
	j->has_fi = fi != NULL;
	if (fi)
		j->fi = *fi;
}

static struct fuse_file_info *fi_of(struct fair_job *j)
{
	return j->has_fi ? &j->fi : NULL;
}

/* Write data into one buffer of the job's own; NULL on ENOMEM. */
static struct fuse_bufvec *keep_bufvec(struct fuse_bufvec *src)
{
	size_t len = fuse_buf_size(src);
	struct fuse_bufvec *v = malloc(sizeof(*v) + len);

	if (!v)
		return NULL;
	*v = (struct fuse_bufvec)FUSE_BUFVEC_INIT(len);
	v->buf[0].mem = v + 1;
	if (len && fuse_buf_copy(v, src, 0) != (ssize_t)len) {
		free(v);
		return NULL;
	}
	v->buf[0].size = len;
	v->off = v->idx = 0;
	return v;
}

/* Run a job taken off the queue (state RUNNING); it replies, then it is freed. */
static void run_job(struct fair_job *j)
{
	fuse_req_t r = j->req;

	fuse_req_interrupt_func(r, NULL, NULL); /* waits out an on_interrupt in flight */
	switch (j->op) {
	case OP_LOOKUP:
		inner.lookup(r, j->ino, j->s1);
		break;
	case OP_GETATTR:
		inner.getattr(r, j->ino, fi_of(j));
		break;
	case OP_SETATTR:
		inner.setattr(r, j->ino, &j->st, (int)j->n1, fi_of(j));
		break;
	case OP_READLINK:
		inner.readlink(r, j->ino);
		break;
	case OP_MKNOD:
		inner.mknod(r, j->ino, j->s1, (mode_t)j->n1, (dev_t)j->n2);
		break;
	case OP_MKDIR:
		inner.mkdir(r, j->ino, j->s1, (mode_t)j->n1);
		break;
	case OP_UNLINK:
		inner.unlink(r, j->ino, j->s1);
		break;
	case OP_RMDIR:
		inner.rmdir(r, j->ino, j->s1);
		break;
	case OP_SYMLINK:
		inner.symlink(r, j->s1, j->ino, j->s2);
		break;
	case OP_RENAME:
		inner.rename(r, j->ino, j->s1, j->ino2, j->s2, (unsigned int)j->n1);
		break;
	case OP_LINK:
		inner.link(r, j->ino, j->ino2, j->s1);
		break;
	case OP_OPEN:
		inner.open(r, j->ino, fi_of(j));
		break;
	case OP_READ:
		inner.read(r, j->ino, (size_t)j->n1, (off_t)j->n2, fi_of(j));
		break;
	case OP_WRITE_BUF:
		inner.write_buf(r, j->ino, j->bv, (off_t)j->n1, fi_of(j));
		break;
	case OP_FLUSH:
		inner.flush(r, j->ino, fi_of(j));
		break;
	case OP_RELEASE:
		inner.release(r, j->ino, fi_of(j));
		break;
	case OP_FSYNC:
		inner.fsync(r, j->ino, (int)j->n1, fi_of(j));
		break;
	case OP_OPENDIR:
		inner.opendir(r, j->ino, fi_of(j));
		break;
	case OP_READDIR:
		inner.readdir(r, j->ino, (size_t)j->n1, (off_t)j->n2, fi_of(j));
		break;
	case OP_READDIRPLUS:
		inner.readdirplus(r, j->ino, (size_t)j->n1, (off_t)j->n2, fi_of(j));
		break;
	case OP_RELEASEDIR:
		inner.releasedir(r, j->ino, fi_of(j));
		break;
	case OP_FSYNCDIR:
		inner.fsyncdir(r, j->ino, (int)j->n1, fi_of(j));
		break;
	case OP_STATFS:
		inner.statfs(r, j->ino);
		break;
	case OP_SETXATTR:
		inner.setxattr(r, j->ino, j->s1, j->s2, (size_t)j->n1, (int)j->n2);
		break;
	case OP_GETXATTR:
		inner.getxattr(r, j->ino, j->s1, (size_t)j->n1);
		break;
	case OP_LISTXATTR:
		inner.listxattr(r, j->ino, (size_t)j->n1);
		break;
	case OP_REMOVEXATTR:
		inner.removexattr(r, j->ino, j->s1);
		break;
	case OP_ACCESS:
		inner.access(r, j->ino, (int)j->n1);
		break;
	case OP_CREATE:
		inner.create(r, j->ino, j->s1, (mode_t)j->n1, fi_of(j));
		break;
	case OP_GETLK:
		inner.getlk(r, j->ino, fi_of(j), &j->lk);
		break;
	case OP_SETLK:
		inner.setlk(r, j->ino, fi_of(j), &j->lk, (int)j->n1);
		break;
	case OP_FLOCK:
		inner.flock(r, j->ino, fi_of(j), (int)j->n1);
		break;
	case OP_FALLOCATE:
		inner.fallocate(r, j->ino, (int)j->n1, (off_t)j->n2, (off_t)j->n3, fi_of(j));
		break;
	case OP_LSEEK:
		inner.lseek(r, j->ino, (off_t)j->n1, (int)j->n2, fi_of(j));
		break;
	case OP_COPY_FILE_RANGE:
		inner.copy_file_range(r, j->ino, (off_t)j->n1, fi_of(j), j->ino2, (off_t)j->n2,
				      j->has_fi2 ? &j->fi2 : NULL, (size_t)j->n3, (int)j->n4);
		break;
	case OP_TMPFILE:
#ifdef ACCEL_HAVE_TMPFILE
		inner.tmpfile(r, j->ino, (mode_t)j->n1, fi_of(j));
#endif
		break;
	}
	job_free(j);
}

/*
 * The wrappers: run the handler now if the user is under her share, else
 * park a copy of the arguments. A copy that cannot be made (ENOMEM) runs
 * now: nothing is refused for lack of memory to wait.
 */
#define ENTER(req, u)                                \
	struct accelfs *fs = fuse_req_userdata(req); \
	struct fair_user *u;                         \
	if (admit(fs, req, &u))

#define RUN_NOW(u, call)      \
	do {                  \
		call;         \
		leave(fs, u); \
		return;       \
	} while (0)

/* park @j if it was filled (@ok), else run @call now (over the share) */
#define PARK_OR(j, ok, call)         \
	do {                         \
		if ((j) && (ok)) {   \
			park(fs, j); \
			return;      \
		}                    \
		if (j)               \
			job_free(j); \
		call;                \
		return;              \
	} while (0)

static void f_lookup(fuse_req_t req, fuse_ino_t p, const char *n)
{
	struct fair_job *j;

	ENTER(req, u) RUN_NOW(u, inner.lookup(req, p, n));
	j = job_new(req, u, OP_LOOKUP);
	if (j)
		j->ino = p;
	PARK_OR(j, j && keep_name(&j->s1, n), inner.lookup(req, p, n));
}

/*
 * A wrapper for a kind with a node (@fill copies the rest of its arguments
 * into j), parked if @ok holds once filled.
 */
#define WRAP_OP(fn, OPK, call_now, fill, ok)        \
	static void fn                              \
	{                                           \
		struct fair_job *j;                 \
                                                    \
		ENTER(req, u) RUN_NOW(u, call_now); \
		j = job_new(req, u, OPK);           \
		if (j) {                            \
			j->ino = ino;               \
			fill;                       \
		}                                   \
		PARK_OR(j, j && (ok), call_now);    \
	}

/* The kinds with a node, a file info and up to two numbers. */
#define INO_FI_OP(fn, OPK, call_now, fill) WRAP_OP(fn, OPK, call_now, fill, true)

INO_FI_OP(f_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), OP_GETATTR,
	  inner.getattr(req, ino, fi), keep_fi(j, fi))
INO_FI_OP(f_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *a, int s,
		    struct fuse_file_info *fi),
	  OP_SETATTR, inner.setattr(req, ino, a, s, fi),
	  (keep_fi(j, fi), j->st = *a, j->n1 = (uint64_t)s))
INO_FI_OP(f_readlink(fuse_req_t req, fuse_ino_t ino), OP_READLINK, inner.readlink(req, ino),
	  (void)0)
INO_FI_OP(f_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), OP_OPEN,
	  inner.open(req, ino, fi), keep_fi(j, fi))
INO_FI_OP(f_read(fuse_req_t req, fuse_ino_t ino, size_t s, off_t o, struct fuse_file_info *fi),
	  OP_READ, inner.read(req, ino, s, o, fi), (keep_fi(j, fi), j->n1 = s, j->n2 = (uint64_t)o))
INO_FI_OP(f_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), OP_FLUSH,
	  inner.flush(req, ino, fi), keep_fi(j, fi))
INO_FI_OP(f_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), OP_RELEASE,
	  inner.release(req, ino, fi), keep_fi(j, fi))
INO_FI_OP(f_fsync(fuse_req_t req, fuse_ino_t ino, int d, struct fuse_file_info *fi), OP_FSYNC,
	  inner.fsync(req, ino, d, fi), (keep_fi(j, fi), j->n1 = (uint64_t)d))
INO_FI_OP(f_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), OP_OPENDIR,
	  inner.opendir(req, ino, fi), keep_fi(j, fi))
INO_FI_OP(f_readdir(fuse_req_t req, fuse_ino_t ino, size_t s, off_t o, struct fuse_file_info *fi),
	  OP_READDIR, inner.readdir(req, ino, s, o, fi),
	  (keep_fi(j, fi), j->n1 = s, j->n2 = (uint64_t)o))
INO_FI_OP(f_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t s, off_t o,
			struct fuse_file_info *fi),
	  OP_READDIRPLUS, inner.readdirplus(req, ino, s, o, fi),
	  (keep_fi(j, fi), j->n1 = s, j->n2 = (uint64_t)o))
INO_FI_OP(f_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), OP_RELEASEDIR,
	  inner.releasedir(req, ino, fi), keep_fi(j, fi))
INO_FI_OP(f_fsyncdir(fuse_req_t req, fuse_ino_t ino, int d, struct fuse_file_info *fi), OP_FSYNCDIR,
	  inner.fsyncdir(req, ino, d, fi), (keep_fi(j, fi), j->n1 = (uint64_t)d))
INO_FI_OP(f_statfs(fuse_req_t req, fuse_ino_t ino), OP_STATFS, inner.statfs(req, ino), (void)0)
INO_FI_OP(f_listxattr(fuse_req_t req, fuse_ino_t ino, size_t s), OP_LISTXATTR,
	  inner.listxattr(req, ino, s), j->n1 = s)
INO_FI_OP(f_access(fuse_req_t req, fuse_ino_t ino, int m), OP_ACCESS, inner.access(req, ino, m),
	  j->n1 = (uint64_t)m)
INO_FI_OP(f_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *l),
	  OP_GETLK, inner.getlk(req, ino, fi, l), (keep_fi(j, fi), j->lk = *l))
INO_FI_OP(f_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *l,
		  int s),
	  OP_SETLK, inner.setlk(req, ino, fi, l, s),
	  (keep_fi(j, fi), j->lk = *l, j->n1 = (uint64_t)s))
INO_FI_OP(f_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op), OP_FLOCK,
	  inner.flock(req, ino, fi, op), (keep_fi(j, fi), j->n1 = (uint64_t)op))
INO_FI_OP(f_fallocate(fuse_req_t req, fuse_ino_t ino, int m, off_t o, off_t l,
		      struct fuse_file_info *fi),
	  OP_FALLOCATE, inner.fallocate(req, ino, m, o, l, fi),
	  (keep_fi(j, fi), j->n1 = (uint64_t)m, j->n2 = (uint64_t)o, j->n3 = (uint64_t)l))
INO_FI_OP(f_lseek(fuse_req_t req, fuse_ino_t ino, off_t o, int w, struct fuse_file_info *fi),
	  OP_LSEEK, inner.lseek(req, ino, o, w, fi),
	  (keep_fi(j, fi), j->n1 = (uint64_t)o, j->n2 = (uint64_t)w))
INO_FI_OP(f_copy_file_range(fuse_req_t req, fuse_ino_t ino, off_t o, struct fuse_file_info *fi,
			    fuse_ino_t io, off_t oo, struct fuse_file_info *fo, size_t l, int f),
	  OP_COPY_FILE_RANGE, inner.copy_file_range(req, ino, o, fi, io, oo, fo, l, f),
	  (keep_fi(j, fi), j->ino2 = io, j->n1 = (uint64_t)o, j->n2 = (uint64_t)oo, j->n3 = l,
	   j->n4 = (uint64_t)f, j->has_fi2 = fo != NULL, j->fi2 = fo ? *fo : j->fi2))
#ifdef ACCEL_HAVE_TMPFILE
INO_FI_OP(f_tmpfile(fuse_req_t req, fuse_ino_t ino, mode_t m, struct fuse_file_info *fi),
	  OP_TMPFILE, inner.tmpfile(req, ino, m, fi), (keep_fi(j, fi), j->n1 = m))
#endif

/* The kinds with a node and a name (and a number). */
#define NAME_OP(fn, OPK, call_now, name, fill) \
	WRAP_OP(fn, OPK, call_now, fill, keep_name(&j->s1, name))

NAME_OP(f_mknod(fuse_req_t req, fuse_ino_t ino, const char *n, mode_t m, dev_t d), OP_MKNOD,
	inner.mknod(req, ino, n, m, d), n, (j->n1 = m, j->n2 = (uint64_t)d))
NAME_OP(f_mkdir(fuse_req_t req, fuse_ino_t ino, const char *n, mode_t m), OP_MKDIR,
	inner.mkdir(req, ino, n, m), n, j->n1 = m)
NAME_OP(f_unlink(fuse_req_t req, fuse_ino_t ino, const char *n), OP_UNLINK,
	inner.unlink(req, ino, n), n, (void)0)
NAME_OP(f_rmdir(fuse_req_t req, fuse_ino_t ino, const char *n), OP_RMDIR, inner.rmdir(req, ino, n),
	n, (void)0)
NAME_OP(f_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t np, const char *nn), OP_LINK,
	inner.link(req, ino, np, nn), nn, j->ino2 = np)
NAME_OP(f_getxattr(fuse_req_t req, fuse_ino_t ino, const char *n, size_t s), OP_GETXATTR,
	inner.getxattr(req, ino, n, s), n, j->n1 = s)
NAME_OP(f_removexattr(fuse_req_t req, fuse_ino_t ino, const char *n), OP_REMOVEXATTR,
	inner.removexattr(req, ino, n), n, (void)0)
NAME_OP(f_create(fuse_req_t req, fuse_ino_t ino, const char *n, mode_t m,
		 struct fuse_file_info *fi),
	OP_CREATE, inner.create(req, ino, n, m, fi), n, (keep_fi(j, fi), j->n1 = m))

static void f_symlink(fuse_req_t req, const char *l, fuse_ino_t p, const char *n)
{
	struct fair_job *j;

	ENTER(req, u) RUN_NOW(u, inner.symlink(req, l, p, n));
	j = job_new(req, u, OP_SYMLINK);
	if (j)
		j->ino = p;
	PARK_OR(j, j && keep_name(&j->s1, l) && keep_name(&j->s2, n), inner.symlink(req, l, p, n));
}

static void f_rename(fuse_req_t req, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn,
		     unsigned int f)
{
	struct fair_job *j;

	ENTER(req, u) RUN_NOW(u, inner.rename(req, p, n, np, nn, f));
	j = job_new(req, u, OP_RENAME);
	if (j) {
		j->ino = p;
		j->ino2 = np;
		j->n1 = f;
	}
	PARK_OR(j, j && keep_name(&j->s1, n) && keep_name(&j->s2, nn),
		inner.rename(req, p, n, np, nn, f));
}

static void f_setxattr(fuse_req_t req, fuse_ino_t ino, const char *n, const char *v, size_t s,
		       int f)
{
	struct fair_job *j;

	ENTER(req, u) RUN_NOW(u, inner.setxattr(req, ino, n, v, s, f));
	j = job_new(req, u, OP_SETXATTR);
	if (j) {
		j->ino = ino;
		j->n1 = s;
		j->n2 = (uint64_t)f;
		j->s2 = malloc(s ? s : 1);
		if (j->s2)
			memcpy(j->s2, v, s);
	}
	PARK_OR(j, j && j->s2 && keep_name(&j->s1, n), inner.setxattr(req, ino, n, v, s, f));
}

static void f_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *b, off_t o,
			struct fuse_file_info *fi)
{
	struct fair_job *j;

	ENTER(req, u) RUN_NOW(u, inner.write_buf(req, ino, b, o, fi));
	j = job_new(req, u, OP_WRITE_BUF);
	if (j) {
		j->ino = ino;
		j->n1 = (uint64_t)o;
		keep_fi(j, fi);
		j->bytes = fuse_buf_size(b);
		j->bv = j->bytes <= FAIR_PARKED_BYTES ? keep_bufvec(b) : NULL;
	}
	PARK_OR(j, j && j->bv, inner.write_buf(req, ino, b, o, fi));
}

void fair_wrap(struct accelfs *fs, struct fuse_lowlevel_ops *ops)
{
	(void)fs;
	inner = *ops;
#define W(op)        \
	if (ops->op) \
		ops->op = f_##op;
	W(lookup)
	W(getattr)
	W(setattr) W(readlink) W(mknod) W(mkdir) W(unlink) W(rmdir) W(symlink) W(rename) W(link)
	    W(open) W(read) W(write_buf) W(flush) W(release) W(fsync) W(opendir) W(readdir)
		W(readdirplus) W(releasedir) W(fsyncdir) W(statfs) W(setxattr) W(getxattr)
		    W(listxattr) W(removexattr) W(access) W(create) W(getlk) W(setlk) W(flock)
			W(fallocate) W(lseek) W(copy_file_range)
#ifdef ACCEL_HAVE_TMPFILE
			    W(tmpfile)
#endif
#undef W
}

uint64_t fair_parked(struct accelfs *fs)
{
	return fs->fair ? __atomic_load_n(&fs->fair->parked, __ATOMIC_RELAXED) : 0;
}

void fair_stop(struct accelfs *fs)
{
	struct fair *f = fs->fair;

	if (!f)
		return;
	for (unsigned int i = 0; i <= FAIR_USERS; i++) {
		struct fair_user *u = &f->users[i];
		struct fair_job *j;

		for (;;) {
			pthread_mutex_lock(&u->lock);
			j = u->head;
			if (j) {
				u->head = j->next;
				if (!u->head)
					u->tail = NULL;
				u->parked--;
				u->parked_bytes -= j->bytes;
				j->state = JOB_RUNNING;
			}
			pthread_mutex_unlock(&u->lock);
			if (!j)
				break;
			fuse_req_interrupt_func(j->req, NULL, NULL);
			fuse_reply_err(j->req, EINTR);
			job_free(j);
		}
		pthread_mutex_destroy(&u->lock);
	}
	pthread_mutex_destroy(&f->lock);
	free(f);
	fs->fair = NULL;
}
