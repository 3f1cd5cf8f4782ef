// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON of a snapshot, with jansson (the library the QMP provider uses).
 * Fields come from the snapshot's view, so the field filter applies as in
 * every other mode; per-VM and per-vCPU entries come from the rows of the
 * snapshot's VM and vCPU scopes, where a parent without readings of its
 * own sums its children too. The layout is described in json_out.h.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakdown_render.h"
#include "json_out.h"
#include "json_text.h"
#include "lat_render.h"
#include "levels.h"
#include "util.h"
#include "vcputime_render.h"
#include "vmdir.h"

static const char *const jo_types[] = {
	[FIELD_CUMULATIVE] = "cumulative",
	[FIELD_INSTANT] = "instant",
	[FIELD_PEAK] = "peak",
};

static const char *const jo_units[] = {
	[UNIT_NONE] = "none",	    [UNIT_BYTES] = "bytes",
	[UNIT_SECONDS] = "seconds", [UNIT_CYCLES] = "cycles",
	[UNIT_BOOLEAN] = "boolean",
};

/* A count: an integer, or a real past what JSON integers hold here. */
static json_t *json_out_u64(uint64_t v)
{
	return v <= (uint64_t)LLONG_MAX ? json_integer((json_int_t)v) :
					  json_real((double)v);
}

/* A string of s; bytes that are not UTF-8 (a guest name can hold any)
 * become '?'. */
static json_t *json_out_string(const char *s)
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

/* "buckets" of a histogram in one scope: raw ranges, totals and deltas
 * (null where the bucket was not read in the last refresh). */
static json_t *json_out_buckets(const struct snap_hist *h)
{
	json_t *a = json_array();

	for (size_t i = 0; h && i < h->nbuckets; i++) {
		const struct snap_bucket *x = &h->buckets[i];
		bool ok = x->seen && x->fresh;
		json_t *b = json_object();

		json_object_set_new(b, "lo", json_out_u64(x->lo));
		json_object_set_new(b, "hi",
				    x->hi == UINT64_MAX ? json_null() :
							  json_out_u64(x->hi));
		json_object_set_new(b, "total",
				    ok ? json_out_u64(x->total) : json_null());
		json_object_set_new(b, "delta",
				    ok ? json_integer(x->delta) : json_null());
		json_array_append_new(a, b);
	}
	return a;
}

/* valid, total, delta, rate (and buckets) of a row into o. */
static void json_out_values(json_t *o, const struct snapshot *snap,
			    const struct snap_row *r)
{
	json_object_set_new(o, "valid", json_boolean(r->valid));
	json_object_set_new(o, "total", json_out_u64(r->total));
	json_object_set_new(o, "delta",
			    r->valid ? json_integer(r->delta) : json_null());
	json_object_set_new(o, "rate",
			    r->valid ? json_real(r->rate) : json_null());
	if (snap->fields[r->field].hist != HIST_NONE)
		json_object_set_new(o, "buckets", json_out_buckets(r->hist));
}

/* The object of one field of the view. */
static json_t *json_out_field(const struct snapshot *snap,
			      const struct snap_row *r)
{
	const struct field_info *f = &snap->fields[r->field];
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(jo_types[f->type]));
	json_object_set_new(o, "unit", json_string(jo_units[f->unit]));
	if (f->unit != UNIT_NONE || f->exponent) {
		json_object_set_new(o, "exponent", json_integer(f->exponent));
		json_object_set_new(o, "base",
				    json_integer(f->base == 2 ? 2 : 10));
	}
	if (f->provider)
		json_object_set_new(o, "provider", json_string(f->provider));
	if (f->parent >= 0)
		json_object_set_new(o, "parent",
				    json_string(snap->fields[f->parent].name));
	if (f->hist != HIST_NONE)
		json_object_set_new(o, "histogram",
				    json_string(f->hist == HIST_LOG2 ?
							"log2" :
							"linear"));
	json_out_values(o, snap, r);
	return o;
}

