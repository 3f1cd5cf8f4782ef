// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot builder: the one walk from the stats' cells to the scopes
 * whole selection -> VM -> vCPU, their rows, histograms and summaries, and
 * the view. It is linear in the number of cells: one pass in the stats'
 * order finds the scopes and their summaries, counting sorts put each
 * scope's cells in field order, and each histogram's buckets are found in
 * its scope's rows through one index of every bucket field, made here
 * once per snapshot. Histograms read whole (exit latency, through the
 * request) join the scopes they were read in, adding those not found in
 * the cells. A full build remembers where each number came from, so that
 * the next refresh in the same layout only copies numbers (snap_keep.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "hist.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "stats.h"
#include "util.h"

/* At least n elements (one when n is 0) of size bytes in buf, reused
 * when they fit; their contents are stale. */
void *sb_reserve(struct sb_buf *buf, size_t n, size_t size)
{
	if (!n)
		n = 1;
	if (n > buf->cap) {
		free(buf->p);
		buf->cap = n + n / 4;
		buf->p = xmalloc(buf->cap * size);
	}
	return buf->p;
}

/* The same, zeroed. */
void *sb_reserve_zero(struct sb_buf *buf, size_t n, size_t size)
{
	void *p = sb_reserve(buf, n, size);

	memset(p, 0, (n ? n : 1) * size);
	return p;
}

/* Keeps s (allocated) for snapshot_free; returns it. */
static char *sb_own(struct snap_store *st, char *s)
{
	if (st->nowned == st->capowned) {
		st->capowned = st->capowned ? st->capowned * 2 : 16;
		st->owned = xrealloc(st->owned,
				     st->capowned * sizeof(*st->owned));
	}
	st->owned[st->nowned++] = s;
	return s;
}

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

/* The index of scope (pid, vcpu), added when new. */
static int sb_scope(struct snap_builder *b, pid_t pid, int vcpu)
{
	uint32_t h = hashtab_hash3((uint32_t)pid, (uint32_t)vcpu, 0);
	struct hashtab_iter it = hashtab_iter(b->index, h);
	long i;

	while ((i = hashtab_next(b->index, &it)) >= 0)
		if (b->sc[i].pid == pid && b->sc[i].vcpu == vcpu)
			return (int)i;
	if (b->nsc == b->st->sc.cap) {
		b->st->sc.cap = b->st->sc.cap ? b->st->sc.cap * 2 : 64;
		b->st->sc.p = xrealloc(b->st->sc.p,
				       b->st->sc.cap * sizeof(*b->sc));
		b->sc = b->st->sc.p;
	}
	b->sc[b->nsc] = (struct sb_scope){ .pid = pid, .vcpu = vcpu };
	hashtab_add(b->index, h, b->nsc);
	return (int)b->nsc++;
}

/* Keeps the SNAP_TOP busiest fields of a scope. */
static void sb_top(struct snap_scope *g, int field, double rate)
{
	for (int t = 0; t < SNAP_TOP; t++) {
		if (g->top[t] >= 0 && g->top_rate[t] >= rate)
			continue;
		for (int u = SNAP_TOP - 1; u > t; u--) {
			g->top[u] = g->top[u - 1];
			g->top_rate[u] = g->top_rate[u - 1];
		}
		g->top[t] = field;
		g->top_rate[t] = rate;
		return;
	}
}

/* Whether a field counts events (not a child, not a unit, not a bucket). */
static bool sb_is_event(const struct field_info *f)
{
	return f->parent < 0 && f->type == FIELD_CUMULATIVE &&
	       f->unit == UNIT_NONE && f->hist == HIST_NONE;
}

/* Folds one cell of field into the summary of its scope g (sums in x). */
void sb_summary_add(struct snap_builder *b, struct snap_scope *g,
		    struct sb_scope *x, int field, const struct stat_cell *c)
{
	const struct field_info *f = &b->fields[field];

	if (c->fresh)
		g->fresh = true;
	if (c->tid)
		g->tid = c->tid;
	if (f->flags & FIELD_EXITS) {
		x->exits_seen = true;
		g->total = c->total;
		g->delta = c->delta;
	}
	if (sb_is_event(f)) {
		x->ev_total += c->total;
		x->ev_delta += c->delta;
	}
	/* histogram buckets are not events; their parent counts */
	if (b->match[field] && !b->split[field] && f->bucket < 0 &&
	    f->type == FIELD_CUMULATIVE && c->delta > 0)
		sb_top(g, field, b->secs > 0 ? c->delta / b->secs : 0);
}

static void sb_summary_end(struct snap_builder *b, struct snap_scope *g,
			   const struct sb_scope *x)
{
	if (!x->exits_seen) {
		g->total = x->ev_total;
		g->delta = x->ev_delta;
	}
	g->rate = b->secs > 0 ? g->delta / b->secs : 0;
}

static void sb_scope_init(struct snap_scope *g, pid_t pid, int vcpu)
{
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	g->vcpu = vcpu;
	for (int t = 0; t < SNAP_TOP; t++)
		g->top[t] = -1;
}

static int sb_scope_cmp(const void *a, const void *c)
{
	const struct sb_scope *x = a, *y = c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->vcpu < y->vcpu ? -1 : x->vcpu > y->vcpu;
}

/* The scope of every breakdown cell: each VM with any (also one read
 * only per vCPU), each vCPU with any. */
static void sb_find_scopes(struct snap_builder *b)
{
	const struct stats *s = b->s;

	b->key_scope = sb_reserve(&b->st->key_scope, s->nkeys,
				  sizeof(*b->key_scope));
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct stats_key *k = &s->keys[i];

		b->key_scope[i] = -1;
		if (!s->cells[i].seen || !k->pid || k->field < 0 ||
		    (size_t)k->field >= b->nf)
			continue;
		if (k->vcpu != SAMPLE_ALL_VCPUS)
			sb_scope(b, k->pid, SAMPLE_ALL_VCPUS);
		b->key_scope[i] = sb_scope(b, k->pid, k->vcpu);
	}
}

