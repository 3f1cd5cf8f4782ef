// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit formatting and histogram percentiles, checked to the exact string:
 * times, sizes, booleans and counts, shares of wall time, bucket ranges,
 * nearest-rank percentiles and gathering buckets from the stats layer;
 * "µs" or "us" as the locale's character set allows.
 */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist_fmt.h"
#include "stats.h"
#include "suites.h"
#include "units.h"

static struct field_info field(enum field_unit unit, int exponent,
			       unsigned int base)
{
	struct field_info f = { .name = "x", .parent = -1, .bucket = -1 };

	f.unit = unit;
	f.exponent = exponent;
	f.base = base;
	return f;
}

static void expect(const struct field_info *f, double raw, unsigned int flags,
		   const char *want)
{
	char buf[UNITS_BUF];

	units_format(f, raw, flags, buf, sizeof(buf));
	ck_assert_msg(!strcmp(buf, want), "%g: got \"%s\", want \"%s\"", raw,
		      buf, want);
}

START_TEST(test_seconds)
{
	struct field_info ns = field(UNIT_SECONDS, -9, 10);
	struct field_info us = field(UNIT_SECONDS, -6, 10);
	struct field_info s = field(UNIT_SECONDS, 0, 0);
	char buf[UNITS_BUF];

	expect(&ns, 0, 0, "0 ns");
	expect(&ns, 999, 0, "999 ns");
	expect(&ns, 1000, 0, "1 \xc2\xb5s");
	expect(&ns, 1500, 0, "1.50 \xc2\xb5s");
	expect(&ns, 1500, UNITS_ASCII, "1.50 us");
	expect(&ns, 999700, 0, "1.00 ms");
	expect(&ns, 999.7, 0, "1.00 \xc2\xb5s");
	expect(&ns, 12345678, 0, "12.3 ms");
	expect(&ns, 123456789, 0, "123 ms");
	expect(&ns, 2e9, 0, "2 s");
	expect(&ns, 90.5e9, 0, "90.5 s");
	expect(&ns, 3600e9, 0, "3600 s");
	expect(&ns, -1500, UNITS_ASCII, "-1.50 us");
	expect(&ns, 0.5, 0, "0.50 ns");
	expect(&us, 1500, 0, "1.50 ms");
	expect(&s, 2, 0, "2 s");
	expect(&ns, NAN, 0, "-");
	ck_assert_str_eq(units_format_seconds(0.0025, 0, buf, sizeof(buf)),
			 "2.50 ms");
}
END_TEST

/* 21.7 µs in both forms: the ASCII one keeps its "u", never leaving the
 * "21.7   s" (read as seconds) a terminal makes of a µ it cannot show. */
START_TEST(test_micro_forms)
{
	struct field_info ns = field(UNIT_SECONDS, -9, 10);
	char buf[UNITS_BUF];

	expect(&ns, 21700, 0, "21.7 \xc2\xb5s");
	expect(&ns, 21700, UNITS_ASCII, "21.7 us");
	expect(&ns, 21700, UNITS_ASCII | UNITS_COUNT, "21.7 us");
	expect(&ns, 999, UNITS_ASCII, "999 ns");
	expect(&ns, 2500000, UNITS_ASCII, "2.50 ms");
	ck_assert_str_eq(units_format_seconds(21.7e-6, UNITS_ASCII, buf,
					      sizeof(buf)),
			 "21.7 us");
	ck_assert_str_eq(units_format_seconds(21.7e-6, 0, buf, sizeof(buf)),
			 "21.7 \xc2\xb5s");
}
END_TEST

/* The environment's locale variables, as they were. */
static const char *const locale_vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
static char *saved_vars[3];

static void locale_env(const char *lc_all, const char *lc_ctype,
		       const char *lang)
{
	const char *v[] = { lc_all, lc_ctype, lang };

	for (int i = 0; i < 3; i++)
		if (v[i])
			setenv(locale_vars[i], v[i], 1);
		else
			unsetenv(locale_vars[i]);
}

/* The flags of the locale that LC_ALL, LC_CTYPE and LANG name. */
static unsigned int flags_in(const char *lc_all, const char *lc_ctype,
			     const char *lang)
{
	locale_env(lc_all, lc_ctype, lang);
	return units_locale_flags();
}

