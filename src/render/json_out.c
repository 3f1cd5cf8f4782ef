// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON of a snapshot, with jansson (the library the QMP provider uses).
 * Fields come from the snapshot's rows, so the field filter applies as in
 * every other mode; per-VM and per-vCPU entries come from scope snapshots
 * of the same stats, so a parent without readings of its own sums its
 * children there too. The layout is described in json_out.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_out.h"
#include "util.h"

/* The bucket children of every histogram, grouped by parent. */
struct jo_hist {
	int *first;		/* by field id: index in child, or -1 */
	int *count;		/* by field id */
	int *child;		/* field ids, by parent then bucket */
};

static const char *const jo_types[] = {
	[FIELD_CUMULATIVE] = "cumulative",
	[FIELD_INSTANT] = "instant",
	[FIELD_PEAK] = "peak",
};

static const char *const jo_units[] = {
	[UNIT_NONE] = "none",
	[UNIT_BYTES] = "bytes",
	[UNIT_SECONDS] = "seconds",
	[UNIT_CYCLES] = "cycles",
	[UNIT_BOOLEAN] = "boolean",
};

/* A count: an integer, or a real past what JSON integers hold here. */
static json_t *jo_u64(uint64_t v)
{
	return v <= (uint64_t)LLONG_MAX ? json_integer((json_int_t)v) :
					  json_real((double)v);
}

/* A string of s; bytes that are not UTF-8 (a guest name can hold any)
 * become '?'. */
