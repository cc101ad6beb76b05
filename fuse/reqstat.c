// SPDX-License-Identifier: MIT
/*
 * reqstat.c - per-mount request statistics (see reqstat.h).
 *
 * Counted in one place: ops_fill() ends by wrapping every handler of the
 * table, so each request, whatever its kind, passes through one function
 * before and after its handler (the time in between goes into the kind's
 * histogram). What the handler replied is seen by wrapping three libfuse
 * functions at link time (-Wl,--wrap, fuse/meson.build): fuse_reply_err
 * (an error for the kind this thread serves), fuse_reply_buf for READ (the
 * bytes read) and fuse_reply_write (the bytes written). A request finished
 * by a thread of its own (slow.c) adopts the kind there, so its reply
 * counts too; its time is the handler's, until the hand-off.
 *
 * The hot path takes no lock and allocates nothing: relaxed atomic adds
 * into one of STRIPES copies of the counters, chosen per thread so the
 * workers do not share cache lines; the watcher thread sums the stripes
 * every MSTATE_PUBLISH_MS (reqstat_fill). I/O of passthrough opens is the
 * kernel's and never reaches the daemon: it is not in the byte counts.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mstate.h"
#include "reqstat.h"

#define STRIPES 8

#ifdef ACCEL_HAVE_TMPFILE
#define REQ_TMPFILE(X)                                                                 \
	X(tmpfile, "tmpfile", (fuse_req_t req, fuse_ino_t parent, mode_t mode, FI fi), \
	  (req, parent, mode, fi))
#else
#define REQ_TMPFILE(X)
#endif

typedef struct fuse_file_info *FI;

/* Every handler the daemon may have: op, the kind's name (FUSE's opcode), parameters, arguments. */
#define REQ_OPS(X)                                                                                 \
	X(lookup, "lookup", (fuse_req_t req, fuse_ino_t p, const char *n), (req, p, n))            \
	X(forget, "forget", (fuse_req_t req, fuse_ino_t ino, uint64_t nl), (req, ino, nl))         \
	X(forget_multi, "batch_forget", (fuse_req_t req, size_t c, struct fuse_forget_data * f),   \
	  (req, c, f))                                                                             \
	X(getattr, "getattr", (fuse_req_t req, fuse_ino_t ino, FI fi), (req, ino, fi))             \
	X(setattr, "setattr", (fuse_req_t req, fuse_ino_t ino, struct stat * a, int s, FI fi),     \
	  (req, ino, a, s, fi))                                                                    \
	X(readlink, "readlink", (fuse_req_t req, fuse_ino_t ino), (req, ino))                      \
	X(mknod, "mknod", (fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, dev_t d),        \
	  (req, p, n, m, d))                                                                       \
	X(mkdir, "mkdir", (fuse_req_t req, fuse_ino_t p, const char *n, mode_t m), (req, p, n, m)) \
	X(unlink, "unlink", (fuse_req_t req, fuse_ino_t p, const char *n), (req, p, n))            \
	X(rmdir, "rmdir", (fuse_req_t req, fuse_ino_t p, const char *n), (req, p, n))              \
	X(symlink, "symlink", (fuse_req_t req, const char *l, fuse_ino_t p, const char *n),        \
	  (req, l, p, n))                                                                          \
	X(rename, "rename",                                                                        \
	  (fuse_req_t req, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn,             \
	   unsigned int f),                                                                        \
	  (req, p, n, np, nn, f))                                                                  \
	X(link, "link", (fuse_req_t req, fuse_ino_t ino, fuse_ino_t np, const char *nn),           \
	  (req, ino, np, nn))                                                                      \
	X(open, "open", (fuse_req_t req, fuse_ino_t ino, FI fi), (req, ino, fi))                   \
	X(read, "read", (fuse_req_t req, fuse_ino_t ino, size_t s, off_t o, FI fi),                \
	  (req, ino, s, o, fi))                                                                    \
	X(write_buf, "write",                                                                      \
	  (fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec * b, off_t o, FI fi),                \
	  (req, ino, b, o, fi))                                                                    \
	X(flush, "flush", (fuse_req_t req, fuse_ino_t ino, FI fi), (req, ino, fi))                 \
	X(release, "release", (fuse_req_t req, fuse_ino_t ino, FI fi), (req, ino, fi))             \
	X(fsync, "fsync", (fuse_req_t req, fuse_ino_t ino, int d, FI fi), (req, ino, d, fi))       \
	X(opendir, "opendir", (fuse_req_t req, fuse_ino_t ino, FI fi), (req, ino, fi))             \
	X(readdir, "readdir", (fuse_req_t req, fuse_ino_t ino, size_t s, off_t o, FI fi),          \
	  (req, ino, s, o, fi))                                                                    \
	X(readdirplus, "readdirplus", (fuse_req_t req, fuse_ino_t ino, size_t s, off_t o, FI fi),  \
	  (req, ino, s, o, fi))                                                                    \
	X(releasedir, "releasedir", (fuse_req_t req, fuse_ino_t ino, FI fi), (req, ino, fi))       \
	X(fsyncdir, "fsyncdir", (fuse_req_t req, fuse_ino_t ino, int d, FI fi), (req, ino, d, fi)) \
	X(statfs, "statfs", (fuse_req_t req, fuse_ino_t ino), (req, ino))                          \
	X(setxattr, "setxattr",                                                                    \
	  (fuse_req_t req, fuse_ino_t ino, const char *n, const char *v, size_t s, int f),         \
	  (req, ino, n, v, s, f))                                                                  \
	X(getxattr, "getxattr", (fuse_req_t req, fuse_ino_t ino, const char *n, size_t s),         \
	  (req, ino, n, s))                                                                        \
	X(listxattr, "listxattr", (fuse_req_t req, fuse_ino_t ino, size_t s), (req, ino, s))       \
	X(removexattr, "removexattr", (fuse_req_t req, fuse_ino_t ino, const char *n),             \
	  (req, ino, n))                                                                           \
	X(access, "access", (fuse_req_t req, fuse_ino_t ino, int m), (req, ino, m))                \
	X(create, "create", (fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, FI fi),        \
	  (req, p, n, m, fi))                                                                      \
	X(getlk, "getlk", (fuse_req_t req, fuse_ino_t ino, FI fi, struct flock * l),               \
	  (req, ino, fi, l))                                                                       \
	X(setlk, "setlk", (fuse_req_t req, fuse_ino_t ino, FI fi, struct flock * l, int s),        \
	  (req, ino, fi, l, s))                                                                    \
	X(flock, "flock", (fuse_req_t req, fuse_ino_t ino, FI fi, int op), (req, ino, fi, op))     \
	X(fallocate, "fallocate",                                                                  \
	  (fuse_req_t req, fuse_ino_t ino, int m, off_t o, off_t l, FI fi),                        \
	  (req, ino, m, o, l, fi))                                                                 \
	X(lseek, "lseek", (fuse_req_t req, fuse_ino_t ino, off_t o, int w, FI fi),                 \
	  (req, ino, o, w, fi))                                                                    \
	X(copy_file_range, "copy_file_range",                                                      \
	  (fuse_req_t req, fuse_ino_t i, off_t o, FI fi, fuse_ino_t io, off_t oo, FI fo, size_t l, \
	   int f),                                                                                 \
	  (req, i, o, fi, io, oo, fo, l, f))                                                       \
	REQ_TMPFILE(X)

