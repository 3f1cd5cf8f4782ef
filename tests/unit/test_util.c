// SPDX-License-Identifier: GPL-2.0-only
/*
 * The allocation policy (util.h): an allocation that fails ends the
 * program with "kvmstat: out of memory ..." and status 1, after the fatal
 * hook on the main thread, and without it on another thread (the
 * exporter's HTTP thread), where the hook must not touch the terminal.
 * Each case dies in a child process whose stderr the check reads.
 */
#include <check.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <limits.h>

#include "strbuf.h"
#include "suites.h"
#include "util.h"

/* The hook says it ran, in one write as a terminal restore would. */
static void ut_hook(void)
{
	static const char said[] = "hook ran\n";
	ssize_t n = write(STDERR_FILENO, said, sizeof(said) - 1);

	(void)n;
}

static void ut_alloc_huge(void)
{
	void *p = xmalloc(SIZE_MAX);

	/* not reached */
	free(p);
}

static void *ut_thread(void *arg)
{
	(void)arg;
	ut_alloc_huge();
	return NULL;
}

static void ut_die_on_main(void)
{
	ut_alloc_huge();
}

static void ut_die_on_thread(void)
{
	pthread_t t;

	pthread_create(&t, NULL, ut_thread, NULL);
	pthread_join(t, NULL);
}

static void ut_realloc_huge(void)
{
	/* kept reachable: the block is still ours when the program ends */
	static void *volatile keep;

	keep = xmalloc(16);
	keep = xrealloc(keep, SIZE_MAX);
}

/* Drops the lines a sanitizer adds ("==PID==WARNING: ... failed to
 * allocate"), leaving what kvmstat wrote. */
static void ut_drop_sanitizer_lines(char *out)
{
	char *line = out, *w = out;

	while (*line) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);

		if (strncmp(line, "==", 2)) {
			memmove(w, line, n);
			w += n;
		}
		line += n;
	}
	*w = '\0';
}

/* Runs fn in a child with the hook set; its exit status and stderr. */
static int ut_die_in_child(void (*fn)(void), char *out, size_t len)
{
	int pfd[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[0]);
		util_set_fatal_hook(ut_hook);
		fn();
		_exit(99); /* the allocation did not end the program */
	}
	close(pfd[1]);
	for (;;) {
		char drop[256];

		/* all of it, so the child never writes to a closed pipe */
		n = got + 1 < len ? read(pfd[0], out + got, len - 1 - got) :
				    read(pfd[0], drop, sizeof(drop));
		if (n <= 0)
			break;
		if (got + 1 < len)
			got += (size_t)n;
	}
	out[got] = '\0';
	ut_drop_sanitizer_lines(out);
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "child ended by signal %d",
		      WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* On the main thread: the hook first (the terminal back), then the line. */
START_TEST(test_oom_main_thread)
{
	char out[512], want[128];

	ck_assert_int_eq(ut_die_in_child(ut_die_on_main, out, sizeof(out)), 1);
	snprintf(want, sizeof(want),
		 "hook ran\nkvmstat: out of memory allocating %zu bytes\n",
		 SIZE_MAX);
	ck_assert_str_eq(out, want);

	ck_assert_int_eq(ut_die_in_child(ut_realloc_huge, out, sizeof(out)), 1);
	ck_assert_str_eq(out, want);
}
END_TEST

/* On another thread: the line alone, the hook never run. */
START_TEST(test_oom_other_thread)
{
	char out[512], want[128];

	ck_assert_int_eq(ut_die_in_child(ut_die_on_thread, out, sizeof(out)), 1);
	snprintf(want, sizeof(want),
		 "kvmstat: out of memory allocating %zu bytes\n", SIZE_MAX);
	ck_assert_str_eq(out, want);
}
END_TEST

/* A formatted allocation that succeeds, through the va_list form too. */
static char *ut_vformat(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

START_TEST(test_asprintf)
{
	char *a = xasprintf("%s-%d", "x", 42), *b = ut_vformat("%05d", 7);

	ck_assert_str_eq(a, "x-42");
	ck_assert_str_eq(b, "00007");
	free(a);
	free(b);
}
END_TEST

/* xgrow_index grows only past the end, keeps what was there and fills
 * the new elements' bytes. */
START_TEST(test_grow_index)
{
	size_t n = 0;
	int *v = xgrow_index(NULL, &n, 3, sizeof(*v), 0xff);

	ck_assert_uint_eq(n, 67);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(v[i], -1);
	v[5] = 42;
	ck_assert_ptr_eq(xgrow_index(v, &n, 66, sizeof(*v), 0), v);
	ck_assert_uint_eq(n, 67);
	v = xgrow_index(v, &n, 67, sizeof(*v), 0);
	ck_assert_uint_eq(n, 131);
	ck_assert_int_eq(v[5], 42);
	ck_assert_int_eq(v[66], -1);
	for (size_t i = 67; i < n; i++)
		ck_assert_int_eq(v[i], 0);
	free(v);
}
END_TEST

/* strbuf_add_int writes what printf's "%*lld" writes, sep first. */
/* Words of a space-separated list: runs of spaces, ends, none. */
START_TEST(test_next_word)
{
	const char *p = "  tracepoint statsfd   qmp ", *w;
	const char *want[] = { "tracepoint", "statsfd", "qmp" };
	size_t n, i = 0;

	while ((w = util_next_word(&p, &n))) {
		ck_assert_uint_lt(i, 3);
		ck_assert_uint_eq(n, strlen(want[i]));
		ck_assert(!strncmp(w, want[i], n));
		i++;
	}
	ck_assert_uint_eq(i, 3);
	p = NULL;
	ck_assert_ptr_null(util_next_word(&p, &n));
	p = "   ";
	ck_assert_ptr_null(util_next_word(&p, &n));
}
END_TEST

START_TEST(test_add_int)
{
	static const long long v[] = { 0,	   7,	      -7,
				       42,	   999999999, 1000000000,
				       -123456789, LLONG_MAX, LLONG_MIN,
				       -1 };
	static const int w[] = { 0, 1, 9, 12 };
	struct strbuf b;
	char want[64];

	strbuf_init(&b);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (size_t j = 0; j < sizeof(w) / sizeof(w[0]); j++) {
			strbuf_reset(&b);
			strbuf_add(&b, "x");
			strbuf_add_int(&b, j % 2 ? ',' : ' ', w[j], v[i]);
			snprintf(want, sizeof(want), "x%c%*lld",
				 j % 2 ? ',' : ' ', w[j], v[i]);
			ck_assert_str_eq(b.s, want);
			ck_assert_uint_eq(b.len, strlen(want));
		}
	}
	strbuf_reset(&b);
	strbuf_add_int(&b, 0, 3, 5);
	ck_assert_str_eq(b.s, "  5");
	strbuf_free(&b);
}
END_TEST

Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("alloc");

	tcase_add_test(tc, test_oom_main_thread);
	tcase_add_test(tc, test_oom_other_thread);
	tcase_add_test(tc, test_asprintf);
	tcase_add_test(tc, test_add_int);
	tcase_add_test(tc, test_next_word);
	tcase_add_test(tc, test_grow_index);
	suite_add_tcase(s, tc);
	return s;
}
