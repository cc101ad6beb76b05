// SPDX-License-Identifier: MIT
/*
 * test_prefetch.c - the asynchronous read engine (uring/prefetch.c), run once
 * per mechanism (argv[1] = "uring" or "sync"): concurrent reads at random
 * offsets return the file's bytes, short reads at end of file, errors come
 * back through done(), a full queue refuses with -EAGAIN, a batch of queued
 * requests goes out in one submission, and stop cancels what was not
 * started — with done() called exactly once per accepted request.
 *
 * To hold the engine still, a request's done() blocks until the test lets
 * it go: the engine thread then takes nothing new, which makes "queue full"
 * and "queued when stopped" deterministic.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "prefetch.h"

#define FILE_SIZE ((4u << 20) + 123)

static bool want_uring;
static char path[64];
static int fd = -1;

static uint8_t byte_at(uint64_t off)
{
	return (uint8_t)((off >> 8) ^ (off * 131));
}

static bool content_ok(const uint8_t *buf, uint64_t off, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] != byte_at(off + (uint64_t)i))
			return false;
	return true;
}

static ssize_t expect_len(uint64_t off, uint32_t len)
{
	return off >= FILE_SIZE ? 0 : (ssize_t)(FILE_SIZE - off < len ? FILE_SIZE - off : len);
}

static int suite_init(void)
{
	static uint8_t buf[1 << 16];
	uint64_t off;

	snprintf(path, sizeof(path), "/tmp/accelfs-test-prefetch.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	for (off = 0; off < FILE_SIZE; off += sizeof(buf)) {
		size_t n = FILE_SIZE - off < sizeof(buf) ? FILE_SIZE - off : sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = byte_at(off + i);
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			return -1;
	}
	return 0;
}

static int suite_clean(void)
{
	prefetch_stop();
	close(fd);
	unlink(path);
	return 0;
}

static void start(unsigned int depth)
{
	CU_ASSERT_EQUAL_FATAL(prefetch_start(depth, want_uring), 0);
	CU_ASSERT_EQUAL(prefetch_uses_uring(), want_uring);
}

/* ---- a request that records its completion --------------------------------- */

struct treq {
	struct prefetch_req req;
	int calls;   /* done() calls (atomic) */
	ssize_t res; /* the last result */
	bool ok;     /* the bytes were the file's */
	uint8_t *buf;
};

static void treq_done(struct prefetch_req *req, ssize_t res)
{
	struct treq *t = (struct treq *)req;

	t->res = res;
	t->ok = res < 0 || content_ok(t->buf, req->off, res);
	__atomic_fetch_add(&t->calls, 1, __ATOMIC_RELEASE);
}

static void treq_init(struct treq *t, int rfd, uint64_t off, uint32_t len)
{
	if (!t->buf)
		t->buf = malloc(len ? len : 1);
	t->req = (struct prefetch_req){
		.fd = rfd, .off = off, .len = len, .buf = t->buf, .done = treq_done, .arg = t
	};
	t->calls = 0;
	t->res = 1234567;
	t->ok = false;
}