/* clang-format off */
enum req_kind {
	REQ_NONE, /* 0: this thread serves no request */
#define KIND(op, name, params, args) REQ_##op,
	REQ_OPS(KIND)
#undef KIND
	REQ_N
};
/* clang-format on */

static const char *const kind_names[REQ_N] = {
#define NAME(op, name, params, args) [REQ_##op] = name,
	REQ_OPS(NAME)
#undef NAME
};

struct kind_ctr {
	uint64_t count, errors, time_ns;
	uint64_t hist[MSTATE_HIST];
};

/* One stripe of the counters; all fields atomic (relaxed). */
struct stripe {
	struct kind_ctr k[REQ_N];
	uint64_t read_bytes, write_bytes;
} __attribute__((aligned(64)));

/* Process-wide by nature: the handler table is wrapped once per process
 * (reqstat_wrap), and its counters are striped over the process's workers. */
static struct stripe stripes[STRIPES];
static struct fuse_lowlevel_ops orig; /* the handlers wrapped; read only once serving */
static __thread int cur;	      /* the kind this thread serves, REQ_NONE */
static __thread struct stripe *mine;  /* this thread's stripe, NULL: not chosen yet */

#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

static struct stripe *stripe(void)
{
	static unsigned int next; /* atomic */

	if (!mine)
		mine = &stripes[__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % STRIPES];
	return mine;
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t begin(int kind)
{
	cur = kind;
	return clock_ns();
}

static void end(int kind, uint64_t t0)
{
	struct kind_ctr *k = &stripe()->k[kind];
	uint64_t ns = clock_ns() - t0;

	cur = REQ_NONE;
	ADD(&k->count, 1);
	ADD(&k->time_ns, ns);
	ADD(&k->hist[mstate_hist_bucket(ns)], 1);
}

#define WRAPPER(op, name, params, args)        \
	static void stat_##op params           \
	{                                      \
		uint64_t t0 = begin(REQ_##op); \
		orig.op args;                  \
		end(REQ_##op, t0);             \
	}
REQ_OPS(WRAPPER)
#undef WRAPPER

void reqstat_wrap(struct fuse_lowlevel_ops *ops)
{
	orig = *ops;
#define WRAP(op, name, params, args) \
	if (ops->op)                 \
		ops->op = stat_##op;
	REQ_OPS(WRAP)
#undef WRAP
}

int reqstat_current(void)
{
	return cur;
}

void reqstat_adopt(int kind)
{
	cur = kind > REQ_NONE && kind < REQ_N ? kind : REQ_NONE;
}

/* The replies, wrapped at link time (see the top of the file). */
int __real_fuse_reply_err(fuse_req_t req, int err);
int __wrap_fuse_reply_err(fuse_req_t req, int err);
int __real_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size);
int __wrap_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size);
int __real_fuse_reply_write(fuse_req_t req, size_t count);
int __wrap_fuse_reply_write(fuse_req_t req, size_t count);

int __wrap_fuse_reply_err(fuse_req_t req, int err)
{
	if (err && cur != REQ_NONE)
		ADD(&stripe()->k[cur].errors, 1);
	return __real_fuse_reply_err(req, err);
}

int __wrap_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	if (cur == REQ_read)
		ADD(&stripe()->read_bytes, size);
	return __real_fuse_reply_buf(req, buf, size);
}

