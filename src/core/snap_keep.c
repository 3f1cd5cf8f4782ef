// SPDX-License-Identifier: GPL-2.0-only
/*
 * A refresh copies numbers: while nothing came or went since a snapshot's
 * last full build (no field, no series read for the first time, the same
 * request, filter, guest names, vCPU threads and histograms read whole),
 * its layout is kept (fields, names, scopes, rows and their order,
 * histograms, the view) and each number is taken again from the source
 * the full build found for it, scope by scope; the summaries and busiest
 * events are made again as the full build makes them.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_int.h"
#include "util.h"
#include "vmdir.h"

/* The basis of a build of s for req (see struct sb_basis). */
static struct sb_basis sb_basis_of(const struct stats *s,
				   const struct snap_request *req)
{
	struct sb_basis k;

	memset(&k, 0, sizeof(k)); /* padding too: compared by memcmp */
	k.s = s;
	k.stats_gen = s->gen;
	k.fields_gen = s->fields.gen;
	k.filter = filter_serial(req->filter);
	k.nf = s->fields.n;
	k.nsum = s->nsum;
	k.nkeys = s->nkeys;
	k.children = req->children;
	k.per_vcpu = req->per_vcpu;
	k.vms = req->vms != NULL;
	k.pid = req->pid;
	k.vcpu = req->vcpu;
	return k;
}

static struct sb_hkey sb_hkey_of(const struct hist_reading *r)
{
	struct sb_hkey k;

	memset(&k, 0, sizeof(k));
	k.field = r->field;
	k.pid = r->pid;
	k.vcpu = r->vcpu;
	k.tid = r->tid;
	k.nbuckets = r->nbuckets;
	return k;
}

/* What the directory of VMs says of VM vm: its vCPUs when read. */
static bool sb_vm_vcpus(const struct vmdir *d, pid_t pid,
			const struct vmdir_vcpu **v, size_t *n)
{
	const struct vmdir_vm *e = vmdir_find(d, pid);

	*v = NULL;
	*n = 0;
	if (!e || !e->vcpus_read)
		return false;
	*v = e->vcpus;
	*n = e->nvcpus;
	return true;
}

/* Each scope's cells in the stats' order, as its summary takes them. */
static void sb_remember_cells(struct snap_builder *b)
{
	const struct stats *s = b->s;
	struct snap_store *st = b->st;
	size_t nscopes = b->nsc + 1;
	size_t *end = sb_reserve_zero(&st->kend, nscopes + 1, sizeof(*end));
	size_t *slot_sc = sb_reserve(&st->slot_sc, nscopes, sizeof(*slot_sc));
	size_t n = 0;
	int *keys;

	for (size_t i = 0; i < b->nsc; i++)
		slot_sc[b->sc[i].slot] = i;
	for (size_t k = 0; k < s->nkeys; k++)
		if (b->key_scope[k] >= 0) {
			end[b->sc[b->key_scope[k]].slot + 1]++;
			n++;
		}
	for (size_t i = 0; i < nscopes; i++)
		end[i + 1] += end[i];
	keys = sb_reserve(&st->skeys, n, sizeof(*keys));
	for (size_t k = 0; k < s->nkeys; k++)
		if (b->key_scope[k] >= 0)
			keys[end[b->sc[b->key_scope[k]].slot]++] = (int)k;
	/* end[i] is now where scope i's cells end */
}