/* The scopes of the histograms read whole: a VM or vCPU the cells did not
 * have is added (a vCPU with the thread it was read on). */
static void sb_find_hist_scopes(struct snap_builder *b)
{
	size_t n = b->hs ? b->hs->n : 0;

	b->hs_scope = sb_reserve(&b->st->hs_scope, n, sizeof(*b->hs_scope));
	for (size_t i = 0; i < n; i++) {
		const struct hist_reading *r = &b->hs->v[i];
		int k;

		b->hs_scope[i] = -2;
		if (r->field < 0 || (size_t)r->field >= b->nf ||
		    b->fields[r->field].hist == HIST_NONE)
			continue;
		if (!r->pid) {
			b->hs_scope[i] = -1;
			continue;
		}
		if (r->vcpu != SAMPLE_ALL_VCPUS)
			sb_scope(b, r->pid, SAMPLE_ALL_VCPUS);
		k = sb_scope(b, r->pid, r->vcpu);
		if (r->vcpu != SAMPLE_ALL_VCPUS && r->tid && !b->sc[k].tid)
			b->sc[k].tid = r->tid;
		b->hs_scope[i] = k;
	}
}

/*
 * Every vCPU of each VM found, idle ones too: a vCPU that counted nothing
 * has no cell, yet it is one of the VM's, so the threads the directory of
 * VMs knows for it (named "CPU N/KVM" by its VMM) add its scope.
 */
static void sb_find_vcpus(struct snap_builder *b, const struct vmdir *d)
{
	size_t nfound = b->nsc;

	if (!d)
		return;
	for (size_t i = 0; i < nfound; i++) {
		const struct vmdir_vm *vm;

		if (b->sc[i].vcpu != SAMPLE_ALL_VCPUS)
			continue;
		vm = vmdir_find(d, b->sc[i].pid);
		if (!vm || !vm->vcpus_read)
			continue;
		for (size_t c = 0; c < vm->nvcpus; c++) {
			int k = sb_scope(b, vm->pid, vm->vcpus[c].index);

			b->sc[k].tid = vm->vcpus[c].tid;
		}
	}
}