/* UNITS_ASCII unless the user's LC_CTYPE (LC_ALL over LC_CTYPE over
 * LANG) is UTF-8; the process's own locale is left alone. */
START_TEST(test_locale_flags)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	char *before;

	for (int i = 0; i < 3; i++) {
		const char *v = getenv(locale_vars[i]);

		saved_vars[i] = v ? strdup(v) : NULL;
	}
	before = strdup(setlocale(LC_CTYPE, NULL));
	/* the POSIX locale of cron, ssh without SendEnv, systemd units */
	ck_assert_uint_eq(flags_in(NULL, NULL, NULL), UNITS_ASCII);
	ck_assert_uint_eq(flags_in("C", NULL, NULL), UNITS_ASCII);
	ck_assert_uint_eq(flags_in(NULL, NULL, "POSIX"), UNITS_ASCII);
	/* a locale the system lacks is C, as setlocale makes it */
	ck_assert_uint_eq(flags_in("xx_NOWHERE.UTF-8", NULL, NULL), UNITS_ASCII);
	if (utf8 != (locale_t)0) {
		freelocale(utf8);
		ck_assert_uint_eq(flags_in(NULL, NULL, "C.UTF-8"), 0);
		ck_assert_uint_eq(flags_in(NULL, "C.UTF-8", NULL), 0);
		ck_assert_uint_eq(flags_in("C.UTF-8", "C", "C"), 0);
		/* the more specific variable wins */
		ck_assert_uint_eq(flags_in(NULL, "C", "C.UTF-8"), UNITS_ASCII);
		ck_assert_uint_eq(flags_in("C", "C.UTF-8", "C.UTF-8"),
				  UNITS_ASCII);
	}
	ck_assert_str_eq(setlocale(LC_CTYPE, NULL), before);
	free(before);
	locale_env(saved_vars[0], saved_vars[1], saved_vars[2]);
	for (int i = 0; i < 3; i++)
		free(saved_vars[i]);
}
END_TEST

START_TEST(test_bytes)
{
	struct field_info pages = field(UNIT_BYTES, 12, 2);
	struct field_info b = field(UNIT_BYTES, 0, 2);
	struct field_info kb = field(UNIT_BYTES, 3, 10);
	char buf[UNITS_BUF];

	expect(&pages, 1, 0, "4 KiB");
	expect(&pages, 3, 0, "12 KiB");
	expect(&pages, 256, 0, "1 MiB");
	expect(&b, 512, 0, "512 B");
	expect(&b, 1023, 0, "1023 B");
	expect(&b, 1536, 0, "1.50 KiB");
	expect(&b, 5.0 * 1024 * 1024 * 1024, 0, "5 GiB");
	expect(&b, 1.5 * 1125899906842624.0, 0, "1.50 PiB");
	expect(&b, 1024.0 * 1125899906842624.0, 0, "1024 PiB");
	expect(&kb, 2, 0, "1.95 KiB");
	ck_assert_str_eq(units_format_bytes(100 * 1024 + 512, buf, sizeof(buf)),
			 "100 KiB");
}
END_TEST

START_TEST(test_booleans_counts)
{
	struct field_info yn = field(UNIT_BOOLEAN, 0, 0);
	struct field_info cyc = field(UNIT_CYCLES, 0, 2);
	struct field_info none = field(UNIT_NONE, 0, 0);
	char buf[UNITS_BUF];

	expect(&yn, 0, 0, "no");
	expect(&yn, 1, 0, "yes");
	expect(&yn, 3, 0, "3"); /* a sum over vCPUs */
	expect(&yn, 1, UNITS_COUNT, "1");
	expect(&yn, -1, 0, "-1"); /* a delta */
	expect(&cyc, 123456, 0, "123456");
	expect(&cyc, 2.5, 0, "2.50"); /* a rate */
	expect(&none, 0, 0, "0");
	expect(&none, 42, 0, "42");
	expect(&none, 18446744073709551615.0, 0, "18446744073709551616");
	expect(&none, 1234.4, 0, "1234");
	expect(&none, 12.34, 0, "12.3");
	ck_assert_str_eq(units_format_count(7, buf, sizeof(buf)), "7");
	/* a short buffer truncates, never overflows */
	units_format(&none, 123456, 0, buf, 4);
	ck_assert_str_eq(buf, "123");
}
END_TEST

