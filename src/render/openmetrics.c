// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus and OpenMetrics exposition text from a snapshot. The series
 * of every scope (the whole selection, each VM, each vCPU) are gathered
 * first, then sorted into families, so that a family's samples are
 * contiguous whatever order the fields were interned in. Values in base
 * units are written exactly: a raw integer times 10^exponent is a decimal
 * shift, not a floating-point product. The rules are in openmetrics.h.
 * Gathering is in om_gather.c, numbers and names are spelt in om_text.c;
 * this file writes the families and keeps the writer.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "breakdown_render.h"
#include "levels.h"
#include "numfmt.h"
#include "openmetrics.h"
#include "openmetrics_int.h"
#include "util.h"
#include "vcputime_render.h"
#include "vmdir.h"

static bool openmetrics_reserved(const struct om_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->w->nreserved; i++)
		if (!strcmp(c->w->reserved[i], name))
			return true;
	return false;
}

/*
 * Claims the names a family writes (its own and its samples'); false,
 * claiming nothing, when one is taken by an earlier family.
 */
static bool openmetrics_claim(struct om_ctx *c, const char *fam,
			      const char *const *suffixes, size_t n)
{
	char *names[5];

	for (size_t i = 0; i < n; i++) {
		names[i] = xasprintf("%s%s", fam, suffixes[i]);
		if (openmetrics_reserved(c, names[i])) {
			for (size_t j = 0; j <= i; j++)
				free(names[j]);
			return false;
		}
	}
	struct openmetrics_writer *w = c->w;

	if (w->nreserved + n > w->rcap) {
		w->rcap = w->rcap ? 2 * w->rcap : 64;
		if (w->rcap < w->nreserved + n)
			w->rcap = w->nreserved + n;
		w->reserved = xrealloc(w->reserved,
				       w->rcap * sizeof(*w->reserved));
	}
	for (size_t i = 0; i < n; i++)
		w->reserved[w->nreserved++] = names[i];
	return true;
}

/* The reason of child NAME(REASON) of parent NAME: REASON, else the
 * child's whole name. Into buf. */
static const char *openmetrics_reason(const struct field_info *child,
				      const struct field_info *parent,
				      char *buf, size_t len)
{
	size_t pn = strlen(parent->name), cn = strlen(child->name);

	if (cn > pn + 2 && !strncmp(child->name, parent->name, pn) &&
	    child->name[pn] == '(' && child->name[cn - 1] == ')')
		snprintf(buf, len, "%.*s", (int)(cn - pn - 2),
			 child->name + pn + 1);
	else
		snprintf(buf, len, "%s", child->name);
	return buf;
}

/* Appends {pid=..,guest=..,vcpu=..,reason=..,le=..}, or nothing: the
 * scope's labels as written once for it. */
static void openmetrics_labels(struct strbuf *b,
			       const struct openmetrics_writer *w,
			       const struct om_scope *sc, const char *reason,
			       const char *le, size_t nle)
{
	bool any = sc->nlab;

	if (!any && !reason && !le)
		return;
	strbuf_addn(b, "{", 1);
	strbuf_addn(b, w->labs.s + sc->lab, sc->nlab);
	if (reason) {
		strbuf_add(b, any ? ",reason=\"" : "reason=\"");
		openmetrics_escape(b, reason, true);
		strbuf_addn(b, "\"", 1);
		any = true;
	}
	if (le) {
		strbuf_add(b, any ? ",le=\"" : "le=\"");
		strbuf_addn(b, le, nle);
		strbuf_addn(b, "\"", 1);
	}
	strbuf_addn(b, "}", 1);
}

static const char *openmetrics_unit_name(enum field_unit u)
{
	return u == UNIT_SECONDS ? "seconds" : u == UNIT_BYTES ? "bytes" : NULL;
}

