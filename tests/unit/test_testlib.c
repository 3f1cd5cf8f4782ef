// SPDX-License-Identifier: GPL-2.0-only
/*
 * The suites' skip helper itself: a skip says SKIP and is listed in the
 * runner's summary; with KVMSTAT_REQUIRE_KVM=1 it fails the check. Each
 * case runs an inner runner of its own in a child process (no fork
 * inside), with its own skip record, so that nothing it does reaches the
 * outer run's counts.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"
#include "testlib.h"

START_TEST(inner_skip)
{
	test_skip("inner_skip", "no %s here", "widget");
}
END_TEST

/* Runs inner_skip in a child with KVMSTAT_REQUIRE_KVM set to req (NULL:
 * unset); returns the child's failed count, its output in out. */
static int run_inner(const char *req, char *out, size_t outlen)
{
	int p[2], status;
	pid_t pid;
	ssize_t n;
	size_t len = 0;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		Suite *s = suite_create("inner");
		TCase *tc = tcase_create("inner");
		SRunner *sr;
		int failed;

		close(p[0]);
		dup2(p[1], STDOUT_FILENO);
		/* the outer run's selection would leave the inner suite out */
		unsetenv("CK_RUN_SUITE");
		unsetenv("CK_RUN_CASE");
		unsetenv("CK_INCLUDE_TAGS");
		unsetenv("CK_EXCLUDE_TAGS");
		if (req)
			setenv("KVMSTAT_REQUIRE_KVM", req, 1);
		else
			unsetenv("KVMSTAT_REQUIRE_KVM");
		tcase_add_test(tc, inner_skip);
		suite_add_tcase(s, tc);
		sr = srunner_create(s);
		srunner_set_fork_status(sr, CK_NOFORK);
		test_skip_init();
		srunner_run_all(sr, CK_SILENT);
		failed = srunner_ntests_failed(sr);
		printf("summary %u\n", test_skip_summary(stdout));
		fflush(stdout);
		_exit(failed);
	}
	close(p[1]);
	while (len + 1 < outlen &&
	       (n = read(p[0], out + len, outlen - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(test_skip_says_and_counts)
{
	char out[4096];

	ck_assert_int_eq(run_inner(NULL, out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "SKIP inner_skip: no widget here\n"),
		      "output: %s", out);
	ck_assert_msg(strstr(out, "1 check skipped"), "output: %s", out);
	ck_assert_msg(strstr(out, "summary 1\n"), "output: %s", out);
	/* any value but 1 still skips */
	ck_assert_int_eq(run_inner("0", out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "summary 1\n"), "output: %s", out);
}
END_TEST

START_TEST(test_skip_fails_when_required)
{
	char out[4096];

	ck_assert_int_eq(run_inner("1", out, sizeof(out)), 1);
	ck_assert_msg(!strstr(out, "SKIP"), "output: %s", out);
	ck_assert_msg(strstr(out, "summary 0\n"), "output: %s", out);
}
END_TEST

Suite *testlib_suite(void)
{
	Suite *s = suite_create("testlib");
	TCase *tc = tcase_create("skip");

	tcase_add_test(tc, test_skip_says_and_counts);
	tcase_add_test(tc, test_skip_fails_when_required);
	suite_add_tcase(s, tc);
	return s;
}
