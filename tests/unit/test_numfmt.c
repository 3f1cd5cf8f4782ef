// SPDX-License-Identifier: GPL-2.0-only
/*
 * numfmt.h against printf and strtod: integers as "%" PRIu64 and
 * "%" PRId64 write them (edges, powers of 10 and their neighbours,
 * random values of every length); doubles in OpenMetrics' canonical form
 * against the form made the slow way (every precision of "%.*e" tried
 * until strtod reads it back), and read back exactly by strtod, for
 * random bit patterns, whole numbers, short decimals, subnormals, ties
 * and the specials.
 */
#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "suites.h"
#include "testlib.h"

/* got (n bytes written) is want, as printf wrote it. */
static void nf_same(const char *what, const char *want, const char *got,
		    size_t n)
{
	ck_assert_msg(!strcmp(got, want) && n == strlen(want),
		      "%s %s: got \"%s\" (%zu)", what, want, got, n);
}

static void nf_check_u64(uint64_t v)
{
	char want[NUMFMT_INT_SIZE], got[NUMFMT_INT_SIZE];

	snprintf(want, sizeof(want), "%" PRIu64, v);
	nf_same("u64", want, got, numfmt_u64(got, v));
}

static void nf_check_i64(int64_t v)
{
	char want[NUMFMT_INT_SIZE], got[NUMFMT_INT_SIZE];

	snprintf(want, sizeof(want), "%" PRId64, v);
	nf_same("i64", want, got, numfmt_i64(got, v));
}

START_TEST(test_integers)
{
	uint64_t p = 1, s = 0x9e3779b97f4a7c15ull;

	nf_check_u64(0);
	nf_check_u64(UINT64_MAX);
	nf_check_u64(UINT64_MAX - 1);
	nf_check_i64(0);
	nf_check_i64(INT64_MIN);
	nf_check_i64(INT64_MIN + 1);
	nf_check_i64(INT64_MAX);
	nf_check_i64(-1);
	for (int i = 0; i < 20; i++, p *= 10) {
		nf_check_u64(p);
		nf_check_u64(p - 1);
		nf_check_u64(p + 1);
		nf_check_i64((int64_t)p - 1);
		nf_check_i64(-(int64_t)p);
		nf_check_i64(1 - (int64_t)p);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t r = test_rand(&s);

		/* every length, not only 19 and 20 digits */
		r >>= r % 64;
		nf_check_u64(r);
		nf_check_i64((int64_t)r);
		nf_check_i64(-(int64_t)(r >> 1));
	}
}
END_TEST