/* # TYPE, # UNIT (OpenMetrics only) and # HELP of a family. */
static void openmetrics_header(struct om_ctx *c, const char *fam,
			       const struct field_info *f, const char *type,
			       bool reasons)
{
	bool om = c->fmt == OPENMETRICS_OPENMETRICS;
	const char *unit = openmetrics_unit_name(f->unit);
	/* 0.0.4 names a counter's family by its sample name */
	const char *suffix = !om && !strcmp(type, "counter") ? "_total" : "";
	struct strbuf *b = c->out;

	if (om) {
		strbuf_addf(b, "# TYPE %s %s\n", fam, type);
		if (unit)
			strbuf_addf(b, "# UNIT %s %s\n", fam, unit);
	}
	if (f->help) {
		/* its source's words */
		strbuf_addf(b, "# HELP %s%s ", fam, suffix);
		openmetrics_escape(b, f->help, om);
		strbuf_add(b, "\n");
		goto out_type;
	}
	strbuf_addf(b, "# HELP %s%s KVM %s ", fam, suffix,
		    f->hist != HIST_NONE ? "histogram" : "statistic");
	openmetrics_escape(b, f->name, om);
	if (f->provider)
		strbuf_addf(b, " (%s)", f->provider);
	if (unit)
		strbuf_addf(b, ", in %s", unit);
	if (reasons)
		strbuf_add(b, ", by reason");
	if (f->hist != HIST_NONE)
		strbuf_add(b, "; _sum estimated from bucket midpoints");
	strbuf_add(b, "\n");
out_type:
	if (!om)
		strbuf_addf(b, "# TYPE %s%s %s\n", fam, suffix, type);
}

/*
 * The canonical "le" of bucket i of a histogram of family's, holding raw
 * values up to hi - 1 in the family's scale: made the first time, then
 * kept with the family's name (every VM's series has the same buckets).
 */
static const struct om_le *openmetrics_le(struct om_ctx *c, int family,
					  size_t i, uint64_t hi)
{
	struct om_name *nm = &c->w->names[family];
	struct om_le *le;

	if (i >= nm->nles) {
		size_t n = i + 1 > 2 * nm->nles ? i + 1 : 2 * nm->nles;

		nm->les = xrealloc(nm->les, n * sizeof(*nm->les));
		memset(nm->les + nm->nles, 0, (n - nm->nles) * sizeof(*nm->les));
		nm->nles = n;
	}
	le = &nm->les[i];
	if (!le->n || le->hi != hi) {
		struct strbuf t;

		le->hi = hi;
		if (hi == UINT64_MAX) {
			le->n = 4;
			memcpy(le->s, "+Inf", 5);
			return le;
		}
		strbuf_init(&t);
		openmetrics_scaled(&t, hi ? hi - 1 : 0, 0, &c->fields[family]);
		le->n = numfmt_canonical(le->s, strtod(t.s, NULL));
		strbuf_free(&t);
	}
	return le;
}

/* Appends " v\n": a sample's value that is a count. */
static void openmetrics_value(struct strbuf *b, uint64_t v)
{
	char d[NUMFMT_INT_SIZE + 2];
	size_t n;

	d[0] = ' ';
	n = 1 + numfmt_u64(d + 1, v);
	d[n++] = '\n';
	strbuf_addn(b, d, n);
}

/* Appends the name of a family's sample: fam (a vCPU's family: vfam)
 * and suffix. */
static void openmetrics_sample(struct strbuf *b, const struct om_name *nm,
			       bool vcpu, const char *suffix, size_t nsuffix)
{
	if (vcpu)
		strbuf_addn(b, nm->vfam, nm->nvfam);
	else
		strbuf_addn(b, nm->fam, nm->nfam);
	strbuf_addn(b, suffix, nsuffix);
}

/*
 * The buckets of field's histogram that a VM's or vCPU's series writes:
 * those that have counted in the whole selection (from then on) and the
 * one below each (its lower edge, for histogram_quantile()), the same
 * for every VM, so that sum by (le) over VMs adds up; NULL (every one)
 * when the whole selection has no such histogram. *n: how many indices
 * the array covers.
 */
static const bool *openmetrics_used(struct om_ctx *c, int field, size_t *n)
{
	static const bool none[1];
	const struct snap_hist *h = snapshot_scope_hist(c->snap->whole, field);
	struct om_name *nm = &c->w->names[field];

	if (!h)
		return NULL;
	for (size_t i = 0; i < h->nbuckets; i++) {
		const struct snap_bucket *b = &h->buckets[i];
		size_t k = (size_t)b->index;

		if (b->index < 0 || !b->seen || !b->total)
			continue;
		if (k >= nm->nused) {
			nm->used = xrealloc(nm->used,
					    (k + 1) * sizeof(*nm->used));
			memset(nm->used + nm->nused, 0,
			       (k + 1 - nm->nused) * sizeof(*nm->used));
			nm->nused = k + 1;
		}
		nm->used[k] = true;
		/* and the bucket below, whose le is this one's lower edge:
		 * without it histogram_quantile() would take 0 for it */
		if (k)
			nm->used[k - 1] = true;
	}
	*n = nm->nused;
	return nm->used ? nm->used : none;
}

