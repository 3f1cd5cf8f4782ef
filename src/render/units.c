// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit formatting for the binary stats' self-described values. A value is
 * first turned into its unit (seconds, bytes, a count) with the field's
 * base and exponent, then scaled to the largest unit it fills and written
 * whole or with three significant digits, as units.h describes.
 */
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>

#include "units.h"

unsigned int units_locale_flags(void)
{
	/* a locale object of its own: the process's (the C locale, or
	 * the monitor's LC_CTYPE) stays as it is */
	locale_t loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
	const char *cs;
	bool utf8;

	/* a locale the system does not have: setlocale would fall back
	 * to C, and so does this */
	if (loc == (locale_t)0)
		return UNITS_ASCII;
	cs = nl_langinfo_l(CODESET, loc);
	utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "UTF8"));
	freelocale(loc);
	return utf8 ? 0 : UNITS_ASCII;
}

/* Kept free of libm: the binary links none. */
static double units_dabs(double x)
{
	return x < 0 ? -x : x;
}

/* base^e as an exact product of integers where the double holds it. */
static double units_power(unsigned int base, int e)
{
	double v = 1.0;

	for (int i = 0; i < (e < 0 ? -e : e); i++)
		v *= base;
	return v;
}

/* raw x base^e, dividing for negative e so that whole results stay whole
 * (1500 x 10^-3 is exactly 1.5). */
static double units_apply(double raw, unsigned int base, int e)
{
	return e < 0 ? raw / units_power(base, e) : raw * units_power(base, e);
}

static unsigned int units_field_base(const struct field_info *f)
{
	return f->base == 2 ? 2 : 10;
}

double units_scale(const struct field_info *f)
{
	return units_apply(1.0, units_field_base(f), f->exponent);
}

/* A raw time of f in nanoseconds. */
static double units_to_ns(const struct field_info *f, double raw)
{
	if (units_field_base(f) == 10)
		return units_apply(raw, 10, f->exponent + 9);
	return units_apply(raw, 2, f->exponent) * 1e9;
}

/*
 * Writes x followed by the suffix, whole when it is a whole number and
 * otherwise with three significant digits.
 */
static const char *units_put_number(double x, const char *suffix, char *buf,
				    size_t len)
{
	double a = units_dabs(x);
	const char *sep = *suffix ? " " : "";

	if (a < 1e18 && a == (double)(uint64_t)a)
		snprintf(buf, len, "%.0f%s%s", x, sep, suffix);
	else if (a < 9.995)
		snprintf(buf, len, "%.2f%s%s", x, sep, suffix);
	else if (a < 99.95)
		snprintf(buf, len, "%.1f%s%s", x, sep, suffix);
	else
		snprintf(buf, len, "%.0f%s%s", x, sep, suffix);
	return buf;
}

/*
 * Scales x by step until it is below the next unit (counting the rounding
 * of three significant digits, so 999.7 ns reads "1.00 µs"), then writes it
 * with that unit's suffix.
 */
static const char *units_put_scaled(double x, double step,
				    const char *const *sfx, size_t nsfx,
				    char *buf, size_t len)
{
	size_t u = 0;

	while (u + 1 < nsfx && units_dabs(x) >= step - 0.5)
		x /= step, u++;
	return units_put_number(x, sfx[u], buf, len);
}

static bool units_bad_number(double x, char *buf, size_t len)
{
	if (isfinite(x))
		return false;
	snprintf(buf, len, "-");
	return true;
}

static const char *units_put_ns(double ns, unsigned int flags, char *buf,
				size_t len)
{
	static const char *const utf8[] = { "ns", "\xc2\xb5s", "ms", "s" };
	static const char *const ascii[] = { "ns", "us", "ms", "s" };

	if (units_bad_number(ns, buf, len))
		return buf;
	return units_put_scaled(ns, 1000.0, flags & UNITS_ASCII ? ascii : utf8,
				4, buf, len);
}

const char *units_format_seconds(double secs, unsigned int flags, char *buf,
				 size_t len)
{
	return units_put_ns(secs * 1e9, flags, buf, len);
}

const char *units_format_bytes(double bytes, char *buf, size_t len)
{
	static const char *const sfx[] = { "B",	  "KiB", "MiB",
					   "GiB", "TiB", "PiB" };

	if (units_bad_number(bytes, buf, len))
		return buf;
	return units_put_scaled(bytes, 1024.0, sfx, 6, buf, len);
}

const char *units_format_count(double n, char *buf, size_t len)
{
	if (units_bad_number(n, buf, len))
		return buf;
	return units_put_number(n, "", buf, len);
}

const char *units_rjust(const char *s, int width, char *buf, size_t len)
{
	int cols = 0;

	/* a column per UTF-8 sequence: bytes that do not continue one */
	for (const char *p = s; *p; p++)
		cols += ((unsigned char)*p & 0xc0) != 0x80;
	if (cols >= width)
		return s;
	snprintf(buf, len, "%*s%s", width - cols, "", s);
	return buf;
}

const char *units_format(const struct field_info *f, double raw,
			 unsigned int flags, char *buf, size_t len)
{
	double v = units_apply(raw, units_field_base(f), f->exponent);

	switch (f->unit) {
	case UNIT_SECONDS:
		return units_put_ns(units_to_ns(f, raw), flags, buf, len);
	case UNIT_BYTES:
		return units_format_bytes(v, buf, len);
	case UNIT_BOOLEAN:
		if (!(flags & UNITS_COUNT) && (raw == 0 || raw == 1)) {
			snprintf(buf, len, "%s", raw ? "yes" : "no");
			return buf;
		}
		return units_format_count(raw, buf, len);
	case UNIT_CYCLES:
	case UNIT_NONE:
		break;
	}
	return units_format_count(v, buf, len);
}

bool units_has_share(const struct field_info *f)
{
	return f->unit == UNIT_SECONDS && f->type == FIELD_CUMULATIVE &&
	       f->hist == HIST_NONE && f->bucket < 0;
}

double units_share_pct(const struct field_info *f, int64_t delta,
		       uint64_t interval_ns)
{
	if (!units_has_share(f) || !interval_ns)
		return -1.0;
	return units_to_ns(f, (double)delta) / (double)interval_ns * 100.0;
}
