// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exporter's password checks off the HTTP thread: SipHash against the
 * paper's vectors; a new password is queued (held, then released with its
 * verdict) and its verdict cached, good or bad, so the next check runs no
 * bcrypt; the same password queued many times costs one run; the queue is
 * bounded (more are BUSY at once); wrong passwords never push a good one
 * out of the cache; stopping releases every queued check.
 */
#include <check.h>
#include <crypt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "suites.h"
#include "webauth.h"
#include "webconfig.h"

/* Requests held and released, as the exporter's connections would be. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static unsigned int held, released;

static void hold(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	held++;
	pthread_mutex_unlock(&lock);
}

static void release(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	released++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

/* Waits until n requests in all were released. */
static void wait_released(unsigned int n)
{
	pthread_mutex_lock(&lock);
	while (released < n)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

/* w with the user prom, password "pw", at cost. */
static void config(struct webconfig *w, int cost)
{
	char hash[CRYPT_OUTPUT_SIZE], text[CRYPT_OUTPUT_SIZE + 64];
	struct crypt_data cd;
	struct errmsg m;

	ck_assert_ptr_nonnull(crypt_gensalt_rn("$2b$", (unsigned long)cost,
					       NULL, 0, hash, sizeof(hash)));
	memset(&cd, 0, sizeof(cd));
	ck_assert_ptr_nonnull(crypt_r("pw", hash, &cd));
	snprintf(text, sizeof(text), "basic_auth_users:\n  prom: %s\n",
		 cd.output);
	ck_assert_int_eq(webconfig_parse(text, strlen(text), NULL, w, &m), 0);
	held = released = 0;
}

/* One check to its end: the verdict, queued or cached. */
static enum webauth_verdict check(struct webauth *a, const char *user,
				  const char *pw)
{
	struct webauth_job job;
	unsigned int before = released;
	enum webauth_verdict v = webauth_check(a, user, pw, &job, NULL);

	if (v != WEBAUTH_PENDING)
		return v;
	wait_released(before + 1);
	return webauth_verdict(&job);
}

START_TEST(test_siphash)
{
	/* SipHash-2-4, key 00..0f: the paper's example (message 00..0e)
	 * and the reference vector of the empty message */
	uint64_t k[2] = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };
	unsigned char m[15];

	for (int i = 0; i < 15; i++)
		m[i] = (unsigned char)i;
	ck_assert_uint_eq(webauth_siphash(k, m, 15), 0xa129ca6149be45e5ull);
	ck_assert_uint_eq(webauth_siphash(k, m, 0), 0x726fdb47dd0e0e31ull);
}
END_TEST

START_TEST(test_cached)
{
	struct webconfig w;
	struct webauth *a;

	config(&w, 4);
	a = webauth_new(&w, hold, release);
	ck_assert_int_eq(check(a, "prom", "pw"), WEBAUTH_OK);
	ck_assert_uint_eq(held, 1);
	ck_assert_uint_eq(webauth_runs(a), 1);
	ck_assert_int_eq(check(a, "prom", "pw"), WEBAUTH_OK);
	ck_assert_int_eq(check(a, "prom", "pW"), WEBAUTH_DENIED);
	ck_assert_int_eq(check(a, "prom", "pW"), WEBAUTH_DENIED);
	ck_assert_int_eq(check(a, "nobody", "pw"), WEBAUTH_DENIED);
	ck_assert_int_eq(check(a, "nobody", "pw"), WEBAUTH_DENIED);
	/* user and password are not mixed up: "prom\0pw" only */
	ck_assert_int_eq(check(a, "promp", "w"), WEBAUTH_DENIED);
	ck_assert_uint_eq(webauth_runs(a), 4);
	ck_assert_uint_eq(held, 4);
	ck_assert_uint_eq(released, 4);
	/* a flood of wrong passwords fills the bad table many times over;
	 * the good verdict stays */
	for (int i = 0; i < WEBAUTH_BAD + 40; i++) {
		char pw[16];

		snprintf(pw, sizeof(pw), "x%d", i);
		ck_assert_int_eq(check(a, "prom", pw), WEBAUTH_DENIED);
	}
	ck_assert_uint_eq(webauth_runs(a), 4 + WEBAUTH_BAD + 40);
	ck_assert_int_eq(check(a, "prom", "pw"), WEBAUTH_OK);
	ck_assert_uint_eq(webauth_runs(a), 4 + WEBAUTH_BAD + 40);
	webauth_free(a);
	webconfig_free(&w);
}
END_TEST

