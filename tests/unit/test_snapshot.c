// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snapshots: the view (filter, parents summing children, one VM, one
 * vCPU, NAME/vcpuN rows, order), the tree of scopes and its summaries
 * (exits by the provider's flag, busiest events), histograms with their
 * buckets per scope (those read whole too: exit latency's), guest names,
 * and that a snapshot outlives its stats.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/vmscan.h"
#include "errmsg.h"
#include "hist.h"
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

/* The snapshot of the whole selection through filter (NULL: all). */
static void build(const struct stats *s, const struct field_filter *filter,
		  struct snapshot *out)
{
	struct snap_request req = { .filter = filter };

	snapshot_build(s, &req, out);
}

START_TEST(test_snapshot_children)
{
	struct stats s;
	struct snapshot snap;
	struct field_filter all = { 0 }, def = { 0 };
	struct errmsg err;
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
	push(&s, l1, 0, -1, 9, 0); /* parent not counted: sums children */
	stats_update(&s, 2000000000ull);
	build(&s, NULL, &snap);
	ck_assert_int_eq(snap.nrows, 5);
	ck_assert_str_eq(snap.rows[0].name, "kvm_exit");
	ck_assert_uint_eq(snap.rows[0].total, 10);
	ck_assert(snap.rows[0].rate == 5.0);
	ck_assert_str_eq(snap.rows[1].name, "kvm_exit(HLT)");
	ck_assert_str_eq(snap.rows[3].name, "kvm_userspace_exit");
	ck_assert_uint_eq(snap.rows[3].total, 9);
	ck_assert_int_eq(snap.rows[3].delta, 9);
	ck_assert_int_eq(snap.rows[3].parent, -1);
	ck_assert(snap.rows[3].rate == 4.5);
	/* the whole selection's rows: every field read, by id */
	ck_assert_ptr_eq(snap.view, snap.whole);
	ck_assert_uint_eq(snap.whole->nrows, 5);
	ck_assert_int_eq(snap.whole->rows[3].field, lone);
	ck_assert_int_eq(snap.whole->rows[4].field, l1);
	ck_assert_uint_eq(snap.whole->nchildren, 0); /* no breakdowns */
	snapshot_free(&snap);
	ck_assert_int_eq(filter_set(&def, "^[^(]*$", &err), 0);
	build(&s, &def, &snap);
	ck_assert_int_eq(snap.nrows, 2);
	/* the filter is the view's: the scope keeps every row */
	ck_assert_uint_eq(snap.whole->nrows, 5);
	snapshot_free(&snap);
	ck_assert_int_eq(filter_set(&all, "^kvm_exit", &err), 0);
	build(&s, &all, &snap);
	ck_assert_int_eq(snap.nrows, 3);
	snapshot_free(&snap);
	filter_free(&all);
	filter_free(&def);
	stats_free(&s);
}
END_TEST

/*
 * Views: one VM, one vCPU, NAME/vcpuN rows; the tree and the summaries of
 * the per-guest views. The exits total is the field its provider flags,
 * whatever its name.
 */
START_TEST(test_scope_and_groups)
{
	struct snap_request vm = { .pid = 10, .vcpu = -1 };
	struct snap_request per = { .pid = 10, .vcpu = -1, .per_vcpu = true };
	struct snap_request one = { .pid = 10, .vcpu = 1 };
	const struct snap_scope *g;
	struct snapshot snap;
	struct stats s;
	int ex, hlt, *v;

	stats_init(&s, true);
	ex = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	s.fields.v[ex].flags |= FIELD_EXITS;
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
	snapshot_build(&s, &vm, &snap);
	ck_assert_int_eq(snap.nrows, 2);
	ck_assert_str_eq(snap.rows[0].name, "exits");
	ck_assert_uint_eq(snap.rows[0].total, 120);
	ck_assert_int_eq(snap.view->pid, 10);
	snapshot_free(&snap);
	snapshot_build(&s, &one, &snap);
	ck_assert_int_eq(snap.nrows, 1);
	ck_assert_uint_eq(snap.rows[0].total, 80);
	ck_assert_int_eq(snap.view->vcpu, 1);
	snapshot_free(&snap);
	snapshot_build(&s, &per, &snap);
	ck_assert_int_eq(snap.nrows, 4);
	ck_assert(!snap.rows[0].per_vcpu);
	ck_assert_str_eq(snap.rows[1].name, "exits/vcpu0");
	ck_assert(snap.rows[1].per_vcpu);
	ck_assert_uint_eq(snap.rows[1].total, 40);
	ck_assert_str_eq(snap.rows[2].name, "exits/vcpu1");
	ck_assert_int_eq(snap.rows[2].delta, 40);
	snapshot_free(&snap);
	/* what main checks --vcpu against, from the aggregator */
	ck_assert_uint_eq(stats_vcpus_of(&s, 10, &v), 2);
	ck_assert_int_eq(v[0], 0);
	ck_assert_int_eq(v[1], 1);
	free(v);

	build(&s, NULL, &snap);
	ck_assert_uint_eq(snap.whole->nchildren, 2);
	g = snap.whole->children;
	ck_assert_int_eq(g[0].pid, 10);
	ck_assert_int_eq(g[0].vcpu, SAMPLE_ALL_VCPUS);
	ck_assert(g[0].fresh);
	ck_assert_uint_eq(g[0].total, 120); /* "exits", not exits + halts */
	ck_assert(g[0].rate == 60.0);
	ck_assert_int_eq(g[0].top[0], ex);
	ck_assert_int_eq(g[0].top[1], hlt);
	ck_assert_int_eq(g[1].pid, 20);
	ck_assert_uint_eq(g[1].nchildren, 0);
	/* the vCPUs of VM 10 */
	ck_assert_uint_eq(g[0].nchildren, 2);
	g = g[0].children;
	ck_assert_int_eq(g[0].vcpu, 0);
	ck_assert_int_eq(g[1].pid, 10);
	ck_assert_int_eq(g[1].vcpu, 1);
	ck_assert_int_eq(g[1].tid, 1002);
	ck_assert_uint_eq(g[1].total, 80);
	ck_assert_uint_eq(g[1].nrows, 1);
	ck_assert_uint_eq(g[1].rows[0].total, 80);
	snapshot_free(&snap);

	/* the flag, not the name: unflagged, "exits" is one event of many */
	s.fields.v[ex].flags = 0;
	s.fields.v[hlt].flags |= FIELD_EXITS;
	build(&s, NULL, &snap);
	ck_assert_uint_eq(snap.whole->children[0].total, 14);
	ck_assert_uint_eq(snap.whole->children[1].total, 80);
	s.fields.v[hlt].flags = 0;
	snapshot_free(&snap);
	build(&s, NULL, &snap);
	ck_assert_uint_eq(snap.whole->children[0].total, 120 + 14);
	ck_assert_int_eq(snap.whole->children[0].delta, 60 + 7);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

/* Busiest events: a child stands for its parent ("kvm_exit(HLT)", not
 * "kvm_exit" beside it); a parent whose children are not kept stays;
 * histogram buckets are not events. */
START_TEST(test_groups_busiest_children)
{
	struct field_filter only_parent = { 0 };
	const struct snap_scope *g;
	struct snapshot snap;
	struct stats s;
	int ex, hlt, io, pio, h, b;
	struct errmsg err;

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
	build(&s, NULL, &snap);
	ck_assert_uint_eq(snap.whole->nchildren, 1);
	g = &snap.whole->children[0];
	ck_assert_int_eq(g->top[0], h);
	ck_assert_int_eq(g->top[1], hlt);
	ck_assert(g->top[2] == io || g->top[2] == pio);
	snapshot_free(&snap);
	ck_assert_int_eq(filter_set(&only_parent, "^kvm_exit$", &err), 0);
	build(&s, &only_parent, &snap);
	ck_assert_uint_eq(snap.whole->nchildren, 1);
	g = &snap.whole->children[0];
	ck_assert_int_eq(g->top[0], ex);
	ck_assert_int_eq(g->top[1], -1);
	snapshot_free(&snap);
	filter_free(&only_parent);
	stats_free(&s);
}
END_TEST

/* Snapshot rows go by name as kvm_stat sorts them, except histogram
 * buckets, which go by their number: (2) before (10). */
START_TEST(test_row_order)
{
	static const char *const in[] = { "h_x",  "h(10)", "h",	   "h(2)",
					  "h(1)", "a(B)",  "a(A)", "h(02x)" };
	static const char *const want[] = { "a(A)", "a(B)",   "h",     "h(1)",
					    "h(2)", "h(02x)", "h(10)", "h_x" };
	struct snapshot snap;
	struct stats s;

	stats_init(&s, true);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		push(&s, fid(&s, in[i], -1, FIELD_CUMULATIVE), 0, -1, i, 0);
	stats_update(&s, 1);
	build(&s, NULL, &snap);
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

/* A log2 histogram h with n buckets interned last to first. */
static int hist_fields(struct stats *s, int n, int *kid)
{
	int parent = fid(s, "h", -1, FIELD_CUMULATIVE);
	char name[32];

	field_table_info(&s->fields, parent)->hist = HIST_LOG2;
	for (int k = n - 1; k >= 0; k--) {
		struct field_info *f;

		snprintf(name, sizeof(name), "h(%d)", k);
		kid[k] = fid(s, name, parent, FIELD_CUMULATIVE);
		f = field_table_info(&s->fields, kid[k]);
		f->bucket = k;
		f->bucket_lo = k ? 1ull << (k - 1) : 0;
		f->bucket_hi = k == n - 1 ? UINT64_MAX : 1ull << k;
	}
	return parent;
}

/*
 * Histograms: each scope's own buckets in index order (whatever order
 * they were declared in), a bucket not read there empty and not seen, one
 * not read this time stale; the view's rows carry their scope's.
 */
START_TEST(test_histograms)
{
	struct snap_request one = { .pid = 7, .vcpu = 1 };
	const struct snap_row *r;
	const struct snap_hist *hh;
	struct snapshot snap;
	struct stats s;
	int parent, kid[4];

	stats_init(&s, false);
	parent = hist_fields(&s, 4, kid);
	for (int round = 1; round <= 2; round++) {
		for (int k = 0; k < 4; k++)
			push(&s, kid[k], 0, -1, 10 * k * round, 0);
		push(&s, parent, 0, -1, 60 * round, 0);
		/* vCPU 1 of VM 7: bucket 2 read once only, 3 never */
		for (int k = 0; k < 2 + (round == 1); k++)
			push(&s, kid[k], 7, 1, (k + 1) * round, 0);
		push(&s, kid[0], 7, -1, round, 0);
		stats_update(&s, round * 1000000000ull);
	}
	build(&s, NULL, &snap);
	r = snapshot_scope_row(snap.whole, parent);
	ck_assert_ptr_nonnull(r);
	hh = r->hist;
	ck_assert_ptr_nonnull(hh);
	ck_assert_int_eq(hh->field, parent);
	ck_assert_uint_eq(hh->nbuckets, 4);
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(hh->buckets[k].index, k);
		ck_assert(hh->buckets[k].seen && hh->buckets[k].fresh);
		ck_assert_uint_eq(hh->buckets[k].total, 10 * k);
		ck_assert_int_eq(hh->buckets[k].delta, 10 * k);
	}
	ck_assert_uint_eq(hh->buckets[2].lo, 2);
	ck_assert_uint_eq(hh->buckets[2].hi, 4);
	ck_assert_uint_eq(hh->buckets[3].hi, UINT64_MAX);
	/* the view's row is the whole selection's, with its buckets */
	ck_assert_ptr_eq(snapshot_field(&snap, "h"), &snap.fields[parent]);
	ck_assert_ptr_eq(snap.rows[0].hist, hh);
	/* buckets are rows of their scope like any field */
	ck_assert(snapshot_is_bucket(&snap, kid[1]));
	ck_assert(!snapshot_is_bucket(&snap, parent));
	ck_assert_ptr_nonnull(snapshot_scope_row(snap.whole, kid[3]));
	snapshot_free(&snap);

	snapshot_build(&s, &one, &snap);
	/* no row of its own: the parent sums the buckets read */
	r = snapshot_scope_row(snap.view, parent);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->total, 1 + 2 + 0);
	ck_assert(!r->valid); /* bucket 2 is stale */
	hh = r->hist;
	ck_assert_uint_eq(hh->nbuckets, 4);
	ck_assert(hh->buckets[1].fresh);
	ck_assert_uint_eq(hh->buckets[1].total, 2);
	ck_assert(hh->buckets[2].seen && !hh->buckets[2].fresh);
	ck_assert(!hh->buckets[3].seen);
	ck_assert_uint_eq(hh->buckets[3].total, 0);
	ck_assert_uint_eq(hh->buckets[3].hi, UINT64_MAX);
	ck_assert_ptr_nonnull(snapshot_scope_row(snap.view, kid[0]));
	/* VM 7 read bucket 0 alone: still every bucket, in order */
	r = snapshot_scope_row(&snap.whole->children[0], parent);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->hist->nbuckets, 4);
	ck_assert(r->hist->buckets[0].seen && !r->hist->buckets[1].seen);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

/* VMs by pid and vCPUs by index whatever order they were read in; a VM
 * read only per vCPU is in the tree, not fresh; guest names. */
START_TEST(test_tree)
{
	static const pid_t pids[] = { 30, 10, 20 };
	struct vmdir names;
	const struct snap_scope *w, *vm;
	struct snapshot snap;
	struct snap_request req = { .vms = &names };
	struct stats s;
	int f;

	vmdir_init(&names);
	vmdir_set_name(vmdir_get(&names, 10), "ten");
	vmdir_set_name(vmdir_get(&names, 30), "thirty");
	stats_init(&s, false);
	f = fid(&s, "exits", -1, FIELD_CUMULATIVE);
	for (int round = 1; round <= 2; round++) {
		push(&s, f, 0, -1, round, 0);
		for (size_t i = 0; i < 3; i++) {
			if (pids[i] != 20)
				push(&s, f, pids[i], -1, round, 0);
			for (int c = 2; c >= 0; c--)
				sample_set_push(&s.set, f, pids[i], c,
						pids[i] * 100 + c, round, 0);
		}
		stats_update(&s, round * 1000000000ull);
	}
	snapshot_build(&s, &req, &snap);
	w = snap.whole;
	ck_assert_int_eq(w->pid, 0);
	ck_assert(w->fresh);
	ck_assert_uint_eq(w->nchildren, 3);
	for (size_t i = 0; i < 3; i++) {
		vm = &w->children[i];
		ck_assert_int_eq(vm->pid, (pid_t)(10 * (i + 1)));
		ck_assert_uint_eq(vm->nchildren, 3);
		for (int c = 0; c < 3; c++) {
			ck_assert_int_eq(vm->children[c].pid, vm->pid);
			ck_assert_int_eq(vm->children[c].vcpu, c);
			ck_assert_int_eq(vm->children[c].tid, vm->pid * 100 + c);
			ck_assert(vm->children[c].fresh);
			ck_assert_ptr_eq(vm->children[c].guest, vm->guest);
		}
	}
	ck_assert_str_eq(w->children[0].guest, "ten");
	ck_assert_ptr_null(w->children[1].guest);
	ck_assert_str_eq(w->children[2].guest, "thirty");
	/* VM 20: only per-vCPU readings, nothing of its own */
	ck_assert(!w->children[1].fresh);
	ck_assert_uint_eq(w->children[1].nrows, 0);
	ck_assert(w->children[0].fresh);
	snapshot_free(&snap);
	stats_free(&s);
	vmdir_free(&names);
}
END_TEST

/* A snapshot is a value: its names, rows, buckets and guest names stay
 * after the stats and the guest names it came from are gone. */
START_TEST(test_outlives_stats)
{
	struct snap_request req = { .pid = 5, .vcpu = -1, .per_vcpu = true };
	struct vmdir names;
	struct snapshot snap;
	struct stats s;
	int parent, kid[2];

	vmdir_init(&names);
	vmdir_set_name(vmdir_get(&names, 5), "five");
	req.vms = &names;
	stats_init(&s, false);
	parent = hist_fields(&s, 2, kid);
	for (int round = 1; round <= 2; round++) {
		push(&s, kid[0], 5, -1, round, 0);
		push(&s, kid[1], 5, -1, 2 * round, 0);
		push(&s, kid[1], 5, 0, 2 * round, 0);
		stats_update(&s, round * 1000000000ull);
	}
	snapshot_build(&s, &req, &snap);
	/* scribble over what the stats had, then free them */
	for (size_t i = 0; i < s.fields.n; i++)
		memset(s.fields.v[i].name, 'X', strlen(s.fields.v[i].name));
	memset(s.cells, 0xff, s.nkeys * sizeof(*s.cells));
	stats_free(&s);
	vmdir_free(&names);
	ck_assert_uint_eq(snap.nfields, 3);
	ck_assert_str_eq(snap.fields[parent].name, "h");
	ck_assert_str_eq(snap.fields[kid[1]].provider, "test");
	/* h, h(0), h(1); the vCPU's h(1) and the h summing it */
	ck_assert_uint_eq(snap.nrows, 5);
	ck_assert_str_eq(snap.rows[0].name, "h");
	ck_assert_uint_eq(snap.rows[0].total, 3);
	ck_assert_uint_eq(snap.rows[0].hist->buckets[1].total, 2);
	ck_assert_str_eq(snap.rows[3].name, "h(1)/vcpu0");
	ck_assert_str_eq(snap.rows[4].name, "h/vcpu0");
	ck_assert_uint_eq(snap.rows[4].hist->buckets[1].total, 2);
	ck_assert_str_eq(snap.whole->children[0].guest, "five");
	ck_assert_str_eq(snap.whole->children[0].children[0].guest, "five");
	snapshot_free(&snap);
	ck_assert_ptr_null(snap.rows);
	snapshot_free(&snap); /* twice is harmless */
}
END_TEST

/* The directory of VMs from a proc root: the VM watched named once
 * (remembered, also without a name), told alive or not; names set by
 * hand; kept by pid. */
START_TEST(test_guest_names)
{
	char root[] = "/tmp/kvmstat-guests-XXXXXX", path[256];
	struct vmscan_req r = { .watched = 4242 };
	const struct vmdir_vm *vm;
	struct vmdir g;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/4242", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4242/cmdline", root);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fwrite("qemu\0-name\0guest=web1\0", 1, 22, f);
	fclose(f);
	vmdir_init(&g);
	r.proc_root = root;
	vmscan_update(&g, &r);
	vm = vmdir_find(&g, 4242);
	ck_assert_ptr_nonnull(vm);
	ck_assert_str_eq(vm->name, "web1");
	ck_assert(vm->checked && !vm->alive); /* holds no VM fd */
	r.watched = 4343;		      /* no such process */
	vmscan_update(&g, &r);
	ck_assert_ptr_null(vmdir_find(&g, 4343)->name);
	ck_assert(!vmdir_find(&g, 4242)->checked);
	/* looked up once: a new command line is not read again */
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fwrite("qemu\0-name\0other\0", 1, 17, f);
	fclose(f);
	r.watched = 4242;
	vmscan_update(&g, &r);
	ck_assert_str_eq(vmdir_find(&g, 4242)->name, "web1");
	vmdir_set_name(vmdir_get(&g, 4343), "late");
	vmdir_set_name(vmdir_get(&g, 1), NULL);
	ck_assert_str_eq(vmdir_find(&g, 4343)->name, "late");
	ck_assert_ptr_null(vmdir_find(&g, 1)->name);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_int_eq(g.v[0].pid, 1);
	ck_assert_int_eq(g.v[2].pid, 4343);
	ck_assert_ptr_null(vmdir_find(&g, 77));
	vmdir_free(&g);
	unlink(path);
	snprintf(path, sizeof(path), "%s/4242", root);
	rmdir(path);
	rmdir(root);
}
END_TEST

/* Every vCPU of a VM: the threads its VMM named "CPU N/KVM" add the
 * scopes of vCPUs that counted nothing, with their thread, alive. */
START_TEST(test_idle_vcpus)
{
	char root[] = "/tmp/kvmstat-vcpus-XXXXXX", path[256];
	static const char *const comm[] = { "qemu", "CPU 0/KVM", "CPU 1/KVM",
					    "CPU 2/KVM" };
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS };
	const struct snap_scope *vm;
	struct snapshot snap;
	struct vmscan_req r = { .stats = NULL, .vms = true, .vcpus = true };
	struct vmdir g;
	struct stats s;
	FILE *f;
	int e;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/4242", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4242/task", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	for (int t = 0; t < 4; t++) {
		snprintf(path, sizeof(path), "%s/4242/task/%d", root, 4242 + t);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/4242/task/%d/comm", root,
			 4242 + t);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "%s\n", comm[t]);
		fclose(f);
	}
	stats_init(&s, false);
	e = fid(&s, "kvm_userspace_exit", -1, FIELD_CUMULATIVE);
	/* only vCPU 1 counted */
	push(&s, e, 4242, SAMPLE_ALL_VCPUS, 0, 0);
	push(&s, e, 4242, 1, 0, 0);
	stats_update(&s, 0);
	push(&s, e, 4242, SAMPLE_ALL_VCPUS, 5, 0);
	push(&s, e, 4242, 1, 5, 0);
	stats_update(&s, 1000000000ull);

	/* without guest lookups (the batch views): what was read */
	snapshot_build(&s, &req, &snap);
	ck_assert_uint_eq(snap.whole->nchildren, 1);
	ck_assert_uint_eq(snap.whole->children[0].nchildren, 1);
	snapshot_free(&snap);

	vmdir_init(&g);
	r.proc_root = root;
	r.stats = &s;
	vmscan_update(&g, &r);
	req.vms = &g;
	snapshot_build(&s, &req, &snap);
	ck_assert_uint_eq(snap.whole->nchildren, 1);
	vm = &snap.whole->children[0];
	ck_assert_int_eq(vm->pid, 4242);
	ck_assert_uint_eq(vm->nchildren, 3);
	for (int c = 0; c < 3; c++) {
		ck_assert_int_eq(vm->children[c].vcpu, c);
		ck_assert_int_eq(vm->children[c].tid, 4243 + c);
		ck_assert(vm->children[c].fresh);
		ck_assert_uint_eq(vm->children[c].total, c == 1 ? 5 : 0);
		ck_assert_uint_eq(vm->children[c].nrows, c == 1 ? 1 : 0);
	}
	snapshot_free(&snap);

	/* the threads listed again only when their number changes: a comm
	 * renamed alone is not read, a thread more is */
	snprintf(path, sizeof(path), "%s/4242/task/4242/comm", root);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "CPU 7/KVM\n");
	fclose(f);
	vmscan_update(&g, &r);
	ck_assert_uint_eq(vmdir_find(&g, 4242)->nvcpus, 3);
	snprintf(path, sizeof(path), "%s/4242/task/4250", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	vmscan_update(&g, &r);
	ck_assert_uint_eq(vmdir_find(&g, 4242)->nvcpus, 4);
	ck_assert_int_eq(vmdir_find(&g, 4242)->vcpus[3].index, 7);

	/* per VM only (no vCPU wanted): no vCPU scope unread */
	vmdir_free(&g);
	vmdir_init(&g);
	r.vcpus = false;
	vmscan_update(&g, &r);
	snapshot_build(&s, &req, &snap);
	ck_assert_uint_eq(snap.whole->children[0].nchildren, 1);
	snapshot_free(&snap);
	vmdir_free(&g);
	stats_free(&s);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/*
 * Histograms read whole (exit latency's): each joins the scope it was read
 * in, one the cells lacked added (a vCPU with its thread), beside the
 * binary stats' in field order; not rows, so never in the view; the
 * buckets in the model's ranges with their counts and the measured sums.
 */
START_TEST(test_histograms_read_whole)
{
	struct stats s;
	struct hist_set hs;
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS, .hists = &hs };
	struct snapshot snap;
	const struct snap_scope *vm, *vc;
	const struct snap_hist *h;
	struct hist_reading *r;
	int parent, kid[4], ev, lat, key;

	stats_init(&s, false);
	parent = hist_fields(&s, 4, kid);
	ev = fid(&s, "ev", -1, FIELD_CUMULATIVE);
	lat = fid(&s, "lat", -1, FIELD_CUMULATIVE);
	key = fid(&s, "lat(K)", lat, FIELD_CUMULATIVE);
	field_table_info(&s.fields, lat)->hist = HIST_LOG2;
	field_table_info(&s.fields, key)->hist = HIST_LOG2;
	push(&s, ev, 0, -1, 5, 0);
	push(&s, kid[1], 0, -1, 3, 0);
	stats_update(&s, 1000000000ull);
	hist_set_init(&hs);
	r = hist_set_add(&hs, key, 9, 2, 99, 8);
	r->b[3] = 4;
	r->count = 4;
	r->sum = 20;
	r->min = r->max = 5;
	hist_set_add(&hs, key, 9, SAMPLE_ALL_VCPUS, 0, 8)->count = 1;
	hist_set_add(&hs, key, 0, SAMPLE_ALL_VCPUS, 0, 8)->count = 2;
	/* not a histogram field: left out */
	hist_set_add(&hs, ev, 0, SAMPLE_ALL_VCPUS, 0, 8);
	snapshot_build(&s, &req, &snap);
	hist_set_free(&hs);

	ck_assert_uint_eq(snap.whole->nhists, 2);
	ck_assert_int_eq(snap.whole->hists[0].field, parent);
	ck_assert(!snap.whole->hists[0].measured);
	ck_assert_ptr_eq(snapshot_scope_row(snap.whole, parent)->hist,
			 &snap.whole->hists[0]);
	h = snapshot_scope_hist(snap.whole, key);
	ck_assert_ptr_nonnull(h);
	ck_assert(h->measured);
	ck_assert_uint_eq(h->count, 2);
	ck_assert_ptr_null(snapshot_scope_hist(snap.whole, ev));
	ck_assert_ptr_null(snapshot_scope_row(snap.whole, key));
	for (size_t i = 0; i < snap.nrows; i++)
		ck_assert_int_ne(snap.rows[i].field, key);

	ck_assert_uint_eq(snap.whole->nchildren, 1);
	vm = &snap.whole->children[0];
	ck_assert_int_eq(vm->pid, 9);
	ck_assert_uint_eq(snapshot_scope_hist(vm, key)->count, 1);
	ck_assert_uint_eq(vm->nchildren, 1);
	vc = &vm->children[0];
	ck_assert_int_eq(vc->vcpu, 2);
	ck_assert_int_eq(vc->tid, 99);
	h = snapshot_scope_hist(vc, key);
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->nbuckets, 8);
	ck_assert_uint_eq(h->buckets[3].lo, 4);
	ck_assert_uint_eq(h->buckets[3].hi, 8);
	ck_assert_uint_eq(h->buckets[3].total, 4);
	ck_assert_uint_eq(h->buckets[7].hi, UINT64_MAX);
	ck_assert_uint_eq(h->sum, 20);
	ck_assert_uint_eq(h->min, 5);
	snapshot_free(&snap);
	stats_free(&s);
}
END_TEST

Suite *snapshot_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("build");

	tcase_add_test(tc, test_snapshot_children);
	tcase_add_test(tc, test_scope_and_groups);
	tcase_add_test(tc, test_groups_busiest_children);
	tcase_add_test(tc, test_row_order);
	tcase_add_test(tc, test_histograms);
	tcase_add_test(tc, test_tree);
	tcase_add_test(tc, test_outlives_stats);
	tcase_add_test(tc, test_guest_names);
	tcase_add_test(tc, test_idle_vcpus);
	tcase_add_test(tc, test_histograms_read_whole);
	suite_add_tcase(s, tc);
	return s;
}
