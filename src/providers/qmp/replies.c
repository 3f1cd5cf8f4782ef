// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP provider's replies (qmp_int.h): each query-stats reply taken
 * into the VM's and its vCPUs' slots, histograms' buckets learnt from the
 * first reply, and the samples pushed per vCPU, per VM and in total.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "qmp_client.h"
#include "qmp_int.h"
#include "reading.h"
#include "util.h"

/* A StatsValue as a number: an integer or a boolean. */
static bool qp_scalar(json_t *v, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return true;
	}
	return false;
}

/*
 * Takes one StatsResult's list of values into val (a vCPU's, or the VM's
 * for the vm target), by slot. Values this code does not understand are
 * left unread, never zero.
 */
static void qp_take_stats(struct provider *p, enum qp_target target,
			  json_t *stats, struct reading *val)
{
	struct qp_priv *d = p->priv;
	json_t *e;
	size_t i;

	json_array_foreach (stats, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *v = json_object_get(e, "value");
		struct qp_stat *st;
		uint64_t x;
		int field, k;

		if (!name)
			continue;
		field = field_table_find(p->fields, name);
		if (field < 0 || (size_t)field >= d->nstat_of)
			continue;
		k = d->stat_of[target][field];
		if (k < 0)
			continue;
		st = &d->stats[k];
		if (st->hist == HIST_NONE) {
			if (qp_scalar(v, &x))
				reading_add(&val[st->slots[0]], x,
					    d->slots[st->slots[0]].type);
			continue;
		}
		if (!json_is_array(v))
			continue;
		/* buckets first seen now are interned; arrays grow after */
		if (json_array_size(v) > st->nslots)
			continue;
		for (size_t b = 0; b < json_array_size(v); b++)
			if (qp_scalar(json_array_get(v, b), &x))
				reading_add(&val[st->slots[b]], x,
					    d->slots[st->slots[b]].type);
	}
}

/* Interns the buckets of every histogram in a reply that has more than
 * known; true when some were added. */
static bool qp_learn_buckets(struct provider *p, enum qp_target target,
			     json_t *stats)
{
	struct qp_priv *d = p->priv;
	bool grew = false;
	json_t *e;
	size_t i;

	json_array_foreach (stats, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *v = json_object_get(e, "value");
		int field, k;

		if (!name || !json_is_array(v))
			continue;
		field = field_table_find(p->fields, name);
		if (field < 0 || (size_t)field >= d->nstat_of)
			continue;
		k = d->stat_of[target][field];
		if (k < 0 || d->stats[k].hist == HIST_NONE ||
		    json_array_size(v) <= d->stats[k].nslots ||
		    json_array_size(v) > QP_BUCKETS_MAX)
			continue;
		qp_hist_grow(p, &d->stats[k], json_array_size(v));
		grew = true;
	}
	return grew;
}

/*
 * Receives one target's reply and takes its values. 0, or -errno (the
 * caller decides: a timeout leaves the connection, others close it).
 * *unknown is set when a vCPU's index is not known.
 */
static int qp_vm_take(struct provider *p, struct qp_vm *vm, enum qp_target t,
		      uint64_t deadline, bool *unknown)
{
	struct qp_priv *d = p->priv;
	json_t *r, *e;
	size_t i;
	int rc;

	rc = qmp_recv(&vm->q, vm->sent[t], deadline, &r);
	if (rc)
		return rc;
	if (!json_is_array(r)) {
		json_decref(r);
		return errmsg_set(&vm->q.err, -EPROTO,
				  "query-stats did not return a list");
	}
	json_array_foreach (r, i, e) {
		json_t *stats = json_object_get(e, "stats");
		const char *prov = json_string_value(
			json_object_get(e, "provider"));

		if (json_is_array(stats) && prov && !strcmp(prov, "kvm") &&
		    qp_learn_buckets(p, t, stats))
			qp_vm_fit(d, vm);
	}
	json_array_foreach (r, i, e) {
		json_t *stats = json_object_get(e, "stats");
		const char *prov = json_string_value(
			json_object_get(e, "provider"));
		const char *qom;
		struct qp_vcpu *c;

		if (!json_is_array(stats) || !prov || strcmp(prov, "kvm"))
			continue;
		if (t == QP_TARGET_VM) {
			qp_take_stats(p, t, stats, vm->val);
			continue;
		}
		qom = json_string_value(json_object_get(e, "qom-path"));
		if (!qom)
			continue;
		c = qp_vcpu_get(d, vm, qom);
		if (!c->present)
			readings_clear(c->val, d->nslots);
		c->present = true;
		qp_take_stats(p, t, stats, c->val);
		if (c->index < 0)
			*unknown = true;
	}
	json_decref(r);
	return 0;
}

