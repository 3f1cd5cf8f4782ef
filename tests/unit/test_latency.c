// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit latency in the one histogram model (include/latency.h's fields,
 * hist.h's readings, the snapshot's scopes) and how it is written
 * (include/lat_render.h, and openmetrics.c as every histogram): log2
 * bucket ranges, nearest-rank percentiles, the table's columns, the JSON
 * value, and exposition histograms whose buckets are cumulative, end in
 * +Inf and match _count. Times in the tables are "µs", or "us" with
 * UNITS_ASCII (a locale that is not UTF-8), as are the breakdown's times
 * to re-entry (breakdown_render.h), which share the model.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "breakdown_render.h"
#include "hist.h"
#include "lat_render.h"
#include "latency.h"
#include "openmetrics.h"
#include "stats.h"
#include "suites.h"
#include "units.h"

/* The stats, the readings and the header facts a snapshot is built of. */
struct lt {
	struct stats s;
	struct hist_set hs;
	struct snap_latency info;
	struct snapshot snap;
};

static void lt_init(struct lt *t, const char *reentry, bool exits)
{
	stats_init(&t->s, false);
	hist_set_init(&t->hs);
	t->info = (struct snap_latency){
		.exit_field = latency_field(&t->s.fields, LAT_EXIT, NULL),
		.vmm_field = latency_field(&t->s.fields, LAT_VMM, NULL),
		.exits_timed = exits,
		.reentry = reentry,
	};
}

/* A histogram of n samples in bucket i (and m in bucket j), each at its
 * bucket's lower bound. */
static void lt_add(struct lt *t, enum lat_kind k, const char *reason, pid_t pid,
		   int vcpu, pid_t tid, size_t i, uint64_t n, size_t j,
		   uint64_t m)
{
	struct hist_reading *r = hist_set_add(&t->hs,
					      latency_field(&t->s.fields, k,
							    reason),
					      pid, vcpu, tid, LAT_NBUCKETS);
	uint64_t lo, hi;

	r->b[i] += n;
	r->b[j] += m;
	r->count = n + m;
	hist_bucket_range(HIST_LOG2, 0, i, LAT_NBUCKETS, &lo, &hi);
	r->min = lo;
	r->sum = n * lo;
	hist_bucket_range(HIST_LOG2, 0, j, LAT_NBUCKETS, &lo, &hi);
	r->max = lo;
	r->sum += m * lo;
}

static void lt_build(struct lt *t)
{
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS, .hists = &t->hs };

	snapshot_build(&t->s, &req, &t->snap);
	t->snap.latency = &t->info;
}

/* Asserts that text holds want; on failure the text goes to stderr (too
 * long for Check's message). */
#define LT_HAS(text, want)                                                  \
	do {                                                                \
		if (!strstr((text), (want)))                                \
			fprintf(stderr, "%s", (text));                      \
		ck_assert_msg(strstr((text), (want)), "missing: %s", want); \
	} while (0)

static void lt_free(struct lt *t)
{
	snapshot_free(&t->snap);
	hist_set_free(&t->hs);
	stats_free(&t->s);
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
	struct lt t;
	struct strbuf b;

	lt_init(&t, "kvm_entry", false);
	lt_add(&t, LAT_VMM, "IO", 0, SAMPLE_ALL_VCPUS, 0, 16, 90, 19, 10);
	lt_add(&t, LAT_VMM, "HLT", 0, SAMPLE_ALL_VCPUS, 0, 20, 1, 20, 0);
	lt_build(&t);
	strbuf_init(&b);
	lat_render_text(&b, &t.snap, 0);
	/* IO: p50 and p90 < 65.5 µs, p99 < 524 µs, aligned by columns (µ
	 * is two bytes, one column) */
	ck_assert_msg(strstr(b.s,
			     "    262 µs   < 65.5 µs   < 65.5 µs    < 524 µs\n"),
		      "%s", b.s);
	/* where µ cannot be shown: us, never a bare s, in the same columns */
	strbuf_reset(&b);
	lat_render_text(&b, &t.snap, UNITS_ASCII);
	ck_assert_msg(strstr(b.s,
			     "    262 us   < 65.5 us   < 65.5 us    < 524 us\n"),
		      "%s", b.s);
	ck_assert_msg(!strchr(b.s, '\xc2') && !strstr(b.s, "65.5  "), "%s", b.s);
	strbuf_free(&b);
	lt_free(&t);
}
END_TEST

