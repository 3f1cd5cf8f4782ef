// SPDX-License-Identifier: GPL-2.0-only
/*
 * The OpenMetrics writer's gathering: the series of every scope (the
 * whole selection, each VM, each vCPU) that a render writes, and the
 * family names they sort by.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "levels.h"
#include "openmetrics.h"
#include "openmetrics_int.h"
#include "util.h"

/* The per-field flags sized for snap, kept cleared; the view's fields
 * marked kept: what is exported. */
void openmetrics_kept(struct om_ctx *c)
{
	struct openmetrics_writer *w = c->w;
	const struct snapshot *snap = c->snap;
	size_t n = snap->nfields ? snap->nfields : 1;

	if (w->nflags < n) {
		w->kept = xrealloc(w->kept, n * sizeof(*w->kept));
		w->has_reasons = xrealloc(w->has_reasons,
					  n * sizeof(*w->has_reasons));
		w->done = xrealloc(w->done, n * sizeof(*w->done));
		w->in_vm = xrealloc(w->in_vm, n * sizeof(*w->in_vm));
		memset(w->has_reasons, 0, n * sizeof(*w->has_reasons));
		memset(w->done, 0, n * sizeof(*w->done));
		w->nflags = n;
	}
	memset(w->kept, 0, n * sizeof(*w->kept));
	for (size_t i = 0; i < snap->nrows; i++)
		if (!snap->rows[i].per_vcpu && snap->rows[i].field >= 0 &&
		    (size_t)snap->rows[i].field < snap->nfields)
			w->kept[snap->rows[i].field] = true;
}

static void openmetrics_push(struct om_ctx *c, int family, int field,
			     size_t scope, uint64_t total,
			     const struct snap_hist *hist)
{
	struct openmetrics_writer *w = c->w;

	if (w->nseries == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->series = xrealloc(w->series, w->cap * sizeof(*w->series));
	}
	w->series[w->nseries++] = (struct om_series){ family, field, scope,
						      total, hist };
}

/* Whether series x, gathered in a VM's or vCPU's scope, is written: a
 * sticky field's once it is not 0, and from then on (levels.h). */
static bool openmetrics_keep(struct om_ctx *c, const struct om_series *x)
{
	const struct om_scope *sc = &c->w->scopes[x->scope];
	const struct field_info *f = &c->fields[x->field];
	struct snap_row r = { .total = x->total };

	if (!sc->pid || !levels_sticky(f))
		return true;
	return levels_seen_keep(&c->w->seen, sc->pid, sc->vcpu, x->field,
				levels_zero(&r, x->hist));
}

/* The family a row of field f files under: a reason child's parent's,
 * else its own (a histogram's too). */
static int openmetrics_row_family(const struct om_ctx *c, int f)
{
	const struct field_info *fi = &c->fields[f];

	return fi->hist == HIST_NONE && fi->parent >= 0 ? fi->parent : f;
}

/* The family a histogram read whole of field f files under: a keyed
 * one's parent histogram's, else its own. */
static int openmetrics_hist_family(const struct om_ctx *c, int f)
{
	int p = c->fields[f].parent;

	return p >= 0 && c->fields[p].hist != HIST_NONE ? p : f;
}

/* The series of field in a scope, its value in row (and hist): a
 * reason child joins its parent's family. */
static void openmetrics_add_row(struct om_ctx *c, const struct snap_row *r,
				size_t scope)
{
	const struct field_info *f = &c->fields[r->field];
	int fam = openmetrics_row_family(c, r->field);

	if (f->hist != HIST_NONE) {
		if (r->hist && r->hist->nbuckets)
			openmetrics_push(c, fam, r->field, scope, 0, r->hist);
		return;
	}
	openmetrics_push(c, fam, r->field, scope, r->total, NULL);
	if (fam != r->field)
		c->w->has_reasons[fam] = true;
}

/* Whether row r of a scope is exported: read in the last refresh, of a
 * field the view keeps, not a bucket (its histogram has it). */