static void treq_wait(struct treq *t)
{
	while (!__atomic_load_n(&t->calls, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* ---- a request whose done() holds the engine until released ----------------- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_entered, gate_open;

static void gate_done(struct prefetch_req *req, ssize_t res)
{
	treq_done(req, res);
	pthread_mutex_lock(&gate_lock);
	gate_entered = true;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

/* Submit @t with the blocking done() and wait until the engine sits in it. */
static void gate_hold(struct treq *t)
{
	gate_entered = gate_open = false;
	treq_init(t, fd, 0, 4096);
	t->req.done = gate_done;
	CU_ASSERT_EQUAL_FATAL(prefetch_submit(&t->req), 0);
	pthread_mutex_lock(&gate_lock);
	while (!gate_entered)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

static void gate_release(void)
{
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

/* ---- tests ----------------------------------------------------------------- */

#define THREADS 4
#define SLOTS 24
#define READS_PER_THREAD 3000

static unsigned int bad_reads;

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 17;
}

static void *random_reader(void *arg)
{
	struct treq *slots = calloc(SLOTS, sizeof(*slots));
	uint64_t x = (uint64_t)(uintptr_t)arg;
	unsigned int k, s, accepted = 0;

	for (s = 0; s < SLOTS; s++) {
		slots[s].buf = malloc(1 << 16);
		slots[s].calls = 1; /* free */
	}
	for (k = 0; k < READS_PER_THREAD; k++) {
		struct treq *t = &slots[k % SLOTS];

		treq_wait(t);
		if (k >= SLOTS && (!t->ok || t->res != expect_len(t->req.off, t->req.len)))
			__atomic_fetch_add(&bad_reads, 1, __ATOMIC_RELAXED);
		treq_init(t, fd, lcg(&x) % (FILE_SIZE + 4096), 1 + lcg(&x) % (1 << 16));
		while (prefetch_submit(&t->req) == -EAGAIN)
			sched_yield();
		accepted++;
	}
	for (s = 0; s < SLOTS; s++) {
		treq_wait(&slots[s]);
		if (!slots[s].ok || slots[s].res != expect_len(slots[s].req.off, slots[s].req.len))
			__atomic_fetch_add(&bad_reads, 1, __ATOMIC_RELAXED);
		free(slots[s].buf);
	}
	free(slots);
	return NULL;
}

static void test_concurrent_random(void)
{
	pthread_t th[THREADS];
	struct prefetch_stats st;

	start(16);
	bad_reads = 0;
	for (uintptr_t i = 0; i < THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, random_reader, (void *)(i + 1)),
				      0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	prefetch_stop();
	prefetch_stats_get(&st);
	CU_ASSERT_EQUAL(bad_reads, 0);
	CU_ASSERT_EQUAL(st.completed, THREADS * READS_PER_THREAD);
	CU_ASSERT_EQUAL(st.submitted, st.completed);
	CU_ASSERT_EQUAL(st.failed, 0);
	CU_ASSERT(st.batches >= 1 && st.batches <= st.submitted);
	printf("\n    %llu reads in %llu batches, %llu refused (queue full) ",
	       (unsigned long long)st.submitted, (unsigned long long)st.batches,
	       (unsigned long long)st.dropped);
}

static void test_eof(void)
{
	struct treq a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };

	start(4);
	treq_init(&a, fd, FILE_SIZE - 100, 4096);
	treq_init(&b, fd, FILE_SIZE + 10, 4096);
	treq_init(&c, fd, 1000, 0);
	treq_init(&d, fd, 0, FILE_SIZE + 1);
	CU_ASSERT_EQUAL(prefetch_submit(&a.req), 0);
	CU_ASSERT_EQUAL(prefetch_submit(&b.req), 0);
	CU_ASSERT_EQUAL(prefetch_submit(&c.req), 0);
	CU_ASSERT_EQUAL(prefetch_submit(&d.req), 0);
	treq_wait(&a);
	treq_wait(&b);
	treq_wait(&c);
	treq_wait(&d);
	prefetch_stop();
	CU_ASSERT(a.calls == 1 && b.calls == 1 && c.calls == 1 && d.calls == 1);
	CU_ASSERT_EQUAL(a.res, 100);
	CU_ASSERT(a.ok);
	CU_ASSERT_EQUAL(b.res, 0);
	CU_ASSERT_EQUAL(c.res, 0);
	CU_ASSERT_EQUAL(d.res, FILE_SIZE);
	CU_ASSERT(d.ok);
	free(a.buf);
	free(b.buf);
	free(c.buf);
	free(d.buf);
}

static void test_bad_fd(void)
{
	struct treq a = { 0 }, b = { 0 };
	struct prefetch_stats st;
	int dfd = open("/tmp", O_RDONLY | O_DIRECTORY);

	start(4);
	treq_init(&a, -1, 0, 100);
	treq_init(&b, dfd, 0, 100);
	CU_ASSERT_EQUAL(prefetch_submit(&a.req), 0);
	CU_ASSERT_EQUAL(prefetch_submit(&b.req), 0);
	treq_wait(&a);
	treq_wait(&b);
	prefetch_stop();
	prefetch_stats_get(&st);
	CU_ASSERT_EQUAL(a.res, -EBADF);
	CU_ASSERT_EQUAL(b.res, -EISDIR);
	CU_ASSERT(a.calls == 1 && b.calls == 1);
	CU_ASSERT_EQUAL(st.failed, 2);
	CU_ASSERT_EQUAL(st.completed, 0);
	close(dfd);
	free(a.buf);
	free(b.buf);
}

static void test_queue_full(void)
{
	struct treq gate = { 0 }, t[9] = { 0 };
	struct prefetch_stats st;
	int i;

	start(2); /* accepts 4 * 2 requests not yet done */
	gate_hold(&gate);
	for (i = 0; i < 8; i++) {
		treq_init(&t[i], fd, (uint64_t)i * 5000, 3000);
		CU_ASSERT_EQUAL(prefetch_submit(&t[i].req), 0);
	}
	treq_init(&t[8], fd, 0, 10);
	CU_ASSERT_EQUAL(prefetch_submit(&t[8].req), -EAGAIN);
	CU_ASSERT_EQUAL(prefetch_submit(NULL), -EINVAL);
	gate_release();
	for (i = 0; i < 8; i++) {
		treq_wait(&t[i]);
		CU_ASSERT(t[i].ok && t[i].res == 3000);
	}
	/* room again */
	CU_ASSERT_EQUAL(prefetch_submit(&t[8].req), 0);
	treq_wait(&t[8]);
	prefetch_stop();
	prefetch_stats_get(&st);
	CU_ASSERT_EQUAL(st.dropped, 1);
	CU_ASSERT_EQUAL(st.completed, 10);
	CU_ASSERT_EQUAL(t[8].calls, 1);
	/* stopped: refused, not queued */
	CU_ASSERT_EQUAL(prefetch_submit(&t[8].req), -EAGAIN);
	for (i = 0; i < 9; i++)
		free(t[i].buf);
	free(gate.buf);
}

/* Everything queued while the engine was busy goes out as one batch. */
static void test_one_batch(void)
{
	struct treq gate = { 0 }, t[15] = { 0 };
	struct prefetch_stats before, after;
	int i;

	start(16);
	gate_hold(&gate);
	prefetch_stats_get(&before);
	for (i = 0; i < 15; i++) {
		treq_init(&t[i], fd, (uint64_t)i * 70000, 65536);
		CU_ASSERT_EQUAL(prefetch_submit(&t[i].req), 0);
	}
	gate_release();
	for (i = 0; i < 15; i++) {
		treq_wait(&t[i]);
		CU_ASSERT(t[i].ok && t[i].res == 65536);
	}
	prefetch_stats_get(&after);
	CU_ASSERT_EQUAL(after.batches - before.batches, 1);
	CU_ASSERT_EQUAL(after.submitted - before.submitted, 15);
	prefetch_stop();
	for (i = 0; i < 15; i++)
		free(t[i].buf);
	free(gate.buf);
}

static void *stopper(void *arg)
{
	__atomic_store_n((bool *)arg, true, __ATOMIC_RELEASE);
	prefetch_stop();
	return NULL;
}

/* Queued requests are cancelled by stop, each done() exactly once. */
static void test_stop_cancels(void)
{
	enum { QUEUED = 10, PROBES = 200 };
	struct treq gate = { 0 }, *t = calloc(QUEUED + PROBES, sizeof(*t));
	struct prefetch_stats st;
	pthread_t th;
	bool stopping = false;
	int i, n;

	start(64);
	gate_hold(&gate);
	for (n = 0; n < QUEUED; n++) {
		treq_init(&t[n], fd, (uint64_t)n * 4096, 4096);
		CU_ASSERT_EQUAL(prefetch_submit(&t[n].req), 0);
	}
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, stopper, &stopping), 0);
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
		sched_yield();
	/* submit until the stop is visible; those accepted before it are queued too */
	for (; n < QUEUED + PROBES; n++) {
		treq_init(&t[n], fd, 0, 10);
		if (prefetch_submit(&t[n].req) == -EAGAIN)
			break;
		usleep(1000);
	}
	gate_release();
	pthread_join(th, NULL);
	CU_ASSERT_FATAL(n < QUEUED + PROBES);
	prefetch_stats_get(&st);
	CU_ASSERT(gate.calls == 1 && gate.ok && gate.res == 4096);
	for (i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(t[i].calls, 1);
		CU_ASSERT_EQUAL(t[i].res, -ECANCELED);
	}
	CU_ASSERT_EQUAL(t[n].calls, 0); /* refused: never called */
	CU_ASSERT_EQUAL(st.dropped, (uint64_t)n + 1);
	CU_ASSERT_EQUAL(st.completed, 1);
	for (i = 0; i <= n; i++)
		free(t[i].buf);
	free(t);
	free(gate.buf);
}

/* Stop while reads are in flight: each gets exactly one done(), before stop returns. */
static void test_stop_inflight(void)
{
	enum { N = 200 };
	struct treq *t = calloc(N, sizeof(*t));
	struct prefetch_stats st;
	int i, accepted = 0, cancelled = 0;
	uint64_t x = 7;

	start(32);
	for (i = 0; i < N; i++) {
		treq_init(&t[i], fd, lcg(&x) % FILE_SIZE, 1 << 16);
		if (prefetch_submit(&t[i].req) == 0)
			accepted++;
		else
			t[i].calls = -1; /* refused */
	}
	prefetch_stop();
	prefetch_stats_get(&st);
	for (i = 0; i < N; i++) {
		if (t[i].calls == -1)
			continue;
		CU_ASSERT_EQUAL(t[i].calls, 1);
		if (t[i].res == -ECANCELED)
			cancelled++;
		else
			CU_ASSERT(t[i].ok && t[i].res == expect_len(t[i].req.off, 1 << 16));
		free(t[i].buf);
	}
	CU_ASSERT_EQUAL(st.completed + (uint64_t)cancelled, (uint64_t)accepted);
	CU_ASSERT_EQUAL(st.submitted, st.completed);
	for (i = 0; i < N; i++)
		if (t[i].calls == -1)
			free(t[i].buf);
	free(t);
}

/* done() may submit the next request: a chain reads the whole file. */
static struct treq chain;
static uint64_t chain_bytes;
static bool chain_bad;

static void chain_done(struct prefetch_req *req, ssize_t res)
{
	if (res < 0 || !content_ok(req->buf, req->off, res)) {
		chain_bad = true;
		res = 0;
	}
	chain_bytes += (uint64_t)res;
	req->off += (uint64_t)res;
	if (res == 0 || prefetch_submit(req) != 0)
		__atomic_store_n(&chain.calls, 1, __ATOMIC_RELEASE);
}

static void test_resubmit_from_done(void)
{
	start(4);
	chain_bytes = 0;
	chain_bad = false;
	treq_init(&chain, fd, 0, 1 << 16);
	chain.req.done = chain_done;
	CU_ASSERT_EQUAL(prefetch_submit(&chain.req), 0);
	treq_wait(&chain);
	prefetch_stop();
	CU_ASSERT_FALSE(chain_bad);
	CU_ASSERT_EQUAL(chain_bytes, FILE_SIZE);
	free(chain.buf);
}

static void test_start_stop(void)
{
	prefetch_stop(); /* not started: nothing happens */
	CU_ASSERT_EQUAL(prefetch_start(4097, want_uring), -EINVAL);
	start(0);
	CU_ASSERT_EQUAL(prefetch_start(4, want_uring), -EBUSY);
	prefetch_stop();
	prefetch_stop();
	CU_ASSERT_FALSE(prefetch_uses_uring());
	start(1);
	prefetch_stop();
}

int main(int argc, char **argv)
{
	CU_pSuite s;

	if (argc != 2 || (strcmp(argv[1], "uring") && strcmp(argv[1], "sync"))) {
		fprintf(stderr, "usage: %s uring|sync\n", argv[0]);
		return 2;
	}
	want_uring = !strcmp(argv[1], "uring");
	if (want_uring) {
		bool ok = prefetch_start(4, true) == 0 && prefetch_uses_uring();

		prefetch_stop();
		if (!ok) {
			printf("SKIP: io_uring not usable here\n");
			return 77;
		}
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite(argv[1], suite_init, suite_clean);
	CU_add_test(s, "start and stop", test_start_stop);
	CU_add_test(s, "concurrent reads at random offsets", test_concurrent_random);
	CU_add_test(s, "short read at end of file", test_eof);
	CU_add_test(s, "bad fd fails through done()", test_bad_fd);
	CU_add_test(s, "queue full refuses with -EAGAIN", test_queue_full);
	CU_add_test(s, "queued requests go out in one batch", test_one_batch);
	CU_add_test(s, "stop cancels queued requests", test_stop_cancels);
	CU_add_test(s, "stop waits for reads in flight", test_stop_inflight);
	CU_add_test(s, "done() submits the next read", test_resubmit_from_done);
	return cunit_run();
}
