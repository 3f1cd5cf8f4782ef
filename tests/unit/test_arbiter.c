// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arbiter: a field's owner is its first declarer; what the providers
 * read so far served; the verdict on each reading; and, through the stats
 * layer, fill-ins counted per VM and in the totals (counters and gauges),
 * dropped where the owner saw the VM.
 */
#include <check.h>
#include <string.h>

#include "arbiter.h"
#include "errmsg.h"
#include "filter.h"
#include "provider.h"
#include "stats.h"
#include "suites.h"

static int fid(struct stats *s, const char *name, int parent,
	       enum field_type type)
{
	return field_table_intern(&s->fields, name, parent, type, "test");
}

/* A reading pushed into set by src. */
static void push_src(struct sample_set *set, const char *src, int f, pid_t pid,
		     int vcpu, uint64_t v)
{
	set->src = src;
	sample_set_push(set, f, pid, vcpu, 0, v, 0);
	set->src = NULL;
}

/* The verdict on the last reading pushed into set. */
static enum arbiter_verdict last_verdict(const struct arbiter *a,
					 const struct sample_set *set)
{
	return arbiter_verdict(a, &set->v[set->n - 1]);
}

/* The provider that declares a name first owns it, whoever declares it
 * again; a field nobody declared has no owner. */
START_TEST(test_owner_is_first_declarer)
{
	struct field_table t;
	struct arbiter a;
	int halt, exits, anon;

	field_table_init(&t);
	arbiter_init(&a, &t);
	halt = field_table_intern(&t, "halt_exits", -1, FIELD_CUMULATIVE,
				  "statsfd");
	ck_assert_int_eq(field_table_intern(&t, "halt_exits", -1,
					    FIELD_CUMULATIVE, "debugfs"),
			 halt);
	exits = field_table_intern(&t, "exits", -1, FIELD_CUMULATIVE, "debugfs");
	anon = field_table_intern(&t, "anon", -1, FIELD_CUMULATIVE, NULL);
	ck_assert_str_eq(arbiter_owner(&a, halt), "statsfd");
	ck_assert_str_eq(arbiter_owner(&a, exits), "debugfs");
	ck_assert_ptr_null(arbiter_owner(&a, anon));
	ck_assert_ptr_null(arbiter_owner(&a, -1));
	ck_assert_ptr_null(arbiter_owner(&a, 99));
	ck_assert_ptr_null(arbiter_owner(NULL, halt));
	arbiter_free(&a);
	field_table_free(&t);
}
END_TEST

/* A name is claimed for every provider but its owner; unknown names and
 * names without an owner are nobody's; with no arbiter nothing is. */
START_TEST(test_claimed_name)
{
	struct field_table t;
	struct arbiter a;

	field_table_init(&t);
	arbiter_init(&a, &t);
	field_table_intern(&t, "halt_exits", -1, FIELD_CUMULATIVE, "statsfd");
	field_table_intern(&t, "anon", -1, FIELD_CUMULATIVE, NULL);
	ck_assert(arbiter_claimed(&a, "halt_exits", "debugfs"));
	ck_assert(arbiter_claimed(&a, "halt_exits", "qmp"));
	ck_assert(!arbiter_claimed(&a, "halt_exits", "statsfd"));
	ck_assert(!arbiter_claimed(&a, "exits", "debugfs"));
	ck_assert(!arbiter_claimed(&a, "anon", "debugfs"));
	ck_assert(!arbiter_claimed(&a, "halt_exits", NULL));
	ck_assert(!arbiter_claimed(NULL, "halt_exits", "debugfs"));
	arbiter_free(&a);
	field_table_free(&t);
}
END_TEST

/* What a provider asks through its struct provider: -f and ownership
 * together (provider_wants), ownership alone (provider_claimed). */
START_TEST(test_provider_view)
{
	static const struct provider_ops ops = { .name = "debugfs" };
	struct field_filter halt = { 0 };
	struct provider p = { .ops = &ops };
	struct field_table t;
	struct arbiter a;
	struct errmsg err;

	field_table_init(&t);
	arbiter_init(&a, &t);
	field_table_intern(&t, "halt_exits", -1, FIELD_CUMULATIVE, "statsfd");
	field_table_intern(&t, "halt_wait", -1, FIELD_CUMULATIVE, "debugfs");
	p.fields = &t;
	p.arbiter = &a;
	/* no filter: every field that is not another's */
	ck_assert(!provider_wants(&p, "halt_exits"));
	ck_assert(provider_wants(&p, "halt_wait"));
	ck_assert(provider_wants(&p, "exits"));
	ck_assert(provider_claimed(&p, "halt_exits"));
	/* no arbiter: alone, nothing is claimed */
	p.arbiter = NULL;
	ck_assert(provider_wants(&p, "halt_exits"));
	ck_assert(!provider_claimed(&p, "halt_exits"));
	p.arbiter = &a;
	ck_assert_int_eq(filter_set(&halt, "^halt", &err), 0);
	p.filter = &halt;
	ck_assert(!provider_wants(&p, "halt_exits")); /* claimed */
	ck_assert(provider_wants(&p, "halt_wait"));
	ck_assert(!provider_wants(&p, "exits")); /* filtered out */
	ck_assert(provider_claimed(&p, "halt_exits"));
	filter_free(&halt);
	arbiter_free(&a);
	field_table_free(&t);
}
END_TEST

