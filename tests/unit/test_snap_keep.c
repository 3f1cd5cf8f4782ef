// SPDX-License-Identifier: GPL-2.0-only
/*
 * A refresh copies numbers: a snapshot rebuilt while nothing came or went
 * keeps its layout (snapshot_layout_kept) and equals, field by field, a
 * snapshot built afresh from the same stats; whatever changes (a VM, a
 * vCPU, a field, the filter, the view, guest names, vCPU threads,
 * histograms read whole) makes it build afresh. And each reading's cell,
 * remembered by its place in the sample set, is the one its key names
 * whatever order and set of readings the providers push, arbiter verdicts
 * included.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "hist.h"
#include "snapshot.h"
#include "stats.h"
#include "suites.h"
#include "util.h"
#include "vmdir.h"

static void eq_hist(const struct snap_hist *a, const struct snap_hist *b)
{
	ck_assert(!a == !b);
	if (!a)
		return;
	ck_assert_int_eq(a->field, b->field);
	ck_assert_uint_eq(a->nbuckets, b->nbuckets);
	ck_assert_int_eq(a->fresh, b->fresh);
	ck_assert_int_eq(a->measured, b->measured);
	ck_assert_uint_eq(a->count, b->count);
	ck_assert_uint_eq(a->sum, b->sum);
	ck_assert_uint_eq(a->min, b->min);
	ck_assert_uint_eq(a->max, b->max);
	for (size_t i = 0; i < a->nbuckets; i++) {
		const struct snap_bucket *x = &a->buckets[i],
					 *y = &b->buckets[i];

		ck_assert_int_eq(x->index, y->index);
		ck_assert_uint_eq(x->lo, y->lo);
		ck_assert_uint_eq(x->hi, y->hi);
		ck_assert_uint_eq(x->total, y->total);
		ck_assert_int_eq(x->delta, y->delta);
		ck_assert_int_eq(x->seen, y->seen);
		ck_assert_int_eq(x->fresh, y->fresh);
	}
}

static void eq_row(const struct snap_row *a, const struct snap_row *b)
{
	ck_assert_int_eq(a->field, b->field);
	ck_assert_str_eq(a->name, b->name);
	ck_assert_int_eq(a->parent, b->parent);
	ck_assert_int_eq(a->type, b->type);
	ck_assert_int_eq(a->per_vcpu, b->per_vcpu);
	ck_assert_uint_eq(a->total, b->total);
	ck_assert_int_eq(a->delta, b->delta);
	ck_assert_msg(a->rate == b->rate, "%s: rate %g, afresh %g", a->name,
		      a->rate, b->rate);
	ck_assert_int_eq(a->valid, b->valid);
	eq_hist(a->hist, b->hist);
}

static void eq_scope(const struct snap_scope *a, const struct snap_scope *b)
{
	ck_assert(!a == !b);
	if (!a)
		return;
	ck_assert_int_eq(a->pid, b->pid);
	ck_assert_int_eq(a->vcpu, b->vcpu);
	ck_assert_int_eq(a->tid, b->tid);
	ck_assert(!a->guest == !b->guest);
	if (a->guest)
		ck_assert_str_eq(a->guest, b->guest);
	ck_assert_int_eq(a->fresh, b->fresh);
	ck_assert_uint_eq(a->total, b->total);
	ck_assert_int_eq(a->delta, b->delta);
	ck_assert(a->rate == b->rate);
	for (int t = 0; t < SNAP_TOP; t++) {
		ck_assert_int_eq(a->top[t], b->top[t]);
		ck_assert(a->top_rate[t] == b->top_rate[t]);
	}
	ck_assert_uint_eq(a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++)
		eq_row(&a->rows[i], &b->rows[i]);
	ck_assert_uint_eq(a->nhists, b->nhists);
	for (size_t i = 0; i < a->nhists; i++)
		eq_hist(&a->hists[i], &b->hists[i]);
	ck_assert_uint_eq(a->nchildren, b->nchildren);
	for (size_t i = 0; i < a->nchildren; i++)
		eq_scope(&a->children[i], &b->children[i]);
}

/* a and b show the same, field by field. */
static void eq_snap(const struct snapshot *a, const struct snapshot *b)
{
	ck_assert_uint_eq(a->nfields, b->nfields);
	for (size_t i = 0; i < a->nfields; i++) {
		const struct field_info *x = &a->fields[i], *y = &b->fields[i];

		ck_assert_str_eq(x->name, y->name);
		ck_assert_int_eq(x->parent, y->parent);
		ck_assert_int_eq(x->type, y->type);
		ck_assert_int_eq(x->unit, y->unit);
		ck_assert_int_eq(x->hist, y->hist);
		ck_assert_int_eq(x->bucket, y->bucket);
		ck_assert_uint_eq(x->flags, y->flags);
		ck_assert_int_eq(x->order, y->order);
	}
	ck_assert_uint_eq(a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++)
		eq_row(&a->rows[i], &b->rows[i]);
	eq_scope(a->whole, b->whole);
	ck_assert(!a->view == !b->view);
	if (a->view) {
		ck_assert_int_eq(a->view->pid, b->view->pid);
		ck_assert_int_eq(a->view->vcpu, b->view->vcpu);
	}
	ck_assert_uint_eq(a->interval_ns, b->interval_ns);
}

