// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit latency as text, JSON and Prometheus histograms (lat_render.h).
 * Times are nanoseconds in the rows; the text writes them with units
 * (units_format_seconds), the exposition in seconds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "lat_render.h"
#include "units.h"
#include "util.h"

static const char *const lat_titles[LAT_NKINDS] = {
	[LAT_EXIT] = "Exit latency (kvm_exit to kvm_entry)",
	[LAT_VMM] = "Time in the VMM (kvm_userspace_exit to re-entry at %s)",
};

/* The buckets of r as the histogram model's (hist.h). */
static void lat_render_buckets(const struct lat_row *r,
			       struct hist_bucket out[LAT_NBUCKETS])
{
	for (size_t i = 0; i < LAT_NBUCKETS; i++) {
		hist_bucket_range(HIST_LOG2, 0, i, LAT_NBUCKETS, &out[i].lo,
				  &out[i].hi);
		out[i].count = r->b[i];
	}
}

/* The bucket holding the per-mille quantile of r, or -1 with no samples. */
static int lat_row_quantile(const struct lat_row *r, unsigned int permille)
{
	struct hist_bucket hb[LAT_NBUCKETS];

	lat_render_buckets(r, hb);
	return (int)hist_quantile(hb, LAT_NBUCKETS, permille);
}

/* Bucket i's range in ns. */
static void lat_bucket_range(size_t i, uint64_t *lo, uint64_t *hi)
{
	hist_bucket_range(HIST_LOG2, 0, i, LAT_NBUCKETS, lo, hi);
}

static const char *lat_render_ns(double ns, char *buf, size_t len)
{
	return units_format_seconds(ns / 1e9, 0, buf, len);
}

/* "< 65.5 µs" for bucket i, ">= 275 s" for the open last one. */
static const char *lat_render_bound(int i, char *buf, size_t len)
{
	uint64_t lo, hi;
	char t[32];

	if (i < 0)
		return "-";
	lat_bucket_range((size_t)i, &lo, &hi);
	if (hi == UINT64_MAX)
		snprintf(buf, len, ">= %s",
			 lat_render_ns((double)lo, t, sizeof(t)));
	else
		snprintf(buf, len, "< %s",
			 lat_render_ns((double)hi, t, sizeof(t)));
	return buf;
}

void lat_render_text(struct strbuf *b, const struct lat_snap *s, pid_t pid)
{
	for (int k = 0; k < LAT_NKINDS; k++) {
		uint64_t all = 0;
		size_t shown = 0;

		if (k == LAT_EXIT && !s->exits)
			continue;
		for (size_t i = 0; i < s->n; i++)
			if ((int)s->rows[i].kind == k &&
			    s->rows[i].pid == pid && !s->rows[i].tid)
				all += s->rows[i].total;
		strbuf_addf(b, lat_titles[k], s->mark);
		strbuf_addf(b,
			    "\n %-24s %10s %6s %10s %10s %10s %11s %11s %11s\n",
			    "Reason", "Count", "Time%", "Min", "Avg", "Max",
			    "p50", "p90", "p99");
		for (size_t i = 0; i < s->n; i++) {
			const struct lat_row *r = &s->rows[i];
			char mn[32], av[32], mx[32], p[3][32];

			if ((int)r->kind != k || r->pid != pid || r->tid)
				continue;
			shown++;
			strbuf_addf(b,
				    " %-24s %10" PRIu64
				    " %5.1f%% %10s %10s %10s %11s %11s %11s\n",
				    r->reason, r->count,
				    all ? 100.0 * (double)r->total /
						    (double)all :
					  0.0,
				    lat_render_ns((double)r->min, mn,
						  sizeof(mn)),
				    lat_render_ns((double)r->total /
							  (double)r->count,
						  av, sizeof(av)),
				    lat_render_ns((double)r->max, mx,
						  sizeof(mx)),
				    lat_render_bound(lat_row_quantile(r, 500),
						     p[0], 32),
				    lat_render_bound(lat_row_quantile(r, 900),
						     p[1], 32),
				    lat_render_bound(lat_row_quantile(r, 990),
						     p[2], 32));
		}
		if (!shown)
			strbuf_add(b, " (none yet)\n");
	}
}