/* A VM entry {pid, guest}, appended to the field's "vms". */
static json_t *json_out_vm_entry(json_t *field, pid_t pid, const char *guest)
{
	json_t *vms = json_object_get(field, "vms");
	json_t *e = json_object();

	if (!vms) {
		vms = json_array();
		json_object_set_new(field, "vms", vms);
	}
	json_object_set_new(e, "pid", json_integer(pid));
	json_object_set_new(e, "guest",
			    guest ? json_out_string(guest) : json_null());
	json_array_append_new(vms, e);
	return e;
}

/* A plain event count (what an idle vCPU counts 0 of): no unit, no
 * histogram, not a bucket. */
static bool json_out_is_event(const struct snapshot *snap, int field)
{
	const struct field_info *f = &snap->fields[field];

	return f->type == FIELD_CUMULATIVE && f->unit == UNIT_NONE &&
	       f->hist == HIST_NONE && !snapshot_is_bucket(snap, field);
}

/* The "vcpus" of field in VM vm into its entry e: each vCPU read in the
 * last refresh that has the field, and where the VM counts the event per
 * vCPU (split), every one, an idle one with 0. */
static void json_out_vcpus(const struct snapshot *snap,
			   const struct snap_scope *vm, int field, bool split,
			   json_t *e)
{
	const struct field_info *f = &snap->fields[field];
	json_t *list = NULL;

	for (size_t j = 0; j < vm->nchildren; j++) {
		const struct snap_scope *vc = &vm->children[j];
		const struct snap_row *row = snapshot_scope_row(vc, field);
		struct snap_row idle;
		json_t *v;

		if (!vc->fresh || (!row && !split))
			continue;
		if (!row) {
			idle = (struct snap_row){ .field = field,
						  .name = f->name,
						  .parent = f->parent,
						  .type = f->type,
						  .valid = true };
			row = &idle;
		}
		if (!list) {
			list = json_array();
			json_object_set_new(e, "vcpus", list);
		}
		v = json_object();
		json_object_set_new(v, "vcpu", json_integer(vc->vcpu));
		if (vc->tid)
			json_object_set_new(v, "tid", json_integer(vc->tid));
		json_out_values(v, snap, row);
		json_array_append_new(list, v);
	}
}

/*
 * The per-VM entries of the fields in fobj (objects by field id, NULL for
 * fields not written): every VM read in the last refresh whose value is
 * not 0 (its own, else its vCPUs' summed: levels.h), with per_vcpu its
 * vCPUs read in it too.
 */
static void json_out_breakdowns(const struct snapshot *snap, json_t **fobj,
				bool per_vcpu)
{
	size_t nf = snap->nfields ? snap->nfields : 1;
	bool *split = xmalloc(nf * sizeof(*split));
	const struct snap_scope *whole = snap->whole;
	struct levels_scratch sums;

	levels_scratch_init(&sums);
	for (size_t i = 0; whole && i < whole->nchildren; i++) {
		const struct snap_scope *vm = &whole->children[i];

		if (!levels_vm_fresh(vm))
			continue;
		/* the events counted per vCPU in this VM: every vCPU is
		 * listed in them, one that counted nothing (idle) with 0 */
		memset(split, 0, nf * sizeof(*split));
		for (size_t j = 0; per_vcpu && j < vm->nchildren; j++)
			for (size_t r = 0;
			     vm->children[j].fresh && r < vm->children[j].nrows;
			     r++)
				split[vm->children[j].rows[r].field] =
					json_out_is_event(snap, vm->children[j]
									.rows[r]
									.field);
		levels_scratch_reset(&sums);
		for (size_t f = 0; f < snap->nfields; f++) {
			struct snap_row sum;
			const struct snap_row *row;
			json_t *e;

			if (!fobj[f] ||
			    !levels_vm_value(snap, vm, (int)f, &sum, &row,
					     &sums) ||
			    levels_zero(row, row->hist))
				continue;
			e = json_out_vm_entry(fobj[f], vm->pid, vm->guest);
			json_out_values(e, snap, row);
			if (per_vcpu)
				json_out_vcpus(snap, vm, (int)f, split[f], e);
		}
	}
	levels_scratch_free(&sums);
	free(split);
}