static bool openmetrics_row_ok(const struct om_ctx *c, const struct snap_row *r)
{
	/* rows renamed for a per-vCPU view are not whole-scope rows */
	return !r->per_vcpu && r->valid &&
	       !snapshot_is_bucket(c->snap, r->field) && c->w->kept[r->field];
}

/*
 * The histograms of scope sc read whole by their source (exit latency):
 * those the view keeps or that an option of their own turned on; a keyed
 * child joins its parent's family.
 */
static void openmetrics_gather_hists(struct om_ctx *c,
				     const struct snap_scope *sc, size_t scope)
{
	for (size_t i = 0; sc && i < sc->nhists; i++) {
		const struct snap_hist *h = &sc->hists[i];
		const struct field_info *f = &c->fields[h->field];

		if (!h->measured || !h->nbuckets ||
		    (!c->w->kept[h->field] && !(f->flags & FIELD_OWN_SWITCH)))
			continue;
		openmetrics_push(c, openmetrics_hist_family(c, h->field),
				 h->field, scope, 0, h);
	}
}

/*
 * Ends the series of one scope gathered from first on: where the scope
 * has reason series, the parent's own goes; series of sticky fields that
 * are still 0 in a VM or vCPU are left out until they count.
 */
static void openmetrics_end_scope(struct om_ctx *c, size_t first)
{
	struct openmetrics_writer *w = c->w;
	size_t kept = first;

	for (size_t i = first; i < w->nseries; i++) {
		const struct om_series *x = &w->series[i];

		if (x->field == x->family && w->has_reasons[x->family] &&
		    c->fields[x->family].hist == HIST_NONE)
			continue;
		if (!openmetrics_keep(c, x))
			continue;
		if (!x->scope && w->in_vm[x->family])
			continue;
		w->series[kept++] = *x;
	}
	for (size_t i = first; i < w->nseries; i++)
		w->has_reasons[w->series[i].family] = false;
	w->nseries = kept;
}

/* The series of one scope's rows. */
static void openmetrics_gather_scope(struct om_ctx *c,
				     const struct snap_row *rows, size_t nrows,
				     size_t scope)
{
	for (size_t i = 0; i < nrows; i++)
		if (openmetrics_row_ok(c, &rows[i]))
			openmetrics_add_row(c, &rows[i], scope);
}

/*
 * The series of a VM's scope: its rows, and the fields only its vCPUs
 * have, summed over them (levels.h); none read in the last refresh when
 * the VM was not.
 */
static void openmetrics_gather_vm(struct om_ctx *c, const struct snap_scope *vm,
				  size_t scope)
{
	struct openmetrics_writer *w = c->w;

	openmetrics_gather_scope(c, vm->rows, vm->nrows, scope);
	for (size_t i = 0; i < vm->nrows; i++)
		w->done[vm->rows[i].field] = true;
	for (size_t j = 0; j < vm->nchildren; j++) {
		const struct snap_scope *vc = &vm->children[j];

		for (size_t i = 0; i < vc->nrows; i++) {
			int f = vc->rows[i].field;
			struct snap_row sum;
			const struct snap_row *r;

			if (w->done[f])
				continue;
			w->done[f] = true;
			if (!w->kept[f] || snapshot_is_bucket(c->snap, f) ||
			    !levels_vm_value(c->snap, vm, f, &sum, &r,
					     &w->sums) ||
			    !r->valid)
				continue;
			openmetrics_add_row(c, r, scope);
		}
	}
	for (size_t i = 0; i < vm->nrows; i++)
		w->done[vm->rows[i].field] = false;
	for (size_t j = 0; j < vm->nchildren; j++)
		for (size_t i = 0; i < vm->children[j].nrows; i++)
			w->done[vm->children[j].rows[i].field] = false;
}

/* Whether scope sc holds a histogram read whole (exit latency's). */
static bool openmetrics_has_measured(const struct snap_scope *sc)
{
	for (size_t i = 0; i < sc->nhists; i++)
		if (sc->hists[i].measured)
			return true;
	return false;
}