/* Lays the scopes out, whole, the VMs by pid, then every VM's vCPUs by
 * index, and links the tree. */
static void sb_layout(struct snap_builder *b)
{
	struct sb_scope *sorted = sb_reserve(&b->st->sorted, b->nsc,
					     sizeof(*sorted));
	struct snap_scope *all = sb_reserve(&b->st->scopes, b->nsc + 1,
					    sizeof(*all));
	size_t nvm = 0, vm = 1, vc;

	for (size_t i = 0; i < b->nsc; i++) {
		sorted[i] = b->sc[i];
		sorted[i].slot = i; /* here: where it came from */
		nvm += b->sc[i].vcpu == SAMPLE_ALL_VCPUS;
	}
	if (b->nsc > 1)
		qsort(sorted, b->nsc, sizeof(*sorted), sb_scope_cmp);
	sb_scope_init(&all[0], 0, SAMPLE_ALL_VCPUS);
	vc = 1 + nvm;
	for (size_t i = 0; i < b->nsc; i++) {
		size_t slot = sorted[i].vcpu == SAMPLE_ALL_VCPUS ? vm++ : vc++;

		b->sc[sorted[i].slot].slot = slot;
		sb_scope_init(&all[slot], sorted[i].pid, sorted[i].vcpu);
	}
	all[0].children = nvm ? &all[1] : NULL;
	all[0].nchildren = nvm;
	vc = 1 + nvm;
	for (vm = 1; vm < 1 + nvm; vm++) {
		all[vm].children = &all[vc];
		while (vc < 1 + b->nsc && all[vc].pid == all[vm].pid) {
			all[vm].nchildren++;
			vc++;
		}
		if (!all[vm].nchildren)
			all[vm].children = NULL;
	}
	b->scopes = all;
	b->out->whole = &all[0];
}

/* The per-guest views' summaries, the cells taken in the stats' order
 * (as ties among the busiest events have always gone). */
/* The whole selection's summary, from the fields' totals. */
void sb_summary_whole(struct snap_builder *b)
{
	const struct stats *s = b->s;
	struct snap_scope *all = b->scopes;
	struct sb_scope root = { 0 };

	for (size_t f = 0; f < s->nsum && f < b->nf; f++)
		if (s->sum[f].seen)
			sb_summary_add(b, &all[0], &root, (int)f, &s->sum[f]);
	sb_summary_end(b, &all[0], &root);
}

/* Ends the summary of scope x, its cells added. */
void sb_summary_scope_end(struct snap_builder *b, struct sb_scope *x)
{
	struct snap_scope *g = &b->scopes[x->slot];

	sb_summary_end(b, g, x);
	/* a vCPU whose thread runs is there, idle or not */
	if (x->tid) {
		g->fresh = true;
		if (!g->tid)
			g->tid = x->tid;
	}
}

static void sb_summaries(struct snap_builder *b)
{
	const struct stats *s = b->s;
	struct snap_scope *all = b->scopes;

	sb_summary_whole(b);
	for (size_t i = 0; i < s->nkeys; i++) {
		struct sb_scope *x;

		if (b->key_scope[i] < 0)
			continue;
		x = &b->sc[b->key_scope[i]];
		sb_summary_add(b, &all[x->slot], x, s->keys[i].field,
			       &s->cells[i]);
	}
	for (size_t i = 0; i < b->nsc; i++)
		sb_summary_scope_end(b, &b->sc[i]);
}

/* Appends the row of one cell of field to the scope being built. */
static void sb_row(struct snap_builder *b, struct snap_row *r, int field,
		   const struct stat_cell *c)
{
	const struct field_info *f = &b->fields[field];

	*r = (struct snap_row){ .field = field,
				.name = f->name,
				.parent = f->parent,
				.type = f->type,
				.total = c->total,
				.delta = c->delta,
				.valid = c->fresh };
}