START_TEST(test_scale)
{
	struct field_info ns = field(UNIT_SECONDS, -9, 10);
	struct field_info pages = field(UNIT_BYTES, 12, 2);
	struct field_info none = field(UNIT_NONE, 0, 0);

	ck_assert(units_scale(&ns) == 1e-9);
	ck_assert(units_scale(&pages) == 4096.0);
	ck_assert(units_scale(&none) == 1.0);
}
END_TEST

START_TEST(test_share)
{
	struct field_info ns = field(UNIT_SECONDS, -9, 10);
	struct field_info us = field(UNIT_SECONDS, -6, 10);
	struct field_info none = field(UNIT_NONE, 0, 0);
	struct field_info hist = field(UNIT_SECONDS, -9, 10);
	struct field_info gauge = field(UNIT_SECONDS, -9, 10);

	hist.hist = HIST_LOG2;
	gauge.type = FIELD_INSTANT;
	ck_assert(units_has_share(&ns));
	ck_assert(!units_has_share(&none));
	ck_assert(!units_has_share(&hist));
	ck_assert(!units_has_share(&gauge));
	ck_assert(units_share_pct(&ns, 250000000, 1000000000) == 25.0);
	ck_assert(units_share_pct(&ns, 3000000000, 1000000000) == 300.0);
	ck_assert(units_share_pct(&us, 500000, 1000000000) == 50.0);
	ck_assert_double_eq_tol(units_share_pct(&ns, 1500000, 3000000000u),
				0.05, 1e-12);
	ck_assert(units_share_pct(&ns, 1, 0) == -1.0);
	ck_assert(units_share_pct(&none, 1, 1000) == -1.0);
}
END_TEST

START_TEST(test_bucket_ranges)
{
	uint64_t lo, hi;

	hist_bucket_range(HIST_LOG2, 0, 0, 32, &lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 1);
	hist_bucket_range(HIST_LOG2, 0, 1, 32, &lo, &hi);
	ck_assert_uint_eq(lo, 1);
	ck_assert_uint_eq(hi, 2);
	hist_bucket_range(HIST_LOG2, 0, 3, 32, &lo, &hi);
	ck_assert_uint_eq(lo, 4);
	ck_assert_uint_eq(hi, 8);
	hist_bucket_range(HIST_LOG2, 0, 31, 32, &lo, &hi);
	ck_assert_uint_eq(lo, 1u << 30);
	ck_assert_uint_eq(hi, UINT64_MAX);
	hist_bucket_range(HIST_LOG2, 0, 63, 65, &lo, &hi);
	ck_assert_uint_eq(lo, 1ull << 62);
	ck_assert_uint_eq(hi, 1ull << 63);
	hist_bucket_range(HIST_LOG2, 0, 64, 65, &lo, &hi);
	ck_assert_uint_eq(lo, 1ull << 63);
	ck_assert_uint_eq(hi, UINT64_MAX);
	hist_bucket_range(HIST_LINEAR, 10, 0, 4, &lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 10);
	hist_bucket_range(HIST_LINEAR, 10, 2, 4, &lo, &hi);
	ck_assert_uint_eq(lo, 20);
	ck_assert_uint_eq(hi, 30);
	hist_bucket_range(HIST_LINEAR, 10, 3, 4, &lo, &hi);
	ck_assert_uint_eq(lo, 30);
	ck_assert_uint_eq(hi, UINT64_MAX);
	hist_bucket_range(HIST_LINEAR, 1u << 31, 65534, 65535, &lo, &hi);
	ck_assert_uint_eq(lo, 65534ull << 31);
	ck_assert_uint_eq(hi, UINT64_MAX);
}
END_TEST

/* log2 buckets 0..n-1 with the given counts. */
static void log2_hist(struct hist_bucket *b, const uint64_t *counts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		hist_bucket_range(HIST_LOG2, 0, i, n, &b[i].lo, &b[i].hi);
		b[i].count = counts[i];
	}
}