/*
 * Receives a VM's replies for this refresh and sums them into vm->val.
 * Returns true when the VM was read.
 */
bool qp_vm_collect(struct provider *p, struct qp_vm *vm, uint64_t deadline)
{
	struct qp_priv *d = p->priv;
	bool unknown = false;
	int rc = 0;

	qp_vm_fit(d, vm);
	readings_clear(vm->val, d->nslots);
	for (size_t i = 0; i < vm->nvcpus; i++)
		vm->vcpus[i].present = false;
	for (int t = 0; t < QP_TARGETS && !rc; t++)
		if (vm->sent[t])
			rc = qp_vm_take(p, vm, (enum qp_target)t, deadline,
					&unknown);
	if (rc == -EINTR) {
		vm->state = QP_PENDING; /* the run is ending */
		return false;
	}
	if (rc == -ETIMEDOUT) {
		struct errmsg text;

		vm->state = QP_PENDING;
		errmsg_set(&text, 0,
			   "QMP socket %s (VM %d): no reply to query-stats within %u ms: VM unavailable until it answers",
			   vm->path, (int)vm->pid, d->reply_ms);
		qp_vm_note(p, vm, text.text);
		return false;
	}
	if (rc) {
		qp_vm_fail(p, vm, "query-stats", NULL);
		return false;
	}
	/* a new QOM path (a hot-plugged vCPU): ask again, not too often */
	if (unknown && util_now_ns() - vm->cpus_ns >= d->retry_ms * 1000000ull) {
		rc = qp_vm_cpus(p, vm, deadline);
		if (rc == -ETIMEDOUT) {
			vm->owed_id = vm->q.next_id - 1;
			vm->state = QP_PENDING;
		} else if (rc) {
			qp_vm_fail(p, vm, "query-cpus-fast", NULL);
			return false;
		}
	}
	for (size_t i = 0; i < vm->nvcpus; i++) {
		const struct qp_vcpu *c = &vm->vcpus[i];

		if (!c->present)
			continue;
		for (size_t s = 0; s < d->nslots; s++)
			reading_fold(&vm->val[s], &c->val[s], d->slots[s].type);
	}
	return true;
}

/* Pushes a VM's values and its vCPUs', and keeps them for the totals. */
void qp_vm_push(struct provider *p, struct qp_vm *vm, struct sample_set *out)
{
	struct qp_priv *d = p->priv;

	for (size_t s = 0; s < d->nslots; s++) {
		if (!reading_ok(&vm->val[s]))
			continue;
		sample_set_push(out, d->slots[s].field, vm->pid,
				SAMPLE_ALL_VCPUS, 0, vm->val[s].value, 0);
		vm->last[s] = vm->val[s];
	}
	for (size_t i = 0; i < vm->nvcpus; i++) {
		const struct qp_vcpu *c = &vm->vcpus[i];

		if (!c->present || c->index < 0)
			continue;
		for (size_t s = 0; s < d->nslots; s++)
			if (reading_ok(&c->val[s]))
				sample_set_push(out, d->slots[s].field, vm->pid,
						c->index, c->tid,
						c->val[s].value, 0);
	}
}

/* Pushes the totals: see the top of the file for what they sum. */
void qp_push_totals(struct provider *p, struct sample_set *out,
		    unsigned int flags)
{
	struct qp_priv *d = p->priv;

	for (size_t s = 0; s < d->nslots; s++) {
		enum field_type type = d->slots[s].type;
		bool cumulative = type == FIELD_CUMULATIVE, fresh = false;
		struct reading sum = { 0 };

		if (cumulative)
			reading_add(&sum, d->gone[s], type);
		for (size_t i = 0; i < d->nvms; i++) {
			const struct qp_vm *vm = &d->vms[i];

			if (s >= vm->nslots || (d->pid && vm->pid != d->pid))
				continue;
			if (vm->available && reading_ok(&vm->val[s]))
				fresh = true;
			if (cumulative)
				reading_fold(&sum, &vm->last[s], type);
			else if (vm->available)
				reading_fold(&sum, &vm->val[s], type);
		}
		if (fresh)
			sample_set_push(out, d->slots[s].field, 0,
					SAMPLE_ALL_VCPUS, 0, sum.value, flags);
	}
}
