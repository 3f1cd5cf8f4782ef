// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit latency as text and JSON (lat_render.h), from the histograms of
 * the snapshot's scopes. Times are nanoseconds in the histograms; the
 * text writes them with units (units_format_seconds).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "lat_render.h"
#include "units.h"
#include "util.h"

/* The two kinds, in the order they are written. */
enum {
	LR_EXIT,
	LR_VMM,
	LR_NKINDS
};

static const char *const lat_titles[LR_NKINDS] = {
	[LR_EXIT] = "Exit latency (kvm_exit to kvm_entry)",
	[LR_VMM] = "Time in the VMM (kvm_userspace_exit to re-entry at %s)",
};
static const char *const lat_kinds[LR_NKINDS] = {
	[LR_EXIT] = "exit", [LR_VMM] = "vmm"
};

/* A histogram of one kind in one scope, while writing. */
struct lr_hist {
	const struct snap_hist *h;
	char reason[128]; /* REASON of NAME(REASON) */
};

static int lr_family(const struct snapshot *snap, int kind)
{
	return kind == LR_EXIT ? snap->latency->exit_field :
				 snap->latency->vmm_field;
}

/* The histograms of kind in scope sc, by time spent, largest first, then
 * reason; *n of them, caller frees. */
static struct lr_hist *lr_hists(const struct snapshot *snap,
				const struct snap_scope *sc, int kind,
				size_t *n);

static int lr_cmp(const void *a, const void *b)
{
	const struct lr_hist *x = a, *y = b;

	if (x->h->sum != y->h->sum)
		return x->h->sum > y->h->sum ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

static struct lr_hist *lr_hists(const struct snapshot *snap,
				const struct snap_scope *sc, int kind,
				size_t *n)
{
	int fam = lr_family(snap, kind);
	struct lr_hist *v = xmalloc((sc->nhists + 1) * sizeof(*v));
	size_t pl;

	*n = 0;
	if (fam < 0 || (size_t)fam >= snap->nfields)
		return v;
	pl = strlen(snap->fields[fam].name);
	for (size_t i = 0; i < sc->nhists; i++) {
		const struct snap_hist *h = &sc->hists[i];
		const struct field_info *f = &snap->fields[h->field];

		if (!h->measured || f->parent != fam || strlen(f->name) < pl + 2)
			continue;
		/* the key: NAME(REASON) of NAME */
		v[*n].h = h;
		snprintf(v[*n].reason, sizeof(v[*n].reason), "%.*s",
			 (int)(strlen(f->name) - pl - 2), f->name + pl + 1);
		(*n)++;
	}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), lr_cmp);
	return v;
}

static const char *lat_render_ns(double ns, unsigned int units, char *buf,
				 size_t len)
{
	return units_format_seconds(ns / 1e9, units, buf, len);
}

/* "< 65.5 µs" for the bucket of a quantile, ">= 275 s" for the open last
 * one. */
static const char *lat_render_bound(const struct snap_hist *h,
				    unsigned int permille, unsigned int units,
				    char *buf, size_t len)
{
	struct hist_bucket bk;
	char t[32];

	if (!hist_snap_quantile(h, false, permille, &bk))
		return "-";
	if (bk.hi == UINT64_MAX)
		snprintf(buf, len, ">= %s",
			 lat_render_ns((double)bk.lo, units, t, sizeof(t)));
	else
		snprintf(buf, len, "< %s",
			 lat_render_ns((double)bk.hi, units, t, sizeof(t)));
	return buf;
}

void lat_render_text(struct strbuf *b, const struct snapshot *snap,
		     unsigned int units)
{
	const struct snap_latency *lat = snap->latency;

	for (int k = 0; k < LR_NKINDS; k++) {
		struct lr_hist *v = NULL;
		uint64_t all = 0;
		size_t n = 0;

		if (k == LR_EXIT && !lat->exits_timed)
			continue;
		if (snap->whole)
			v = lr_hists(snap, snap->whole, k, &n);
		for (size_t i = 0; i < n; i++)
			all += v[i].h->sum;
		strbuf_addf(b, lat_titles[k], lat->reentry ? lat->reentry : "");
		strbuf_addf(b,
			    "\n %-24s %10s %6s %10s %10s %10s %11s %11s %11s\n",
			    "Reason", "Count", "Time%", "Min", "Avg", "Max",
			    "p50", "p90", "p99");
		for (size_t i = 0; i < n; i++) {
			const struct snap_hist *h = v[i].h;
			char c[6][32], j[6][40];
			const char *s[6] = {
				lat_render_ns((double)h->min, units, c[0], 32),
				lat_render_ns((double)h->sum / (double)h->count,
					      units, c[1], 32),
				lat_render_ns((double)h->max, units, c[2], 32),
				lat_render_bound(h, HIST_P50, units, c[3], 32),
				lat_render_bound(h, HIST_P90, units, c[4], 32),
				lat_render_bound(h, HIST_P99, units, c[5], 32),
			};

			for (int k2 = 0; k2 < 6; k2++)
				s[k2] = units_rjust(s[k2], k2 < 3 ? 10 : 11,
						    j[k2], sizeof(j[k2]));
			strbuf_addf(b,
				    " %-24s %10" PRIu64
				    " %5.1f%% %10s %10s %10s %11s %11s %11s\n",
				    v[i].reason, h->count,
				    all ? 100.0 * (double)h->sum / (double)all :
					  0.0,
				    s[0], s[1], s[2], s[3], s[4], s[5]);
		}
		if (!n)
			strbuf_add(b, " (none yet)\n");
		free(v);
	}
}

