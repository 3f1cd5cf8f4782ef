// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reading type the providers sum values in: nothing read, a value, or
 * unreadable; sums and peaks over contributors; a failure that no later
 * value hides.
 */
#include <check.h>

#include "reading.h"
#include "suites.h"

START_TEST(test_add)
{
	struct reading r[3];

	readings_clear(r, 3);
	readings_clear(NULL, 0);
	ck_assert(!reading_ok(&r[0]));
	ck_assert_int_eq(r[0].state, READING_NONE);
	/* the first value stands, the next add; a zero is a value */
	reading_add(&r[0], 0, FIELD_CUMULATIVE);
	ck_assert(reading_ok(&r[0]));
	ck_assert_uint_eq(r[0].value, 0);
	reading_add(&r[0], 5, FIELD_CUMULATIVE);
	reading_add(&r[0], 7, FIELD_CUMULATIVE);
	ck_assert_uint_eq(r[0].value, 12);
	reading_add(&r[1], 4, FIELD_INSTANT);
	reading_add(&r[1], 3, FIELD_INSTANT);
	ck_assert_uint_eq(r[1].value, 7);
	/* peaks keep the highest */
	reading_add(&r[2], 4, FIELD_PEAK);
	reading_add(&r[2], 9, FIELD_PEAK);
	reading_add(&r[2], 2, FIELD_PEAK);
	ck_assert_uint_eq(r[2].value, 9);
	readings_clear(r, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(r[i].state, READING_NONE);
}
END_TEST

/* One failed contributor leaves no value, before or after the others. */
START_TEST(test_unreadable)
{
	struct reading r = { 0 }, s = { 0 };

	reading_add(&r, 5, FIELD_CUMULATIVE);
	reading_fail(&r);
	reading_add(&r, 6, FIELD_CUMULATIVE);
	ck_assert(!reading_ok(&r));
	ck_assert_int_eq(r.state, READING_UNREADABLE);
	reading_fail(&s);
	reading_add(&s, 6, FIELD_PEAK);
	ck_assert_int_eq(s.state, READING_UNREADABLE);
}
END_TEST

/* Parts fold into a whole: values add (peaks: the highest), nothing read
 * adds nothing, a failure spreads. */
START_TEST(test_fold)
{
	struct reading whole = { 0 }, none = { 0 };
	struct reading a = { 3, READING_OK }, b = { 8, READING_OK };
	struct reading bad = { 99, READING_UNREADABLE };

	reading_fold(&whole, &none, FIELD_CUMULATIVE);
	ck_assert_int_eq(whole.state, READING_NONE);
	reading_fold(&whole, &a, FIELD_CUMULATIVE);
	reading_fold(&whole, &b, FIELD_CUMULATIVE);
	reading_fold(&whole, &none, FIELD_CUMULATIVE);
	ck_assert(reading_ok(&whole));
	ck_assert_uint_eq(whole.value, 11);
	whole = (struct reading){ 0 };
	reading_fold(&whole, &b, FIELD_PEAK);
	reading_fold(&whole, &a, FIELD_PEAK);
	ck_assert_uint_eq(whole.value, 8);
	reading_fold(&whole, &bad, FIELD_PEAK);
	reading_fold(&whole, &b, FIELD_PEAK);
	ck_assert_int_eq(whole.state, READING_UNREADABLE);
}
END_TEST

Suite *reading_suite(void)
{
	Suite *s = suite_create("reading");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_add);
	tcase_add_test(tc, test_unreadable);
	tcase_add_test(tc, test_fold);
	suite_add_tcase(s, tc);
	return s;
}