START_TEST(test_text)
{
	struct lt t;
	struct strbuf b;

	lt_init(&t, "kvm_fpu(load)", false);
	lt_add(&t, LAT_VMM, "IO", 0, SAMPLE_ALL_VCPUS, 0, 16, 3, 16, 0);
	lt_add(&t, LAT_VMM, "HLT", 0, SAMPLE_ALL_VCPUS, 0, 20, 1, 20, 0);
	/* a VM's rows are not the whole selection's table */
	lt_add(&t, LAT_VMM, "MMIO", 42, SAMPLE_ALL_VCPUS, 0, 20, 1, 20, 0);
	lt_build(&t);
	strbuf_init(&b);
	lat_render_text(&b, &t.snap, 0);
	ck_assert_msg(strstr(b.s, "Time in the VMM (kvm_userspace_exit to "
				  "re-entry at kvm_fpu(load))"),
		      "%s", b.s);
	ck_assert_msg(!strstr(b.s, "Exit latency"), "exits not timed: %s", b.s);
	/* 3 x 32768 ns against 524288 ns: 15.8% and 84.2%, largest first */
	ck_assert_msg(strstr(b.s, " HLT                               1  84.2%"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, " IO                                3  15.8%"),
		      "%s", b.s);
	ck_assert_msg(strstr(b.s, "HLT") < strstr(b.s, " IO "), "%s", b.s);
	ck_assert_msg(strstr(b.s, "< 65.5 µs"), "%s", b.s);
	ck_assert_msg(!strstr(b.s, "MMIO"), "%s", b.s);
	strbuf_free(&b);
	lt_free(&t);
}
END_TEST

/* A breakdown row's times to re-entry (21.7 µs each) in both forms. */
START_TEST(test_breakdown_units)
{
	static uint64_t bk[LAT_NBUCKETS];
	struct snap_brk_row row = { .key = 0x70,
				    .dir = "out",
				    .count = 10,
				    .rate = 10,
				    .nbuckets = LAT_NBUCKETS,
				    .b = bk,
				    .tcount = 10,
				    .sum = 217000,
				    .min = 21700,
				    .max = 21700 };
	struct snap_brk_table tb = { .kind = "ioport",
				     .event = "kvm_pio",
				     .vcpu = SAMPLE_ALL_VCPUS,
				     .total = 10,
				     .rows = &row,
				     .nrows = 1 };
	struct strbuf b;

	bk[15] = 10; /* [16.4 µs, 32.8 µs) */
	strbuf_init(&b);
	breakdown_render_table(&b, &tb, true, 0);
	ck_assert_msg(strstr(b.s, "    21.7 µs    21.7 µs    21.7 µs"
				  "   < 32.8 µs   < 32.8 µs\n"),
		      "%s", b.s);
	strbuf_reset(&b);
	breakdown_render_table(&b, &tb, true, UNITS_ASCII);
	ck_assert_msg(strstr(b.s, "    21.7 us    21.7 us    21.7 us"
				  "   < 32.8 us   < 32.8 us\n"),
		      "%s", b.s);
	ck_assert_msg(!strchr(b.s, '\xc2') && !strstr(b.s, "21.7  "), "%s", b.s);
	strbuf_free(&b);
}
END_TEST