/* Keeps what the layout of a full build was made from, for the next. */
void sb_remember(struct snap_builder *b, const struct snap_request *req)
{
	struct snap_store *st = b->st;
	const struct hist_set *hs = req->hists;
	const struct snap_scope *whole = b->out->whole;
	struct sb_hkey *hk;
	struct sb_vmsaw *saw;
	size_t nv = 0;

	st->basis = sb_basis_of(b->s, req);
	st->nsc = b->nsc;
	sb_remember_cells(b);
	st->shape = *b->out;
	st->nhkeys = hs ? hs->n : 0;
	hk = sb_reserve(&st->hkeys, st->nhkeys, sizeof(*hk));
	for (size_t i = 0; i < st->nhkeys; i++)
		hk[i] = sb_hkey_of(&hs->v[i]);
	saw = sb_reserve(&st->vmsaw, whole->nchildren, sizeof(*saw));
	for (size_t i = 0; req->vms && i < whole->nchildren; i++) {
		const struct vmdir_vcpu *v;
		struct vmdir_vcpu *to;

		saw[i].read = sb_vm_vcpus(req->vms, whole->children[i].pid, &v,
					  &saw[i].n);
		saw[i].first = nv;
		nv += saw[i].n;
		to = st->vmvcpus.p;
		if (nv > st->vmvcpus.cap) {
			st->vmvcpus.cap = nv * 2;
			to = xrealloc(to, st->vmvcpus.cap * sizeof(*to));
			st->vmvcpus.p = to;
		}
		if (saw[i].n)
			memcpy(&to[saw[i].first], v, saw[i].n * sizeof(*v));
	}
	st->kept = true;
}

/* Whether the directory of VMs says what it said at the last full build
 * of the VMs there are: their names and vCPU threads. */
static bool sb_same_vms(const struct snap_store *st, const struct vmdir *d)
{
	const struct snap_scope *whole = st->shape.whole;
	const struct sb_vmsaw *saw = st->vmsaw.p;
	const struct vmdir_vcpu *was = st->vmvcpus.p;

	for (size_t i = 0; d && i < whole->nchildren; i++) {
		const struct snap_scope *vm = &whole->children[i];
		const struct vmdir_vm *e = vmdir_find(d, vm->pid);
		const char *name = e ? e->name : NULL;
		const struct vmdir_vcpu *v;
		size_t n;

		if (!name != !vm->guest || (name && strcmp(name, vm->guest)))
			return false;
		if (sb_vm_vcpus(d, vm->pid, &v, &n) != saw[i].read ||
		    n != saw[i].n ||
		    (n && memcmp(v, &was[saw[i].first], n * sizeof(*v))))
			return false;
	}
	return true;
}

/* Whether the layout kept in st is the one a full build of s for req
 * would make: nothing came or went since. */
bool sb_same_layout(const struct snap_store *st, const struct stats *s,
		    const struct snap_request *req)
{
	struct sb_basis now = sb_basis_of(s, req);
	const struct sb_hkey *hk = st->hkeys.p;
	size_t nh = req->hists ? req->hists->n : 0;

	if (!st->kept || memcmp(&now, &st->basis, sizeof(now)) ||
	    nh != st->nhkeys)
		return false;
	for (size_t i = 0; i < nh; i++) {
		struct sb_hkey k = sb_hkey_of(&req->hists->v[i]);

		if (memcmp(&k, &hk[i], sizeof(k)))
			return false;
	}
	return sb_same_vms(st, req->vms);
}

/* The numbers of the rows [from, to) again, from their sources; parents
 * sum their children (the pairs from *pair on whose parent is there). */
static void sb_rows_refill(struct snap_builder *b, size_t from, size_t to,
			   size_t *pair)
{
	const struct stats *s = b->s;
	const long *src = b->st->row_src.p;
	const struct sb_pair *pairs = b->st->pairs.p;
	struct snap_row *rows = b->rows;

	for (size_t i = from; i < to; i++) {
		const struct stat_cell *c;

		if (src[i] == SB_SYNTH) {
			rows[i].total = 0;
			rows[i].delta = 0;
			rows[i].valid = true;
			continue;
		}
		c = src[i] >= 0 ? &s->cells[src[i]] :
				  &s->sum[SB_SUM(0) - src[i]];
		rows[i].total = c->total;
		rows[i].delta = c->delta;
		rows[i].valid = c->fresh;
	}
	for (; *pair < b->st->npairs && pairs[*pair].parent < to; ++*pair) {
		struct snap_row *p = &rows[pairs[*pair].parent];
		const struct snap_row *r = &rows[pairs[*pair].child];

		p->total += r->total;
		p->delta += r->delta;
		p->valid &= r->valid;
	}
	for (size_t i = from; i < to; i++)
		rows[i].rate = b->secs > 0 ? rows[i].delta / b->secs : 0;
}

