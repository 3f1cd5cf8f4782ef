// SPDX-License-Identifier: GPL-2.0-only
/* The aggregator: totals, deltas, resets, -i, gauges, breakdowns, fill-in. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "filter.h"
#include "snapshot.h"
#include "stats.h"
#include "suites.h"
#include "util.h"

static int fid(struct stats *s, const char *name, int parent,
	       enum field_type type)
{
	return field_table_intern(&s->fields, name, parent, type, "test");
}

static void push(struct stats *s, int f, pid_t pid, int vcpu, uint64_t v,
		 unsigned int flags)
{
	sample_set_push(&s->set, f, pid, vcpu, 0, v, flags);
}

START_TEST(test_delta_and_total)
{
	struct stats s;
	int f;

	stats_init(&s, false);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	push(&s, f, 0, -1, 1000, 0);
	stats_update(&s, 1000000000ull);
	ck_assert_uint_eq(s.sum[f].total, 0); /* counts from our start */
	ck_assert_int_eq(s.sum[f].delta, 0);
	push(&s, f, 0, -1, 1250, 0);
	stats_update(&s, 2000000000ull);
	ck_assert_uint_eq(s.sum[f].total, 250);
	ck_assert_int_eq(s.sum[f].delta, 250);
	ck_assert_uint_eq(s.interval_ns, 1000000000ull);
	push(&s, f, 0, -1, 1250, 0);
	stats_update(&s, 3000000000ull);
	ck_assert_uint_eq(s.sum[f].total, 250);
	ck_assert_int_eq(s.sum[f].delta, 0);
	stats_free(&s);
}
END_TEST

/* Field names interned in any order keep their places in name order,
 * which the snapshot's view follows (numbers by value, "(07)" before
 * "(7)" as strcmp says), with and without a filter. */
START_TEST(test_field_order_and_view)
{
	static const char *const in[] = { "kvm_pio",	"kvm_exit(12)",
					  "exits",	"kvm_exit(7)",
					  "kvm_exit",	"kvm_exit(07)",
					  "halt_exits", "a" };
	static const char *const want[] = { "a",
					    "exits",
					    "halt_exits",
					    "kvm_exit",
					    "kvm_exit(07)",
					    "kvm_exit(7)",
					    "kvm_exit(12)",
					    "kvm_pio" };
	const size_t n = sizeof(in) / sizeof(in[0]);
	struct field_filter flt = { 0 };
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS };
	struct snapshot snap;
	struct errmsg err;
	struct stats s;

	stats_init(&s, false);
	for (size_t i = 0; i < n; i++) {
		int f = fid(&s, in[i], -1, FIELD_CUMULATIVE);

		push(&s, f, 0, -1, i, 0);
	}
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(want[s.fields.v[i].order], in[i]);
	stats_update(&s, 1000000000ull);
	for (int round = 0; round < 2; round++) {
		snapshot_build(&s, &req, &snap);
		ck_assert_uint_eq(snap.nrows, n);
		for (size_t i = 0; i < n; i++)
			ck_assert_str_eq(snap.rows[i].name, want[i]);
		snapshot_free(&snap);
	}
	ck_assert_int_eq(filter_set(&flt, "kvm_exit\\(", &err), 0);
	req.filter = &flt;
	for (int round = 0; round < 2; round++) {
		snapshot_build(&s, &req, &snap);
		ck_assert_uint_eq(snap.nrows, 3);
		ck_assert_str_eq(snap.rows[0].name, "kvm_exit(07)");
		ck_assert_str_eq(snap.rows[1].name, "kvm_exit(7)");
		ck_assert_str_eq(snap.rows[2].name, "kvm_exit(12)");
		snapshot_free(&snap);
	}
	filter_free(&flt);
	stats_free(&s);
}
END_TEST

START_TEST(test_include_past)
{
	struct stats s;
	int f;

	stats_init(&s, true);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	push(&s, f, 0, -1, 1000, 0);
	stats_update(&s, 1);
	ck_assert_uint_eq(s.sum[f].total, 1000);
	ck_assert_int_eq(s.sum[f].delta, 0);
	push(&s, f, 0, -1, 1010, 0);
	stats_update(&s, 2);
	ck_assert_uint_eq(s.sum[f].total, 1010);
	ck_assert_int_eq(s.sum[f].delta, 10);
	stats_free(&s);
}
END_TEST

