// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP provider's schemas (qmp_int.h): what query-stats-schemas says
 * of each statistic (name, type, unit, histogram shape) bound to fields
 * and slots, and the query-stats arguments that ask for the ones the
 * field filter keeps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "provider.h"
#include "qmp_int.h"
#include "reading.h"
#include "util.h"

static const char *const qp_target_names[QP_TARGETS] = { "vm", "vcpu" };

static enum field_unit qp_unit(const char *s)
{
	if (!s)
		return UNIT_NONE;
	if (!strcmp(s, "bytes"))
		return UNIT_BYTES;
	if (!strcmp(s, "seconds"))
		return UNIT_SECONDS;
	if (!strcmp(s, "cycles"))
		return UNIT_CYCLES;
	if (!strcmp(s, "boolean"))
		return UNIT_BOOLEAN;
	return UNIT_NONE;
}

/* The type of a StatsType; false for one this code does not know. */
static bool qp_type(const char *s, enum field_type *type, enum field_hist *hist)
{
	*hist = HIST_NONE;
	*type = FIELD_CUMULATIVE;
	if (!s)
		return false;
	if (!strcmp(s, "cumulative"))
		return true;
	if (!strcmp(s, "instant")) {
		*type = FIELD_INSTANT;
		return true;
	}
	if (!strcmp(s, "peak")) {
		*type = FIELD_PEAK;
		return true;
	}
	if (!strcmp(s, "linear-histogram")) {
		*hist = HIST_LINEAR;
		return true;
	}
	if (!strcmp(s, "log2-histogram")) {
		*hist = HIST_LOG2;
		return true;
	}
	return false;
}

/* Makes the by-field maps cover every field interned so far. */
static void qp_fit_fields(struct provider *p)
{
	struct qp_priv *d = p->priv;
	size_t n = p->fields->n;

	if (n <= d->nstat_of)
		return;
	for (int t = 0; t < QP_TARGETS; t++) {
		d->stat_of[t] = xrealloc(d->stat_of[t],
					 n * sizeof(*d->stat_of[t]));
		for (size_t i = d->nstat_of; i < n; i++)
			d->stat_of[t][i] = -1;
	}
	d->nstat_of = n;
}

/* A new slot for field; the per-slot arrays grow with it. */
static int qp_slot_add(struct provider *p, int field, enum field_type type)
{
	struct qp_priv *d = p->priv;
	size_t n = d->nslots + 1;

	d->slots = xrealloc(d->slots, n * sizeof(*d->slots));
	d->slots[d->nslots] = (struct qp_slot){ field, type };
	d->gone = xrealloc(d->gone, n * sizeof(*d->gone));
	d->gone[d->nslots] = 0;
	return (int)d->nslots++;
}

/* Grows a VM's and its vCPUs' per-slot arrays to every slot. */
void qp_vm_fit(struct qp_priv *d, struct qp_vm *vm)
{
	size_t old = vm->nslots, n = d->nslots;

	if (n <= old)
		return;
	vm->val = xrealloc(vm->val, n * sizeof(*vm->val));
	vm->last = xrealloc(vm->last, n * sizeof(*vm->last));
	readings_clear(vm->val + old, n - old);
	readings_clear(vm->last + old, n - old);
	for (size_t i = 0; i < vm->nvcpus; i++) {
		struct qp_vcpu *c = &vm->vcpus[i];

		c->val = xrealloc(c->val, n * sizeof(*c->val));
		readings_clear(c->val + old, n - old);
	}
	vm->nslots = n;
}

/* Whether the filter keeps a stat or, for a histogram, one of its
 * buckets. */
static bool qp_wanted(const struct provider *p, const char *name,
		      enum field_hist hist)
{
	char bucket[QP_NAME_MAX];

	if (provider_keeps(p, name))
		return true;
	for (int i = 0; hist != HIST_NONE && i < QP_BUCKETS_GUESS; i++) {
		snprintf(bucket, sizeof(bucket), "%s(%d)", name, i);
		if (provider_keeps(p, bucket))
			return true;
	}
	return false;
}

/*
 * Takes one StatsSchemaValue into the provider's stats: interns the field
 * (with its unit and histogram shape) when the filter keeps it. Returns the
 * stat's index, or -1 for an entry this code cannot use.
 */