/*
 * One histogram series, of every histogram alike (binary stats, exit
 * latency): cumulative _bucket lines (a +Inf bucket added when the last
 * one is closed), _count, and _sum: the one its source measured, else the
 * estimate where twice the sum is exact in integers (count x (lo + hi -
 * 1), or x 2lo in the open bucket), halved as a decimal shift. reason:
 * the key of a keyed histogram ("HLT"), or NULL.
 */
static void openmetrics_write_hist(struct om_ctx *c, const struct om_series *x,
				   const char *reason)
{
	const struct openmetrics_writer *w = c->w;
	const struct om_name *nm = &w->names[x->family];
	const struct om_scope *sc = &w->scopes[x->scope];
	const struct field_info *pf = &c->fields[x->family];
	const struct snap_hist *h = x->hist;
	struct strbuf *b = c->out;
	bool open_last = false, exact = true;
	u128 sum2 = 0;
	long double sumf = 0;
	uint64_t cum = 0;
	size_t nused = 0;
	const bool *used = sc->pid ? openmetrics_used(c, x->field, &nused) :
				     NULL;
	bool vcpu = sc->vcpu >= 0;

	for (size_t i = 0; i < h->nbuckets; i++) {
		const struct snap_bucket *bk = &h->buckets[i];
		const struct om_le *le;
		uint64_t n = bk->seen ? bk->total : 0;
		size_t k = (size_t)bk->index;
		u128 mid2, add;

		cum += n;
		if (bk->hi == UINT64_MAX) {
			open_last = true;
			mid2 = (u128)bk->lo * 2;
		} else {
			mid2 = (u128)bk->lo + bk->hi - 1;
		}
		sumf += (long double)n * (long double)mid2;
		if (exact && (__builtin_mul_overflow((u128)n, mid2, &add) ||
			      __builtin_add_overflow(sum2, add, &sum2)))
			exact = false;
		/* a bucket nothing counted in anywhere is left out (the
		 * open last one never: it is +Inf) */
		if (used && bk->hi != UINT64_MAX &&
		    (bk->index < 0 || k >= nused || !used[k]))
			continue;
		le = openmetrics_le(c, x->family, i, bk->hi);
		openmetrics_sample(b, nm, vcpu, "_bucket", 7);
		openmetrics_labels(b, w, sc, reason, le->s, le->n);
		openmetrics_value(b, cum);
	}
	if (!open_last) {
		openmetrics_sample(b, nm, vcpu, "_bucket", 7);
		openmetrics_labels(b, w, sc, reason, "+Inf", 4);
		openmetrics_value(b, cum);
	}
	openmetrics_sample(b, nm, vcpu, "_count", 6);
	openmetrics_labels(b, w, sc, reason, NULL, 0);
	openmetrics_value(b, cum);
	openmetrics_sample(b, nm, vcpu, "_sum", 4);
	openmetrics_labels(b, w, sc, reason, NULL, 0);
	strbuf_addn(b, " ", 1);
	if (h->measured)
		openmetrics_scaled(b, h->sum, 0, pf);
	else if (exact && !(sum2 & 1))
		openmetrics_scaled(b, sum2 / 2, 0, pf);
	else if (exact && sum2 <= ~(u128)0 / 5)
		openmetrics_scaled(b, sum2 * 5, -1, pf);
	else
		strbuf_addf(b, "%.17Lg",
			    sumf / 2 *
				    openmetrics_pow(pf->base == 2 ? 2 : 10,
						    pf->exponent));
	strbuf_add(b, "\n");
}

/* Writes the family of series [i, j) (one root field), unless its names
 * are taken. */
