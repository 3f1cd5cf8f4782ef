// SPDX-License-Identifier: GPL-2.0-only
/*
 * Numbers into text without a printf per number (numfmt.h). Integers go
 * two digits at a time from a table. A double's shortest round-trip
 * digits come from one "%.16e" (its 17 correctly rounded digits) and one
 * or two strtod() checks instead of trying every precision: a decimal of
 * at most 15 digits that reads back as a normal double v lies within half
 * an ulp of v (at most v x 2^-53), much closer than half a unit of the
 * 15th digit (at least v x 5e-16), so it is v rounded to 15 digits with
 * its trailing zeros dropped; only that one candidate needs checking.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

static const char numfmt_pairs[] = "00010203040506070809"
				   "10111213141516171819"
				   "20212223242526272829"
				   "30313233343536373839"
				   "40414243444546474849"
				   "50515253545556575859"
				   "60616263646566676869"
				   "70717273747576777879"
				   "80818283848586878889"
				   "90919293949596979899";

size_t numfmt_u64(char *buf, uint64_t v)
{
	char d[NUMFMT_INT_SIZE], *p = d + sizeof(d);
	size_t n;

	while (v >= 100) {
		unsigned int k = (unsigned int)(v % 100) * 2;

		v /= 100;
		*--p = numfmt_pairs[k + 1];
		*--p = numfmt_pairs[k];
	}
	if (v >= 10) {
		*--p = numfmt_pairs[v * 2 + 1];
		*--p = numfmt_pairs[v * 2];
	} else {
		*--p = (char)('0' + v);
	}
	n = (size_t)(d + sizeof(d) - p);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return n;
}

size_t numfmt_i64(char *buf, int64_t v)
{
	if (v >= 0)
		return numfmt_u64(buf, (uint64_t)v);
	buf[0] = '-';
	return 1 + numfmt_u64(buf + 1, 0 - (uint64_t)v);
}

/*
 * The digits of v (> 0, finite) at precision prec as "%.*e" writes them,
 * into digits (prec of them, NUL-terminated); returns the exponent.
 */