/* Rebuilds kept for req, checks it against a build afresh and returns
 * whether it kept its layout. */
static bool check(const struct stats *s, const struct snap_request *req,
		  struct snapshot *kept)
{
	struct snapshot fresh;

	snapshot_rebuild(s, req, kept);
	snapshot_build(s, req, &fresh);
	ck_assert(!snapshot_layout_kept(&fresh));
	eq_snap(kept, &fresh);
	snapshot_free(&fresh);
	return snapshot_layout_kept(kept);
}

/* The fields of the tests: events with children, a count of exits, a
 * gauge and a histogram of four buckets. */
struct kf {
	int ev, hlt, io, exits, gauge, h, kid[4];
};

static int fid(struct stats *s, const char *name, int parent,
	       enum field_type type)
{
	return field_table_intern(&s->fields, name, parent, type, "a");
}

static void kf_init(struct stats *s, struct kf *f)
{
	f->ev = fid(s, "kvm_exit", -1, FIELD_CUMULATIVE);
	f->hlt = fid(s, "kvm_exit(HLT)", f->ev, FIELD_CUMULATIVE);
	f->io = fid(s, "kvm_exit(IO)", f->ev, FIELD_CUMULATIVE);
	f->exits = fid(s, "exits", -1, FIELD_CUMULATIVE);
	field_table_info(&s->fields, f->exits)->flags = FIELD_EXITS;
	f->gauge = fid(s, "pages", -1, FIELD_INSTANT);
	f->h = fid(s, "h", -1, FIELD_CUMULATIVE);
	field_table_info(&s->fields, f->h)->hist = HIST_LOG2;
	for (int k = 3; k >= 0; k--) {
		char name[16];
		struct field_info *i;

		snprintf(name, sizeof(name), "h(%d)", k);
		f->kid[k] = fid(s, name, f->h, FIELD_CUMULATIVE);
		i = field_table_info(&s->fields, f->kid[k]);
		i->bucket = k;
		i->bucket_lo = k ? 1ull << (k - 1) : 0;
		i->bucket_hi = k == 3 ? UINT64_MAX : 1ull << k;
	}
}

/* One refresh's readings of VM pid's vCPUs [0, nvcpu) and the VM, values
 * growing with r (differently by field and scope, so that the busiest
 * change places), some left out now and then. */