static int sb_row_cmp(const void *a, const void *c)
{
	return ((const struct snap_row *)a)->field -
	       ((const struct snap_row *)c)->field;
}

/*
 * Ends the rows [first, *n) of one scope, its own cells in field order:
 * parents without readings of their own sum their children; rates.
 */
static void sb_rows_end(struct snap_builder *b, struct snap_scope *g,
			size_t first, size_t *n)
{
	struct snap_row *rows = b->rows;
	size_t own = *n;

	for (size_t i = first; i < own; i++)
		b->row_of[rows[i].field] = (int)i;
	for (size_t i = first; i < own; i++) {
		int p = rows[i].parent, at;

		if (p < 0 || (size_t)p >= b->nf)
			continue;
		at = b->row_of[p];
		if (at >= 0 && (size_t)at < own)
			continue; /* read itself */
		if (at < 0) {
			const struct field_info *f = &b->fields[p];

			at = (int)(*n)++;
			rows[at] = (struct snap_row){ .field = p,
						      .name = f->name,
						      .parent = -1,
						      .type = f->type,
						      .valid = true };
			b->row_of[p] = at;
		}
		rows[at].total += rows[i].total;
		rows[at].delta += rows[i].delta;
		rows[at].valid &= rows[i].valid;
	}
	for (size_t i = first; i < *n; i++) {
		b->row_of[rows[i].field] = -1;
		rows[i].rate = b->secs > 0 ? rows[i].delta / b->secs : 0;
	}
	if (*n > own)
		qsort(rows + first, *n - first, sizeof(*rows), sb_row_cmp);
	g->rows = rows + first;
	g->nrows = *n - first;
}

/*
 * Where each row's numbers come from, for the builds that keep the layout:
 * the whole selection's from the fields' totals, a scope's from its cells
 * (byscope, each scope's ending at end[slot]), both in field order as the
 * rows are; the others are parents summing the children that pairs list.
 */
static void sb_row_sources(struct snap_builder *b, const size_t *end,
			   const int *byscope)
{
	const struct stats *s = b->s;
	const struct snap_scope *all = b->scopes;
	long *src = sb_reserve(&b->st->row_src, b->nrows, sizeof(*src));
	struct sb_pair *pairs = sb_reserve(&b->st->pairs, b->nrows,
					   sizeof(*pairs));
	size_t np = 0, j = 0;

	for (size_t i = 0; i <= b->nsc; i++) {
		size_t base = (size_t)(all[i].rows - b->rows);

		for (size_t x = 0; x < all[i].nrows; x++) {
			int f = all[i].rows[x].field;

			if (!i)
				src[base + x] = (size_t)f < s->nsum &&
								s->sum[f].seen ?
							SB_SUM(f) :
							SB_SYNTH;
			else if (j < end[i] && s->keys[byscope[j]].field == f)
				src[base + x] = byscope[j++];
			else
				src[base + x] = SB_SYNTH;
		}
	}
	for (size_t i = 0; i <= b->nsc; i++) {
		size_t base = (size_t)(all[i].rows - b->rows);

		for (size_t x = 0; x < all[i].nrows; x++) {
			int p = all[i].rows[x].parent;
			const struct snap_row *pr;

			if (src[base + x] == SB_SYNTH || p < 0 ||
			    (size_t)p >= b->nf)
				continue;
			pr = snapshot_scope_row(&all[i], p);
			if (pr && src[pr - b->rows] == SB_SYNTH)
				pairs[np++] = (struct sb_pair){
					base + x, (size_t)(pr - b->rows)
				};
		}
	}
	b->st->nrows = b->nrows;
	b->st->npairs = np;
}

/* The rows of every scope: the cells of each in field order, by two
 * stable counting sorts (by field, then by scope). */