static json_t *lat_render_u64(uint64_t v)
{
	return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

/* A percentile as its bucket's upper bound in ns (null when empty or
 * open). */
static json_t *lat_render_pct(const struct snap_hist *h, unsigned int permille)
{
	struct hist_bucket bk;

	if (!hist_snap_quantile(h, false, permille, &bk) || bk.hi == UINT64_MAX)
		return json_null();
	return lat_render_u64(bk.hi);
}

/* The histograms of kind in scope sc, appended to a. */
static void lr_json_scope(json_t *a, const struct snapshot *snap,
			  const struct snap_scope *sc, int kind)
{
	size_t n;
	struct lr_hist *v = lr_hists(snap, sc, kind, &n);

	for (size_t i = 0; i < n; i++) {
		const struct snap_hist *hs = v[i].h;
		json_t *h = json_object(), *bk = json_array();
		bool vcpu = sc->vcpu != SAMPLE_ALL_VCPUS;

		json_object_set_new(h, "kind", json_string(lat_kinds[kind]));
		json_object_set_new(h, "reason", json_string(v[i].reason));
		json_object_set_new(h, "pid", json_integer(sc->pid));
		json_object_set_new(h, "tid", json_integer(vcpu ? sc->tid : 0));
		json_object_set_new(h, "vcpu",
				    vcpu ? json_integer(sc->vcpu) : json_null());
		json_object_set_new(h, "count", lat_render_u64(hs->count));
		json_object_set_new(h, "total_ns", lat_render_u64(hs->sum));
		json_object_set_new(h, "min_ns", lat_render_u64(hs->min));
		json_object_set_new(h, "max_ns", lat_render_u64(hs->max));
		json_object_set_new(h, "p50_ns", lat_render_pct(hs, HIST_P50));
		json_object_set_new(h, "p90_ns", lat_render_pct(hs, HIST_P90));
		json_object_set_new(h, "p99_ns", lat_render_pct(hs, HIST_P99));
		for (size_t j = 0; j < hs->nbuckets; j++) {
			const struct snap_bucket *b = &hs->buckets[j];
			json_t *e;

			if (!b->total)
				continue;
			e = json_object();
			json_object_set_new(e, "lo_ns", lat_render_u64(b->lo));
			json_object_set_new(e, "hi_ns",
					    b->hi == UINT64_MAX ?
						    json_null() :
						    lat_render_u64(b->hi));
			json_object_set_new(e, "count",
					    lat_render_u64(b->total));
			json_array_append_new(bk, e);
		}
		json_object_set_new(h, "buckets", bk);
		json_array_append_new(a, h);
	}
	free(v);
}

json_t *lat_render_json(const struct snapshot *snap)
{
	const struct snap_latency *lat = snap->latency;
	const struct snap_scope *whole = snap->whole;
	json_t *o = json_object(), *a = json_array();

	if (lat->reentry)
		json_object_set_new(o, "reentry", json_string(lat->reentry));
	json_object_set_new(o, "exits_timed", json_boolean(lat->exits_timed));
	/* by kind, then the whole selection, each VM and its vCPUs */
	for (int k = 0; whole && k < LR_NKINDS; k++) {
		lr_json_scope(a, snap, whole, k);
		for (size_t i = 0; i < whole->nchildren; i++) {
			const struct snap_scope *vm = &whole->children[i];

			lr_json_scope(a, snap, vm, k);
			for (size_t j = 0; j < vm->nchildren; j++)
				lr_json_scope(a, snap, &vm->children[j], k);
		}
	}
	json_object_set_new(o, "histograms", a);
	return o;
}
