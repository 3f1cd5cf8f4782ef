// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exporter's password checks (see webauth.h): a cache of recent
 * verdicts in two small tables, good and bad apart so that a flood of
 * wrong passwords never pushes out the scraper's good one, and worker
 * threads that run bcrypt on the queued checks. Cache keys are SipHash-2-4
 * (twice, under two random keys) of "user NUL password": 128 bits a
 * client cannot aim at, so no other password can match a cached one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util.h"
#include "webauth.h"
#include "webconfig.h"

/* A remembered verdict. */
struct wa_seen {
	uint64_t key[2];
	uint64_t at_ns; /* good: last used; bad: when checked; 0: free */
};

struct webauth {
	const struct webconfig *wc;
	void (*hold)(void *arg);
	void (*release)(void *arg);
	uint64_t keys[2][2]; /* SipHash keys, random */
	pthread_mutex_t lock;
	pthread_cond_t work;		   /* a job was queued, or quit */
	struct webauth_job *head, *tail;   /* queued, oldest first */
	size_t queued;			   /* jobs in the queue */
	bool quit, stopped;		   /* workers told to end; joined */
	struct wa_seen good[WEBAUTH_GOOD]; /* guarded by lock, as below */
	struct wa_seen bad[WEBAUTH_BAD];
	unsigned long runs; /* bcrypt runs */
	pthread_t workers[WEBAUTH_WORKERS];
	size_t nworkers;
};

static uint64_t wa_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

/* One SipRound over the state v. */
static void wa_sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = wa_rotl(v[1], 13);
	v[1] ^= v[0];
	v[0] = wa_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = wa_rotl(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = wa_rotl(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = wa_rotl(v[1], 17);
	v[1] ^= v[2];
	v[2] = wa_rotl(v[2], 32);
}

/* SipHash-2-4 as its paper (Aumasson, Bernstein 2012) defines it. */
uint64_t webauth_siphash(const uint64_t k[2], const void *m, size_t len)
{
	const unsigned char *p = m;
	uint64_t v[4] = {
		k[0] ^ 0x736f6d6570736575ull,
		k[1] ^ 0x646f72616e646f6dull,
		k[0] ^ 0x6c7967656e657261ull,
		k[1] ^ 0x7465646279746573ull,
	};
	size_t whole = len & ~(size_t)7;
	uint64_t b = (uint64_t)len << 56;

	for (size_t i = 0; i < whole; i += 8) {
		uint64_t w = 0;

		for (int j = 0; j < 8; j++)
			w |= (uint64_t)p[i + j] << (8 * j);
		v[3] ^= w;
		wa_sipround(v);
		wa_sipround(v);
		v[0] ^= w;
	}
	for (size_t j = 0; j < (len & 7); j++)
		b |= (uint64_t)p[whole + j] << (8 * j);
	v[3] ^= b;
	wa_sipround(v);
	wa_sipround(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		wa_sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* The cache key of user and password. */
static void wa_key(const struct webauth *a, const char *user,
		   const char *password, uint64_t key[2])
{
	size_t lu = strlen(user), lp = strlen(password);
	char *m = xmalloc(lu + 1 + lp);

	memcpy(m, user, lu + 1);
	memcpy(m + lu + 1, password, lp);
	key[0] = webauth_siphash(a->keys[0], m, lu + 1 + lp);
	key[1] = webauth_siphash(a->keys[1], m, lu + 1 + lp);
	explicit_bzero(m, lu + 1 + lp);
	free(m);
}

/* The live entry of tab (n entries, ttl seconds) for key, or NULL. */
static struct wa_seen *wa_find(struct wa_seen *tab, size_t n,
			       const uint64_t key[2], uint64_t now,
			       unsigned int ttl)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].at_ns && now - tab[i].at_ns < ttl * 1000000000ull &&
		    tab[i].key[0] == key[0] && tab[i].key[1] == key[1])
			return &tab[i];
	return NULL;
}

/* Remembers key in tab, in a free or expired slot, else in place of the
 * entry used (good) or made (bad) longest ago. */
static void wa_put(struct wa_seen *tab, size_t n, const uint64_t key[2],
		   uint64_t now, unsigned int ttl)
{
	struct wa_seen *s = wa_find(tab, n, key, now, ttl), *old = &tab[0];

	for (size_t i = 0; !s && i < n; i++) {
		if (!tab[i].at_ns || now - tab[i].at_ns >= ttl * 1000000000ull)
			s = &tab[i];
		else if (tab[i].at_ns < old->at_ns)
			old = &tab[i];
	}
	if (!s)
		s = old;
	s->key[0] = key[0];
	s->key[1] = key[1];
	s->at_ns = now;
}

/* The cached verdict on key: OK (a good one is used now), DENIED, or
 * PENDING when there is none. Under the lock. */
static enum webauth_verdict wa_cached(struct webauth *a, const uint64_t key[2],
				      uint64_t now)
{
	struct wa_seen *s = wa_find(a->good, WEBAUTH_GOOD, key, now,
				    WEBAUTH_GOOD_S);

	if (s) {
		s->at_ns = now;
		return WEBAUTH_OK;
	}
	if (wa_find(a->bad, WEBAUTH_BAD, key, now, WEBAUTH_BAD_S))
		return WEBAUTH_DENIED;
	return WEBAUTH_PENDING;
}

/* Wipes a job's copies of the secrets. */
static void wa_wipe(struct webauth_job *job)
{
	char **s[] = { &job->user, &job->password };

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		if (!*s[i])
			continue;
		explicit_bzero(*s[i], strlen(*s[i]));
		free(*s[i]);
		*s[i] = NULL;
	}
}