static void sb_rows(struct snap_builder *b)
{
	const struct stats *s = b->s;
	size_t nscopes = b->nsc + 1, ncells = 0, n = 0;
	struct snap_scope *all = b->scopes;
	size_t *start = sb_reserve_zero(&b->st->start, nscopes + 1,
					sizeof(*start));
	size_t *fstart = sb_reserve_zero(&b->st->fstart, b->nf + 1,
					 sizeof(*fstart));
	int *byfield, *byscope;

	for (size_t f = 0; f < s->nsum && f < b->nf; f++)
		ncells += s->sum[f].seen;
	for (size_t i = 0; i < s->nkeys; i++) {
		if (b->key_scope[i] < 0)
			continue;
		fstart[s->keys[i].field + 1]++;
		start[b->sc[b->key_scope[i]].slot + 1]++;
	}
	for (size_t f = 0; f < b->nf; f++)
		fstart[f + 1] += fstart[f];
	for (size_t i = 0; i < nscopes; i++)
		start[i + 1] += start[i];
	ncells += start[nscopes];
	byfield = sb_reserve(&b->st->byfield, start[nscopes] + 1,
			     sizeof(*byfield));
	byscope = sb_reserve(&b->st->byscope, start[nscopes] + 1,
			     sizeof(*byscope));
	for (size_t i = 0; i < s->nkeys; i++)
		if (b->key_scope[i] >= 0)
			byfield[fstart[s->keys[i].field]++] = (int)i;
	for (size_t j = 0; j < start[nscopes]; j++) {
		int k = byfield[j];

		byscope[start[b->sc[b->key_scope[k]].slot]++] = k;
	}
	/* start[i] is now the end of scope i's cells */

	/* at most one parent row per child row */
	b->rows = sb_reserve(&b->st->rows, 2 * ncells + 1, sizeof(*b->rows));
	b->row_of = sb_reserve(&b->st->row_of, b->nf + 1, sizeof(*b->row_of));
	memset(b->row_of, 0xff, (b->nf + 1) * sizeof(*b->row_of));
	for (size_t f = 0; f < s->nsum && f < b->nf; f++)
		if (s->sum[f].seen)
			sb_row(b, &b->rows[n++], (int)f, &s->sum[f]);
	sb_rows_end(b, &all[0], 0, &n);
	for (size_t i = 1, j = 0; i < nscopes; i++) {
		size_t first = n;

		for (; j < start[i]; j++)
			sb_row(b, &b->rows[n++], s->keys[byscope[j]].field,
			       &s->cells[byscope[j]]);
		sb_rows_end(b, &all[i], first, &n);
	}
	b->nrows = n;
	sb_row_sources(b, start, byscope);
}

/* The final scope of histogram reading i, or SIZE_MAX when left out. */
static size_t sb_hs_slot(const struct snap_builder *b, size_t i)
{
	int k = b->hs_scope[i];

	return k == -1 ? 0 : k < 0 ? SIZE_MAX : b->sc[k].slot;
}

