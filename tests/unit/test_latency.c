// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit latency's rows and how they are written (include/latency.h,
 * include/lat_render.h): log2 bucket ranges, nearest-rank percentiles,
 * the table's columns, the JSON value, and Prometheus histograms whose
 * buckets are cumulative, end in +Inf and match _count.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "lat_render.h"
#include "suites.h"

/* A row of n samples in bucket i (and m in bucket j). */
static struct lat_row row(const char *reason, pid_t pid, size_t i, uint64_t n,
			  size_t j, uint64_t m)
{
	struct lat_row r = { .kind = LAT_VMM, .pid = pid, .vcpu = -1 };
	uint64_t lo, hi;

	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	r.b[i] += n;
	r.b[j] += m;
	r.count = n + m;
	hist_bucket_range(HIST_LOG2, 0, i, LAT_NBUCKETS, &lo, &hi);
	r.min = lo;
	r.total = n * lo;
	hist_bucket_range(HIST_LOG2, 0, j, LAT_NBUCKETS, &lo, &hi);
	r.max = lo;
	r.total += m * lo;
	return r;
}

/* Exit latency's buckets are the model's log2 buckets of ns. */
START_TEST(test_bucket_range)
{
	uint64_t lo, hi;

	hist_bucket_range(HIST_LOG2, 0, 0, LAT_NBUCKETS, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
	hist_bucket_range(HIST_LOG2, 0, 1, LAT_NBUCKETS, &lo, &hi);
	ck_assert(lo == 1 && hi == 2);
	hist_bucket_range(HIST_LOG2, 0, 16, LAT_NBUCKETS, &lo, &hi);
	ck_assert(lo == 32768 && hi == 65536);
	hist_bucket_range(HIST_LOG2, 0, LAT_NBUCKETS - 1, LAT_NBUCKETS, &lo,
			  &hi);
	ck_assert(lo == 1ull << (LAT_NBUCKETS - 2) && hi == UINT64_MAX);
}
END_TEST

/* The table's percentiles: the model's nearest rank (90 in bucket 16, 10
 * in 19: p90 is the 90th, p91 the 91st). */
START_TEST(test_quantile)
{
	struct lat_row r[2] = { row("IO", 0, 16, 90, 19, 10),
				row("HLT", 0, 20, 1, 20, 0) };
	struct lat_snap s = { .rows = r, .n = 2, .mark = "kvm_entry" };
	struct strbuf b;

	strbuf_init(&b);
	lat_render_text(&b, &s, 0);
	/* IO: p50 and p90 < 65.5 µs, p99 < 524 µs */
	ck_assert_msg(strstr(b.s, " < 65.5 µs  < 65.5 µs   < 524 µs\n"), "%s",
		      b.s);
	strbuf_free(&b);
}
END_TEST

START_TEST(test_text)
{
	struct lat_row rows[2] = { row("IO", 0, 16, 3, 16, 0),
				   row("HLT", 0, 20, 1, 20, 0) };
	struct lat_snap s = { .rows = rows, .n = 2, .mark = "kvm_fpu(load)" };
	struct strbuf b;

	strbuf_init(&b);
	lat_render_text(&b, &s, 0);
	ck_assert_msg(strstr(b.s, "Time in the VMM (kvm_userspace_exit to "
				  "re-entry at kvm_fpu(load))"),
		      "%s", b.s);
	ck_assert_msg(!strstr(b.s, "Exit latency"), "exits not timed: %s", b.s);
	/* 3 x 32768 ns against 524288 ns: 15.8% and 84.2% */
	ck_assert_msg(strstr(b.s, " IO                                3  15.8%"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "< 65.5 µs"), "%s", b.s);
	ck_assert_msg(strstr(b.s, " HLT                               1  84.2%"),
		      "%s", b.s);
	strbuf_free(&b);
}
END_TEST

START_TEST(test_json)
{
	struct lat_row r = row("IO", 42, 16, 3, 17, 1);
	struct lat_snap s = { .rows = &r, .n = 1, .mark = "kvm_entry" };
	json_t *j = lat_render_json(&s), *h;

	h = json_array_get(json_object_get(j, "histograms"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "kind")), "vmm");
	ck_assert_int_eq(json_integer_value(json_object_get(h, "pid")), 42);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "count")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "p50_ns")),
			 65536);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "p99_ns")),
			 131072);
	ck_assert_int_eq(json_array_size(json_object_get(h, "buckets")), 2);
	ck_assert(json_is_null(json_object_get(h, "vcpu")));
	json_decref(j);
}
END_TEST

START_TEST(test_prom)
{
	struct lat_row r[2] = { row("IO", 0, 16, 3, 17, 1),
				row("IO", 42, 16, 3, 17, 1) };
	struct lat_snap s = { .rows = r, .n = 2, .mark = "kvm_entry" };
	struct strbuf b;

	r[1].tid = 43;
	r[1].vcpu = 2;
	strbuf_init(&b);
	lat_render_prom(&b, &s, false);
	ck_assert_msg(strstr(b.s, "# TYPE kvm_vmm_time_seconds histogram\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "kvm_vmm_time_seconds_bucket{reason=\"IO\","
				  "le=\"3.2768e-05\"} 0\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "kvm_vmm_time_seconds_bucket{reason=\"IO\","
				  "le=\"6.5536e-05\"} 3\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "kvm_vmm_time_seconds_bucket{reason=\"IO\","
				  "le=\"+Inf\"} 4\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s,
			     "kvm_vmm_time_seconds_count{reason=\"IO\"} 4\n"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "kvm_vmm_time_seconds_count{pid=\"42\","
				  "vcpu=\"2\",reason=\"IO\"} 4\n"),
		      "%s", b.s);
	/* 3 x 32768 + 65536 ns */
	ck_assert_msg(strstr(b.s, "kvm_vmm_time_seconds_sum{reason=\"IO\"} "
				  "0.000163840\n"),
		      "%s", b.s);
	ck_assert_msg(!strstr(b.s, "# UNIT"), "%s", b.s);
	strbuf_reset(&b);
	lat_render_prom(&b, &s, true);
	ck_assert_msg(strstr(b.s, "# UNIT kvm_vmm_time_seconds seconds\n"),
		      "%s", b.s);
	strbuf_free(&b);
}
END_TEST

Suite *latency_suite(void)
{
	Suite *s = suite_create("latency");
	TCase *t = tcase_create("render");

	tcase_add_test(t, test_bucket_range);
	tcase_add_test(t, test_quantile);
	tcase_add_test(t, test_text);
	tcase_add_test(t, test_json);
	tcase_add_test(t, test_prom);
	suite_add_tcase(s, t);
	return s;
}
