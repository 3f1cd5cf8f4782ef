/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Basic-auth verdicts for the exporter, kept off its HTTP thread. A bcrypt
 * run takes tens of milliseconds, so webauth_check answers from a cache of
 * recent verdicts where it can (good ones kept while they are used, bad
 * ones for a minute, each keyed by a keyed hash of user and password) and
 * otherwise queues the check for a worker thread, behind at most
 * WEBAUTH_QUEUE others (more are refused at once as busy). The caller
 * parks the request meanwhile: hold(arg) is called, under webauth's lock,
 * before the job can reach a worker, and release(arg) once its verdict is
 * in. Passwords are kept only while queued; a user who does not exist
 * costs a bcrypt run as one who does (webconfig_check).
 *
 *	v = webauth_check(a, user, password, &req->job, req);
 *	if (v == WEBAUTH_PENDING)
 *		return;		(hold parked it; release will wake it)
 *	...			(later: v = webauth_verdict(&req->job))
 */
#ifndef KVMSTAT_WEBAUTH_H
#define KVMSTAT_WEBAUTH_H

#include <stddef.h>
#include <stdint.h>

struct webconfig;

#define WEBAUTH_WORKERS 1 /* bcrypt threads: one core at most */
#define WEBAUTH_QUEUE \
	8		    /* checks waiting for a worker: at cost
			     * 10, 0.6 s for the last */
#define WEBAUTH_GOOD 64	    /* good verdicts kept */
#define WEBAUTH_BAD 256	    /* bad verdicts kept */
#define WEBAUTH_GOOD_S 900u /* a good verdict unused this long goes */
#define WEBAUTH_BAD_S 60u   /* a bad verdict goes after this long */

enum webauth_verdict {
	WEBAUTH_OK,
	WEBAUTH_DENIED,
	WEBAUTH_BUSY,	 /* the queue is full, or webauth is stopping */
	WEBAUTH_PENDING, /* queued: release(arg) comes with the verdict */
};

/* One queued check, in the caller's memory; webauth never touches it
 * after calling release(arg). */
struct webauth_job {
	struct webauth_job *next;
	uint64_t key[2];       /* the keyed hash of user and password */
	char *user, *password; /* copies, wiped once checked */
	void *arg;	       /* for hold and release */
	int verdict;	       /* enum webauth_verdict, read atomically */
};

struct webauth;

/*
 * Starts the workers for the users of wc (which must outlive the result).
 * hold and release park and wake a caller's request; release is called
 * from a worker thread.
 */
struct webauth *webauth_new(const struct webconfig *wc, void (*hold)(void *),
			    void (*release)(void *));
/*
 * The verdict on user and password: OK or DENIED from the cache, BUSY, or
 * PENDING when job (filled here) was queued, arg held, and release(arg)
 * will follow.
 */
enum webauth_verdict webauth_check(struct webauth *a, const char *user,
				   const char *password,
				   struct webauth_job *job, void *arg);
/* A queued job's verdict, once released. */
enum webauth_verdict webauth_verdict(const struct webauth_job *job);
/* Stops the workers and releases every queued job as BUSY; later checks
 * are BUSY or from the cache. */
void webauth_stop(struct webauth *a);
/* Stops if needed and frees a (NULL is fine). */
void webauth_free(struct webauth *a);
/* bcrypt runs so far (for tests and benchmarks). */
unsigned long webauth_runs(struct webauth *a);
/* SipHash-2-4 of len bytes at m under the 128-bit key k (the cache's
 * hash; public for its test vectors). */
uint64_t webauth_siphash(const uint64_t k[2], const void *m, size_t len);

#endif
