// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one error-line type: a line set, returned error, NULL for a caller
 * that wants no line, lines composed from parts, and a line cut to the
 * buffer ending in "..." without a byte written past it.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "errmsg.h"
#include "suites.h"

START_TEST(test_set_returns_err)
{
	struct errmsg m;

	ck_assert_int_eq(errmsg_set(&m, -EINVAL, "bad %s: %d", "thing", 7),
			 -EINVAL);
	ck_assert_str_eq(m.text, "bad thing: 7");
	ck_assert(errmsg_isset(&m));
	/* a notice or a partial line returns 0 */
	ck_assert_int_eq(errmsg_set(&m, 0, "fine"), 0);
	ck_assert_str_eq(m.text, "fine");
	errmsg_clear(&m);
	ck_assert_str_eq(m.text, "");
	ck_assert(!errmsg_isset(&m));
}
END_TEST

START_TEST(test_null)
{
	ck_assert_int_eq(errmsg_set(NULL, -ENOENT, "dropped %d", 1), -ENOENT);
	errmsg_add(NULL, "dropped");
	errmsg_clear(NULL);
	ck_assert(!errmsg_isset(NULL));
}
END_TEST

START_TEST(test_add)
{
	struct errmsg m = { "" };

	errmsg_add(&m, "a");
	errmsg_add(&m, "%s%d", "; b", 2);
	ck_assert_str_eq(m.text, "a; b2");
	/* set replaces what was there */
	errmsg_set(&m, -EIO, "c");
	errmsg_add(&m, "d");
	ck_assert_str_eq(m.text, "cd");
}
END_TEST

/* A line longer than the buffer: ERRMSG_MAX - 1 bytes ending in "...". */
START_TEST(test_cut)
{
	struct {
		struct errmsg m;
		char after[8];
	} g;
	char long_part[ERRMSG_MAX + 50];

	memset(long_part, 'z', sizeof(long_part) - 1);
	long_part[sizeof(long_part) - 1] = '\0';
	memset(&g, 'x', sizeof(g));
	errmsg_set(&g.m, -E2BIG, "%s", long_part);
	ck_assert_uint_eq(strlen(g.m.text), ERRMSG_MAX - 1);
	ck_assert_str_eq(g.m.text + ERRMSG_MAX - 4, "...");
	ck_assert_int_eq(g.m.text[ERRMSG_MAX - 5], 'z');
	ck_assert_int_eq(g.after[0], 'x');

	/* composing past the end: cut once, then nothing more is added */
	errmsg_set(&g.m, 0, "head: ");
	errmsg_add(&g.m, "%s", long_part);
	ck_assert_uint_eq(strlen(g.m.text), ERRMSG_MAX - 1);
	ck_assert_int_eq(strncmp(g.m.text, "head: zzz", 9), 0);
	ck_assert_str_eq(g.m.text + ERRMSG_MAX - 4, "...");
	errmsg_add(&g.m, "more");
	ck_assert_uint_eq(strlen(g.m.text), ERRMSG_MAX - 1);
	ck_assert_str_eq(g.m.text + ERRMSG_MAX - 4, "...");
	ck_assert_int_eq(g.after[0], 'x');

	/* a line that just fits is not marked */
	long_part[ERRMSG_MAX - 1] = '\0';
	errmsg_set(&g.m, 0, "%s", long_part);
	ck_assert_uint_eq(strlen(g.m.text), ERRMSG_MAX - 1);
	ck_assert_int_eq(g.m.text[ERRMSG_MAX - 2], 'z');
}
END_TEST

Suite *errmsg_suite(void)
{
	Suite *s = suite_create("errmsg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_set_returns_err);
	tcase_add_test(tc, test_null);
	tcase_add_test(tc, test_add);
	tcase_add_test(tc, test_cut);
	suite_add_tcase(s, tc);
	return s;
}