static int qp_stat_add(struct provider *p, enum qp_target target, json_t *s)
{
	struct qp_priv *d = p->priv;
	const char *name = json_string_value(json_object_get(s, "name"));
	json_t *exp = json_object_get(s, "exponent");
	json_t *base = json_object_get(s, "base");
	json_t *bsize = json_object_get(s, "bucket-size");
	struct qp_stat *st;
	struct field_info *f;
	enum field_type type;
	enum field_hist hist;

	if (!name || !*name || strlen(name) >= QP_NAME_MAX - 16 ||
	    strchr(name, '(') ||
	    !qp_type(json_string_value(json_object_get(s, "type")), &type,
		     &hist))
		return -1;
	for (size_t i = 0; i < d->nstats; i++)
		if (d->stats[i].target == target &&
		    !strcmp(d->stats[i].name, name))
			return (int)i;
	d->stats = xrealloc(d->stats, (d->nstats + 1) * sizeof(*d->stats));
	st = &d->stats[d->nstats];
	*st = (struct qp_stat){ .name = xstrdup(name),
				.target = target,
				.type = type,
				.hist = hist,
				.field = -1 };
	if (hist == HIST_LINEAR)
		st->bucket_size = json_is_integer(bsize) && json_integer_value(
								    bsize) > 0 ?
					  (uint32_t)json_integer_value(bsize) :
					  1;
	if (!qp_wanted(p, name, hist))
		return (int)d->nstats++;
	st->field = field_table_intern(p->fields, name, -1, type, QP_PROVIDER);
	f = field_table_info(p->fields, st->field);
	/* the units are the owner's to say */
	if (!provider_claimed(p, name)) {
		f->unit = qp_unit(json_string_value(json_object_get(s, "unit")));
		f->exponent = json_is_integer(exp) ?
				      (int)json_integer_value(exp) :
				      0;
		f->base = json_is_integer(base) ?
				  (unsigned int)json_integer_value(base) :
				  10;
		f->hist = hist;
		if (!strcmp(name, FIELD_KVM_EXITS))
			f->flags |= FIELD_EXITS;
	}
	qp_fit_fields(p);
	d->stat_of[target][st->field] = (int)d->nstats;
	if (hist == HIST_NONE) {
		st->slots = xmalloc(sizeof(*st->slots));
		st->slots[0] = qp_slot_add(p, st->field, type);
		st->nslots = 1;
	}
	return (int)d->nstats++;
}

/*
 * Interns the buckets of a histogram up to n, as NAME(i) children with the
 * parent's unit and their raw ranges; the last one is open-ended.
 */
void qp_hist_grow(struct provider *p, struct qp_stat *st, size_t n)
{
	struct qp_priv *d = p->priv;
	char name[QP_NAME_MAX];

	if (n <= st->nslots)
		return;
	st->slots = xrealloc(st->slots, n * sizeof(*st->slots));
	for (size_t i = st->nslots; i < n; i++) {
		snprintf(name, sizeof(name), "%s(%zu)", st->name, i);
		st->slots[i] = qp_slot_add(p,
					   field_table_intern(p->fields, name,
							      st->field,
							      FIELD_CUMULATIVE,
							      QP_PROVIDER),
					   FIELD_CUMULATIVE);
	}
	/* every bucket, as the one that was last is no longer open */
	for (size_t i = 0; i < n; i++) {
		const struct field_info *parent = field_table_info(p->fields,
								   st->field);
		struct field_info *f = field_table_info(p->fields,
							d->slots[st->slots[i]]
								.field);

		if (provider_claimed(p, f->name))
			continue; /* another provider's */
		f->unit = parent->unit;
		f->exponent = parent->exponent;
		f->base = parent->base;
		f->bucket = (int)i;
		hist_bucket_range(st->hist, st->bucket_size, i, n,
				  &f->bucket_lo, &f->bucket_hi);
	}
	st->nslots = n;
	qp_fit_fields(p);
}

/*
 * Reads a VM's schema: adds its statistics and builds the arguments of its
 * query-stats for each target that has a statistic the filter keeps. The
 * filter is applied here, not with query-stats's "names": QEMU spends
 * about as long on each name it is given as on a whole unfiltered reply.
 * 0, or -EPROTO/-ENOENT with why in q->err.
 */
int qp_vm_schema(struct provider *p, struct qp_vm *vm, json_t *r)
{
	struct qp_priv *d = p->priv;
	size_t wanted[QP_TARGETS] = { 0, 0 };
	size_t i, j, total = 0;
	json_t *e;

	if (!json_is_array(r)) {
		return errmsg_set(&vm->q.err, -EPROTO,
				  "query-stats-schemas did not return a list");
	}
	json_array_foreach (r, i, e) {
		const char *prov = json_string_value(
			json_object_get(e, "provider"));
		const char *target = json_string_value(
			json_object_get(e, "target"));
		json_t *stats = json_object_get(e, "stats"), *s;
		int t;

		if (!prov || strcmp(prov, "kvm") || !target)
			continue;
		for (t = 0; t < QP_TARGETS; t++)
			if (!strcmp(target, qp_target_names[t]))
				break;
		if (t == QP_TARGETS || !json_is_array(stats))
			continue;
		json_array_foreach (stats, j, s) {
			int k = qp_stat_add(p, (enum qp_target)t, s);

			if (k < 0)
				continue;
			total++;
			wanted[t] += d->stats[k].field >= 0;
		}
	}
	if (!total) {
		return errmsg_set(
			&vm->q.err, -ENOENT,
			"QEMU reports no KVM statistics: is it running with -accel kvm (QEMU 7.1 or later)?");
	}
	for (int t = 0; t < QP_TARGETS; t++) {
		json_decref(vm->args[t]);
		vm->args[t] = NULL;
		if (wanted[t])
			vm->args[t] = json_pack("{s:s, s:[{s:s}]}", "target",
						qp_target_names[t], "providers",
						"provider", "kvm");
	}
	return 0;
}