static json_t *jo_string(const char *s)
{
	json_t *j = json_string(s);
	char *copy;

	if (j)
		return j;
	copy = xstrdup(s);
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

static bool jo_is_bucket(const struct stats *s, const struct field_info *f)
{
	return f->bucket >= 0 ||
	       (f->parent >= 0 && s->fields.v[f->parent].hist != HIST_NONE);
}

static int jo_bucket_cmp(const void *a, const void *b, void *arg)
{
	const struct stats *s = arg;
	const struct field_info *x = &s->fields.v[*(const int *)a];
	const struct field_info *y = &s->fields.v[*(const int *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

static void jo_hist_init(struct jo_hist *h, const struct stats *s)
{
	size_t n = s->fields.n ? s->fields.n : 1, nc = 0;

	h->first = xmalloc(n * sizeof(*h->first));
	h->count = xcalloc(n, sizeof(*h->count));
	h->child = xmalloc(n * sizeof(*h->child));
	for (size_t i = 0; i < s->fields.n; i++) {
		const struct field_info *f = &s->fields.v[i];

		h->first[i] = -1;
		if (f->parent >= 0 && f->bucket >= 0 &&
		    s->fields.v[f->parent].hist != HIST_NONE)
			h->child[nc++] = (int)i;
	}
	if (nc)
		qsort_r(h->child, nc, sizeof(*h->child), jo_bucket_cmp,
			(void *)s);
	for (size_t i = 0; i < nc; i++) {
		int p = s->fields.v[h->child[i]].parent;

		if (h->first[p] < 0)
			h->first[p] = (int)i;
		h->count[p]++;
	}
}

static void jo_hist_free(struct jo_hist *h)
{
	free(h->first);
	free(h->count);
	free(h->child);
}

/* "buckets" of histogram parent in one scope: raw ranges, totals and
 * deltas (null where the bucket was not read in the last refresh). */
static json_t *jo_buckets(const struct stats *s, const struct jo_hist *h,
			  int parent, pid_t pid, int vcpu)
{
	json_t *a = json_array();

	for (int i = 0; i < h->count[parent]; i++) {
		int id = h->child[h->first[parent] + i];
		const struct field_info *f = &s->fields.v[id];
		const struct stat_cell *c = stats_cell(s, id, pid, vcpu);
		bool ok = c && c->seen && c->fresh;
		json_t *b = json_object();

		json_object_set_new(b, "lo", jo_u64(f->bucket_lo));
		json_object_set_new(b, "hi", f->bucket_hi == UINT64_MAX ?
				    json_null() : jo_u64(f->bucket_hi));
		json_object_set_new(b, "total", ok ? jo_u64(c->total) :
				    json_null());
		json_object_set_new(b, "delta", ok ? json_integer(c->delta) :
				    json_null());
		json_array_append_new(a, b);
	}
	return a;
}

/* valid, total, delta, rate (and buckets) of a row into o. */
static void jo_values(json_t *o, const struct stats *s,
		      const struct jo_hist *h, const struct snap_row *r,
		      pid_t pid, int vcpu)
{
	json_object_set_new(o, "valid", json_boolean(r->valid));
	json_object_set_new(o, "total", jo_u64(r->total));
	json_object_set_new(o, "delta", r->valid ? json_integer(r->delta) :
				      json_null());
	json_object_set_new(o, "rate", r->valid ? json_real(r->rate) :
				     json_null());
	if (s->fields.v[r->field].hist != HIST_NONE)
		json_object_set_new(o, "buckets",
				    jo_buckets(s, h, r->field, pid, vcpu));
}

/* The object of one field in the whole selection. */
static json_t *jo_field(const struct stats *s, const struct jo_hist *h,
			const struct snap_row *r)
{
	const struct field_info *f = &s->fields.v[r->field];
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(jo_types[f->type]));
	json_object_set_new(o, "unit", json_string(jo_units[f->unit]));
	if (f->unit != UNIT_NONE || f->exponent) {
		json_object_set_new(o, "exponent", json_integer(f->exponent));
		json_object_set_new(o, "base", json_integer(f->base == 2 ? 2 :
							    10));
	}
	if (f->provider)
		json_object_set_new(o, "provider", json_string(f->provider));
	if (f->parent >= 0)
		json_object_set_new(o, "parent",
				    json_string(s->fields.v[f->parent].name));
	if (f->hist != HIST_NONE)
		json_object_set_new(o, "histogram", json_string(
			f->hist == HIST_LOG2 ? "log2" : "linear"));
	jo_values(o, s, h, r, 0, SAMPLE_ALL_VCPUS);
	return o;
}

static const char *jo_guest(const struct ui_name *names, size_t nnames,
			    pid_t pid)
{
	for (size_t i = 0; i < nnames; i++)
		if (names[i].pid == pid)
			return names[i].name;
	return NULL;
}

/* A VM entry {pid, guest}, appended to the field's "vms". */
static json_t *jo_vm_entry(json_t *field, pid_t pid, const char *guest)
{
	json_t *vms = json_object_get(field, "vms");
	json_t *e = json_object();

	if (!vms) {
		vms = json_array();
		json_object_set_new(field, "vms", vms);
	}
	json_object_set_new(e, "pid", json_integer(pid));
	json_object_set_new(e, "guest", guest ? jo_string(guest) :
				      json_null());
	json_array_append_new(vms, e);
	return e;
}

/*
 * The per-VM and per-vCPU entries of the fields in fobj (objects by field
 * id, NULL for fields not written): every VM read in the last refresh,
 * then each of its vCPUs read in it.
 */
static void jo_breakdowns(const struct stats *s, const struct jo_hist *h,
			  json_t **fobj, const struct ui_name *names,
			  size_t nnames)
{
	size_t nf = s->fields.n ? s->fields.n : 1, nvms;
	json_t **vobj = xmalloc(nf * sizeof(*vobj));
	struct snap_group *vms;

	nvms = stats_groups(s, NULL, 0, &vms);
	for (size_t i = 0; i < nvms; i++) {
		const char *guest = jo_guest(names, nnames, vms[i].pid);
		struct snap_scope sc = { vms[i].pid, SAMPLE_ALL_VCPUS, false };
		struct snap_group *vcpus;
		struct snapshot ss;
		size_t nvcpus;

		if (!vms[i].fresh)
			continue;
		memset(vobj, 0, nf * sizeof(*vobj));
		stats_snapshot_scope(s, NULL, &sc, &ss);
		for (size_t r = 0; r < ss.nrows; r++) {
			const struct snap_row *row = &ss.rows[r];

			if (!fobj[row->field])
				continue;
			vobj[row->field] = jo_vm_entry(fobj[row->field],
						       vms[i].pid, guest);
			jo_values(vobj[row->field], s, h, row, vms[i].pid,
				  SAMPLE_ALL_VCPUS);
		}
		snapshot_free(&ss);
		nvcpus = stats_groups(s, NULL, vms[i].pid, &vcpus);
		for (size_t j = 0; j < nvcpus; j++) {
			if (!vcpus[j].fresh)
				continue;
			sc.vcpu = vcpus[j].vcpu;
			stats_snapshot_scope(s, NULL, &sc, &ss);
			for (size_t r = 0; r < ss.nrows; r++) {
				const struct snap_row *row = &ss.rows[r];
				json_t *list, *e;

				if (!fobj[row->field])
					continue;
				if (!vobj[row->field])
					vobj[row->field] = jo_vm_entry(
						fobj[row->field], vms[i].pid,
						guest);
				list = json_object_get(vobj[row->field],
						       "vcpus");
				if (!list) {
					list = json_array();
					json_object_set_new(vobj[row->field],
							    "vcpus", list);
				}
				e = json_object();
				json_object_set_new(e, "vcpu",
						    json_integer(sc.vcpu));
				if (vcpus[j].tid)
					json_object_set_new(e, "tid",
						json_integer(vcpus[j].tid));
				jo_values(e, s, h, row, vms[i].pid, sc.vcpu);
				json_array_append_new(list, e);
			}
			snapshot_free(&ss);
		}
		free(vcpus);
	}
	free(vms);
	free(vobj);
}

/* "providers": the words of "tracepoint debugfs". */
static json_t *jo_providers(const char *providers)
{
	json_t *a = json_array();
	const char *p = providers;

	while (p && *p) {
		size_t n = strcspn(p, " ");

		if (n)
			json_array_append_new(a, json_stringn(p, n));
		p += n;
		p += strspn(p, " ");
	}
	return a;
}

json_t *json_out_snapshot(const struct snapshot *snap,
			  const struct ui_name *names, size_t nnames,
			  const char *providers)
{
	const struct stats *s = snap->stats;
	json_t *root = json_object(), *fields = json_object();
	json_t **fobj;
	struct jo_hist h;
	char ts[48];
	struct tm tm;
	time_t t = snap->wall.tv_sec;

	if (!root || !fields) {
		json_decref(root);
		json_decref(fields);
		return NULL;
	}
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03ldZ",
		 snap->wall.tv_nsec / 1000000);
	json_object_set_new(root, "timestamp", json_string(ts));
	json_object_set_new(root, "epoch", json_real((double)snap->wall.tv_sec +
						     snap->wall.tv_nsec / 1e9));
	json_object_set_new(root, "interval",
			    json_real(snap->interval_ns / 1e9));
	json_object_set_new(root, "providers", jo_providers(providers));
	json_object_set_new(root, "fields", fields);
	if (!s)
		return root;
	fobj = xcalloc(s->fields.n ? s->fields.n : 1, sizeof(*fobj));
	jo_hist_init(&h, s);
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *r = &snap->rows[i];
		const struct field_info *f = &s->fields.v[r->field];

		/* rows renamed for a per-vCPU view are not fields */
		if (r->name != f->name || jo_is_bucket(s, f))
			continue;
		fobj[r->field] = jo_field(s, &h, r);
		json_object_set_new(fields, r->name, fobj[r->field]);
	}
	jo_breakdowns(s, &h, fobj, names, nnames);
	jo_hist_free(&h);
	free(fobj);
	return root;
}

int json_out_render(struct strbuf *b, const struct snapshot *snap,
		    const struct ui_name *names, size_t nnames,
		    const char *providers, bool pretty)
{
	json_t *root = json_out_snapshot(snap, names, nnames, providers);
	char *text;

	if (!root)
		return -ENOMEM;
	text = json_dumps(root, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	json_decref(root);
	if (!text)
		return -ENOMEM;
	strbuf_add(b, text);
	strbuf_add(b, "\n");
	free(text);
	return 0;
}