static void openmetrics_write_family(struct om_ctx *c, size_t i, size_t j)
{
	static const char *const counter[] = { "", "_total", "_created" };
	static const char *const gauge[] = { "" };
	static const char *const hist[] = { "", "_bucket", "_count", "_sum",
					    "_created" };
	const struct om_series *series = c->w->series;
	const struct field_info *f = &c->fields[series[i].family];
	bool vcpu = c->w->scopes[series[i].scope].vcpu >= 0;
	const char *fam = openmetrics_family(c, series[i].family, vcpu);
	const struct om_name *nm = &c->w->names[series[i].family];
	const char *const *claim;
	const char *type;
	bool reasons = false;
	size_t nclaim;

	if (f->hist != HIST_NONE) {
		type = "histogram";
		claim = hist;
		nclaim = ARRAY_SIZE(hist);
	} else if (f->type == FIELD_CUMULATIVE) {
		type = "counter";
		claim = counter;
		nclaim = ARRAY_SIZE(counter);
	} else {
		type = "gauge";
		claim = gauge;
		nclaim = ARRAY_SIZE(gauge);
	}
	if (!openmetrics_claim(c, fam, claim, nclaim))
		return;
	for (size_t k = i; k < j; k++)
		reasons |= series[k].field != series[k].family;
	openmetrics_header(c, fam, f, type, reasons);
	for (size_t k = i; k < j; k++) {
		const struct om_series *x = &series[k];
		const struct field_info *xf = &c->fields[x->field];
		char reason[256];

		if (f->hist != HIST_NONE) {
			openmetrics_write_hist(
				c, x,
				x->field == x->family ?
					NULL :
					openmetrics_reason(xf, f, reason,
							   sizeof(reason)));
			continue;
		}
		openmetrics_sample(c->out, nm, vcpu, "_total",
				   f->type == FIELD_CUMULATIVE ? 6 : 0);
		openmetrics_labels(c->out, c->w, &c->w->scopes[x->scope],
				   x->field == x->family ?
					   NULL :
					   openmetrics_reason(xf, f, reason,
							      sizeof(reason)),
				   NULL, 0);
		strbuf_addn(c->out, " ", 1);
		openmetrics_scaled(c->out, x->total, 0, f);
		strbuf_add(c->out, "\n");
	}
}

/* Appends ,NAME="VALUE" (escaped) where value is set and not empty. */
static void openmetrics_label(struct strbuf *b, const char *name,
			      const char *value)
{
	if (!value || !*value)
		return;
	strbuf_addf(b, ",%s=\"", name);
	openmetrics_escape(b, value, true);
	strbuf_add(b, "\"");
}

/*
 * kvm_vm_info{pid,guest,uuid,vmm,unit,pod} 1 for every VM this render
 * writes series of whose identity was looked up: who it is, as its
 * manager names it, to join onto its series by pid (the info-metric
 * convention), so that a dashboard can follow a guest across restarts.
 */
static void openmetrics_vm_info(struct om_ctx *c)
{
	const struct openmetrics_writer *w = c->w;
	bool om = c->fmt == OPENMETRICS_OPENMETRICS, head = false;
	struct strbuf *b = c->out;

	for (size_t i = 0; i < w->nscopes; i++) {
		const struct vmdir_vm *vm;

		if (!w->scopes[i].pid || w->scopes[i].vcpu >= 0)
			continue;
		vm = vmdir_find(c->snap->vms, w->scopes[i].pid);

		if (!vm || !vm->vmm)
			continue;
		if (!head) {
			strbuf_addf(b,
				    "# %s kvm_vm%s %s\n# %s kvm_vm%s Who each "
				    "VM is: its VMM, its name, UUID and "
				    "systemd unit (or Kubernetes pod) where the "
				    "host tells; join by pid.\n",
				    "TYPE", om ? "" : "_info",
				    om ? "info" : "gauge", "HELP",
				    om ? "" : "_info");
			head = true;
		}
		strbuf_addf(b, "kvm_vm_info{pid=\"%d\"", (int)vm->pid);
		openmetrics_label(b, "guest", vm->name);
		openmetrics_label(b, "uuid", vm->uuid);
		openmetrics_label(b, "vmm", vm->vmm);
		openmetrics_label(b, "unit", vm->unit);
		openmetrics_label(b, "pod", vm->pod);
		strbuf_add(b, "} 1\n");
	}
}

/* Whether word w (n bytes) is one of the space-separated words of s. */
static bool openmetrics_has_word(const char *s, const char *w, size_t n)
{
	const char *p = s, *x;
	size_t k;

	while ((x = util_next_word(&p, &k)))
		if (k == n && !strncmp(x, w, n))
			return true;
	return false;
}

/* One kvmstat_source_up sample (its family's header first). */
static void openmetrics_source(struct strbuf *b, bool *head, const char *w,
			       size_t n, bool up)
{
	if (!*head) {
		strbuf_add(b, "# HELP kvmstat_source_up Whether each source "
			      "kvmstat reads is open (1) or could not start "
			      "(0).\n# TYPE kvmstat_source_up gauge\n");
		*head = true;
	}
	strbuf_add(b, "kvmstat_source_up{source=\"");
	strbuf_addn(b, w, n);
	strbuf_addf(b, "\"} %d\n", up);
}

