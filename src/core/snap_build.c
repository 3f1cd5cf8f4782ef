// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot builder: the one walk from the stats' cells to the scopes
 * whole selection -> VM -> vCPU, their rows, histograms and summaries, and
 * the view. It is linear in the number of cells: one pass in the stats'
 * order finds the scopes and their summaries (snap_scopes.c), counting
 * sorts put each scope's cells in field order, and each histogram's
 * buckets are found in its scope's rows (snap_rows.c) through one index
 * of every bucket field, made here once per snapshot. Histograms read
 * whole (exit latency, through the request) join the scopes they were
 * read in, adding those not found in the cells. The view is made last
 * (snap_view.c). A full build remembers where each number came from, so
 * that the next refresh in the same layout only copies numbers
 * (snap_keep.c). This file holds the field table, the bucket index, the
 * filter, the guests' names and the build's order.
 */
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "stats.h"
#include "util.h"

/* Copies the field table, names and provider names into one block. */
static void sb_fields(struct snap_builder *b)
{
	const struct field_table *t = &b->s->fields;
	size_t len = 1;
	char *p;

	struct field_info *fields = sb_reserve_zero(&b->st->fields, b->nf,
						    sizeof(*fields));

	for (size_t i = 0; i < b->nf; i++)
		len += strlen(t->v[i].name) + 1 +
		       (t->v[i].provider ? strlen(t->v[i].provider) + 1 : 0);
	p = sb_reserve(&b->st->names, len, 1);
	for (size_t i = 0; i < b->nf; i++) {
		struct field_info *f = &fields[i];
		size_t n = strlen(t->v[i].name) + 1;

		*f = t->v[i];
		f->name = memcpy(p, t->v[i].name, n);
		p += n;
		if (t->v[i].provider) {
			n = strlen(t->v[i].provider) + 1;
			f->provider = memcpy(p, t->v[i].provider, n);
			p += n;
		}
	}
	b->fields = fields;
	b->out->fields = fields;
	b->out->nfields = b->nf;
}

static int sb_bucket_cmp(const void *a, const void *c, void *arg)
{
	const struct field_info *v = arg;
	const struct field_info *x = &v[*(const int *)a];
	const struct field_info *y = &v[*(const int *)c];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return *(const int *)a - *(const int *)c;
}

/* The bucket fields of every histogram, by parent, then bucket. */
static void sb_index_buckets(struct snap_builder *b)
{
	const struct field_info *v = b->fields;
	size_t n = b->nf ? b->nf : 1, nc = 0;

	b->bucket_first = sb_reserve(&b->st->bucket_first, n,
				     sizeof(*b->bucket_first));
	b->bucket_count = sb_reserve_zero(&b->st->bucket_count, n,
					  sizeof(*b->bucket_count));
	b->bucket_child = sb_reserve(&b->st->bucket_child, n,
				     sizeof(*b->bucket_child));
	for (size_t i = 0; i < b->nf; i++) {
		b->bucket_first[i] = -1;
		if (v[i].parent >= 0 && (size_t)v[i].parent < b->nf &&
		    v[i].bucket >= 0 && v[v[i].parent].hist != HIST_NONE)
			b->bucket_child[nc++] = (int)i;
	}
	if (nc > 1)
		qsort_r(b->bucket_child, nc, sizeof(*b->bucket_child),
			sb_bucket_cmp, (void *)v);
	for (size_t i = 0; i < nc; i++) {
		int p = v[b->bucket_child[i]].parent;

		if (b->bucket_first[p] < 0)
			b->bucket_first[p] = (int)i;
		b->bucket_count[p]++;
	}
}

/*
 * What the filter keeps, once per field (a child it keeps brings in its
 * parent); and the events that have a
 * child the filter keeps: they are left out of the busiest events, where
 * "kvm_exit(HLT) 900/s" says more than "kvm_exit 900/s" beside it.
 */
static void sb_filter(struct snap_builder *b, const struct field_filter *f,
		      bool children)
{
	const struct field_info *v = b->fields;

	b->match = sb_reserve_zero(&b->st->match, b->nf + 1, sizeof(*b->match));
	b->split = sb_reserve_zero(&b->st->split, b->nf + 1, sizeof(*b->split));
	for (size_t i = 0; i < b->nf; i++)
		b->match[i] = filter_keeps_field(f, (int)i, v[i].name, children);
	/* a kept child brings in its parent, as in kvm_stat */
	for (size_t i = 0; i < b->nf; i++)
		if (b->match[i] && v[i].parent >= 0 &&
		    (size_t)v[i].parent < b->nf)
			b->match[v[i].parent] = true;
	for (size_t i = 0; i < b->nf; i++)
		if (v[i].parent >= 0 && (size_t)v[i].parent < b->nf &&
		    v[v[i].parent].hist == HIST_NONE && b->match[i])
			b->split[v[i].parent] = true;
}

/* Guest names of the VMs, shared by their vCPUs. */
static void sb_guests(struct snap_builder *b, const struct vmdir *d)
{
	struct snap_scope *all = b->scopes;
	const struct snap_scope *whole = &all[0];

	if (!d)
		return;
	for (size_t i = 0; i < whole->nchildren; i++) {
		struct snap_scope *vm = &all[1 + i];
		const struct vmdir_vm *e = vmdir_find(d, vm->pid);
		const char *name = e ? e->name : NULL;

		if (!name)
			continue;
		vm->guest = sb_own(b->st, xstrdup(name));
		for (size_t c = 0; c < vm->nchildren; c++)
			((struct snap_scope *)&vm->children[c])
				->guest = vm->guest;
	}
}

void snapshot_rebuild(const struct stats *s, const struct snap_request *req,
		      struct snapshot *out)
{
	static const struct snap_request whole = { .vcpu = SAMPLE_ALL_VCPUS };
	struct snap_store *st = out->store;
	struct snap_builder b = { .s = s,
				  .out = out,
				  .hs = req ? req->hists : NULL };

	if (!req)
		req = &whole;
	b.nf = s->fields.n;
	b.secs = s->interval_ns / 1e9;
	if (st && sb_same_layout(st, s, req)) {
		*out = st->shape;
		b.st = st;
		st->last_kept = true;
		sb_refill(&b);
		goto out_times;
	}
	if (!st) {
		st = xcalloc(1, sizeof(*st));
		hashtab_init(&st->index);
	}
	sb_disown(st);
	hashtab_clear(&st->index);
	memset(out, 0, sizeof(*out));
	out->store = b.st = st;
	st->last_kept = false;
	b.sc = st->sc.p;
	b.index = &st->index;
	sb_fields(&b);
	sb_index_buckets(&b);
	sb_filter(&b, req->filter, req->children);
	sb_find_scopes(&b);
	sb_find_hist_scopes(&b);
	sb_find_vcpus(&b, req->vms);
	sb_layout(&b);
	sb_summaries(&b);
	sb_rows(&b);
	sb_hists(&b);
	sb_guests(&b, req->vms);
	sb_view(&b, req);
	sb_remember(&b, req);
out_times:
	out->interval_ns = s->interval_ns;
	out->wall = s->wall;
}

void snapshot_build(const struct stats *s, const struct snap_request *req,
		    struct snapshot *out)
{
	memset(out, 0, sizeof(*out));
	snapshot_rebuild(s, req, out);
}