static int sb_hs_cmp(const void *x, const void *y, void *arg)
{
	const struct snap_builder *b = arg;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	size_t si = sb_hs_slot(b, i), sj = sb_hs_slot(b, j);
	int fi = b->hs->v[i].field, fj = b->hs->v[j].field;

	if (si != sj)
		return si < sj ? -1 : 1;
	if (fi != fj)
		return fi < fj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The histogram of a histogram row of scope g, its buckets from the
 * scope's rows (the bucket fields); k: buckets used so far. */
static void sb_hist_of_row(struct snap_builder *b, const struct snap_scope *g,
			   struct snap_row *row, struct snap_hist *hist,
			   size_t *k)
{
	const struct field_info *v = b->fields;
	int p = row->field;

	*hist = (struct snap_hist){ .field = p,
				    .buckets = &b->buckets[*k],
				    .nbuckets = (size_t)b->bucket_count[p],
				    .fresh = row->valid };
	b->hist_src[hist - b->hists] = row - b->rows;
	for (int c = 0; c < b->bucket_count[p]; c++) {
		int id = b->bucket_child[b->bucket_first[p] + c];
		const struct snap_row *br = snapshot_scope_row(g, id);

		b->bucket_src[*k] = br ? br - b->rows : -1;
		b->buckets[(*k)++] = (struct snap_bucket){
			.index = v[id].bucket,
			.lo = v[id].bucket_lo,
			.hi = v[id].bucket_hi,
			.total = br ? br->total : 0,
			.delta = br ? br->delta : 0,
			.seen = br != NULL,
			.fresh = br && br->valid
		};
	}
	row->hist = hist;
}

/* The histogram of a reading: its buckets in the model's ranges. */
void sb_hist_of_reading(struct snap_builder *b, const struct hist_reading *r,
			struct snap_hist *hist, size_t *k)
{
	const struct field_info *f = &b->fields[r->field];

	*hist = (struct snap_hist){ .field = r->field,
				    .buckets = &b->buckets[*k],
				    .nbuckets = r->nbuckets,
				    .fresh = true,
				    .measured = true,
				    .count = r->count,
				    .sum = r->sum,
				    .min = r->min,
				    .max = r->max };
	for (size_t i = 0; i < r->nbuckets; i++) {
		struct snap_bucket *bk = &b->buckets[(*k)++];

		*bk = (struct snap_bucket){ .index = (int)i,
					    .total = r->b[i],
					    .seen = true,
					    .fresh = true };
		hist_bucket_range(f->hist, r->bucket_size, i, r->nbuckets,
				  &bk->lo, &bk->hi);
	}
}

/*
 * Every scope's histograms, by field: each histogram row's, its buckets
 * from the rows of its scope, and the readings of histograms read whole.
 */
static void sb_hists(struct snap_builder *b)
{
	const struct field_info *v = b->fields;
	struct snap_scope *all = b->scopes;
	size_t nh = 0, nb = 0, h = 0, k = 0, nr = 0, j = 0;

	for (size_t i = 0; i <= b->nsc; i++)
		for (size_t r = 0; r < all[i].nrows; r++)
			if (v[all[i].rows[r].field].hist != HIST_NONE) {
				nh++;
				nb += b->bucket_count[all[i].rows[r].field];
			}
	b->hs_order = sb_reserve(&b->st->hs_order, (b->hs ? b->hs->n : 0) + 1,
				 sizeof(*b->hs_order));
	for (size_t i = 0; b->hs && i < b->hs->n; i++) {
		if (b->hs_scope[i] == -2)
			continue;
		b->hs_order[nr++] = i;
		nh++;
		nb += b->hs->v[i].nbuckets;
	}
	b->st->nhists = nh;
	if (!nh)
		return;
	if (nr > 1)
		qsort_r(b->hs_order, nr, sizeof(*b->hs_order), sb_hs_cmp, b);
	b->hists = sb_reserve(&b->st->hists, nh, sizeof(*b->hists));
	b->buckets = sb_reserve(&b->st->buckets, nb + 1, sizeof(*b->buckets));
	b->hist_src = sb_reserve(&b->st->hist_src, nh, sizeof(*b->hist_src));
	b->bucket_src = sb_reserve(&b->st->bucket_src, nb + 1,
				   sizeof(*b->bucket_src));
	for (size_t i = 0; i <= b->nsc; i++) {
		size_t first = h, r = 0;

		/* rows and readings, both in field order, merged */
		for (;;) {
			const struct hist_reading *x =
				j < nr && sb_hs_slot(b, b->hs_order[j]) == i ?
					&b->hs->v[b->hs_order[j]] :
					NULL;
			struct snap_row *row = NULL;

			while (r < all[i].nrows &&
			       v[all[i].rows[r].field].hist == HIST_NONE)
				r++;
			if (r < all[i].nrows)
				row = (struct snap_row *)&all[i].rows[r];
			if (!row && !x)
				break;
			if (row && (!x || row->field <= x->field)) {
				sb_hist_of_row(b, &all[i], row, &b->hists[h++],
					       &k);
				r++;
			} else {
				b->hist_src[h] = -1 - (long)b->hs_order[j];
				sb_hist_of_reading(b, x, &b->hists[h++], &k);
				j++;
			}
		}
		all[i].hists = h > first ? &b->hists[first] : NULL;
		all[i].nhists = h - first;
	}
}

/* The scope (pid, vcpu), or NULL. */
static const struct snap_scope *sb_find(const struct snap_scope *whole,
					pid_t pid, int vcpu)
{
	const struct snap_scope *v = whole->children, *c;
	size_t lo = 0, hi = whole->nchildren;

	if (!pid)
		return whole;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == whole->nchildren || v[lo].pid != pid)
		return NULL;
	if (vcpu == SAMPLE_ALL_VCPUS)
		return &v[lo];
	c = v[lo].children;
	for (size_t i = 0; i < v[lo].nchildren; i++)
		if (c[i].vcpu == vcpu)
			return &c[i];
	return NULL;
}

