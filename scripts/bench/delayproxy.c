// SPDX-License-Identifier: MIT
/* delayproxy: a TCP proxy that adds a fixed delay to each direction of every
 * connection, for scripts/bench-shared (this kernel has no netem). Bytes read
 * from one side are queued as a chunk stamped with their arrival time and
 * written to the other side DELAY later: the queue pipelines like a link, so
 * the delay costs latency, never throughput (up to QUEUE_MAX bytes in flight
 * per direction, then reading pauses). An end of stream is delayed like data
 * (shutdown of the other side's write half); an error on either side ends the
 * connection at once.
 *
 * usage: delayproxy DELAY_US LISTEN_IP:PORT TARGET_IP:PORT [LISTEN TARGET]...
 * Runs in the foreground until killed; exits 1 if a listener cannot be set up.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_MAX (256 * 1024)
#define QUEUE_MAX (64u << 20)
#define ROUTES_MAX 16

struct chunk {
	struct chunk *next;
	uint64_t due; /* CLOCK_MONOTONIC ns; len 0: end of stream */
	size_t len, off;
	char data[];
};

/* One direction: bytes read from fd[from], written to fd[1 - from]. */
struct dir {
	struct chunk *head, *tail;
	size_t queued;
	bool eof_in;  /* end of stream read (queued as a 0-length chunk) */
	bool done;    /* end of stream passed on */
	bool blocked; /* the writer side's buffer is full: waits for EPOLLOUT */
};

struct conn;
struct end {
	struct conn *c;
	int side;
};

struct conn {
	int fd[2];
	uint32_t mask[2];
	struct end ends[2];
	struct dir d[2]; /* d[s]: from fd[s] to fd[1 - s] */
	struct conn *next;
};

struct route {
	int lfd;
	struct sockaddr_in target;
};

static uint64_t delay_ns;
static int ep;
static struct conn *conns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || colon - s >= (long)sizeof(host))
		return -EINVAL;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

static void conn_free(struct conn *c)
{
	struct conn **p;
	int s;

	for (s = 0; s < 2; s++) {
		while (c->d[s].head) {
			struct chunk *k = c->d[s].head;

			c->d[s].head = k->next;
			free(k);
		}
		close(c->fd[s]);
	}
	for (p = &conns; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	free(c);
}

/* The events side s wants: input while its direction has room, output
 * while the other direction waits for room in its buffer. */
static void conn_update(struct conn *c)
{
	int s;

	for (s = 0; s < 2; s++) {
		struct dir *in = &c->d[s], *out = &c->d[1 - s];
		uint32_t m = 0;
		struct epoll_event ev;

		if (!in->eof_in && in->queued < QUEUE_MAX)
			m |= EPOLLIN;
		if (out->blocked)
			m |= EPOLLOUT;
		if (m == c->mask[s])
			continue;
		ev.events = m;
		ev.data.ptr = &c->ends[s];
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd[s], &ev);
		c->mask[s] = m;
	}
}

/* Reads what side s has into a chunk due DELAY from now; -1 to end the
 * connection. */