static json_t *lat_render_u64(uint64_t v)
{
	return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

/* A percentile as its bucket's upper bound in ns (null when empty or
 * open). */
static json_t *lat_render_pct(const struct lat_row *r, unsigned int permille)
{
	int i = lat_row_quantile(r, permille);
	uint64_t lo, hi;

	if (i < 0)
		return json_null();
	lat_bucket_range((size_t)i, &lo, &hi);
	return hi == UINT64_MAX ? json_null() : lat_render_u64(hi);
}

json_t *lat_render_json(const struct lat_snap *s)
{
	json_t *o = json_object(), *a = json_array();

	json_object_set_new(o, "reentry", json_string(s->mark));
	json_object_set_new(o, "exits_timed", json_boolean(s->exits));
	for (size_t i = 0; i < s->n; i++) {
		const struct lat_row *r = &s->rows[i];
		json_t *h = json_object(), *bk = json_array();

		json_object_set_new(h, "kind",
				    json_string(lat_kind_name(r->kind)));
		json_object_set_new(h, "reason", json_string(r->reason));
		json_object_set_new(h, "pid", json_integer(r->pid));
		json_object_set_new(h, "tid", json_integer(r->tid));
		json_object_set_new(h, "vcpu",
				    r->vcpu >= 0 ? json_integer(r->vcpu) :
						   json_null());
		json_object_set_new(h, "count", lat_render_u64(r->count));
		json_object_set_new(h, "total_ns", lat_render_u64(r->total));
		json_object_set_new(h, "min_ns", lat_render_u64(r->min));
		json_object_set_new(h, "max_ns", lat_render_u64(r->max));
		json_object_set_new(h, "p50_ns", lat_render_pct(r, 500));
		json_object_set_new(h, "p90_ns", lat_render_pct(r, 900));
		json_object_set_new(h, "p99_ns", lat_render_pct(r, 990));
		for (size_t j = 0; j < LAT_NBUCKETS; j++) {
			json_t *e;
			uint64_t lo, hi;

			if (!r->b[j])
				continue;
			lat_bucket_range(j, &lo, &hi);
			e = json_object();
			json_object_set_new(e, "lo_ns", lat_render_u64(lo));
			json_object_set_new(e, "hi_ns",
					    hi == UINT64_MAX ?
						    json_null() :
						    lat_render_u64(hi));
			json_object_set_new(e, "count", lat_render_u64(r->b[j]));
			json_array_append_new(bk, e);
		}
		json_object_set_new(h, "buckets", bk);
		json_array_append_new(a, h);
	}
	json_object_set_new(o, "histograms", a);
	return o;
}

static void lat_render_labels(struct strbuf *b, const struct lat_row *r,
			      const char *le)
{
	if (r->pid)
		strbuf_addf(b, "{pid=\"%d\",", (int)r->pid);
	else
		strbuf_add(b, "{");
	if (r->tid && r->vcpu >= 0)
		strbuf_addf(b, "vcpu=\"%d\",", r->vcpu);
	strbuf_add(b, "reason=\"");
	/* names come from format files: keep them to label-safe bytes */
	for (const char *p = r->reason; *p; p++)
		strbuf_addf(b, "%c",
			    *p == '"' || *p == '\\' || *p == '\n' ? '_' : *p);
	strbuf_add(b, "\"");
	if (le)
		strbuf_addf(b, ",le=\"%s\"", le);
	strbuf_add(b, "}");
}

void lat_render_prom(struct strbuf *b, const struct lat_snap *s, bool om)
{
	static const char *const fams[LAT_NKINDS] = {
		[LAT_EXIT] = "kvm_exit_latency_seconds",
		[LAT_VMM] = "kvm_vmm_time_seconds",
	};
	static const char *const help[LAT_NKINDS] = {
		[LAT_EXIT] = "Time from kvm_exit to the next kvm_entry of the "
			     "vCPU thread, by exit reason",
		[LAT_VMM] = "Time from kvm_userspace_exit until the vCPU "
			    "thread enters the guest again, by reason",
	};

	for (int k = 0; k < LAT_NKINDS; k++) {
		bool head = false;

		for (size_t i = 0; i < s->n; i++) {
			const struct lat_row *r = &s->rows[i];
			uint64_t cum = 0, lo, hi;
			char le[40];

			/* threads without a vCPU index stay in their VM's */
			if ((int)r->kind != k || (r->tid && r->vcpu < 0))
				continue;
			if (!head) {
				if (om)
					strbuf_addf(b,
						    "# TYPE %s histogram\n"
						    "# UNIT %s seconds\n",
						    fams[k], fams[k]);
				strbuf_addf(b, "# HELP %s %s.\n", fams[k],
					    help[k]);
				if (!om)
					strbuf_addf(b, "# TYPE %s histogram\n",
						    fams[k]);
				head = true;
			}
			for (size_t j = 0; j < LAT_NBUCKETS; j++) {
				cum += r->b[j];
				lat_bucket_range(j, &lo, &hi);
				if (hi == UINT64_MAX)
					snprintf(le, sizeof(le), "+Inf");
				else
					snprintf(le, sizeof(le), "%.9g",
						 (double)hi / 1e9);
				strbuf_addf(b, "%s_bucket", fams[k]);
				lat_render_labels(b, r, le);
				strbuf_addf(b, " %" PRIu64 "\n", cum);
			}
			strbuf_addf(b, "%s_count", fams[k]);
			lat_render_labels(b, r, NULL);
			strbuf_addf(b, " %" PRIu64 "\n", cum);
			strbuf_addf(b, "%s_sum", fams[k]);
			lat_render_labels(b, r, NULL);
			strbuf_addf(b, " %.9f\n", (double)r->total / 1e9);
		}
	}
}