static int numfmt_printf_digits(double v, int prec, char *digits)
{
	char tmp[40];
	const char *p;
	int nd = 0;

	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
	for (p = tmp; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	digits[nd] = '\0';
	return atoi(p + 1);
}

/* Whether digits (nd of them, first at 10^exp) read back as v. */
static bool numfmt_reads_back(const char *digits, int nd, int exp, double v)
{
	char tmp[48];
	int o = 0;

	tmp[o++] = digits[0];
	tmp[o++] = '.';
	memcpy(tmp + o, digits + 1, (size_t)(nd - 1));
	o += nd - 1;
	snprintf(tmp + o, sizeof(tmp) - (size_t)o, "e%d", exp);
	return strtod(tmp, NULL) == v;
}

/*
 * digits (17 of them, first at 10^*exp: v rounded to 17 digits) rounded
 * to prec digits, in place, *exp moved on a carry ("9.99" to "1.00e+1");
 * false when the 17 digits cannot tell (the rest is exactly half a unit
 * of the last kept digit: v itself may be on either side of it).
 */
static bool numfmt_round(char *digits, int prec, int *exp)
{
	const char *rest = digits + prec;
	bool up;

	if (rest[0] == '5') {
		/* "50" with 17 digits: v was anywhere in [49.5, 50.5] */
		bool zeros = true;

		for (const char *p = rest + 1; *p; p++)
			zeros &= *p == '0';
		if (zeros)
			return false;
	}
	up = rest[0] >= '5';
	digits[prec] = '\0';
	for (int i = prec - 1; up && i >= 0; i--) {
		if (digits[i] != '9') {
			digits[i]++;
			up = false;
		} else {
			digits[i] = '0';
		}
	}
	if (up) {
		digits[0] = '1';
		(*exp)++;
	}
	return true;
}

/* Drops trailing zeros (one digit stays); returns how many are left. */
static int numfmt_trim(char *digits)
{
	int nd = (int)strlen(digits);

	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	return nd;
}

/*
 * The shortest digits (no trailing zeros) of v (> 0, finite) that read
 * back as v, those "%.*e" writes at the first precision that does, into
 * digits; returns the exponent of the first.
 */
static int numfmt_shortest(double v, char *digits)
{
	char d17[24], d[24];
	int exp17, exp, nd;

	/* a whole number below 2^53: its digits (every shorter rounding is
	 * another whole number, at least 1 away: not v) */
	if (v < 9007199254740992.0 && v == (double)(uint64_t)v) {
		nd = (int)numfmt_u64(digits, (uint64_t)v);
		exp = nd - 1;
		numfmt_trim(digits);
		return exp;
	}
	if (v < DBL_MIN) {
		/* subnormal: fewer digits than 15 may not read back; try
		 * every precision */
		for (int prec = 1; prec < 17; prec++) {
			exp = numfmt_printf_digits(v, prec, digits);
			if (numfmt_reads_back(digits, prec, exp, v)) {
				numfmt_trim(digits);
				return exp;
			}
		}
		exp = numfmt_printf_digits(v, 17, digits);
		numfmt_trim(digits);
		return exp;
	}
	exp17 = numfmt_printf_digits(v, 17, d17);
	for (int prec = 15; prec <= 16; prec++) {
		memcpy(d, d17, sizeof(d17));
		exp = exp17;
		if (!numfmt_round(d, prec, &exp))
			exp = numfmt_printf_digits(v, prec, d);
		nd = numfmt_trim(d);
		if (numfmt_reads_back(d, nd, exp, v)) {
			memcpy(digits, d, (size_t)nd + 1);
			return exp;
		}
	}
	memcpy(digits, d17, sizeof(d17));
	numfmt_trim(digits);
	return exp17;
}

size_t numfmt_canonical(char *buf, double v)
{
	char digits[24];
	int exp, nd, o = 0;

	if (isnan(v) || isinf(v) || v == 0) {
		const char *s = isnan(v) ? "NaN" :
				v == 0	 ? "0.0" :
				v > 0	 ? "+Inf" :
					   "-Inf";

		strcpy(buf, s);
		return strlen(s);
	}
	if (v < 0)
		buf[o++] = '-';
	exp = numfmt_shortest(v < 0 ? -v : v, digits);
	nd = (int)strlen(digits);
	if (exp < -4 || exp >= 6) {
		/* d[.ddd]e+XX, two exponent digits at least */
		int a = exp < 0 ? -exp : exp;

		buf[o++] = digits[0];
		if (nd > 1) {
			buf[o++] = '.';
			memcpy(buf + o, digits + 1, (size_t)(nd - 1));
			o += nd - 1;
		}
		buf[o++] = 'e';
		buf[o++] = exp < 0 ? '-' : '+';
		if (a < 10)
			buf[o++] = '0';
		o += (int)numfmt_u64(buf + o, (uint64_t)a);
		return (size_t)o;
	}
	if (exp < 0) {
		/* 0.000ddd */
		buf[o++] = '0';
		buf[o++] = '.';
		memset(buf + o, '0', (size_t)(-exp - 1));
		o += -exp - 1;
		memcpy(buf + o, digits, (size_t)nd);
		o += nd;
	} else if (nd > exp + 1) {
		/* ddd.ddd */
		memcpy(buf + o, digits, (size_t)exp + 1);
		o += exp + 1;
		buf[o++] = '.';
		memcpy(buf + o, digits + exp + 1, (size_t)(nd - exp - 1));
		o += nd - exp - 1;
	} else {
		/* ddd000.0 */
		memcpy(buf + o, digits, (size_t)nd);
		o += nd;
		memset(buf + o, '0', (size_t)(exp + 1 - nd));
		o += exp + 1 - nd;
		buf[o++] = '.';
		buf[o++] = '0';
	}
	buf[o] = '\0';
	return (size_t)o;
}