int __wrap_fuse_reply_write(fuse_req_t req, size_t count)
{
	ADD(&stripe()->write_bytes, count);
	return __real_fuse_reply_write(req, count);
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* Kind @kind summed over the stripes into @r; its count. */
static uint64_t sum_kind(int kind, struct mstate_req *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", kind_names[kind]);
	for (int s = 0; s < STRIPES; s++) {
		const struct kind_ctr *k = &stripes[s].k[kind];

		r->count += LOAD(&k->count);
		r->errors += LOAD(&k->errors);
		r->time_us += LOAD(&k->time_ns) / 1000;
		for (int b = 0; b < MSTATE_HIST; b++)
			r->hist[b] += LOAD(&k->hist[b]);
	}
	return r->count;
}

void reqstat_fill(struct mstate *m)
{
	_Static_assert(REQ_N - 1 <= MSTATE_REQ_MAX, "the state file lists every kind");
	m->nreq = 0;
	m->read_bytes = m->write_bytes = 0;
	for (int kind = REQ_NONE + 1; kind < REQ_N; kind++)
		if (sum_kind(kind, &m->req[m->nreq]))
			m->nreq++;
	for (int s = 0; s < STRIPES; s++) {
		m->read_bytes += LOAD(&stripes[s].read_bytes);
		m->write_bytes += LOAD(&stripes[s].write_bytes);
	}
}
