// SPDX-License-Identifier: GPL-2.0-only
/*
 * The snapshot builder's scopes: whole selection -> VM -> vCPU found
 * in one pass over the stats' cells (with the histograms read whole and
 * the directory's idle vCPUs), laid out as a tree, and their summaries
 * (totals, rates, the busiest events).
 */

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "snapshot.h"
#include "snapshot_int.h"
#include "stats.h"
#include "util.h"

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
void sb_find_scopes(struct snap_builder *b)
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
void sb_find_hist_scopes(struct snap_builder *b)
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
void sb_find_vcpus(struct snap_builder *b, const struct vmdir *d)
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
void sb_layout(struct snap_builder *b)
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

void sb_summaries(struct snap_builder *b)
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