static void push_vm(struct stats *s, const struct kf *f, pid_t pid, int nvcpu,
		    uint64_t r)
{
	for (int c = -1; c < nvcpu; c++) {
		uint64_t m = (uint64_t)(pid + 3 * c + 5);

		sample_set_push(&s->set, f->hlt, pid, c, 0, r * r * m, 0);
		if ((r + (uint64_t)c) % 3)
			sample_set_push(&s->set, f->io, pid, c, 0, r * (m % 7),
					0);
		sample_set_push(&s->set, f->gauge, pid, c, 0, (r * m) % 11, 0);
		if (c >= 0)
			sample_set_push(&s->set, f->exits, pid, c, 4000 + c,
					r * (m + 1), 0);
		for (int k = 0; k < 4; k++)
			if (k != 2 || r % 2)
				sample_set_push(&s->set, f->kid[k], pid, c, 0,
						r * (uint64_t)(k + c + 2), 0);
	}
}

static void push_whole(struct stats *s, const struct kf *f, uint64_t r)
{
	sample_set_push(&s->set, f->ev, 0, -1, 0, r * 13, 0);
	sample_set_push(&s->set, f->hlt, 0, -1, 0, r * 9, 0);
	sample_set_push(&s->set, f->exits, 0, -1, 0, r * 21, 0);
	sample_set_push(&s->set, f->kid[1], 0, -1, 0, r * r, 0);
}

enum {
	NREQ = 6
};

/*
 * Refreshes of two VMs with changing numbers, through six views (the
 * whole selection, a filter with children, one VM per vCPU, one vCPU,
 * guest names and vCPU threads, histograms read whole): each kept view
 * equals one built afresh, and keeps its layout once nothing comes or
 * goes. Then a unit changes, a field comes unread, a field's total is read
 * first, a VM comes, a vCPU, a field, a VM stops being read, a name and a
 * vCPU thread change, the filter changes, a histogram read whole comes:
 * each time the views build afresh, and equal a fresh build again.
 */