/* Appends the labels of scope sc: pid="..",guest="..",vcpu="..", or
 * nothing for the whole selection. */
static void openmetrics_scope_labels(struct strbuf *b, const struct om_scope *sc)
{
	const char *sep = "";

	if (sc->pid) {
		strbuf_add(b, "pid=\"");
		openmetrics_add_u64(b, (uint64_t)sc->pid);
		strbuf_add(b, "\"");
		sep = ",";
		if (sc->guest) {
			strbuf_add(b, ",guest=\"");
			openmetrics_escape(b, sc->guest, true);
			strbuf_add(b, "\"");
		}
	}
	if (sc->vcpu >= 0) {
		strbuf_add(b, sep);
		strbuf_add(b, "vcpu=\"");
		openmetrics_add_u64(b, (uint64_t)sc->vcpu);
		strbuf_add(b, "\"");
	}
}

static size_t openmetrics_add_scope(struct om_ctx *c, pid_t pid, int vcpu,
				    const char *guest)
{
	struct openmetrics_writer *w = c->w;

	if (w->nscopes == w->scap) {
		w->scap = w->scap ? 2 * w->scap : 64;
		w->scopes = xrealloc(w->scopes, w->scap * sizeof(*w->scopes));
	}
	w->scopes[w->nscopes] = (struct om_scope){ pid, vcpu, guest,
						   w->labs.len, 0 };
	openmetrics_scope_labels(&w->labs, &w->scopes[w->nscopes]);
	w->scopes[w->nscopes].nlab = w->labs.len - w->scopes[w->nscopes].lab;
	return w->nscopes++;
}

/* Marks the families some VM (or a vCPU of one) has rows or histograms
 * of: the whole selection writes only the others, so that no name holds
 * an aggregate beside its parts (the host's value is sum() over VMs;
 * events of no VM, such as a reason only other processes hit, are no
 * VM's and not written). */
static void openmetrics_mark_in_vm(struct om_ctx *c)
{
	const struct snap_scope *whole = c->snap->whole;
	bool *in = c->w->in_vm;

	memset(in, 0, c->w->nflags * sizeof(*in));
	for (size_t i = 0; whole && i < whole->nchildren; i++) {
		const struct snap_scope *vm = &whole->children[i];

		for (size_t k = 0; k <= vm->nchildren; k++) {
			const struct snap_scope *s = k ? &vm->children[k - 1] :
							 vm;

			for (size_t j = 0; j < s->nrows; j++)
				if (s->rows[j].field >= 0 &&
				    (size_t)s->rows[j].field < c->snap->nfields)
					in[openmetrics_row_family(c,
								  s->rows[j].field)] =
						true;
			/* a VM's value sums its vCPUs' rows, not their
			 * histograms read whole (gather_hists) */
			for (size_t j = 0; !k && j < s->nhists; j++)
				in[openmetrics_hist_family(c, s->hists[j].field)] =
					true;
		}
	}
}

/* Every scope in order (whole, then each VM read in the last refresh
 * followed, with per_vcpu, by its vCPUs read in it), and the series of
 * each. */