/* Many checks at once, at cost 8 (milliseconds each): the same password
 * queued WEBAUTH_QUEUE times is one bcrypt run; distinct ones past the queue's
 * bound are BUSY at once; all that were queued are released. */
START_TEST(test_queue)
{
	static struct webauth_job jobs[WEBAUTH_QUEUE + 20];
	unsigned int pending = 0, busy = 0;
	struct webconfig w;
	struct webauth *a;

	config(&w, 8);
	a = webauth_new(&w, hold, release);
	for (int i = 0; i < WEBAUTH_QUEUE; i++)
		ck_assert_int_eq(webauth_check(a, "prom", "same", &jobs[i],
					       NULL),
				 WEBAUTH_PENDING);
	wait_released(WEBAUTH_QUEUE);
	for (int i = 0; i < WEBAUTH_QUEUE; i++)
		ck_assert_int_eq(webauth_verdict(&jobs[i]), WEBAUTH_DENIED);
	ck_assert_uint_eq(webauth_runs(a), 1);

	for (int i = 0; i < WEBAUTH_QUEUE + 20; i++) {
		char pw[16];
		enum webauth_verdict v;

		snprintf(pw, sizeof(pw), "q%d", i);
		v = webauth_check(a, "prom", pw, &jobs[i], NULL);
		ck_assert(v == WEBAUTH_PENDING || v == WEBAUTH_BUSY);
		pending += v == WEBAUTH_PENDING;
		busy += v == WEBAUTH_BUSY;
	}
	/* the queue, and the one a worker may have taken already */
	ck_assert_uint_le(pending, WEBAUTH_QUEUE + WEBAUTH_WORKERS);
	ck_assert_uint_ge(pending, WEBAUTH_QUEUE);
	ck_assert_uint_eq(busy, WEBAUTH_QUEUE + 20 - pending);
	ck_assert_uint_eq(held, WEBAUTH_QUEUE + pending);
	wait_released(WEBAUTH_QUEUE + pending);
	webauth_free(a);
	webconfig_free(&w);
}
END_TEST

/* Stopping with checks queued releases each (BUSY unless checked). */
START_TEST(test_stop)
{
	static struct webauth_job jobs[WEBAUTH_QUEUE];
	unsigned int busy = 0;
	struct webconfig w;
	struct webauth *a;

	config(&w, 8);
	a = webauth_new(&w, hold, release);
	for (int i = 0; i < WEBAUTH_QUEUE; i++) {
		char pw[16];

		snprintf(pw, sizeof(pw), "s%d", i);
		ck_assert_int_eq(webauth_check(a, "prom", pw, &jobs[i], NULL),
				 WEBAUTH_PENDING);
	}
	webauth_stop(a);
	ck_assert_uint_eq(released, WEBAUTH_QUEUE);
	for (int i = 0; i < WEBAUTH_QUEUE; i++)
		busy += webauth_verdict(&jobs[i]) == WEBAUTH_BUSY;
	ck_assert_uint_ge(busy, WEBAUTH_QUEUE - WEBAUTH_WORKERS);
	ck_assert_int_eq(check(a, "prom", "pw"), WEBAUTH_BUSY);
	webauth_free(a);
	webconfig_free(&w);
}
END_TEST

Suite *webauth_suite(void)
{
	Suite *s = suite_create("webauth");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_siphash);
	tcase_add_test(tc, test_cached);
	tcase_add_test(tc, test_queue);
	tcase_add_test(tc, test_stop);
	suite_add_tcase(s, tc);
	return s;
}