START_TEST(test_percentiles)
{
	static const uint64_t c100[] = { 0, 50, 40, 9, 1 };
	static const uint64_t c3[] = { 1, 1, 1 };
	static const uint64_t c0[] = { 0, 0, 0 };
	static const uint64_t chuge[] = { UINT64_MAX / 4, UINT64_MAX / 4 };
	struct hist_bucket b[5];

	log2_hist(b, c100, 5);
	ck_assert_uint_eq(hist_total(b, 5), 100);
	ck_assert_int_eq(hist_quantile(b, 5, HIST_P50), 1); /* 50th */
	ck_assert_int_eq(hist_quantile(b, 5, HIST_P90), 2); /* 90th */
	ck_assert_int_eq(hist_quantile(b, 5, HIST_P99), 3); /* 99th */
	ck_assert_int_eq(hist_quantile(b, 5, 1000), 4);
	ck_assert_int_eq(hist_quantile(b, 5, 0), 1); /* 1st */
	log2_hist(b, c3, 3);
	ck_assert_int_eq(hist_quantile(b, 3, HIST_P50), 1); /* 2nd of 3 */
	ck_assert_int_eq(hist_quantile(b, 3, HIST_P90), 2);
	ck_assert_int_eq(hist_quantile(b, 3, 333), 0);
	ck_assert_int_eq(hist_quantile(b, 3, 334), 1);
	log2_hist(b, c0, 3);
	ck_assert_int_eq(hist_quantile(b, 3, HIST_P50), -1);
	log2_hist(b, chuge, 2);
	ck_assert_int_eq(hist_quantile(b, 2, HIST_P50), 0);
	ck_assert_int_eq(hist_quantile(b, 2, 501), 1);
}
END_TEST

START_TEST(test_hist_format)
{
	static const uint64_t c100[] = { 0, 50, 40, 9, 1 };
	static const uint64_t c0[] = { 0, 0 };
	struct field_info ns = field(UNIT_SECONDS, -9, 10);
	struct hist_bucket b[32];
	char buf[128];

	ns.hist = HIST_LOG2;
	hist_bucket_range(HIST_LOG2, 0, 11, 32, &b[0].lo, &b[0].hi);
	ck_assert_str_eq(hist_format_range(&ns, &b[0], 0, buf, sizeof(buf)),
			 "[1.02 \xc2\xb5s, 2.05 \xc2\xb5s)");
	ck_assert_str_eq(hist_format_bound(&ns, &b[0], UNITS_ASCII, buf,
					   sizeof(buf)),
			 "< 2.05 us");
	hist_bucket_range(HIST_LOG2, 0, 0, 32, &b[0].lo, &b[0].hi);
	ck_assert_str_eq(hist_format_range(&ns, &b[0], 0, buf, sizeof(buf)),
			 "[0 ns, 1 ns)");
	hist_bucket_range(HIST_LOG2, 0, 31, 32, &b[0].lo, &b[0].hi);
	ck_assert_str_eq(hist_format_range(&ns, &b[0], 0, buf, sizeof(buf)),
			 "[1.07 s, inf)");
	ck_assert_str_eq(hist_format_bound(&ns, &b[0], 0, buf, sizeof(buf)),
			 ">= 1.07 s");

	log2_hist(b, c100, 5);
	ck_assert_str_eq(hist_format_percentiles(&ns, b, 5, 0, buf, sizeof(buf)),
			 "p50 < 2 ns, p90 < 4 ns, p99 < 8 ns");
	b[4].count = 60; /* now p50 and up fall in the open bucket */
	ck_assert_str_eq(hist_format_percentiles(&ns, b, 5, 0, buf, sizeof(buf)),
			 "p50 < 4 ns, p90 >= 8 ns, p99 >= 8 ns");
	log2_hist(b, c0, 2);
	ck_assert_str_eq(hist_format_percentiles(&ns, b, 2, 0, buf, sizeof(buf)),
			 "no samples");
	/* a short buffer is cut, not overrun */
	log2_hist(b, c100, 5);
	hist_format_percentiles(&ns, b, 5, 0, buf, 10);
	ck_assert_str_eq(buf, "p50 < 2 n");
}
END_TEST