/* The numbers of the histograms [from, to) again: a row's from its
 * buckets' rows, one read whole from its reading. */
static void sb_hists_refill(struct snap_builder *b, size_t from, size_t to)
{
	const long *src = b->st->hist_src.p, *bsrc = b->st->bucket_src.p;

	for (size_t h = from; h < to; h++) {
		struct snap_hist *hist = &b->hists[h];
		size_t k = (size_t)(hist->buckets - b->buckets);

		if (src[h] < 0) {
			sb_hist_of_reading(b, &b->hs->v[-1 - src[h]], hist, &k);
			continue;
		}
		hist->fresh = b->rows[src[h]].valid;
		for (size_t c = 0; c < hist->nbuckets; c++, k++) {
			const struct snap_row *br = bsrc[k] >= 0 ?
							    &b->rows[bsrc[k]] :
							    NULL;

			b->buckets[k].total = br ? br->total : 0;
			b->buckets[k].delta = br ? br->delta : 0;
			b->buckets[k].fresh = br && br->valid;
		}
	}
}

/* Scope i's summary, rows and histograms again, one scope after the
 * other so that each one's cells and rows are read while in cache. */
static void sb_scope_refill(struct snap_builder *b, size_t i, size_t *pair)
{
	const struct stats *s = b->s;
	const struct snap_store *st = b->st;
	struct snap_scope *g = &b->scopes[i];
	size_t from = (size_t)(g->rows - b->rows);
	size_t h = g->nhists ? (size_t)(g->hists - b->hists) : 0;

	g->fresh = false;
	g->tid = 0;
	g->total = 0;
	g->delta = 0;
	g->rate = 0;
	for (int t = 0; t < SNAP_TOP; t++) {
		g->top[t] = -1;
		g->top_rate[t] = 0;
	}
	if (!i) {
		sb_summary_whole(b);
	} else {
		const size_t *end = st->kend.p;
		const int *keys = st->skeys.p;
		struct sb_scope *x = &b->sc[((const size_t *)st->slot_sc.p)[i]];

		x->exits_seen = false;
		x->ev_total = 0;
		x->ev_delta = 0;
		for (size_t j = end[i - 1]; j < end[i]; j++)
			sb_summary_add(b, g, x, s->keys[keys[j]].field,
				       &s->cells[keys[j]]);
		sb_summary_scope_end(b, x);
	}
	sb_rows_refill(b, from, from + g->nrows, pair);
	sb_hists_refill(b, h, h + g->nhists);
}

/* The view's rows again from theirs, each keeping its name. */
static void sb_view_refill(struct snap_builder *b)
{
	const size_t *src = b->st->view_src.p;

	for (size_t i = 0; i < b->st->nview; i++) {
		struct snap_row *r = &b->view[i];
		const char *name = r->name;
		bool per_vcpu = r->per_vcpu;

		*r = b->rows[src[i]];
		r->name = name;
		r->per_vcpu = per_vcpu;
	}
}

/* A refresh in the layout kept: the summaries, rows, histograms and view
 * filled in again with this refresh's numbers; no name is copied, no
 * scope looked up, nothing sorted. */
void sb_refill(struct snap_builder *b)
{
	struct snap_store *st = b->st;
	struct snap_scope *all = st->scopes.p;

	b->fields = st->fields.p;
	b->match = st->match.p;
	b->split = st->split.p;
	b->sc = st->sc.p;
	b->nsc = st->nsc;
	b->key_scope = st->key_scope.p;
	b->scopes = all;
	b->rows = st->rows.p;
	b->nrows = st->nrows;
	b->hists = st->hists.p;
	b->buckets = st->buckets.p;
	b->view = st->view.p;
	for (size_t i = 0, pair = 0; i <= b->nsc; i++)
		sb_scope_refill(b, i, &pair);
	sb_view_refill(b);
}

bool snapshot_layout_kept(const struct snapshot *snap)
{
	return snap->store && snap->store->last_kept;
}
