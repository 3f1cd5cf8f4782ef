// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connection deadlines (see connwatch.h): two lists in the order their
 * connections entered them, those waiting for a request header and those
 * being answered, so the next deadline is always at a head; one thread
 * that cuts what is past due and sleeps until the next.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "connwatch.h"
#include "util.h"

struct cw_list;

/* A tracked connection. */
struct connwatch_conn {
	struct connwatch_conn *prev, *next; /* in its list */
	struct cw_list *list;		    /* NULL once cut */
	int fd;				    /* our dup of its socket */
	uint64_t since_ns;		    /* when it entered its list */
};

/* Connections in one phase of a request, oldest first. */
struct cw_list {
	struct connwatch_conn *head, *tail;
	uint64_t limit_ns; /* how long one may stay */
};

struct connwatch {
	pthread_mutex_t lock; /* guards all that follows */
	pthread_cond_t wake;  /* a list was empty, or quit */
	struct cw_list waiting, answering;
	size_t n;	 /* tracked and not cut */
	size_t evict_at; /* this many: a new one cuts the oldest waiting */
	bool quit;
	pthread_t thread;
};

/* Appends c to l, waking the thread if l was empty: it may be asleep
 * with nothing to watch. */
static void cw_list_add(struct connwatch *w, struct cw_list *l,
			struct connwatch_conn *c)
{
	c->list = l;
	c->since_ns = util_now_ns();
	c->next = NULL;
	c->prev = l->tail;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	if (l->head == c)
		pthread_cond_signal(&w->wake);
}

static void cw_list_del(struct connwatch_conn *c)
{
	struct cw_list *l = c->list;

	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->list = NULL;
	c->prev = c->next = NULL;
}

/* Cuts c off: the server sees its socket shut down and closes it. */
static void cw_cut(struct connwatch *w, struct connwatch_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	cw_list_del(c);
	w->n--;
}

/* Moves c from list from (if there; NULL: any) to list to. */
static void cw_move(struct connwatch *w, struct connwatch_conn *c,
		    struct cw_list *from, struct cw_list *to)
{
	if (!c)
		return;
	pthread_mutex_lock(&w->lock);
	if (c->list && (!from || c->list == from)) {
		cw_list_del(c);
		cw_list_add(w, to, c);
	}
	pthread_mutex_unlock(&w->lock);
}

/* The watch: cuts what is past due, sleeps until the next deadline. */
static void *cw_thread(void *arg)
{
	struct connwatch *w = arg;
	struct cw_list *lists[] = { &w->waiting, &w->answering };

	pthread_mutex_lock(&w->lock);
	while (!w->quit) {
		uint64_t now = util_now_ns(), next = UINT64_MAX;
		struct timespec ts;

		for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
			struct cw_list *l = lists[i];

			while (l->head && now - l->head->since_ns >= l->limit_ns)
				cw_cut(w, l->head);
			if (l->head && l->head->since_ns + l->limit_ns < next)
				next = l->head->since_ns + l->limit_ns;
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&w->wake, &w->lock);
			continue;
		}
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		pthread_cond_timedwait(&w->wake, &w->lock, &ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct connwatch *connwatch_new(uint64_t header_ns, uint64_t answer_ns,
				size_t evict_at)
{
	struct connwatch *w = xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;

	pthread_mutex_init(&w->lock, NULL);
	/* deadlines are util_now_ns()'s, on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	w->waiting.limit_ns = header_ns;
	w->answering.limit_ns = answer_ns;
	w->evict_at = evict_at;
	if (pthread_create(&w->thread, NULL, cw_thread, w))
		util_die("cannot start a thread for connection deadlines");
	return w;
}

void connwatch_free(struct connwatch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	free(w);
}

struct connwatch_conn *connwatch_add(struct connwatch *w, int fd)
{
	struct connwatch_conn *c = xcalloc(1, sizeof(*c));

	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->fd < 0) {
		shutdown(fd, SHUT_RDWR);
		free(c);
		return NULL;
	}
	pthread_mutex_lock(&w->lock);
	cw_list_add(w, &w->waiting, c);
	if (++w->n > w->evict_at)
		cw_cut(w, w->waiting.head);
	pthread_mutex_unlock(&w->lock);
	return c;
}

void connwatch_header(struct connwatch *w, struct connwatch_conn *c)
{
	cw_move(w, c, &w->waiting, &w->answering);
}

void connwatch_answered(struct connwatch *w, struct connwatch_conn *c)
{
	cw_move(w, c, NULL, &w->waiting);
}

void connwatch_del(struct connwatch *w, struct connwatch_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&w->lock);
	if (c->list) {
		cw_list_del(c);
		w->n--;
	}
	pthread_mutex_unlock(&w->lock);
	close(c->fd);
	free(c);
}

size_t connwatch_count(struct connwatch *w)
{
	size_t n;

	pthread_mutex_lock(&w->lock);
	n = w->n;
	pthread_mutex_unlock(&w->lock);
	return n;
}

/* How many descriptors are open. */
static unsigned int cw_fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	if (!d)
		return 64; /* a guess where /proc is not mounted */
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

unsigned int connwatch_limit(unsigned int max, unsigned int min,
			     unsigned int spare)
{
	unsigned int open = cw_fds_open(), n;
	rlim_t want = (rlim_t)open + spare + 2 * (rlim_t)max;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return min;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		struct rlimit up = rl;

		up.rlim_cur = rl.rlim_max != RLIM_INFINITY &&
					      rl.rlim_max < want ?
				      rl.rlim_max :
				      want;
		if (up.rlim_cur > rl.rlim_cur && !setrlimit(RLIMIT_NOFILE, &up))
			rl = up;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return max;
	n = rl.rlim_cur > (rlim_t)open + spare ?
		    (unsigned int)((rl.rlim_cur - open - spare) / 2) :
		    0;
	return n > min ? n : min;
}