/* "providers": the words of "tracepoint debugfs". */
static json_t *json_out_providers(const char *providers)
{
	json_t *a = json_array();
	const char *p = providers, *w;
	size_t n;

	while ((w = util_next_word(&p, &n)))
		json_array_append_new(a, json_stringn(w, n));
	return a;
}

/* Sets key to string s, where s is set. */
static void json_out_opt(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_out_string(s));
}

/*
 * "vms": who each VM read in the last refresh is, once each (the fields' entries
 * give pid and guest): pid, guest, vmm, uuid, unit, pod where the host
 * tells; NULL when no VM's identity was looked up.
 */
static json_t *json_out_vms(const struct snapshot *snap)
{
	const struct snap_scope *whole = snap->whole;
	json_t *a = NULL;

	for (size_t i = 0; whole && i < whole->nchildren; i++) {
		const struct vmdir_vm *vm = vmdir_find(snap->vms,
						       whole->children[i].pid);
		json_t *o;

		/* the VMs read in the last refresh, as the fields' entries */
		if (!vm || !vm->vmm || !levels_vm_fresh(&whole->children[i]))
			continue;
		if (!a)
			a = json_array();
		o = json_object();
		json_object_set_new(o, "pid", json_integer(vm->pid));
		json_object_set_new(o, "guest",
				    vm->name ? json_out_string(vm->name) :
					       json_null());
		json_out_opt(o, "vmm", vm->vmm);
		json_out_opt(o, "uuid", vm->uuid);
		json_out_opt(o, "unit", vm->unit);
		json_out_opt(o, "pod", vm->pod);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *json_out_snapshot(const struct snapshot *snap, const char *providers,
			  bool per_vcpu)
{
	json_t *root = json_object(), *fields = json_object(), *vms;
	json_t **fobj;
	char ts[48];
	struct tm tm;
	time_t t = snap->wall.tv_sec;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03ldZ",
		 snap->wall.tv_nsec / 1000000);
	json_object_set_new(root, "timestamp", json_string(ts));
	json_object_set_new(root, "epoch",
			    json_real((double)snap->wall.tv_sec +
				      snap->wall.tv_nsec / 1e9));
	json_object_set_new(root, "interval",
			    json_real(snap->interval_ns / 1e9));
	json_object_set_new(root, "providers", json_out_providers(providers));
	json_object_set_new(root, "fields", fields);
	vms = json_out_vms(snap);
	if (vms)
		json_object_set_new(root, "vms", vms);
	if (!snap->nfields)
		return root;
	fobj = xcalloc(snap->nfields, sizeof(*fobj));
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *r = &snap->rows[i];

		/* rows renamed for a per-vCPU view are not fields */
		if (r->per_vcpu || snapshot_is_bucket(snap, r->field))
			continue;
		fobj[r->field] = json_out_field(snap, r);
		json_object_set_new(fields, r->name, fobj[r->field]);
	}
	json_out_breakdowns(snap, fobj, per_vcpu);
	free(fobj);
	return root;
}

void json_out_render(struct strbuf *b, const struct snapshot *snap,
		     const char *providers, bool pretty, bool per_vcpu)
{
	json_t *root = json_out_snapshot(snap, providers, per_vcpu);

	if (snap->latency)
		json_object_set_new(root, "latency", lat_render_json(snap));
	if (snap->breakdown)
		json_object_set_new(root, "breakdown",
				    breakdown_render_json_all(snap));
	if (snap->vcputime)
		json_object_set_new(root, "vcpu_time",
				    vcputime_render_json(snap->vcputime));
	/* written into b as it goes, no copy of the whole text */
	json_text_write(b, root, pretty, 0);
	json_decref(root);
	strbuf_add(b, "\n");
}