/*
 * Served: a VM-wide reading of a VM (not a vCPU's, not the whole
 * selection's) serves its pair once noted, for whoever reads after; the
 * reader's own readings only once it is noted; none after the refresh.
 */
START_TEST(test_served_by_earlier_provider)
{
	struct field_table t;
	struct sample_set set;
	struct arbiter a;
	int f, g;

	field_table_init(&t);
	sample_set_init(&set, &t);
	arbiter_init(&a, &t);
	f = field_table_intern(&t, "halt_exits", -1, FIELD_CUMULATIVE,
			       "statsfd");
	g = field_table_intern(&t, "exits", -1, FIELD_CUMULATIVE, "statsfd");
	push_src(&set, "statsfd", f, 0, SAMPLE_ALL_VCPUS, 10);
	push_src(&set, "statsfd", f, 100, SAMPLE_ALL_VCPUS, 4);
	push_src(&set, "statsfd", f, 200, 1, 3);
	ck_assert(!arbiter_served(&a, f, 100)); /* not noted yet */
	arbiter_note(&a, &set);
	ck_assert(arbiter_served(&a, f, 100));
	ck_assert(!arbiter_served(&a, f, 200)); /* a vCPU only */
	ck_assert(!arbiter_served(&a, f, 0));	/* the total */
	ck_assert(!arbiter_served(&a, g, 100)); /* another field */
	ck_assert(!arbiter_served(NULL, f, 100));
	/* the next provider reads: its own VM is not served for itself */
	push_src(&set, "debugfs", f, 300, SAMPLE_ALL_VCPUS, 7);
	push_src(&set, "debugfs", f, 100, SAMPLE_ALL_VCPUS, 4);
	ck_assert(!arbiter_served(&a, f, 300));
	arbiter_note(&a, &set);
	ck_assert(arbiter_served(&a, f, 300)); /* for the next */
	ck_assert(arbiter_served(&a, f, 100));
	/* a noted reading is noted once: noting again changes nothing */
	arbiter_note(&a, &set);
	ck_assert_uint_eq(a.nserved, 2);
	arbiter_end(&a);
	ck_assert(!arbiter_served(&a, f, 100));
	ck_assert(!arbiter_served(&a, f, 300));
	arbiter_free(&a);
	sample_set_free(&set);
	field_table_free(&t);
}
END_TEST

