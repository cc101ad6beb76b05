// SPDX-License-Identifier: MIT
/*
 * prefetch.c - the asynchronous read engine behind read-ahead (prefetch.h).
 *
 * One engine thread owns one io_uring ring; nothing else touches the ring,
 * so it is set up SINGLE_ISSUER|DEFER_TASKRUN where the kernel has it (the
 * ring is created inside the engine thread, which makes that thread its
 * issuer). Any thread hands requests over through a mutex-protected FIFO;
 * the engine takes the whole FIFO at once, prepares as many reads as the
 * free depth allows and submits them with one io_uring_enter(), which also
 * waits for the next completion.
 *
 * Wake-up: an eventfd whose read is itself an SQE in the ring. The engine
 * has to sleep until "a read completed OR a request was queued"; a condition
 * variable cannot be waited on together with a ring, so with one it would
 * have to poll one of the two. With the eventfd read in the ring, one
 * io_uring_enter() waits for both. Submitters write the eventfd only when
 * the engine said it is going to sleep (the `sleeping` flag, under the
 * lock), so a burst of submissions costs one write, and none while the
 * engine is awake. The pread fallback blocks in read(2) on the same eventfd,
 * so submitters have one wake-up path whatever the engine runs on.
 *
 * Lock order: only eng.lock; it is never held while done() runs or while
 * the engine waits, and the eventfd is written under it so prefetch_stop()
 * can close the eventfd safely.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <liburing.h>

#include "clock.h"
#include "prefetch.h"
#include "probes.h"
#include "ring.h"

#define PREFETCH_MAX_DEPTH 4096
#define PREFETCH_DEFAULT_DEPTH 64
#define PREFETCH_QUEUE_FACTOR 4 /* accepted-and-not-done requests per unit of depth */
#define EFD_TAG 1ULL		/* user_data of the eventfd read; requests are pointers */
#define EAGAIN_TRIES 64		/* pread mode: a non-blocking special file must not spin */

struct engine {
	pthread_mutex_t lock;
	pthread_cond_t ready_cond;
	struct prefetch_req *head, *tail; /* queued, not yet taken: under lock */
	unsigned int outstanding;	  /* accepted, done() not yet called: under lock */
	unsigned int capacity;		  /* written before the thread starts */
	unsigned int depth;		  /* written before the thread starts */
	bool running;			  /* accepting requests: under lock */
	bool stopping;	   /* under lock (atomic store), read lock-free by the engine */
	bool sleeping;	   /* engine is about to block on the eventfd: under lock */
	bool ready;	   /* the thread chose its mechanism: under lock */
	bool thread_alive; /* a thread to join: start/stop only */
	bool use_uring;	   /* what prefetch_start() asked for */
	bool on_uring;	   /* what the thread got: atomic */
	int efd;
	pthread_t thread;
	uint64_t efd_buf; /* the eventfd read's target; static storage outlives the ring */
};

/* Process-wide by nature: the process's one prefetch engine (its thread and
 * ring), which the read-ahead of every mount it serves submits to. */
static struct engine eng = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.ready_cond = PTHREAD_COND_INITIALIZER,
	.efd = -1,
};

static struct prefetch_stats stats; /* relaxed atomics */

/* The engine's own list of taken requests not yet started (engine thread only). */
struct backlog {
	struct prefetch_req *head, *tail;
};

static void count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/* Other threads may be counting refusals meanwhile: no memset. */
static void stats_reset(void)
{
	__atomic_store_n(&stats.submitted, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stats.completed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stats.failed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stats.dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stats.batches, 0, __ATOMIC_RELAXED);
}

static bool stop_requested(void)
{
	return __atomic_load_n(&eng.stopping, __ATOMIC_ACQUIRE);
}