/* View rows by name, their places (the index into arg's rows) kept. */
static int sb_view_cmp(const void *a, const void *c, void *arg)
{
	const struct snap_row *rows = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)c;
	int d = util_name_cmp(rows[i].name, rows[j].name);

	if (d)
		return d;
	return i < j ? -1 : i > j;
}

/* The same order for the rows of one scope (one per field at most): the
 * names' places in the field table, which keeps them as the fields come,
 * so a refresh sorts no names; placed by place, in linear time. False
 * when the rows are not one per field. */
static bool sb_view_by_order(struct snap_builder *b,
			     const struct snap_row *rows, size_t n,
			     size_t *perm)
{
	const struct field_info *v = b->fields;
	long *at = sb_reserve(&b->st->at, b->nf + 1, sizeof(*at));
	size_t k = 0;

	memset(at, 0xff, (b->nf + 1) * sizeof(*at));
	for (size_t i = 0; i < n; i++) {
		int o = v[rows[i].field].order;

		if (o < 0 || (size_t)o >= b->nf || at[o] >= 0)
			return false;
		at[o] = (long)i;
	}
	for (size_t o = 0; o < b->nf; o++)
		if (at[o] >= 0)
			perm[k++] = (size_t)at[o];
	return true;
}

/* Sorts the view's n rows by name, their sources along. */
static void sb_view_sort(struct snap_builder *b, bool by_order, size_t n)
{
	size_t *perm = sb_reserve(&b->st->perm, 2 * n, sizeof(*perm));
	size_t *src = perm + n;
	struct snap_row *was = sb_reserve(&b->st->vtmp, n, sizeof(*was));

	if (!by_order || !sb_view_by_order(b, b->view, n, perm)) {
		for (size_t i = 0; i < n; i++)
			perm[i] = i;
		qsort_r(perm, n, sizeof(*perm), sb_view_cmp, b->view);
	}
	memcpy(was, b->view, n * sizeof(*was));
	memcpy(src, b->view_src, n * sizeof(*src));
	for (size_t i = 0; i < n; i++) {
		b->view[i] = was[perm[i]];
		b->view_src[i] = src[perm[i]];
	}
}

/* Appends the rows of g the filter keeps to the view; suffix names them
 * NAME/vcpuN. */
static void sb_view_rows(struct snap_builder *b, const struct snap_scope *g,
			 const char *suffix, size_t *n)
{
	for (size_t i = 0; i < g->nrows; i++) {
		struct snap_row r = g->rows[i];

		if (!b->match[r.field])
			continue;
		if (suffix) {
			r.name = sb_own(b->st,
					xasprintf("%s%s", r.name, suffix));
			r.per_vcpu = true;
		}
		b->view_src[*n] = (size_t)(&g->rows[i] - b->rows);
		b->view[(*n)++] = r;
	}
}

