// SPDX-License-Identifier: GPL-2.0-only
/* The aggregator: totals, deltas, resets, -i, gauges, breakdowns, parents. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"
#include "suites.h"

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
	ck_assert_uint_eq(s.sum[f].total, 0);	/* counts from our start */
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
	push(&s, a, 0, -1, 11, 0);	/* b could not be read */
	stats_update(&s, 2);
	stats_snapshot(&s, NULL, &snap);
	ck_assert_int_eq(snap.nrows, 2);
	ck_assert(snap.rows[0].valid);
	ck_assert(!snap.rows[1].valid);	/* stale, not a silent zero */
	snapshot_free(&snap);
	stats_reset(&s);
	ck_assert_uint_eq(s.sum[a].total, 0);
	push(&s, a, 0, -1, 14, 0);
	stats_update(&s, 3);
	ck_assert_uint_eq(s.sum[a].total, 3);
	stats_free(&s);
}
END_TEST

START_TEST(test_snapshot_children)
{
	struct stats s;
	struct snapshot snap;
	struct field_filter all = { 0 }, def = { 0 };
	char err[128];
	int p, c1, c2, lone, l1;

	stats_init(&s, false);
	p = fid(&s, "kvm_exit", -1, FIELD_CUMULATIVE);
	c1 = fid(&s, "kvm_exit(HLT)", p, FIELD_CUMULATIVE);
	c2 = fid(&s, "kvm_exit(IO_INSTRUCTION)", p, FIELD_CUMULATIVE);
	lone = fid(&s, "kvm_userspace_exit", -1, FIELD_CUMULATIVE);
	l1 = fid(&s, "kvm_userspace_exit(MMIO)", lone, FIELD_CUMULATIVE);
	push(&s, p, 0, -1, 0, 0);
	push(&s, c1, 0, -1, 0, 0);
	push(&s, c2, 0, -1, 0, 0);
	push(&s, l1, 0, -1, 0, 0);
	stats_update(&s, 0);
	push(&s, p, 0, -1, 10, 0);
	push(&s, c1, 0, -1, 3, 0);
	push(&s, c2, 0, -1, 7, 0);
	push(&s, l1, 0, -1, 9, 0);	/* parent not counted: sums children */
	stats_update(&s, 2000000000ull);
	stats_snapshot(&s, NULL, &snap);
	ck_assert_int_eq(snap.nrows, 5);
	ck_assert_str_eq(snap.rows[0].name, "kvm_exit");
	ck_assert_uint_eq(snap.rows[0].total, 10);
	ck_assert(snap.rows[0].rate == 5.0);
	ck_assert_str_eq(snap.rows[1].name, "kvm_exit(HLT)");
	ck_assert_str_eq(snap.rows[3].name, "kvm_userspace_exit");
	ck_assert_uint_eq(snap.rows[3].total, 9);
	ck_assert_int_eq(snap.rows[3].delta, 9);
	snapshot_free(&snap);
	ck_assert_int_eq(filter_set(&def, "^[^(]*$", err, sizeof(err)), 0);
	stats_snapshot(&s, &def, &snap);
	ck_assert_int_eq(snap.nrows, 2);
	snapshot_free(&snap);
	ck_assert_int_eq(filter_set(&all, "^kvm_exit", err, sizeof(err)), 0);
	stats_snapshot(&s, &all, &snap);
	ck_assert_int_eq(snap.nrows, 3);
	snapshot_free(&snap);
	filter_free(&all);
	filter_free(&def);
	stats_free(&s);
}
END_TEST

/* Scopes: one VM, one vCPU, NAME/vcpuN rows; groups for the views. */
START_TEST(test_scope_and_groups)
{
	struct snap_scope vm = { .pid = 10, .vcpu = -1 };
	struct snap_scope per = { .pid = 10, .vcpu = -1, .per_vcpu = true };
	struct snap_scope one = { .pid = 10, .vcpu = 1 };
	struct snap_group *g;
	struct snapshot snap;
	struct stats s;
	int ex, hlt, *v;
	size_t n;

	stats_init(&s, true);
	ex = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	hlt = fid(&s, "halt_exits", -1, FIELD_CUMULATIVE);
	for (int round = 1; round <= 2; round++) {
		push(&s, ex, 0, -1, 100 * round, 0);
		push(&s, ex, 10, -1, 60 * round, 0);
		push(&s, ex, 20, -1, 40 * round, 0);
		sample_set_push(&s.set, ex, 10, 0, 1001, 20 * round, 0);
		sample_set_push(&s.set, ex, 10, 1, 1002, 40 * round, 0);
		push(&s, hlt, 10, -1, 7 * round, 0);
		stats_update(&s, round * 1000000000ull);
	}
	stats_snapshot_scope(&s, NULL, &vm, &snap);
	ck_assert_int_eq(snap.nrows, 2);
	ck_assert_str_eq(snap.rows[0].name, "exits");
	ck_assert_uint_eq(snap.rows[0].total, 120);
	snapshot_free(&snap);
	stats_snapshot_scope(&s, NULL, &one, &snap);
	ck_assert_int_eq(snap.nrows, 1);
	ck_assert_uint_eq(snap.rows[0].total, 80);
	snapshot_free(&snap);
	stats_snapshot_scope(&s, NULL, &per, &snap);
	ck_assert_int_eq(snap.nrows, 4);
	ck_assert_str_eq(snap.rows[1].name, "exits/vcpu0");
	ck_assert_uint_eq(snap.rows[1].total, 40);
	ck_assert_str_eq(snap.rows[2].name, "exits/vcpu1");
	ck_assert_int_eq(snap.rows[2].delta, 40);
	snapshot_free(&snap);
	ck_assert_uint_eq(stats_vcpus_of(&s, 10, &v), 2);
	ck_assert_int_eq(v[0], 0);
	ck_assert_int_eq(v[1], 1);
	free(v);
	n = stats_groups(&s, NULL, 0, &g);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(g[0].pid, 10);
	ck_assert_uint_eq(g[0].total, 120);	/* "exits", not exits + halts */
	ck_assert(g[0].rate == 60.0);
	ck_assert_int_eq(g[0].top[0], ex);
	ck_assert_int_eq(g[0].top[1], hlt);
	ck_assert_int_eq(g[1].pid, 20);
	free(g);
	n = stats_groups(&s, NULL, 10, &g);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(g[1].vcpu, 1);
	ck_assert_int_eq(g[1].tid, 1002);
	ck_assert_uint_eq(g[1].total, 80);
	free(g);
	stats_free(&s);
}
END_TEST