START_TEST(test_keep_equals_fresh)
{
	struct stats s;
	struct kf f;
	struct field_filter flt = { 0 };
	struct errmsg err;
	struct vmdir d;
	struct hist_set hs;
	struct vmdir_vcpu vc[2] = { { 0, 4100 }, { 1, 4101 } };
	struct snap_request req[NREQ] = {
		{ .vcpu = SAMPLE_ALL_VCPUS },
		{ .vcpu = SAMPLE_ALL_VCPUS, .filter = &flt, .children = true },
		{ .pid = 100, .vcpu = SAMPLE_ALL_VCPUS, .per_vcpu = true },
		{ .pid = 200, .vcpu = 1 },
		{ .vcpu = SAMPLE_ALL_VCPUS, .vms = &d, .filter = &flt },
		{ .vcpu = SAMPLE_ALL_VCPUS, .hists = &hs },
	};
	struct snapshot kept[NREQ];
	uint64_t r = 0;
	int late = -1;

	memset(kept, 0, sizeof(kept));
	stats_init(&s, false);
	kf_init(&s, &f);
	ck_assert_int_eq(filter_set(&flt, "kvm_exit\\(|exits|h", &err), 0);
	vmdir_init(&d);
	vmdir_set_name(vmdir_get(&d, 100), "hundred");
	vmdir_set_vcpus(vmdir_get(&d, 200), vc, 2);
	hist_set_init(&hs);

	for (int step = 0; step < 14; step++) {
		bool keep = true;

		r++;
		/* what comes or goes before this refresh */
		switch (step) {
		case 3: /* a field's unit */
			field_table_info(&s.fields, f.gauge)->unit = UNIT_BYTES;
			keep = false;
			break;
		case 4: /* a field, not read */
			fid(&s, "quiet", -1, FIELD_CUMULATIVE);
			keep = false;
			break;
		case 5: /* a field's total, read for the first time */
		case 6: /* a VM */
		case 7: /* a vCPU of VM 100 */
		case 8: /* a field */
			keep = false;
			break;
		case 9: /* VM 300 is no longer read: nothing goes */
			break;
		case 10: /* a name, a vCPU thread */
			vmdir_set_name(vmdir_get(&d, 200), "two hundred");
			vc[1].tid = 4102;
			vmdir_set_vcpus(vmdir_get(&d, 200), vc, 2);
			keep = false;
			break;
		case 11: /* the filter */
			ck_assert_int_eq(filter_set(&flt, "kvm_exit", &err), 0);
			keep = false;
			break;
		case 12: /* a histogram read whole */
			hist_set_add(&hs, f.h, 200, 1, 4102, 4)->b[2] = 3;
			keep = false;
			break;
		default:
			break;
		}
		if (step >= 8 && late < 0)
			late = fid(&s, "late", -1, FIELD_CUMULATIVE);
		push_whole(&s, &f, r);
		if (step >= 5)
			sample_set_push(&s.set, f.gauge, 0, -1, 0, r % 3, 0);
		push_vm(&s, &f, 100, step >= 7 ? 3 : 2, r);
		push_vm(&s, &f, 200, 2, r);
		if (step >= 6 && step < 9)
			push_vm(&s, &f, 300, 1, r);
		if (late >= 0)
			sample_set_push(&s.set, late, 200, 0, 0, r * 3, 0);
		/* the readings whole change their numbers only */
		for (size_t i = 0; i < hs.n; i++) {
			hs.v[i].count = r;
			hs.v[i].b[0] = r * 2;
		}
		stats_update(&s, r * 1000000000ull);
		for (int q = 0; q < NREQ; q++) {
			bool k = check(&s, &req[q], &kept[q]);

			/* the first two refreshes read every series first */
			if (step < 2)
				continue;
			/* the filter and the readings whole: their views */
			if ((step == 11 && !req[q].filter) ||
			    (step == 12 && !req[q].hists) ||
			    (step == 10 && !req[q].vms))
				ck_assert_msg(k, "step %d view %d: rebuilt",
					      step, q);
			else
				ck_assert_msg(k == keep,
					      "step %d view %d: kept %d", step,
					      q, k);
		}
	}
	for (int q = 0; q < NREQ; q++)
		snapshot_free(&kept[q]);
	hist_set_free(&hs);
	vmdir_free(&d);
	filter_free(&flt);
	stats_free(&s);
}
END_TEST