static int conn_read(struct conn *c, int s)
{
	struct dir *d = &c->d[s];
	struct chunk *k = malloc(sizeof(*k) + CHUNK_MAX);
	ssize_t n;

	if (!k)
		return -1;
	n = read(c->fd[s], k->data, CHUNK_MAX);
	if (n < 0) {
		free(k);
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
	if (n > 0)
		k = realloc(k, sizeof(*k) + n) ?: k;
	k->next = NULL;
	k->due = now_ns() + delay_ns;
	k->len = (size_t)n;
	k->off = 0;
	if (d->tail)
		d->tail->next = k;
	else
		d->head = k;
	d->tail = k;
	d->queued += (size_t)n;
	if (n == 0)
		d->eof_in = true;
	return 0;
}

/* Writes the chunks of direction s that are due; -1 to end the connection. */
static int dir_flush(struct conn *c, int s, uint64_t now)
{
	struct dir *d = &c->d[s];
	int to = c->fd[1 - s];

	d->blocked = false;
	while (d->head && d->head->due <= now) {
		struct chunk *k = d->head;

		if (k->len == 0) {
			shutdown(to, SHUT_WR);
			d->done = true;
		} else {
			ssize_t n = write(to, k->data + k->off, k->len - k->off);

			if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
				d->blocked = true;
				return 0;
			}
			if (n < 0)
				return -1;
			k->off += (size_t)n;
			d->queued -= (size_t)n;
			if (k->off < k->len)
				continue;
		}
		d->head = k->next;
		if (!d->head)
			d->tail = NULL;
		free(k);
	}
	return 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void conn_new(int cfd, const struct route *r)
{
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1, s, tfd = socket(AF_INET, SOCK_STREAM, 0);

	if (!c || tfd < 0 || connect(tfd, (const struct sockaddr *)&r->target, sizeof(r->target))) {
		perror("delayproxy: connect to target");
		close(cfd);
		if (tfd >= 0)
			close(tfd);
		free(c);
		return;
	}
	c->fd[0] = cfd;
	c->fd[1] = tfd;
	c->next = conns;
	conns = c;
	for (s = 0; s < 2; s++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &c->ends[s] };

		setsockopt(c->fd[s], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->ends[s] = (struct end){ c, s };
		c->mask[s] = EPOLLIN;
		if (set_nonblock(c->fd[s]) || epoll_ctl(ep, EPOLL_CTL_ADD, c->fd[s], &ev)) {
			perror("delayproxy: epoll_ctl");
			conn_free(c);
			return;
		}
	}
}

/* The earliest due time of a chunk that can be written, 0 if none. */
static uint64_t next_due(void)
{
	uint64_t due = 0;
	struct conn *c;
	int s;

	for (c = conns; c; c = c->next)
		for (s = 0; s < 2; s++)
			if (c->d[s].head && !c->d[s].blocked && (!due || c->d[s].head->due < due))
				due = c->d[s].head->due;
	return due;
}

/* Passes on what is due on every connection; ends those that failed or
 * whose both directions are done. */
static void flush_all(void)
{
	uint64_t now = now_ns();
	struct conn *c = conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (dir_flush(c, 0, now) || dir_flush(c, 1, now) || (c->d[0].done && c->d[1].done))
			conn_free(c);
		else
			conn_update(c);
	}
}

static int route_listen(struct route *r, const char *listen_at, const char *target)
{
	struct sockaddr_in la;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };
	int one = 1;

	if (parse_addr(listen_at, &la) || parse_addr(target, &r->target))
		return -EINVAL;
	r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (r->lfd < 0)
		return -errno;
	setsockopt(r->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(r->lfd, (struct sockaddr *)&la, sizeof(la)) || listen(r->lfd, 128) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, r->lfd, &ev))
		return -errno;
	return 0;
}

static bool is_route(const void *p, const struct route *routes, int n)
{
	return p >= (const void *)routes && p < (const void *)(routes + n);
}

static void on_event(const struct epoll_event *ev, const struct route *routes, int n)
{
	if (is_route(ev->data.ptr, routes, n)) {
		const struct route *r = ev->data.ptr;
		int cfd = accept4(r->lfd, NULL, NULL, SOCK_NONBLOCK);

		if (cfd >= 0)
			conn_new(cfd, r);
		return;
	}
	struct end *e = ev->data.ptr;

	if ((ev->events & EPOLLERR) ||
	    ((ev->events & (EPOLLIN | EPOLLHUP)) && (e->c->mask[e->side] & EPOLLIN) &&
	     conn_read(e->c, e->side) < 0))
		e->c->d[e->side].done = e->c->d[1 - e->side].done = true; /* reset: end it */
	if (ev->events & EPOLLOUT)
		e->c->d[1 - e->side].blocked = false;
}

int main(int argc, char **argv)
{
	static struct route routes[ROUTES_MAX];
	struct epoll_event evs[64];
	int i, n = (argc - 2) / 2;

	if (argc < 4 || argc % 2 || n > ROUTES_MAX) {
		fprintf(stderr, "usage: delayproxy DELAY_US LISTEN_IP:PORT TARGET_IP:PORT...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	delay_ns = strtoull(argv[1], NULL, 10) * 1000u;
	ep = epoll_create1(0);
	for (i = 0; i < n; i++) {
		int ret = route_listen(&routes[i], argv[2 + 2 * i], argv[3 + 2 * i]);

		if (ret) {
			fprintf(stderr, "delayproxy: %s -> %s: %s\n", argv[2 + 2 * i],
				argv[3 + 2 * i], strerror(-ret));
			return 1;
		}
	}
	for (;;) {
		uint64_t due = next_due(), now = now_ns();
		struct timespec ts = { 0 }, *tp = NULL;
		int k;

		if (due) {
			uint64_t wait = due > now ? due - now : 0;

			ts = (struct timespec){ (time_t)(wait / 1000000000u),
						(long)(wait % 1000000000u) };
			tp = &ts;
		}
		k = epoll_pwait2(ep, evs, 64, tp, NULL);
		for (i = 0; i < k; i++)
			on_event(&evs[i], routes, n);
		flush_all();
	}
}