/* Busiest events: a child stands for its parent ("kvm_exit(HLT)", not
 * "kvm_exit" beside it); a parent whose children are not kept stays;
 * histogram buckets are not events. */
START_TEST(test_groups_busiest_children)
{
	struct field_filter only_parent = { 0 };
	struct snap_group *g;
	struct stats s;
	int ex, hlt, io, pio, h, b;
	char err[128];
	size_t n;

	stats_init(&s, true);
	ex = fid(&s, "kvm_exit", -1, FIELD_CUMULATIVE);
	hlt = fid(&s, "kvm_exit(HLT)", ex, FIELD_CUMULATIVE);
	io = fid(&s, "kvm_exit(IO)", ex, FIELD_CUMULATIVE);
	pio = fid(&s, "kvm_pio", -1, FIELD_CUMULATIVE);
	h = fid(&s, "halt_wait_hist", -1, FIELD_CUMULATIVE);
	s.fields.v[h].hist = HIST_LOG2;
	b = fid(&s, "halt_wait_hist(3)", h, FIELD_CUMULATIVE);
	s.fields.v[b].bucket = 3;
	for (int round = 1; round <= 2; round++) {
		push(&s, ex, 10, -1, 1000 * round, 0);
		push(&s, hlt, 10, -1, 900 * round, 0);
		push(&s, io, 10, -1, 100 * round, 0);
		push(&s, pio, 10, -1, 100 * round, 0);
		push(&s, h, 10, -1, 950 * round, 0);
		push(&s, b, 10, -1, 950 * round, 0);
		stats_update(&s, round * 1000000000ull);
	}
	n = stats_groups(&s, NULL, 0, &g);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(g[0].top[0], h);
	ck_assert_int_eq(g[0].top[1], hlt);
	ck_assert(g[0].top[2] == io || g[0].top[2] == pio);
	free(g);
	ck_assert_int_eq(filter_set(&only_parent, "^kvm_exit$", err, sizeof(err)), 0);
	n = stats_groups(&s, &only_parent, 0, &g);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(g[0].top[0], ex);
	ck_assert_int_eq(g[0].top[1], -1);
	free(g);
	filter_free(&only_parent);
	stats_free(&s);
}
END_TEST

/* Snapshot rows go by name as kvm_stat sorts them, except histogram
 * buckets, which go by their number: (2) before (10). */
START_TEST(test_row_order)
{
	static const char *const in[] = { "h_x", "h(10)", "h", "h(2)", "h(1)",
					  "a(B)", "a(A)", "h(02x)" };
	static const char *const want[] = { "a(A)", "a(B)", "h", "h(1)",
					    "h(2)", "h(02x)", "h(10)", "h_x" };
	struct snapshot snap;
	struct stats s;

	stats_init(&s, true);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		push(&s, fid(&s, in[i], -1, FIELD_CUMULATIVE), 0, -1, i, 0);
	stats_update(&s, 1);
	stats_snapshot(&s, NULL, &snap);
	ck_assert_uint_eq(snap.nrows, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < snap.nrows; i++)
		ck_assert_str_eq(snap.rows[i].name, want[i]);
	ck_assert_int_lt(util_name_cmp("x(9)", "x(10)"), 0);
	ck_assert_int_gt(util_name_cmp("x(10)", "x(9)"), 0);
	/* equal values: still a strict order (the exporter bsearches) */
	ck_assert_int_lt(util_name_cmp("x(007)", "x(7)"), 0);
	ck_assert_int_gt(util_name_cmp("x(7)", "x(007)"), 0);
	ck_assert_int_eq(util_name_cmp("x(7)", "x(7)"), 0);
	/* outside parentheses, strcmp's order: "x10" < "x9" */
	ck_assert_int_gt(util_name_cmp("x9", "x10"), 0);
	snapshot_free(&snap);
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
	tcase_add_test(tc, test_rebase_on_lost_contributor);
	tcase_add_test(tc, test_gauge);
	tcase_add_test(tc, test_new_series_counts_whole_value);
	tcase_add_test(tc, test_stale_and_reset_key);
	tcase_add_test(tc, test_snapshot_children);
	tcase_add_test(tc, test_scope_and_groups);
	tcase_add_test(tc, test_row_order);
	tcase_add_test(tc, test_groups_busiest_children);
	suite_add_tcase(s, tc);
	return s;
}