/* The verdict on each kind of reading, without the stats layer. */
START_TEST(test_verdicts)
{
	struct field_table t;
	struct sample_set set;
	struct arbiter a;
	int f, tot, anon;

	field_table_init(&t);
	sample_set_init(&set, &t);
	arbiter_init(&a, &t);
	f = field_table_intern(&t, "halt_exits", -1, FIELD_CUMULATIVE,
			       "statsfd");
	tot = field_table_intern(&t, "exits", -1, FIELD_CUMULATIVE, "debugfs");
	anon = field_table_intern(&t, "anon", -1, FIELD_CUMULATIVE, NULL);

	/* owners only: nothing to judge, everything counts */
	push_src(&set, "statsfd", f, 0, SAMPLE_ALL_VCPUS, 10);
	push_src(&set, "statsfd", f, 100, SAMPLE_ALL_VCPUS, 10);
	push_src(&set, "debugfs", tot, 0, SAMPLE_ALL_VCPUS, 50);
	push_src(&set, NULL, f, 0, SAMPLE_ALL_VCPUS, 1);
	ck_assert(!arbiter_judge(&a, &set));
	for (size_t i = 0; i < set.n; i++)
		ck_assert_int_eq(arbiter_verdict(&a, &set.v[i]), ARBITER_COUNT);

	/* others' readings come in */
	push_src(&set, "debugfs", f, 0, SAMPLE_ALL_VCPUS, 99);
	push_src(&set, "debugfs", f, 100, SAMPLE_ALL_VCPUS, 98);
	push_src(&set, "debugfs", f, 100, 0, 97);
	push_src(&set, "debugfs", f, 200, SAMPLE_ALL_VCPUS, 5);
	push_src(&set, "debugfs", f, 200, 1, 2);
	push_src(&set, "qmp", tot, 200, SAMPLE_ALL_VCPUS, 8);
	push_src(&set, "qmp", anon, 200, SAMPLE_ALL_VCPUS, 8);
	ck_assert(arbiter_judge(&a, &set));
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[0]), ARBITER_COUNT);
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[1]), ARBITER_COUNT);
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[2]), ARBITER_COUNT);
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[3]), ARBITER_COUNT);
	/* the owner's total stands */
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[4]), ARBITER_DROP);
	/* the owner served VM 100, vCPUs included */
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[5]), ARBITER_DROP);
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[6]), ARBITER_DROP);
	/* VM 200 is filled in, its vCPUs too */
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[7]), ARBITER_FILL_IN);
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[8]), ARBITER_FILL_IN);
	/* exits' owner reported a total and no VM: it saw them all */
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[9]), ARBITER_DROP);
	/* a field without an owner: counts */
	ck_assert_int_eq(arbiter_verdict(&a, &set.v[10]), ARBITER_COUNT);

	/* the next refresh: the owner of exits reports VM 300 as well, so
	 * VM 200 is filled in; halt_exits has no owner reading at all */
	arbiter_end(&a);
	sample_set_clear(&set);
	push_src(&set, "debugfs", tot, 0, SAMPLE_ALL_VCPUS, 51);
	push_src(&set, "debugfs", tot, 300, SAMPLE_ALL_VCPUS, 20);
	push_src(&set, "qmp", tot, 200, SAMPLE_ALL_VCPUS, 9);
	ck_assert(arbiter_judge(&a, &set));
	ck_assert_int_eq(last_verdict(&a, &set), ARBITER_FILL_IN);
	push_src(&set, "qmp", f, 100, SAMPLE_ALL_VCPUS, 98);
	ck_assert(arbiter_judge(&a, &set));
	ck_assert_int_eq(last_verdict(&a, &set), ARBITER_FILL_IN);
	push_src(&set, "qmp", f, 0, SAMPLE_ALL_VCPUS, 98);
	ck_assert(arbiter_judge(&a, &set));
	ck_assert_int_eq(last_verdict(&a, &set), ARBITER_DROP);
	arbiter_free(&a);
	sample_set_free(&set);
	field_table_free(&t);
}
END_TEST

/* A reading by `src` (a provider that may not own the field). */
static void push_from(struct stats *s, const char *src, int f, pid_t pid,
		      int vcpu, uint64_t v)
{
	s->set.src = src;
	sample_set_push(&s->set, f, pid, vcpu, 0, v, 0);
	s->set.src = NULL;
}

/*
 * The owner ("test") serves VM 100; another provider reads VMs 100 and
 * 200: only VM 200 is taken from it, and the total is 100's (owner) plus
 * 200's (filled in); its own total (pid 0) is never used.
 */
START_TEST(test_fill_in_unserved_vm)
{
	const struct stat_cell *c;
	struct stats s;
	int f;

	stats_init(&s, false);
	f = fid(&s, "halt_exits", -1, FIELD_CUMULATIVE);
	for (int r = 0; r < 3; r++) {
		/* the owner: VM 100 grows by 10 a refresh */
		push_from(&s, "test", f, 0, -1, 1000 + 10 * r);
		push_from(&s, "test", f, 100, -1, 1000 + 10 * r);
		/* the other: its view of VM 100 is off (must be ignored),
		 * VM 200 grows by 7, vCPU 1 of it by 7 too */
		push_from(&s, "debugfs", f, 0, -1, 999999);
		push_from(&s, "debugfs", f, 100, -1, 555555 * (r + 1));
		push_from(&s, "debugfs", f, 200, -1, 50 + 7 * r);
		push_from(&s, "debugfs", f, 200, 1, 20 + 7 * r);
		stats_update(&s, (uint64_t)(r + 1) * 1000000000ull);
	}
	ck_assert_uint_eq(s.sum[f].total, 2 * 10 + 2 * 7);
	ck_assert_int_eq(s.sum[f].delta, 10 + 7);
	c = stats_cell(&s, f, 100, -1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 20);
	c = stats_cell(&s, f, 200, -1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 14);
	c = stats_cell(&s, f, 200, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->delta, 7);
	stats_free(&s);
}
END_TEST

/* With -i the filled-in VM brings its past into the total, as the owner's
 * VMs do; a VM that appears later counts all of its value. */
