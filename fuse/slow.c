// SPDX-License-Identifier: MIT
/*
 * slow.c - a request that may wait long runs in a thread of its own.
 *
 * The workers serve every user of the mount: one held in a lock wait or a
 * lease break would make every other user's requests queue behind it, and a
 * few such requests would stop the mount. A handler that finds it would
 * have to wait (it tries without waiting first) hands the request here:
 * a waiter thread runs it and replies. Per user at most SLOW_PER_UID
 * requests wait at once, and SLOW_MAX of all users but root; past that
 * slow_start() refuses and the handler answers ENOLCK (as the kernel's own
 * lock table does when full) or the error its non-blocking try got.
 *
 * Interruption: FUSE INTERRUPT (the caller got a signal, or was killed; the
 * kernel then waits for our reply, uninterruptibly) sets the request's flag
 * and arms a timer that sends the thread SLOW_SIG every SLOW_KICK_NS until
 * it has left its system call: a signal sent just before the thread entered
 * one would otherwise be lost, and it would wait on. The handler of SLOW_SIG
 * does nothing and has no SA_RESTART, so the system call ends with EINTR.
 *
 * Waiter threads are kept (idle ones wait for the next request) until the
 * session ends, never exit after one: under FUSE over io_uring the reply
 * is a commit that also fetches the next request into that ring entry,
 * and it belongs to the thread that submitted it; were that thread gone,
 * the kernel would end the request it next brings with ECANCELED (a
 * record-locking program saw its lock and read calls fail so).
 *
 * Lock: waits_lock (the lists and counts, a request's kick_ok, a waiter's
 * job), a leaf.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "reqstat.h"
#include "slow.h"

#define SLOW_STACK (256U << 10)
#define SLOW_SIG SIGURG
#define SLOW_KICK_NS 10000000L

/* A waiter thread: its timer, and the request it runs (NULL: idle). */
struct waiter {
	pthread_cond_t go;
	struct slow_req *job;
	timer_t kick;
	bool have_timer;
	struct waiter *next_idle;
};

/* Process-wide by nature: the waiter threads, and their per-user bound, are the process's. */
static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t waits_done = PTHREAD_COND_INITIALIZER;
static struct slow_req *waits;			/* waits_lock */
static unsigned int waits_total, waits_nonroot; /* waits_lock */
static struct waiter *idle;			/* waits_lock */
static bool stopping;				/* waits_lock: waiters exit when idle */

bool slow_interrupted(const struct slow_req *s)
{
	return __atomic_load_n(&s->interrupted, __ATOMIC_SEQ_CST);
}

static void kick(struct slow_req *s)
{
	struct itimerspec its = { .it_interval = { 0, SLOW_KICK_NS }, .it_value = { 0, 1 } };

	__atomic_store_n(&s->interrupted, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->kick_ok, __ATOMIC_SEQ_CST))
		timer_settime(s->kick, 0, &its, NULL);
}

static void on_interrupt(fuse_req_t req, void *data)
{
	(void)req;
	kick(data);
}

static void sig_handler(int sig)
{
	(void)sig; /* only ends the waiting system call (EINTR) */
}

/* waits_lock held: may @uid start one more? */
static bool room(uid_t uid)
{
	unsigned int mine = 0;

	if (uid == 0)
		return true;
	for (struct slow_req *s = waits; s; s = s->next)
		mine += s->uid == uid;
	return mine < SLOW_PER_UID && waits_nonroot < SLOW_MAX;
}

static void unlist(struct slow_req *s)
{
	struct slow_req **p;

	pthread_mutex_lock(&waits_lock);
	for (p = &waits; *p != s; p = &(*p)->next)
		;
	*p = s->next;
	waits_total--;
	if (s->uid)
		waits_nonroot--;
	pthread_cond_broadcast(&waits_done);
	pthread_mutex_unlock(&waits_lock);
}