/* The histogram of field parent in the scope (pid, vcpu) of a snapshot. */
static const struct snap_hist *snap_hist_of(const struct snapshot *snap,
					    int parent, pid_t pid, int vcpu)
{
	const struct snap_scope *sc = snap->whole;
	const struct snap_row *r;

	if (pid) {
		sc = NULL;
		for (size_t i = 0; i < snap->whole->nchildren; i++)
			if (snap->whole->children[i].pid == pid)
				sc = &snap->whole->children[i];
		ck_assert_ptr_nonnull(sc);
		for (size_t i = 0; vcpu >= 0 && i < sc->nchildren; i++)
			if (sc->children[i].vcpu == vcpu)
				sc = &sc->children[i];
		ck_assert_int_eq(sc->vcpu, vcpu);
	}
	r = snapshot_scope_row(sc, parent);
	return r ? r->hist : NULL;
}

/* Buckets from a snapshot: totals and one interval's deltas. */
START_TEST(test_hist_gather)
{
	struct hist_bucket b[8];
	struct snapshot snap;
	struct stats s;
	int parent, kid[4];
	char name[32];

	stats_init(&s, false);
	parent = field_table_intern(&s.fields, "h", -1, FIELD_CUMULATIVE,
				    "test");
	field_table_info(&s.fields, parent)->hist = HIST_LOG2;
	for (int k = 0; k < 4; k++) {
		struct field_info *f;

		snprintf(name, sizeof(name), "h(%d)", k);
		kid[k] = field_table_intern(&s.fields, name, parent,
					    FIELD_CUMULATIVE, "test");
		f = field_table_info(&s.fields, kid[k]);
		f->bucket = k;
		hist_bucket_range(HIST_LOG2, 0, (size_t)k, 4, &f->bucket_lo,
				  &f->bucket_hi);
	}
	snapshot_build(&s, NULL, &snap);
	ck_assert_uint_eq(hist_gather(snap_hist_of(&snap, parent, 0, -1), true,
				      b, 8),
			  0);
	snapshot_free(&snap);
	for (int k = 0; k < 4; k++) {
		sample_set_push(&s.set, kid[k], 0, -1, 0, 10 * (k + 1), 0);
		sample_set_push(&s.set, kid[k], 7, 1, 0, 10 * (k + 1), 0);
	}
	stats_update(&s, 1000);
	for (int k = 0; k < 4; k++) {
		sample_set_push(&s.set, kid[k], 0, -1, 0, 10 * (k + 1) + k, 0);
		sample_set_push(&s.set, kid[k], 7, 1, 0, 10 * (k + 1) + 1, 0);
	}
	stats_update(&s, 2000);
	snapshot_build(&s, NULL, &snap);
	ck_assert_uint_eq(hist_gather(snap_hist_of(&snap, parent, 0, -1), true,
				      b, 8),
			  4);
	ck_assert_uint_eq(b[0].count, 0);
	ck_assert_uint_eq(b[3].count, 3);
	ck_assert_uint_eq(b[2].lo, 2);
	ck_assert_uint_eq(b[2].hi, 4);
	ck_assert_uint_eq(b[3].hi, UINT64_MAX);
	ck_assert_int_eq(hist_quantile(b, 4, HIST_P50), 2);
	ck_assert_uint_eq(hist_gather(snap_hist_of(&snap, parent, 7, 1), true,
				      b, 8),
			  4);
	ck_assert_uint_eq(hist_total(b, 4), 4);
	/* totals start at zero without -i, as every counter's do */
	ck_assert_uint_eq(hist_gather(snap_hist_of(&snap, parent, 0, -1), false,
				      b, 8),
			  4);
	ck_assert_uint_eq(b[3].count, 3);
	/* fewer slots than buckets: the count still says how many */
	ck_assert_uint_eq(hist_gather(snap_hist_of(&snap, parent, 0, -1), true,
				      b, 2),
			  4);
	ck_assert_uint_eq(b[1].count, 1);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

Suite *units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *u = tcase_create("units");
	TCase *h = tcase_create("hist");

	tcase_add_test(u, test_seconds);
	tcase_add_test(u, test_micro_forms);
	tcase_add_test(u, test_locale_flags);
	tcase_add_test(u, test_bytes);
	tcase_add_test(u, test_booleans_counts);
	tcase_add_test(u, test_scale);
	tcase_add_test(u, test_share);
	suite_add_tcase(s, u);
	tcase_add_test(h, test_bucket_ranges);
	tcase_add_test(h, test_percentiles);
	tcase_add_test(h, test_hist_format);
	tcase_add_test(h, test_hist_gather);
	suite_add_tcase(s, h);
	return s;
}