START_TEST(test_reset_is_not_negative)
{
	struct stats s;
	int f;

	stats_init(&s, false);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	push(&s, f, 0, -1, 500, 0);
	stats_update(&s, 1);
	push(&s, f, 0, -1, 700, 0);
	stats_update(&s, 2);
	/* zeroed (echo 0 > file), then 30 more */
	push(&s, f, 0, -1, 30, 0);
	stats_update(&s, 3);
	ck_assert_int_eq(s.sum[f].delta, 30);
	ck_assert_uint_eq(s.sum[f].total, 230);
	push(&s, f, 0, -1, 35, 0);
	stats_update(&s, 4);
	ck_assert_int_eq(s.sum[f].delta, 5);
	ck_assert_uint_eq(s.sum[f].total, 235);
	stats_free(&s);
}
END_TEST

/* A counter that jumps from 10 to 2^64-1 (a wrap) logs no negative delta:
 * it is a reset to that value, and the deltas go on from it. */
START_TEST(test_wrap_is_not_negative)
{
	struct stats s;
	int f, v;

	stats_init(&s, false);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	v = fid(&s, "late", -1, FIELD_CUMULATIVE);
	push(&s, f, 0, -1, 5, 0);
	stats_update(&s, 1);
	push(&s, f, 0, -1, 10, 0);
	stats_update(&s, 2);
	ck_assert_int_eq(s.sum[f].delta, 5);
	push(&s, f, 0, -1, UINT64_MAX, 0);
	/* a series first seen mid-run at a huge value counts nothing */
	push(&s, v, 0, -1, UINT64_MAX - 1, 0);
	stats_update(&s, 3);
	ck_assert_int_eq(s.sum[f].delta, 0);
	ck_assert_uint_eq(s.sum[f].total, 5);
	ck_assert_int_eq(s.sum[v].delta, 0);
	/* from 2^64-1 over the top to 3: a reset, 3 counted */
	push(&s, f, 0, -1, 3, 0);
	push(&s, v, 0, -1, UINT64_MAX, 0);
	stats_update(&s, 4);
	ck_assert_int_eq(s.sum[f].delta, 3);
	ck_assert_uint_eq(s.sum[f].total, 8);
	ck_assert_int_eq(s.sum[v].delta, 1);
	stats_free(&s);
}
END_TEST

START_TEST(test_rebase_on_lost_contributor)
{
	struct stats s;
	int f;

	stats_init(&s, false);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	push(&s, f, 0, -1, 500, 0);
	stats_update(&s, 1);
	push(&s, f, 0, -1, 600, 0);
	stats_update(&s, 2);
	/* a VM with 400 counts exited: the sum drops, nothing was reset */
	push(&s, f, 0, -1, 200, SAMPLE_REBASE);
	stats_update(&s, 3);
	ck_assert_int_eq(s.sum[f].delta, 0);
	ck_assert_uint_eq(s.sum[f].total, 100);
	push(&s, f, 0, -1, 260, 0);
	stats_update(&s, 4);
	ck_assert_int_eq(s.sum[f].delta, 60);
	ck_assert_uint_eq(s.sum[f].total, 160);
	stats_free(&s);
}
END_TEST

START_TEST(test_gauge)
{
	struct stats s;
	int f;

	stats_init(&s, false);
	f = fid(&s, "pages_4k", -1, FIELD_INSTANT);
	push(&s, f, 0, -1, 512, 0);
	stats_update(&s, 1);
	ck_assert_uint_eq(s.sum[f].total, 512);
	push(&s, f, 0, -1, 500, 0);
	stats_update(&s, 2);
	ck_assert_uint_eq(s.sum[f].total, 500);
	ck_assert_int_eq(s.sum[f].delta, -12);
	stats_free(&s);
}
END_TEST

