// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connection deadlines on socket pairs (the watched end is the server's;
 * the other end sees EOF once it is cut): the header deadline, no header
 * deadline once the header is in but the answer's, the header deadline
 * again after an answer, the oldest waiting connection cut for a new one
 * at evict_at, and the open-file limit raised or obeyed.
 */
#include <check.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connwatch.h"
#include "suites.h"

#define MS 1000000ull

/* A connected pair: [0] the server's end, [1] the client's. */
static void pair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
			 0);
}

/* Whether the client end sees EOF within ms milliseconds. */
static bool cut_within(int client, int ms)
{
	struct pollfd p = { .fd = client, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(client, &c, 1) == 0;
}

static void close_pair(struct connwatch *w, struct connwatch_conn *c, int sv[2])
{
	connwatch_del(w, c);
	close(sv[0]);
	close(sv[1]);
}

START_TEST(test_header_deadline)
{
	struct connwatch *w = connwatch_new(100 * MS, 60000 * MS, 100);
	struct connwatch_conn *c;
	int sv[2];

	pair(sv);
	c = connwatch_add(w, sv[0]);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(connwatch_count(w), 1);
	ck_assert(!cut_within(sv[1], 30));
	ck_assert(cut_within(sv[1], 1000));
	ck_assert_uint_eq(connwatch_count(w), 0);
	close_pair(w, c, sv);
	connwatch_free(w);
}
END_TEST

/* Header in: only the answer's deadline; answered: the header's again. */
START_TEST(test_phases)
{
	struct connwatch *w = connwatch_new(100 * MS, 400 * MS, 100);
	struct connwatch_conn *c;
	int sv[2];

	pair(sv);
	c = connwatch_add(w, sv[0]);
	connwatch_header(w, c);
	ck_assert(!cut_within(sv[1], 200));
	ck_assert(cut_within(sv[1], 1000));
	close_pair(w, c, sv);

	pair(sv);
	c = connwatch_add(w, sv[0]);
	connwatch_header(w, c);
	connwatch_answered(w, c);
	ck_assert(cut_within(sv[1], 300));
	close_pair(w, c, sv);
	connwatch_free(w);
}
END_TEST

/* At evict_at, a new connection cuts the one waiting longest for its
 * header; one whose header is in is never cut for room. */
START_TEST(test_evict)
{
	struct connwatch *w = connwatch_new(60000 * MS, 60000 * MS, 2);
	struct connwatch_conn *c[4];
	int sv[4][2];

	for (int i = 0; i < 4; i++)
		pair(sv[i]);
	c[0] = connwatch_add(w, sv[0][0]);
	connwatch_header(w, c[0]);
	c[1] = connwatch_add(w, sv[1][0]);
	c[2] = connwatch_add(w, sv[2][0]);
	ck_assert(cut_within(sv[1][1], 100));
	ck_assert(!cut_within(sv[0][1], 0));
	ck_assert(!cut_within(sv[2][1], 0));
	ck_assert_uint_eq(connwatch_count(w), 2);
	c[3] = connwatch_add(w, sv[3][0]);
	ck_assert(cut_within(sv[2][1], 100));
	ck_assert(!cut_within(sv[3][1], 0));
	ck_assert(!cut_within(sv[0][1], 0));
	for (int i = 0; i < 4; i++)
		close_pair(w, c[i], sv[i]);
	ck_assert_uint_eq(connwatch_count(w), 0);
	connwatch_free(w);
}
END_TEST

/* The soft open-file limit is raised to fit; where the hard one is low,
 * fewer connections fit (the test runs in its own process). */
START_TEST(test_limit)
{
	struct rlimit rl;
	unsigned int n;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 5000)
		return; /* nothing to raise toward */
	rl.rlim_cur = 300;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_eq(connwatch_limit(2048, 32, 64), 2048);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_ge(rl.rlim_cur, 2 * 2048 + 64);
	rl.rlim_cur = rl.rlim_max = 400;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	n = connwatch_limit(2048, 32, 64);
	ck_assert_uint_lt(n, 2048);
	ck_assert_uint_ge(n, 100);
	ck_assert_uint_le(2 * n + 64, 400);
	rl.rlim_cur = rl.rlim_max = 100;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_eq(connwatch_limit(2048, 32, 64), 32);
}
END_TEST

Suite *connwatch_suite(void)
{
	Suite *s = suite_create("connwatch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_header_deadline);
	tcase_add_test(tc, test_phases);
	tcase_add_test(tc, test_evict);
	tcase_add_test(tc, test_limit);
	suite_add_tcase(s, tc);
	return s;
}