/* Wake the engine out of its eventfd wait. Called with eng.lock held. */
static void wake_locked(void)
{
	uint64_t one = 1;

	eng.sleeping = false;
	while (write(eng.efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static struct prefetch_req *backlog_pop(struct backlog *bl)
{
	struct prefetch_req *req = bl->head;

	if (req) {
		bl->head = req->next;
		if (!bl->head)
			bl->tail = NULL;
		req->next = NULL;
	}
	return req;
}

/* Move everything queued onto @bl. Returns true once prefetch_stop() began. */
static bool take_queue(struct backlog *bl)
{
	bool stop;

	pthread_mutex_lock(&eng.lock);
	if (eng.head) {
		if (bl->tail)
			bl->tail->next = eng.head;
		else
			bl->head = eng.head;
		bl->tail = eng.tail;
		eng.head = eng.tail = NULL;
	}
	eng.sleeping = false;
	stop = eng.stopping;
	pthread_mutex_unlock(&eng.lock);
	return stop;
}

/*
 * The engine is about to block: announce it unless work arrived meanwhile.
 * Returns true when it may block (a later submission will write the eventfd).
 */
static bool may_sleep(void)
{
	bool ok;

	pthread_mutex_lock(&eng.lock);
	ok = !eng.head && !eng.stopping;
	eng.sleeping = ok;
	pthread_mutex_unlock(&eng.lock);
	return ok;
}

/* Hand @req back to its owner. @cancelled: never started, engine stopping. */
static void finish(struct prefetch_req *req, ssize_t res, bool cancelled)
{
	if (cancelled)
		count(&stats.dropped, 1);
	else if (res < 0)
		count(&stats.failed, 1);
	else
		count(&stats.completed, 1);
	req->elapsed_ns = cancelled ? 0 : mono_ns() - req->t_ns;
	if (!cancelled)
		ACCEL_PROBE4(prefetch_complete, req->fd, req->off, (int64_t)res, req->elapsed_ns);
	pthread_mutex_lock(&eng.lock);
	eng.outstanding--; /* before done(), which may submit the next one */
	pthread_mutex_unlock(&eng.lock);
	req->done(req, res);
}

static void cancel_all(struct backlog *bl)
{
	struct prefetch_req *req;

	while ((req = backlog_pop(bl)))
		finish(req, -ECANCELED, true);
}

/* A read is about to start: the probe, and its clock (for done()'s elapsed_ns). */
static void started(struct prefetch_req *req)
{
	count(&stats.submitted, 1);
	ACCEL_PROBE3(prefetch_submit, req->fd, req->off, req->len);
	req->t_ns = mono_ns();
}

/* ---- pread fallback ------------------------------------------------------- */

static ssize_t read_once(struct prefetch_req *req)
{
	unsigned int tries = 0;
	ssize_t res;

	do
		res = pread(req->fd, req->buf, req->len, (off_t)req->off);
	while (res < 0 && (errno == EINTR || (errno == EAGAIN && ++tries < EAGAIN_TRIES)));
	return res < 0 ? -errno : res;
}

static void sleep_on_eventfd(void)
{
	uint64_t v;

	while (read(eng.efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

static void run_sync(void)
{
	struct backlog bl = { 0 };
	struct prefetch_req *req;

	for (;;) {
		if (take_queue(&bl)) {
			cancel_all(&bl);
			return;
		}
		if (!bl.head) {
			if (may_sleep())
				sleep_on_eventfd();
			continue;
		}
		count(&stats.batches, 1);
		while (!stop_requested() && (req = backlog_pop(&bl))) {
			started(req);
			finish(req, read_once(req), false);
		}
	}
}

/* ---- io_uring ------------------------------------------------------------- */

struct uring_engine {
	struct io_uring ring;
	struct backlog bl;
	unsigned int inflight; /* request SQEs submitted or prepared, not yet reaped */
	bool efd_armed;
};

/* A ring that can READ (kernels before 5.6 cannot), or -errno: then pread it is. */
static int ring_setup(struct io_uring *ring, unsigned int entries)
{
	struct io_uring_probe *probe;
	int ret = uring_ring_init(ring, entries);

	if (ret < 0)
		return ret;
	probe = io_uring_get_probe_ring(ring);
	if (!probe || !io_uring_opcode_supported(probe, IORING_OP_READ))
		ret = -EOPNOTSUPP;
	if (probe)
		io_uring_free_probe(probe);
	if (ret < 0)
		io_uring_queue_exit(ring);
	return ret;
}

/* The ring has room for depth + 1 SQEs per round, so get_sqe cannot fail. */
static void prep_req(struct uring_engine *ue, struct prefetch_req *req)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ue->ring);

	io_uring_prep_read(sqe, req->fd, req->buf, req->len, req->off);
	io_uring_sqe_set_data(sqe, req);
}

static void arm_eventfd(struct uring_engine *ue)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ue->ring);

	io_uring_prep_read(sqe, eng.efd, &eng.efd_buf, sizeof(eng.efd_buf), 0);
	io_uring_sqe_set_data64(sqe, EFD_TAG);
	ue->efd_armed = true;
}

/* Prepare reads from the backlog up to the free depth. Returns how many. */
static unsigned int prep_batch(struct uring_engine *ue)
{
	struct prefetch_req *req;
	unsigned int n = 0;

	while (ue->inflight < eng.depth && (req = backlog_pop(&ue->bl))) {
		started(req);
		prep_req(ue, req);
		ue->inflight++;
		n++;
	}
	return n;
}

/*
 * Take every completion; -EINTR/-EAGAIN reads go straight back in. The
 * eventfd read is re-armed unless a stop began: the flag is read here, after
 * its CQE, because prefetch_stop() sets it before writing the eventfd, so
 * either this read sees it or the re-armed read consumes that write.
 */
static void reap(struct uring_engine *ue)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&ue->ring, head, cqe)
	{
		struct prefetch_req *req = io_uring_cqe_get_data(cqe);

		seen++;
		if (io_uring_cqe_get_data64(cqe) == EFD_TAG) {
			ue->efd_armed = false;
			continue;
		}
		if (cqe->res == -EINTR || cqe->res == -EAGAIN) {
			prep_req(ue, req);
			continue;
		}
		ue->inflight--;
		finish(req, cqe->res, false);
	}
	io_uring_cq_advance(&ue->ring, seen);
	if (!ue->efd_armed && !stop_requested())
		arm_eventfd(ue);
}