START_TEST(test_new_series_counts_whole_value)
{
	struct stats s;
	const struct stat_cell *c;
	int f;

	stats_init(&s, false);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	push(&s, f, 0, -1, 0, 0);
	stats_update(&s, 1);
	/* a VM that appears during the run: all of it happened meanwhile */
	push(&s, f, 0, -1, 40, 0);
	push(&s, f, 77, -1, 40, 0);
	push(&s, f, 77, 1, 25, 0);
	stats_update(&s, 2);
	c = stats_cell(&s, f, 77, -1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 40);
	ck_assert_int_eq(c->delta, 40);
	c = stats_cell(&s, f, 77, 1);
	ck_assert_uint_eq(c->total, 25);
	ck_assert_ptr_null(stats_cell(&s, f, 77, 2));
	ck_assert_ptr_null(stats_cell(&s, f, 78, -1));
	stats_free(&s);
}
END_TEST

/* A breakdown reported again (SAMPLE_BASELINE): what the series counted
 * while it was not reported goes to its total, never to its delta. */
START_TEST(test_baseline)
{
	struct stats s;
	const struct stat_cell *c;
	int f;

	stats_init(&s, false);
	f = fid(&s, "halt_exits", -1, FIELD_CUMULATIVE);
	push(&s, f, 77, -1, 0, 0);
	stats_update(&s, 1);
	/* the vCPU's first reading, after 30 counted unreported */
	push(&s, f, 77, -1, 30, 0);
	push(&s, f, 77, 0, 30, SAMPLE_BASELINE);
	stats_update(&s, 2);
	c = stats_cell(&s, f, 77, 0);
	ck_assert_uint_eq(c->total, 30);
	ck_assert_int_eq(c->delta, 0);
	push(&s, f, 77, -1, 35, 0);
	push(&s, f, 77, 0, 35, 0);
	stats_update(&s, 3);
	ck_assert_uint_eq(c->total, 35);
	ck_assert_int_eq(c->delta, 5);
	/* unreported again for a while (10 more), then reported */
	push(&s, f, 77, -1, 45, 0);
	stats_update(&s, 4);
	push(&s, f, 77, -1, 47, 0);
	push(&s, f, 77, 0, 47, SAMPLE_BASELINE);
	stats_update(&s, 5);
	ck_assert_uint_eq(c->total, 47);
	ck_assert_int_eq(c->delta, 0);
	stats_free(&s);
}
END_TEST

START_TEST(test_stale_and_reset_key)
{
	struct stats s;
	struct snapshot snap;
	int a, b;

	stats_init(&s, false);
	a = fid(&s, "a", -1, FIELD_CUMULATIVE);
	b = fid(&s, "b", -1, FIELD_CUMULATIVE);
	push(&s, a, 0, -1, 1, 0);
	push(&s, b, 0, -1, 1, 0);
	stats_update(&s, 1);
	push(&s, a, 0, -1, 11, 0); /* b could not be read */
	stats_update(&s, 2);
	snapshot_build(&s, NULL, &snap);
	ck_assert_int_eq(snap.nrows, 2);
	ck_assert(snap.rows[0].valid);
	ck_assert(!snap.rows[1].valid); /* stale, not a silent zero */
	snapshot_free(&snap);
	stats_reset(&s);
	ck_assert_uint_eq(s.sum[a].total, 0);
	push(&s, a, 0, -1, 14, 0);
	stats_update(&s, 3);
	ck_assert_uint_eq(s.sum[a].total, 3);
	stats_free(&s);
}
END_TEST

Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("aggregate");

	tcase_add_test(tc, test_delta_and_total);
	tcase_add_test(tc, test_include_past);
	tcase_add_test(tc, test_reset_is_not_negative);
	tcase_add_test(tc, test_wrap_is_not_negative);
	tcase_add_test(tc, test_rebase_on_lost_contributor);
	tcase_add_test(tc, test_gauge);
	tcase_add_test(tc, test_new_series_counts_whole_value);
	tcase_add_test(tc, test_baseline);
	tcase_add_test(tc, test_stale_and_reset_key);
	tcase_add_test(tc, test_field_order_and_view);
	suite_add_tcase(s, tc);
	return s;
}