/* Run request @s in this waiter @w; its reply is sent from this thread. */
static void serve(struct waiter *w, struct slow_req *s)
{
	reqstat_adopt(s->kind); /* its reply counts for its kind */
	s->tid = (pid_t)syscall(SYS_gettid);
	s->kick = w->kick;
	if (w->have_timer)
		__atomic_store_n(&s->kick_ok, true, __ATOMIC_SEQ_CST);
	/* called at once if the request was interrupted already */
	fuse_req_interrupt_func(s->req, on_interrupt, s);
	s->run(s); /* calls slow_end() before its reply */
	unlist(s);
	s->done(s);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SLOW_SIG };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SLOW_SIG);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	sev._sigev_un._tid =
	    (pid_t)syscall(SYS_gettid); /* sigev_notify_thread_id: glibc 2.36 lacks it */
	w->have_timer = !timer_create(CLOCK_MONOTONIC, &sev, &w->kick);
	pthread_mutex_lock(&waits_lock);
	for (;;) {
		struct slow_req *s = w->job;

		if (!s) {
			if (stopping)
				break;
			pthread_cond_wait(&w->go, &waits_lock);
			continue;
		}
		pthread_mutex_unlock(&waits_lock);
		serve(w, s);
		pthread_mutex_lock(&waits_lock);
		w->job = NULL;
		w->next_idle = idle;
		idle = w;
	}
	pthread_mutex_unlock(&waits_lock);
	return NULL; /* its struct stays on the idle list: the process is ending */
}

void slow_end(struct slow_req *s)
{
	static const struct itimerspec off;
	bool armed;

	/* waits for a running on_interrupt; none is called after it */
	fuse_req_interrupt_func(s->req, NULL, NULL);
	/* slow_stop arms the timer only under waits_lock while kick_ok */
	pthread_mutex_lock(&waits_lock);
	armed = __atomic_exchange_n(&s->kick_ok, false, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&waits_lock);
	/* a signal already sent is taken at this call's return, before the
	 * waiter's next request (which retries an EINTR it was not meant for) */
	if (armed)
		timer_settime(s->kick, 0, &off, NULL);
}

/* waits_lock held: hand @s to an idle waiter, or start one; 0 or -errno. */
static int dispatch_locked(struct slow_req *s)
{
	struct waiter *w = idle;
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	if (w) {
		idle = w->next_idle;
		w->job = s;
		pthread_cond_signal(&w->go);
		return 0;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_cond_init(&w->go, NULL);
	w->job = s;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, SLOW_STACK);
	ret = pthread_create(&t, &attr, waiter_main, w);
	pthread_attr_destroy(&attr);
	if (ret) {
		pthread_cond_destroy(&w->go);
		free(w);
	}
	return -ret;
}

int slow_start(struct slow_req *s)
{
	bool ok;
	int ret = 0;

	s->uid = fuse_req_ctx(s->req)->uid;
	s->kind = reqstat_current();
	s->interrupted = 0;
	s->kick_ok = false;
	pthread_mutex_lock(&waits_lock);
	ok = room(s->uid);
	if (ok) {
		s->next = waits;
		waits = s;
		waits_total++;
		if (s->uid)
			waits_nonroot++;
		ret = dispatch_locked(s);
	}
	pthread_mutex_unlock(&waits_lock);
	if (!ok) {
		log_msg(LOG_WARNING, "uid %u: %u requests already waiting: ENOLCK",
			(unsigned int)s->uid, SLOW_PER_UID);
		return -ENOLCK;
	}
	if (ret)
		unlist(s);
	return ret;
}

int slow_setup(void)
{
	struct sigaction sa = { .sa_handler = sig_handler };

	sigemptyset(&sa.sa_mask);
	return sigaction(SLOW_SIG, &sa, NULL); /* no SA_RESTART: the wait must end */
}

void slow_stop(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&waits_lock);
	for (struct slow_req *s = waits; s; s = s->next)
		kick(s);
	while (waits_total && !pthread_cond_timedwait(&waits_done, &waits_lock, &until))
		;
	if (waits_total)
		log_msg(LOG_ERR, "%u waiting requests did not end", waits_total);
	stopping = true; /* idle waiters exit */
	for (struct waiter *w = idle; w; w = w->next_idle)
		pthread_cond_signal(&w->go);
	pthread_mutex_unlock(&waits_lock);
}