/* Block for a completion unless there is nothing that could complete or wake us. */
static bool must_block(struct uring_engine *ue, bool stop)
{
	if (stop || ue->bl.head)
		return true; /* waiting for in-flight reads (or the eventfd) */
	return may_sleep();
}

static void submit_round(struct uring_engine *ue, unsigned int n, bool block)
{
	int ret = block ? io_uring_submit_and_wait(&ue->ring, 1) : io_uring_submit(&ue->ring);

	if (ret >= 0 || ret == -EINTR) {
		if (n)
			count(&stats.batches, 1);
		return;
	}
	/* -EAGAIN/-EBUSY/-ENOMEM: the SQEs stay queued; let completions drain first */
	if (ue->inflight)
		io_uring_submit_and_wait(&ue->ring, 0);
	sched_yield();
}

static void run_uring(struct uring_engine *ue)
{
	bool stop;
	unsigned int n;

	arm_eventfd(ue);
	for (;;) {
		stop = take_queue(&ue->bl);
		if (stop)
			cancel_all(&ue->bl);
		n = prep_batch(ue);
		if (stop && !ue->inflight && !ue->efd_armed)
			break;
		submit_round(ue, n, must_block(ue, stop));
		reap(ue);
	}
}

/* ---- the thread and the public functions ---------------------------------- */

static void announce(bool on_uring)
{
	pthread_mutex_lock(&eng.lock);
	__atomic_store_n(&eng.on_uring, on_uring, __ATOMIC_RELAXED);
	eng.ready = true;
	pthread_cond_signal(&eng.ready_cond);
	pthread_mutex_unlock(&eng.lock);
}