/*
 * kvmstat_source_up{source} 1 for each source open, 0 for each one that
 * could not start (once, however many notes it has): what an alert on
 * failing sources watches.
 */
static void openmetrics_sources(struct om_ctx *c)
{
	const struct snapshot *snap = c->snap;
	const char *open = snap->header.sources, *p, *w;
	bool head = false;
	size_t n;

	if (open && !strncmp(open, "no source", 9))
		open = NULL;
	p = open;
	while ((w = util_next_word(&p, &n)))
		openmetrics_source(c->out, &head, w, n, true);
	for (size_t i = 0; i < snap->nnotes; i++) {
		const char *w = snap->notes[i].source;
		bool dup = false;

		if (!snap->notes[i].failed || !w ||
		    openmetrics_has_word(open, w, strlen(w)))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = snap->notes[j].failed && snap->notes[j].source &&
			      !strcmp(snap->notes[j].source, w);
		if (!dup)
			openmetrics_source(c->out, &head, w, strlen(w), false);
	}
}

struct openmetrics_writer *openmetrics_writer_new(bool per_vcpu)
{
	struct openmetrics_writer *w = xcalloc(1, sizeof(*w));

	w->per_vcpu = per_vcpu;
	levels_seen_init(&w->seen);
	levels_scratch_init(&w->sums);
	strbuf_init(&w->labs);
	return w;
}

void openmetrics_writer_free(struct openmetrics_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nnames; i++) {
		free(w->names[i].fam);
		free(w->names[i].vfam);
		free(w->names[i].from);
		free(w->names[i].used);
		free(w->names[i].les);
	}
	free(w->names);
	levels_seen_free(&w->seen);
	levels_scratch_free(&w->sums);
	free(w->scopes);
	free(w->series);
	free(w->kept);
	free(w->has_reasons);
	free(w->done);
	free(w->in_vm);
	free(w->reserved);
	strbuf_free(&w->labs);
	free(w);
}

void openmetrics_write(struct openmetrics_writer *w, struct strbuf *b,
		       const struct snapshot *snap, enum openmetrics_format fmt)
{
	struct om_ctx c = { .out = b,
			    .snap = snap,
			    .fields = snap->fields,
			    .fmt = fmt,
			    .w = w };
	size_t nf = snap->nfields;

	if (w->nnames < nf) {
		w->names = xrealloc(w->names, nf * sizeof(*w->names));
		memset(w->names + w->nnames, 0,
		       (nf - w->nnames) * sizeof(*w->names));
		w->nnames = nf;
	}
	w->nscopes = w->nseries = 0;
	strbuf_reset(&w->labs);
	levels_scratch_reset(&w->sums);
	levels_seen_prune(&w->seen, snap);
	openmetrics_names(&c);
	openmetrics_kept(&c);
	openmetrics_gather(&c);
	if (w->nseries)
		qsort_r(w->series, w->nseries, sizeof(*w->series),
			openmetrics_series_cmp, &c);
	for (size_t i = 0, j; i < w->nseries; i = j) {
		for (j = i + 1;
		     j < w->nseries &&
		     w->series[j].family == w->series[i].family &&
		     (w->scopes[w->series[j].scope].vcpu >= 0) ==
			     (w->scopes[w->series[i].scope].vcpu >= 0);
		     j++)
			;
		openmetrics_write_family(&c, i, j);
	}
	openmetrics_vm_info(&c);
	openmetrics_sources(&c);
	breakdown_render_metrics(b, snap, fmt == OPENMETRICS_OPENMETRICS);
	if (snap->vcputime)
		vcputime_render_openmetrics(b, snap->vcputime,
					    fmt == OPENMETRICS_OPENMETRICS);
	if (fmt == OPENMETRICS_OPENMETRICS)
		strbuf_add(b, "# EOF\n");
	for (size_t i = 0; i < w->nreserved; i++)
		free(w->reserved[i]);
	w->nreserved = 0;
}

void openmetrics_render(struct strbuf *b, const struct snapshot *snap,
			enum openmetrics_format fmt, bool per_vcpu)
{
	struct openmetrics_writer *w = openmetrics_writer_new(per_vcpu);

	openmetrics_write(w, b, snap, fmt);
	openmetrics_writer_free(w);
}