/* The canonical form made the slow way: every precision tried. */
static void nf_slow(double v, char *buf, size_t len)
{
	char tmp[40], digits[24], frac[32];
	const char *p, *sign = v < 0 ? "-" : "";
	double a = fabs(v);
	int prec, nd = 0, exp;

	if (isnan(v) || isinf(v) || v == 0) {
		snprintf(buf, len, "%s",
			 isnan(v) ? "NaN" :
			 v == 0	  ? "0.0" :
			 v > 0	  ? "+Inf" :
				    "-Inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, a);
		if (strtod(tmp, NULL) == a)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, a);
	for (p = tmp; *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	exp = atoi(p + 1);
	if (exp < -4 || exp >= 6) {
		snprintf(buf, len, "%s%c%s%se%c%02d", sign, digits[0],
			 nd > 1 ? "." : "", digits + 1, exp < 0 ? '-' : '+',
			 abs(exp));
	} else if (exp < 0) {
		memset(frac, '0', (size_t)(-exp - 1));
		frac[-exp - 1] = '\0';
		snprintf(buf, len, "%s0.%s%s", sign, frac, digits);
	} else if (nd > exp + 1) {
		snprintf(buf, len, "%s%.*s.%s", sign, exp + 1, digits,
			 digits + exp + 1);
	} else {
		memset(frac, '0', (size_t)(exp + 1 - nd));
		frac[exp + 1 - nd] = '\0';
		snprintf(buf, len, "%s%s%s.0", sign, digits, frac);
	}
}

static void nf_check_double(double v)
{
	char want[64], got[NUMFMT_DOUBLE_SIZE];
	size_t n;

	nf_slow(v, want, sizeof(want));
	n = numfmt_canonical(got, v);
	ck_assert_msg(!strcmp(got, want) && n == strlen(want),
		      "%.17g: got \"%s\", want \"%s\"", v, got, want);
	if (!isnan(v))
		ck_assert_msg(strtod(got, NULL) == v,
			      "%.17g: \"%s\" reads back", v, got);
}

START_TEST(test_double_specials)
{
	char buf[NUMFMT_DOUBLE_SIZE];

	ck_assert_uint_eq(numfmt_canonical(buf, NAN), 3);
	ck_assert_str_eq(buf, "NaN");
	numfmt_canonical(buf, INFINITY);
	ck_assert_str_eq(buf, "+Inf");
	numfmt_canonical(buf, -INFINITY);
	ck_assert_str_eq(buf, "-Inf");
	numfmt_canonical(buf, 0.0);
	ck_assert_str_eq(buf, "0.0");
	numfmt_canonical(buf, -0.0);
	ck_assert_str_eq(buf, "0.0");
	/* the forms, by exponent */
	numfmt_canonical(buf, 1.5);
	ck_assert_str_eq(buf, "1.5");
	numfmt_canonical(buf, 0.0001);
	ck_assert_str_eq(buf, "0.0001");
	numfmt_canonical(buf, 0.00001);
	ck_assert_str_eq(buf, "1e-05");
	numfmt_canonical(buf, 999999);
	ck_assert_str_eq(buf, "999999.0");
	numfmt_canonical(buf, 1e6);
	ck_assert_str_eq(buf, "1e+06");
	numfmt_canonical(buf, 0.1);
	ck_assert_str_eq(buf, "0.1");
	numfmt_canonical(buf, 5.11e-7);
	ck_assert_str_eq(buf, "5.11e-07");
	numfmt_canonical(buf, -DBL_MAX);
	ck_assert_str_eq(buf, "-1.7976931348623157e+308");
	numfmt_canonical(buf, 1e100);
	ck_assert_str_eq(buf, "1e+100");
}
END_TEST

START_TEST(test_doubles)
{
	uint64_t s = 0x2545f4914f6cdd1dull;
	double p = 1;

	nf_check_double(DBL_MIN);
	nf_check_double(DBL_MAX);
	nf_check_double(DBL_TRUE_MIN);
	nf_check_double(DBL_EPSILON);
	nf_check_double(9007199254740992.0);
	nf_check_double(9007199254740991.0);
	nf_check_double(9007199254740993.0);
	nf_check_double(1.8446744073709552e19);
	for (int i = 0; i < 40; i++, p *= 10) {
		nf_check_double(p);
		nf_check_double(1 / p);
		nf_check_double(nextafter(p, 0));
		nf_check_double(nextafter(p, INFINITY));
		nf_check_double(nextafter(1 / p, 0));
		nf_check_double(nextafter(1 / p, INFINITY));
		nf_check_double(-p);
	}
	for (int i = 0; i < 60000; i++) {
		uint64_t r = test_rand(&s), bits = test_rand(&s);
		double d;

		/* any bit pattern (NaNs and infinities among them) */
		memcpy(&d, &bits, sizeof(d));
		nf_check_double(d);
		/* whole numbers of every size */
		nf_check_double((double)(r >> (r % 64)));
		/* short decimals, as bucket edges and rates are: k x 10^-j */
		nf_check_double((double)(r % 100000) /
				pow(10, (double)(r % 23)));
		/* values halfway between two 15- or 16-digit decimals */
		nf_check_double(((double)(r % 1000000000000000ull) + 0.5) *
				pow(10, (double)((int)(r % 41) - 20)));
		/* subnormals */
		bits &= 0x800fffffffffffffull;
		memcpy(&d, &bits, sizeof(d));
		nf_check_double(d);
	}
}
END_TEST

Suite *numfmt_suite(void)
{
	Suite *s = suite_create("numfmt");
	TCase *tc = tcase_create("numfmt");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_integers);
	tcase_add_test(tc, test_double_specials);
	tcase_add_test(tc, test_doubles);
	suite_add_tcase(s, tc);
	return s;
}