void openmetrics_gather(struct om_ctx *c)
{
	struct openmetrics_writer *w = c->w;
	const struct snapshot *snap = c->snap;
	const struct snap_scope *whole = snap->whole;
	size_t first = w->nseries, sc;

	openmetrics_mark_in_vm(c);
	openmetrics_add_scope(c, 0, SAMPLE_ALL_VCPUS, NULL);
	openmetrics_gather_scope(c, snap->rows, snap->nrows, 0);
	openmetrics_gather_hists(c, whole, 0);
	openmetrics_end_scope(c, first);
	for (size_t i = 0; whole && i < whole->nchildren; i++) {
		const struct snap_scope *vm = &whole->children[i];

		bool rows = levels_vm_fresh(vm),
		     any = rows || openmetrics_has_measured(vm);

		/* a VM not read in the last refresh has only the histograms
		 * read whole (exit latency's), its vCPUs too */
		for (size_t j = 0; !any && w->per_vcpu && j < vm->nchildren; j++)
			any = openmetrics_has_measured(&vm->children[j]);
		if (!any)
			continue;
		sc = openmetrics_add_scope(c, vm->pid, SAMPLE_ALL_VCPUS,
					   vm->guest);
		first = w->nseries;
		if (rows)
			openmetrics_gather_vm(c, vm, sc);
		openmetrics_gather_hists(c, vm, sc);
		openmetrics_end_scope(c, first);
		for (size_t j = 0; w->per_vcpu && j < vm->nchildren; j++) {
			const struct snap_scope *vc = &vm->children[j];
			bool vrows = rows && vc->fresh;

			if (!vrows && !openmetrics_has_measured(vc))
				continue;
			sc = openmetrics_add_scope(c, vc->pid, vc->vcpu,
						   vc->guest);
			first = w->nseries;
			if (vrows)
				openmetrics_gather_scope(c, vc->rows, vc->nrows,
							 sc);
			openmetrics_gather_hists(c, vc, sc);
			openmetrics_end_scope(c, first);
		}
	}
}

/* The family name of field, made once and kept while the field stays as
 * it was (openmetrics_names checks that once per render); vcpu: its
 * vCPUs' family, kvm_vcpu_... */
const char *openmetrics_family(struct om_ctx *c, int field, bool vcpu)
{
	struct om_name *n = &c->w->names[field];

	if (!n->fam) {
		const struct field_info *f = &c->fields[field];

		n->fam = openmetrics_name(f);
		n->nfam = strlen(n->fam);
		n->from = xstrdup(f->name);
		n->exponent = f->exponent;
		n->base = f->base;
		n->unit = f->unit;
		n->type = f->type;
		n->hist = f->hist;
	}
	if (vcpu && !n->vfam) {
		/* openmetrics_name's names all begin "kvm_" */
		n->vfam = xasprintf("kvm_vcpu_%s", n->fam + 4);
		n->nvfam = strlen(n->vfam);
	}
	return vcpu ? n->vfam : n->fam;
}

const char *openmetrics_series_family(struct om_ctx *c,
				      const struct om_series *x)
{
	return openmetrics_family(c, x->family,
				  c->w->scopes[x->scope].vcpu >= 0);
}

/* Drops the names kept for fields that are not what they were made from
 * (names made by an earlier render). */
void openmetrics_names(struct om_ctx *c)
{
	for (size_t i = 0; i < c->snap->nfields; i++) {
		const struct field_info *f = &c->fields[i];
		struct om_name *n = &c->w->names[i];

		if (n->fam &&
		    (n->unit != f->unit || n->type != f->type ||
		     n->hist != f->hist || n->exponent != f->exponent ||
		     n->base != f->base || strcmp(n->from, f->name))) {
			free(n->fam);
			free(n->vfam);
			free(n->from);
			n->fam = NULL;
			n->vfam = NULL;
			/* its "le" texts were of the old scale */
			free(n->les);
			n->les = NULL;
			n->nles = 0;
		}
	}
}

/* Families by metric name (then field id), scopes in order, the parent's
 * own series before its reasons, reasons by name. */
int openmetrics_series_cmp(const void *a, const void *b, void *arg)
{
	const struct om_series *x = a, *y = b;
	struct om_ctx *c = arg;
	int d;

	bool xv = c->w->scopes[x->scope].vcpu >= 0,
	     yv = c->w->scopes[y->scope].vcpu >= 0;

	if (x->family != y->family || xv != yv) {
		d = strcmp(openmetrics_series_family(c, x),
			   openmetrics_series_family(c, y));
		if (d)
			return d;
		if (x->family != y->family)
			return x->family < y->family ? -1 : 1;
		return xv ? 1 : -1;
	}
	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	if (x->field == y->field)
		return 0;
	if (x->field == x->family)
		return -1;
	if (y->field == y->family)
		return 1;
	return strcmp(c->fields[x->field].name, c->fields[y->field].name);
}