static void *engine_main(void *arg)
{
	struct uring_engine *ue = arg;

	if (ue && ring_setup(&ue->ring, eng.depth + 2) == 0) {
		announce(true);
		run_uring(ue);
		io_uring_queue_exit(&ue->ring);
	} else {
		announce(false);
		run_sync();
	}
	free(ue);
	return NULL;
}

/* The engine blocks every signal but SIGBUS: the daemon's handlers run in threads it chose. */
static int spawn(void)
{
	struct uring_engine *ue = eng.use_uring ? calloc(1, sizeof(*ue)) : NULL;
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	sigdelset(&all, SIGBUS); /* a fault in a mapping must reach its handler */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&eng.thread, NULL, engine_main, ue);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		free(ue);
		return -ret;
	}
	pthread_mutex_lock(&eng.lock);
	while (!eng.ready)
		pthread_cond_wait(&eng.ready_cond, &eng.lock);
	eng.running = true;
	pthread_mutex_unlock(&eng.lock);
	return 0;
}

int prefetch_start(unsigned int depth, bool use_uring)
{
	int ret;

	if (!depth)
		depth = PREFETCH_DEFAULT_DEPTH;
	if (depth > PREFETCH_MAX_DEPTH)
		return -EINVAL;
	if (eng.thread_alive)
		return -EBUSY;
	eng.efd = eventfd(0, EFD_CLOEXEC);
	if (eng.efd < 0)
		return -errno;
	stats_reset();
	eng.depth = depth;
	eng.capacity = depth * PREFETCH_QUEUE_FACTOR;
	eng.use_uring = use_uring;
	eng.stopping = eng.sleeping = eng.ready = false;
	eng.outstanding = 0;
	ret = spawn();
	if (ret) {
		close(eng.efd);
		eng.efd = -1;
		return ret;
	}
	eng.thread_alive = true;
	return 0;
}

int prefetch_submit(struct prefetch_req *req)
{
	if (!req || !req->done)
		return -EINVAL;
	pthread_mutex_lock(&eng.lock);
	if (!eng.running || eng.outstanding >= eng.capacity) {
		pthread_mutex_unlock(&eng.lock);
		count(&stats.dropped, 1);
		return -EAGAIN;
	}
	req->next = NULL;
	if (eng.tail)
		eng.tail->next = req;
	else
		eng.head = req;
	eng.tail = req;
	eng.outstanding++;
	if (eng.sleeping)
		wake_locked();
	pthread_mutex_unlock(&eng.lock);
	return 0;
}

void prefetch_stop(void)
{
	if (!eng.thread_alive)
		return;
	pthread_mutex_lock(&eng.lock);
	eng.running = false;
	__atomic_store_n(&eng.stopping, true, __ATOMIC_RELEASE);
	wake_locked();
	pthread_mutex_unlock(&eng.lock);
	pthread_join(eng.thread, NULL);
	eng.thread_alive = false;
	__atomic_store_n(&eng.on_uring, false, __ATOMIC_RELAXED);
	pthread_mutex_lock(&eng.lock);
	close(eng.efd);
	eng.efd = -1;
	pthread_mutex_unlock(&eng.lock);
}

bool prefetch_uses_uring(void)
{
	return __atomic_load_n(&eng.on_uring, __ATOMIC_RELAXED);
}

void prefetch_stats_get(struct prefetch_stats *st)
{
	st->submitted = __atomic_load_n(&stats.submitted, __ATOMIC_RELAXED);
	st->completed = __atomic_load_n(&stats.completed, __ATOMIC_RELAXED);
	st->failed = __atomic_load_n(&stats.failed, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&stats.dropped, __ATOMIC_RELAXED);
	st->batches = __atomic_load_n(&stats.batches, __ATOMIC_RELAXED);
}