/* The view: one scope's rows, and with per_vcpu its vCPUs' too. */
static void sb_view(struct snap_builder *b, const struct snap_request *req)
{
	const struct snap_scope *g = sb_find(b->out->whole, req->pid,
					     req->pid ? req->vcpu :
							SAMPLE_ALL_VCPUS);
	const struct snap_scope *vm = req->per_vcpu && req->pid ?
					      sb_find(b->out->whole, req->pid,
						      SAMPLE_ALL_VCPUS) :
					      NULL;
	size_t cap = 1, n = 0;

	b->out->view = g;
	if (g)
		cap += g->nrows;
	for (size_t i = 0; vm && i < vm->nchildren; i++)
		cap += vm->children[i].nrows;
	b->view = sb_reserve(&b->st->view, cap, sizeof(*b->view));
	b->view_src = sb_reserve(&b->st->view_src, cap, sizeof(*b->view_src));
	if (g)
		sb_view_rows(b, g, NULL, &n);
	for (size_t i = 0; vm && i < vm->nchildren; i++) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), "/vcpu%d",
			 vm->children[i].vcpu);
		sb_view_rows(b, &vm->children[i], suffix, &n);
	}
	if (n > 1)
		sb_view_sort(b, !(vm && vm->nchildren), n);
	b->out->rows = b->view;
	b->out->nrows = n;
	b->st->nview = n;
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

/* Frees what a store owns that is the snapshot's own (names): the next
 * build makes them again. */
static void sb_disown(struct snap_store *st)
{
	for (size_t i = 0; i < st->nowned; i++)
		free(st->owned[i]);
	st->nowned = 0;
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

void snapshot_free(struct snapshot *snap)
{
	struct snap_store *st = snap->store;

	if (st) {
		struct sb_buf *bufs[] = {
			&st->fields,	   &st->names,	      &st->scopes,
			&st->rows,	   &st->hists,	      &st->buckets,
			&st->view,	   &st->match,	      &st->split,
			&st->bucket_first, &st->bucket_count, &st->bucket_child,
			&st->sc,	   &st->key_scope,    &st->row_of,
			&st->hs_scope,	   &st->hs_order,     &st->sorted,
			&st->start,	   &st->fstart,	      &st->byfield,
			&st->byscope,	   &st->by,	      &st->at,
			&st->perm,	   &st->vtmp,	      &st->row_src,
			&st->pairs,	   &st->hist_src,     &st->bucket_src,
			&st->view_src,	   &st->hkeys,	      &st->vmsaw,
			&st->vmvcpus,	   &st->slot_sc,      &st->kend,
			&st->skeys,
		};

		sb_disown(st);
		free(st->owned);
		for (size_t i = 0; i < ARRAY_SIZE(bufs); i++)
			free(bufs[i]->p);
		hashtab_free(&st->index);
		free(st);
	}
	memset(snap, 0, sizeof(*snap));
}

const struct snap_row *snapshot_scope_row(const struct snap_scope *sc, int field)
{
	size_t lo = 0, hi = sc ? sc->nrows : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sc->rows[mid].field < field)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sc && lo < sc->nrows && sc->rows[lo].field == field ?
		       &sc->rows[lo] :
		       NULL;
}

const struct snap_hist *snapshot_scope_hist(const struct snap_scope *sc,
					    int field)
{
	size_t lo = 0, hi = sc ? sc->nhists : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sc->hists[mid].field < field)
			lo = mid + 1;
		else
			hi = mid;
	}
	return sc && lo < sc->nhists && sc->hists[lo].field == field ?
		       &sc->hists[lo] :
		       NULL;
}

const struct field_info *snapshot_field(const struct snapshot *snap,
					const char *name)
{
	for (size_t i = 0; name && i < snap->nfields; i++)
		if (!strcmp(snap->fields[i].name, name))
			return &snap->fields[i];
	return NULL;
}

const struct field_info *snapshot_row_field(const struct snapshot *snap,
					    const struct snap_row *r)
{
	return r->field >= 0 && (size_t)r->field < snap->nfields ?
		       &snap->fields[r->field] :
		       NULL;
}

bool snapshot_is_bucket(const struct snapshot *snap, int field)
{
	const struct field_info *f;

	if (field < 0 || (size_t)field >= snap->nfields)
		return false;
	f = &snap->fields[field];
	return f->bucket >= 0 ||
	       (f->parent >= 0 && (size_t)f->parent < snap->nfields &&
		snap->fields[f->parent].hist != HIST_NONE);
}