/* Hands a job its verdict; the last touch of it. */
static void wa_finish(struct webauth *a, struct webauth_job *job,
		      enum webauth_verdict v)
{
	void *arg = job->arg;

	wa_wipe(job);
	__atomic_store_n(&job->verdict, (int)v, __ATOMIC_RELEASE);
	a->release(arg);
}

/*
 * A worker: takes the oldest job, checks it (from the cache if an earlier
 * run has answered it meanwhile), and answers with it every queued job for
 * the same user and password.
 */
static void *wa_worker(void *arg)
{
	struct webauth *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct webauth_job *job, *same = NULL, **pp;
		enum webauth_verdict v;

		while (!a->quit && !a->head)
			pthread_cond_wait(&a->work, &a->lock);
		if (a->quit)
			break;
		job = a->head;
		a->head = job->next;
		if (!a->head)
			a->tail = NULL;
		a->queued--;
		v = wa_cached(a, job->key, util_now_ns());
		if (v == WEBAUTH_PENDING) {
			bool ok;

			pthread_mutex_unlock(&a->lock);
			ok = webconfig_check(a->wc, job->user, job->password);
			pthread_mutex_lock(&a->lock);
			a->runs++;
			v = ok ? WEBAUTH_OK : WEBAUTH_DENIED;
			if (ok)
				wa_put(a->good, WEBAUTH_GOOD, job->key,
				       util_now_ns(), WEBAUTH_GOOD_S);
			else
				wa_put(a->bad, WEBAUTH_BAD, job->key,
				       util_now_ns(), WEBAUTH_BAD_S);
		}
		/* the same user and password queued again meanwhile */
		for (pp = &a->head; *pp;) {
			struct webauth_job *j = *pp;

			if (j->key[0] != job->key[0] ||
			    j->key[1] != job->key[1]) {
				pp = &j->next;
				continue;
			}
			*pp = j->next;
			a->queued--;
			j->next = same;
			same = j;
		}
		a->tail = NULL;
		for (struct webauth_job *j = a->head; j; j = j->next)
			a->tail = j;
		pthread_mutex_unlock(&a->lock);
		wa_finish(a, job, v);
		while (same) {
			struct webauth_job *j = same;

			same = j->next;
			wa_finish(a, j, v);
		}
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct webauth *webauth_new(const struct webconfig *wc, void (*hold)(void *),
			    void (*release)(void *))
{
	struct webauth *a = xcalloc(1, sizeof(*a));
	size_t got = 0;

	a->wc = wc;
	a->hold = hold;
	a->release = release;
	while (got < sizeof(a->keys)) {
		ssize_t n = getrandom((char *)a->keys + got,
				      sizeof(a->keys) - got, 0);

		if (n < 0 && errno != EINTR)
			util_die("no random bytes for the password cache's keys (getrandom: %s)",
				 strerror(errno));
		if (n > 0)
			got += (size_t)n;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	for (; a->nworkers < WEBAUTH_WORKERS; a->nworkers++)
		if (pthread_create(&a->workers[a->nworkers], NULL, wa_worker, a))
			util_die("cannot start a password-check thread");
	return a;
}

enum webauth_verdict webauth_check(struct webauth *a, const char *user,
				   const char *password,
				   struct webauth_job *job, void *arg)
{
	enum webauth_verdict v;
	uint64_t key[2];

	wa_key(a, user, password, key);
	pthread_mutex_lock(&a->lock);
	v = wa_cached(a, key, util_now_ns());
	if (v != WEBAUTH_PENDING)
		goto out_unlock;
	if (a->quit || a->queued >= WEBAUTH_QUEUE) {
		v = WEBAUTH_BUSY;
		goto out_unlock;
	}
	*job = (struct webauth_job){ .key = { key[0], key[1] },
				     .user = xstrdup(user),
				     .password = xstrdup(password),
				     .arg = arg,
				     .verdict = WEBAUTH_PENDING };
	/* parked before a worker can release it */
	a->hold(arg);
	if (a->tail)
		a->tail->next = job;
	else
		a->head = job;
	a->tail = job;
	a->queued++;
	pthread_cond_signal(&a->work);
out_unlock:
	pthread_mutex_unlock(&a->lock);
	return v;
}

enum webauth_verdict webauth_verdict(const struct webauth_job *job)
{
	return (enum webauth_verdict)__atomic_load_n(&job->verdict,
						     __ATOMIC_ACQUIRE);
}

void webauth_stop(struct webauth *a)
{
	struct webauth_job *left;

	pthread_mutex_lock(&a->lock);
	a->quit = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	if (!a->stopped)
		for (size_t i = 0; i < a->nworkers; i++)
			pthread_join(a->workers[i], NULL);
	a->stopped = true;
	pthread_mutex_lock(&a->lock);
	left = a->head;
	a->head = a->tail = NULL;
	a->queued = 0;
	pthread_mutex_unlock(&a->lock);
	while (left) {
		struct webauth_job *j = left;

		left = j->next;
		wa_finish(a, j, WEBAUTH_BUSY);
	}
}

void webauth_free(struct webauth *a)
{
	if (!a)
		return;
	webauth_stop(a);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->work);
	explicit_bzero(a, sizeof(*a));
	free(a);
}

unsigned long webauth_runs(struct webauth *a)
{
	unsigned long n;

	pthread_mutex_lock(&a->lock);
	n = a->runs;
	pthread_mutex_unlock(&a->lock);
	return n;
}