START_TEST(test_fill_in_include_past_and_late_vm)
{
	struct stats s;
	int f;

	stats_init(&s, true);
	f = fid(&s, "halt_exits", -1, FIELD_CUMULATIVE);
	push_from(&s, "test", f, 0, -1, 300);
	push_from(&s, "test", f, 100, -1, 300);
	push_from(&s, "qmp", f, 200, -1, 40);
	stats_update(&s, 1);
	ck_assert_uint_eq(s.sum[f].total, 340);
	push_from(&s, "test", f, 0, -1, 301);
	push_from(&s, "test", f, 100, -1, 301);
	push_from(&s, "qmp", f, 200, -1, 42);
	push_from(&s, "qmp", f, 300, -1, 5); /* started just now */
	stats_update(&s, 2);
	ck_assert_uint_eq(s.sum[f].total, 348);
	ck_assert_int_eq(s.sum[f].delta, 8);
	stats_free(&s);
}
END_TEST

/* An owner that reports only a host total (debugfs's top-level files) sees
 * every VM: nobody else's readings add to it. With no owner reading at
 * all, the filled-in VMs make the total alone. */
START_TEST(test_fill_in_owner_total_only)
{
	struct stats s;
	int f, g;

	stats_init(&s, false);
	f = fid(&s, "halt_exits", -1, FIELD_CUMULATIVE);
	g = fid(&s, "pages_4k", -1, FIELD_INSTANT);
	for (int r = 0; r < 2; r++) {
		push_from(&s, "test", f, 0, -1, 100 + r);
		push_from(&s, "qmp", f, 200, -1, 40 + 5 * r);
		/* the owner has no reading of the gauge this time */
		push_from(&s, "qmp", g, 200, -1, 64 + r);
		push_from(&s, "qmp", g, 300, -1, 32);
		stats_update(&s, (uint64_t)r + 1);
	}
	ck_assert_uint_eq(s.sum[f].total, 1);
	ck_assert_int_eq(s.sum[f].delta, 1);
	ck_assert(s.sum[g].seen && s.sum[g].fresh);
	ck_assert_uint_eq(s.sum[g].total, 65 + 32);
	ck_assert_int_eq(s.sum[g].delta, 1);
	stats_free(&s);
}
END_TEST

/*
 * Gauges filled in: the owner serves VM 100 and reports the total; VM 200
 * comes from another provider. An instant gauge's total is the sum of this
 * refresh's values, a peak's the largest of them; both follow the values
 * down as well as up.
 */
START_TEST(test_fill_in_gauges)
{
	const struct stat_cell *c;
	struct stats s;
	int inst, peak;

	stats_init(&s, false);
	inst = fid(&s, "pages_4k", -1, FIELD_INSTANT);
	peak = fid(&s, "max_mmu_page_hash", -1, FIELD_PEAK);
	for (int r = 0; r < 3; r++) {
		/* VM 200's values: 30, 90, 10 */
		uint64_t v200 = r == 0 ? 30 : r == 1 ? 90 : 10;

		push_from(&s, "test", inst, 0, -1, 50);
		push_from(&s, "test", inst, 100, -1, 50);
		push_from(&s, "test", peak, 0, -1, 50);
		push_from(&s, "test", peak, 100, -1, 50);
		push_from(&s, "qmp", inst, 100, -1, 7777); /* dropped */
		push_from(&s, "qmp", peak, 100, -1, 7777); /* dropped */
		push_from(&s, "qmp", inst, 200, -1, v200);
		push_from(&s, "qmp", peak, 200, -1, v200);
		push_from(&s, "qmp", inst, 0, -1, 7777); /* dropped */
		push_from(&s, "qmp", peak, 0, -1, 7777); /* dropped */
		stats_update(&s, (uint64_t)(r + 1) * 1000000000ull);
		ck_assert_uint_eq(s.sum[inst].total, 50 + v200);
		ck_assert_uint_eq(s.sum[peak].total, v200 > 50 ? v200 : 50);
		ck_assert(s.sum[inst].fresh && s.sum[peak].fresh);
	}
	/* 90 then 10: the change since the last refresh, signed */
	ck_assert_int_eq(s.sum[inst].delta, -80);
	c = stats_cell(&s, inst, 200, -1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 10);
	c = stats_cell(&s, peak, 100, -1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 50);
	stats_free(&s);
}
END_TEST

Suite *arbiter_suite(void)
{
	Suite *s = suite_create("arbiter");
	TCase *tc = tcase_create("arbiter");

	tcase_add_test(tc, test_owner_is_first_declarer);
	tcase_add_test(tc, test_claimed_name);
	tcase_add_test(tc, test_provider_view);
	tcase_add_test(tc, test_served_by_earlier_provider);
	tcase_add_test(tc, test_verdicts);
	tcase_add_test(tc, test_fill_in_unserved_vm);
	tcase_add_test(tc, test_fill_in_include_past_and_late_vm);
	tcase_add_test(tc, test_fill_in_owner_total_only);
	tcase_add_test(tc, test_fill_in_gauges);
	suite_add_tcase(s, tc);
	return s;
}
