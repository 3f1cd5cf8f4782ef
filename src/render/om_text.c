// SPDX-License-Identifier: GPL-2.0-only
/*
 * The OpenMetrics writer's text: values in base units written exactly (a
 * raw integer times 10^exponent is a decimal shift, not a floating-point
 * product), label values escaped, and the metric name of a field.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "numfmt.h"
#include "openmetrics.h"
#include "openmetrics_int.h"
#include "util.h"

/* Appends v in decimal. */
void openmetrics_add_u64(struct strbuf *b, uint64_t v)
{
	char d[NUMFMT_INT_SIZE];

	strbuf_addn(b, d, numfmt_u64(d, v));
}

/* base^e as a long double (no libm: the binary links none). */
long double openmetrics_pow(unsigned int base, int e)
{
	long double r = 1, m = base;

	for (int i = e < 0 ? -e : e; i; i--)
		r *= m;
	return e < 0 ? 1 / r : r;
}

/* Appends mant x 10^exp10 as an exact decimal: "1.5", "0.000001", "42". */
static void openmetrics_decimal(struct strbuf *b, u128 mant, int exp10)
{
	char d[48], out[192];
	int n = 0, k, o = 0;

	if (exp10 == 0 && mant <= UINT64_MAX) {
		/* a count, most values are */
		openmetrics_add_u64(b, (uint64_t)mant);
		return;
	}
	do {
		d[n++] = (char)('0' + (int)(mant % 10));
		mant /= 10;
	} while (mant);
	for (int i = 0; i < n / 2; i++) {
		char t = d[i];

		d[i] = d[n - 1 - i];
		d[n - 1 - i] = t;
	}
	if (n == 1 && d[0] == '0') {
		strbuf_add(b, "0");
		return;
	}
	if (exp10 >= 0) {
		if (exp10 > 120)
			exp10 = 120; /* no KVM scale comes near */
		memcpy(out, d, (size_t)n);
		memset(out + n, '0', (size_t)exp10);
		out[n + exp10] = '\0';
		strbuf_add(b, out);
		return;
	}
	k = -exp10;
	if (k > 120)
		k = 120;
	if (n <= k) {
		out[o++] = '0';
		out[o++] = '.';
		memset(out + o, '0', (size_t)(k - n));
		o += k - n;
		memcpy(out + o, d, (size_t)n);
		o += n;
	} else {
		memcpy(out, d, (size_t)(n - k));
		o = n - k;
		out[o++] = '.';
		memcpy(out + o, d + n - k, (size_t)k);
		o += k;
	}
	while (out[o - 1] == '0')
		o--;
	if (out[o - 1] == '.')
		o--;
	out[o] = '\0';
	strbuf_add(b, out);
}

/*
 * Appends mant x 10^exp10 x (f's base^exponent): a value in f's base unit.
 * Base 10 is a decimal shift; base 2 multiplies by 2^e or by 5^k for
 * 2^-k = 5^k x 10^-k; past 128 bits it falls back to a double.
 */
void openmetrics_scaled(struct strbuf *b, u128 mant, int exp10,
			const struct field_info *f)
{
	int e = f->exponent;

	if (f->base != 2) {
		openmetrics_decimal(b, mant, exp10 + e);
		return;
	}
	if (e >= 0) {
		if (e < 128 && mant <= (~(u128)0 >> e)) {
			openmetrics_decimal(b, mant << e, exp10);
			return;
		}
	} else {
		u128 m = mant;
		int k = -e;
		bool ok = true;

		for (int i = 0; i < k && ok; i++) {
			ok = m <= ~(u128)0 / 5;
			m *= 5;
		}
		if (ok) {
			openmetrics_decimal(b, m, exp10 - k);
			return;
		}
	}
	strbuf_addf(b, "%.17Lg",
		    (long double)mant * openmetrics_pow(10, exp10) *
			    openmetrics_pow(2, e));
}

void openmetrics_canonical(double v, char *buf, size_t len)
{
	char t[NUMFMT_DOUBLE_SIZE];

	numfmt_canonical(t, v);
	snprintf(buf, len, "%s", t);
}

/* ---- text ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t openmetrics_utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Appends s escaped: backslash, newline and (when quote) double quote get
 * a backslash; bytes that are not UTF-8 become U+FFFD, as both formats
 * require UTF-8.
 */
void openmetrics_escape(struct strbuf *b, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;
	char chunk[256];
	size_t o = 0;

	while (*p) {
		size_t n = openmetrics_utf8_len(p);

		if (o + 8 > sizeof(chunk)) {
			chunk[o] = '\0';
			strbuf_add(b, chunk);
			o = 0;
		}
		if (!n) {
			memcpy(chunk + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		if (*p == '\\' || *p == '\n' || (quote && *p == '"')) {
			chunk[o++] = '\\';
			chunk[o++] = *p == '\n' ? 'n' : (char)*p;
			p++;
			continue;
		}
		memcpy(chunk + o, p, n);
		o += n;
		p += n;
	}
	chunk[o] = '\0';
	strbuf_add(b, chunk);
}

static bool openmetrics_ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/*
 * Spells out the words of s[0, len) that Prometheus reads as abbreviated
 * time units ("_ns" at the end or before "_"): "_nsec". s has room for
 * len * 5 / 3 bytes. Returns the new length.
 */
static size_t openmetrics_spell_units(char *s, size_t len)
{
	for (size_t i = 0; i + 3 <= len; i++) {
		if (s[i] != '_' || !strchr("num", s[i + 1]) || !s[i + 1] ||
		    s[i + 2] != 's' || (i + 3 < len && s[i + 3] != '_'))
			continue;
		memmove(s + i + 5, s + i + 3, len - i - 3);
		memcpy(s + i + 3, "ec", 2);
		len += 2;
		i += 4;
	}
	return len;
}

char *openmetrics_name(const struct field_info *f)
{
	static const char *const raw_time[] = { "_ns", "_us", "_ms" };
	bool prefixed = !strncmp(f->name, "kvm_", 4);
	size_t n = strlen(f->name), len;
	char *s = xmalloc(2 * (n + 4 + 16) + 1);

	len = 0;
	if (!prefixed) {
		memcpy(s, "kvm_", 4);
		len = 4;
	}
	for (size_t i = 0; i < n; i++) {
		char c = f->name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == ':';

		s[len++] = ok ? c : '_';
	}
	if (f->unit == UNIT_SECONDS) {
		for (size_t i = 0; i < ARRAY_SIZE(raw_time); i++)
			if (openmetrics_ends_with(s, len, raw_time[i]) &&
			    len > strlen(raw_time[i]) + 4) {
				len -= strlen(raw_time[i]);
				break;
			}
		if (!openmetrics_ends_with(s, len, "_seconds")) {
			memcpy(s + len, "_seconds", 8);
			len += 8;
		}
	} else if (f->unit == UNIT_BYTES &&
		   !openmetrics_ends_with(s, len, "_bytes")) {
		memcpy(s + len, "_bytes", 6);
		len += 6;
	}
	len = openmetrics_spell_units(s, len);
	/* a counter's samples get "_total"; the family has none */
	if (f->type == FIELD_CUMULATIVE && f->hist == HIST_NONE &&
	    openmetrics_ends_with(s, len, "_total") && len > 10)
		len -= 6;
	s[len] = '\0';
	return s;
}