/* Deterministic shuffle of v[0..n). */
static void shuffle(struct sample *v, size_t n, unsigned *seed)
{
	for (size_t i = n; i > 1; i--) {
		size_t j;
		struct sample t;

		*seed = *seed * 1103515245u + 12345u;
		j = (*seed >> 8) % i;
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Every cell of a as in b, found by its key (b may hold them in another
 * order), and the fields' totals. */
static void eq_stats(const struct stats *a, const struct stats *b)
{
	ck_assert_uint_eq(a->nkeys, b->nkeys);
	ck_assert_uint_eq(a->nsum, b->nsum);
	for (size_t i = 0; i < a->nkeys; i++) {
		const struct stats_key *k = &a->keys[i];
		const struct stat_cell *x = &a->cells[i];
		const struct stat_cell *y = stats_cell(b, k->field, k->pid,
						       k->vcpu);

		ck_assert_ptr_nonnull(y);
		ck_assert_msg(x->total == y->total && x->delta == y->delta &&
				      x->raw == y->raw &&
				      x->fresh == y->fresh &&
				      x->seen == y->seen && x->tid == y->tid,
			      "field %d pid %d vcpu %d: %lu/%ld, %lu/%ld",
			      k->field, (int)k->pid, k->vcpu,
			      (unsigned long)x->total, (long)x->delta,
			      (unsigned long)y->total, (long)y->delta);
	}
	for (size_t f = 0; f < a->nsum; f++) {
		ck_assert_uint_eq(a->sum[f].total, b->sum[f].total);
		ck_assert_int_eq(a->sum[f].delta, b->sum[f].delta);
		ck_assert_int_eq(a->sum[f].seen, b->sum[f].seen);
	}
}

/* One provider's readings into s (stamped src), shuffled with a seed,
 * then noted by the arbiter as the loop does after each read. */
static void provider_read(struct stats *s, const char *src,
			  const struct sample *v, size_t n, unsigned *seed)
{
	size_t from = s->set.n;

	s->set.src = src;
	for (size_t i = 0; i < n; i++)
		sample_set_push(&s->set, v[i].field, v[i].pid, v[i].vcpu,
				v[i].tid, v[i].value, v[i].flags);
	if (seed)
		shuffle(&s->set.v[from], n, seed);
	arbiter_note(&s->arbiter, &s->set);
	s->set.src = NULL;
}

/*
 * The same readings pushed in the same order every refresh into one
 * stats, and shuffled (a new order each refresh) into another: cell by
 * cell the same, while VMs come and go and the owner ("a") stops and
 * starts serving a VM that another provider ("b") then fills in, so that
 * a reading at one place goes from counted to filled in to dropped.
 */
START_TEST(test_cells_any_order)
{
	struct stats in_order, shuffled;
	struct snapshot kept = { 0 };
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS };
	struct sample a[64], b[64];
	struct kf f, g;
	unsigned seed = 7;

	stats_init(&in_order, false);
	stats_init(&shuffled, false);
	kf_init(&in_order, &f);
	kf_init(&shuffled, &g);
	ck_assert_mem_eq(&f, &g, sizeof(f));
	for (uint64_t r = 1; r <= 12; r++) {
		size_t na = 0, nb = 0;

		for (pid_t pid = 10; pid <= 50; pid += 10) {
			/* VM 30 comes at 4, VM 50 goes at 8 */
			if ((pid == 30 && r < 4) || (pid == 50 && r >= 8))
				continue;
			/* the owner leaves VM 20 to b now and then */
			if (pid != 20 || r % 3) {
				a[na++] = (struct sample){
					f.hlt, pid, -1, 0, r * (uint64_t)pid,
					0,     NULL
				};
				a[na++] = (struct sample){ f.hlt, pid, 0,   0,
							   r * 2, 0,   NULL };
				a[na++] = (struct sample){ f.gauge,	pid,
							   -1,		0,
							   (r * 7) % 5, 0,
							   NULL };
			}
			/* b reads every VM: fills in where a did not */
			b[nb++] = (struct sample){
				f.hlt, pid, -1, 0, r * 3 * (uint64_t)pid,
				0,     NULL
			};
			b[nb++] = (struct sample){ f.gauge, pid, -1,  0,
						   r % 4,   0,	 NULL };
			b[nb++] = (struct sample){
				f.hlt, pid, 1, 0, r, 0, NULL
			};
		}
		a[na++] = (struct sample){ f.hlt, 0, -1, 0, r * 100, 0, NULL };
		b[nb++] = (struct sample){ f.hlt, 0, -1, 0, r * 999, 0, NULL };
		provider_read(&in_order, "a", a, na, NULL);
		provider_read(&in_order, "b", b, nb, NULL);
		provider_read(&shuffled, "a", a, na, &seed);
		provider_read(&shuffled, "b", b, nb, &seed);
		stats_update(&in_order, r * 1000000000ull);
		stats_update(&shuffled, r * 1000000000ull);
		eq_stats(&in_order, &shuffled);
		eq_stats(&shuffled, &in_order);
		check(&in_order, &req, &kept);
	}
	snapshot_free(&kept);
	stats_free(&in_order);
	stats_free(&shuffled);
}
END_TEST

Suite *snap_keep_suite(void)
{
	Suite *s = suite_create("snap_keep");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_keep_equals_fresh);
	tcase_add_test(tc, test_cells_any_order);
	suite_add_tcase(s, tc);
	return s;
}