START_TEST(test_json)
{
	struct lt t;
	json_t *j, *a, *h;

	lt_init(&t, "kvm_entry", true);
	lt_add(&t, LAT_VMM, "IO", 42, SAMPLE_ALL_VCPUS, 0, 16, 3, 17, 1);
	lt_add(&t, LAT_VMM, "IO", 42, 2, 43, 16, 3, 17, 1);
	lt_add(&t, LAT_EXIT, "HLT", 0, SAMPLE_ALL_VCPUS, 0, 10, 1, 10, 0);
	lt_build(&t);
	j = lat_render_json(&t.snap);
	ck_assert_str_eq(json_string_value(json_object_get(j, "reentry")),
			 "kvm_entry");
	a = json_object_get(j, "histograms");
	ck_assert_int_eq(json_array_size(a), 3);
	/* exit first; then the VM's, then its vCPU's */
	h = json_array_get(a, 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "kind")), "exit");
	h = json_array_get(a, 1);
	ck_assert_str_eq(json_string_value(json_object_get(h, "kind")), "vmm");
	ck_assert_str_eq(json_string_value(json_object_get(h, "reason")), "IO");
	ck_assert_int_eq(json_integer_value(json_object_get(h, "pid")), 42);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "tid")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "count")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "total_ns")),
			 3 * 32768 + 65536);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "p50_ns")),
			 65536);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "p99_ns")),
			 131072);
	ck_assert_int_eq(json_array_size(json_object_get(h, "buckets")), 2);
	ck_assert(json_is_null(json_object_get(h, "vcpu")));
	h = json_array_get(a, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "tid")), 43);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "vcpu")), 2);
	json_decref(j);
	lt_free(&t);
}
END_TEST

/* Exit latency through the one OpenMetrics writer, whatever -f keeps. */
START_TEST(test_prom)
{
	struct lt t;
	struct strbuf b;

	lt_init(&t, "kvm_entry", false);
	lt_add(&t, LAT_VMM, "IO", 0, SAMPLE_ALL_VCPUS, 0, 16, 3, 17, 1);
	lt_add(&t, LAT_VMM, "IO", 42, 2, 43, 16, 3, 17, 1);
	lt_add(&t, LAT_VMM, "a\"b", 0, SAMPLE_ALL_VCPUS, 0, 1, 1, 1, 0);
	lt_build(&t);
	strbuf_init(&b);
	openmetrics_render(&b, &t.snap, OPENMETRICS_PROMETHEUS, true);
	LT_HAS(b.s, "# HELP kvm_vmm_time_seconds Time from "
		    "kvm_userspace_exit until the vCPU thread "
		    "enters the guest again, by reason.\n"
		    "# TYPE kvm_vmm_time_seconds histogram\n");
	/* le: the largest value a bucket holds, (2^i - 1) ns */
	LT_HAS(b.s, "kvm_vmm_time_seconds_bucket{reason=\"IO\","
		    "le=\"3.2767e-05\"} 0\n");
	LT_HAS(b.s, "kvm_vmm_time_seconds_bucket{reason=\"IO\","
		    "le=\"6.5535e-05\"} 3\n");
	LT_HAS(b.s, "kvm_vmm_time_seconds_bucket{reason=\"IO\","
		    "le=\"+Inf\"} 4\n");
	LT_HAS(b.s, "kvm_vmm_time_seconds_count{reason=\"IO\"} 4\n");
	/* a vCPU's series under a name of their own */
	LT_HAS(b.s, "kvm_vcpu_vmm_time_seconds_count{pid=\"42\","
		    "vcpu=\"2\",reason=\"IO\"} 4\n");
	/* the measured sum, exact: 3 x 32768 + 65536 ns */
	LT_HAS(b.s, "kvm_vmm_time_seconds_sum{reason=\"IO\"} "
		    "0.00016384\n");
	/* label values escaped as every label's */
	LT_HAS(b.s, "{reason=\"a\\\"b\",le=");
	ck_assert_msg(!strstr(b.s, "# UNIT"), "exposition: %zu bytes", b.len);
	ck_assert_msg(!strstr(b.s, "kvm_exit_latency"), "exposition: %zu bytes",
		      b.len);
	strbuf_reset(&b);
	openmetrics_render(&b, &t.snap, OPENMETRICS_OPENMETRICS, true);
	LT_HAS(b.s, "# UNIT kvm_vmm_time_seconds seconds\n");
	/* one "# EOF", at the end */
	ck_assert_msg(strstr(b.s, "# EOF\n") == b.s + b.len - 6,
		      "exposition: %zu bytes", b.len);
	strbuf_free(&b);
	lt_free(&t);
}
END_TEST

Suite *latency_suite(void)
{
	Suite *s = suite_create("latency");
	TCase *t = tcase_create("render");

	tcase_add_test(t, test_bucket_range);
	tcase_add_test(t, test_quantile);
	tcase_add_test(t, test_text);
	tcase_add_test(t, test_breakdown_units);
	tcase_add_test(t, test_json);
	tcase_add_test(t, test_prom);
	suite_add_tcase(s, t);
	return s;
}
