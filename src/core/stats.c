// SPDX-License-Identifier: GPL-2.0-only
/*
 * The aggregator. Providers push raw readings (cumulative counters or
 * gauges); here they become a total since kvmstat started (or since the VM
 * started with -i) and a delta over the last interval, for the whole
 * selection and for every VM and vCPU a provider breaks them down by.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

void stats_init(struct stats *s, bool include_past)
{
	memset(s, 0, sizeof(*s));
	field_table_init(&s->fields);
	sample_set_init(&s->set, &s->fields);
	arbiter_init(&s->arbiter, &s->fields);
	s->include_past = include_past;
}

void stats_free(struct stats *s)
{
	sample_set_free(&s->set);
	field_table_free(&s->fields);
	free(s->sum);
	free(s->keys);
	free(s->cells);
	free(s->memo);
	hashtab_free(&s->index);
	arbiter_free(&s->arbiter);
	memset(s, 0, sizeof(*s));
}

static uint32_t stats_key_hash(int field, pid_t pid, int vcpu)
{
	return hashtab_hash3((uint32_t)field, (uint32_t)pid,
			     (uint32_t)(vcpu + 1));
}

/* Position of a breakdown series in keys/cells, whose hash is h, or -1. */
static long stats_lookup(const struct stats *s, int field, pid_t pid, int vcpu,
			 uint32_t h)
{
	struct hashtab_iter it = hashtab_iter(&s->index, h);
	long i;

	while ((i = hashtab_next(&s->index, &it)) >= 0) {
		const struct stats_key *k = &s->keys[i];

		if (k->field == field && k->pid == pid && k->vcpu == vcpu)
			return i;
	}
	return -1;
}

static long stats_find(const struct stats *s, int field, pid_t pid, int vcpu)
{
	return stats_lookup(s, field, pid, vcpu,
			    stats_key_hash(field, pid, vcpu));
}

/* The cell of one breakdown series, created on first use. */
static struct stat_cell *stats_breakdown(struct stats *s, int field, pid_t pid,
					 int vcpu)
{
	uint32_t h = stats_key_hash(field, pid, vcpu);
	long i = stats_lookup(s, field, pid, vcpu, h);

	if (i >= 0)
		return &s->cells[i];
	if (s->nkeys == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->keys = xrealloc(s->keys, s->cap * sizeof(*s->keys));
		s->cells = xrealloc(s->cells, s->cap * sizeof(*s->cells));
	}
	s->keys[s->nkeys] = (struct stats_key){ field, pid, vcpu };
	memset(&s->cells[s->nkeys], 0, sizeof(s->cells[0]));
	hashtab_add(&s->index, h, s->nkeys);
	return &s->cells[s->nkeys++];
}

const struct stat_cell *stats_cell(const struct stats *s, int field, pid_t pid,
				   int vcpu)
{
	long i;

	if (!pid && vcpu == SAMPLE_ALL_VCPUS)
		return field >= 0 && (size_t)field < s->nsum ? &s->sum[field] :
							       NULL;
	i = stats_find(s, field, pid, vcpu);
	return i >= 0 ? &s->cells[i] : NULL;
}

/*
 * Folds one reading into a cell. A counter seen first in the initial
 * refresh starts at zero unless the past is wanted; one that appears later
 * (a new VM, a new exit reason) counted all of its value during the run.
 * A counter that goes backwards was reset: what it reads now is what
 * happened since, unless the provider says it merely lost contributors.
 * A counter's delta is never negative: a jump forward too large for one
 * interval (10 to 2^64-1: a reset to garbage, or a counter that went
 * backwards by a little and wrapped) is taken as a reset to that value,
 * counting nothing, and the deltas go on from it. A baseline reading (a
 * breakdown reported again) adds to the total, never to the delta.
 */
static void stats_cell_update(struct stat_cell *c, enum field_type type,
			      uint64_t raw, unsigned int flags, bool initial,
			      bool include_past)
{
	if (type != FIELD_CUMULATIVE) {
		c->delta = c->seen ? (int64_t)(raw - c->raw) : 0;
		c->total = raw;
	} else if (flags & SAMPLE_BASELINE) {
		c->delta = 0;
		if (!c->seen)
			c->total = raw;
		else if (raw >= c->raw)
			c->total += raw - c->raw;
	} else if (!c->seen) {
		if (initial && !include_past) {
			c->delta = 0;
			c->total = 0;
		} else {
			c->delta = initial || raw > INT64_MAX ? 0 :
								(int64_t)raw;
			c->total = raw;
		}
	} else if (raw >= c->raw && raw - c->raw <= INT64_MAX) {
		c->delta = (int64_t)(raw - c->raw);
		c->total += raw - c->raw;
	} else if (raw >= c->raw || (flags & SAMPLE_REBASE) || raw > INT64_MAX) {
		c->delta = 0;
	} else {
		c->delta = (int64_t)raw;
		c->total += raw;
	}
	c->raw = raw;
	c->seen = true;
	c->fresh = true;
}

/* Folds x into c, the cell of its scope. */
static void stats_fold_into(struct stats *s, struct stat_cell *c,
			    const struct sample *x, bool initial)
{
	if (!c->seen)
		s->gen = util_serial(); /* a series the snapshots lack */
	stats_cell_update(c, s->fields.v[x->field].type, x->value, x->flags,
			  initial, s->include_past);
	if (x->tid)
		c->tid = x->tid;
}

/*
 * The breakdown cell of reading i of the set, created on first use: the
 * one reading i went to last refresh when its key is the same (providers
 * push the same series in the same order refresh after refresh), else
 * the one the hash finds.
 */
static struct stat_cell *stats_cell_at(struct stats *s, size_t i)
{
	const struct sample *x = &s->set.v[i];
	long k = s->memo[i];
	struct stat_cell *c;

	if (k >= 0 && s->keys[k].field == x->field &&
	    s->keys[k].pid == x->pid && s->keys[k].vcpu == x->vcpu)
		return &s->cells[k];
	c = stats_breakdown(s, x->field, x->pid, x->vcpu);
	s->memo[i] = c - s->cells;
	return c;
}

static void stats_fold_sample(struct stats *s, size_t i, bool initial)
{
	const struct sample *x = &s->set.v[i];

	if (!x->pid && x->vcpu == SAMPLE_ALL_VCPUS)
		stats_fold_into(s, &s->sum[x->field], x, initial);
	else
		stats_fold_into(s, stats_cell_at(s, i), x, initial);
}

/*
 * A reading the arbiter lets fill in a VM the field's owner did not serve
 * (x->pid != 0): folded into its VM's or vCPU's cell, and a VM-wide one
 * is added to the field's total (a counter by what it counted, a gauge by
 * its value, a peak by the largest). Comes after the owners' readings.
 */
static void stats_fill_in(struct stats *s, size_t i, bool initial)
{
	const struct sample *x = &s->set.v[i];
	enum field_type type = s->fields.v[x->field].type;
	struct stat_cell *c, *sum = &s->sum[x->field];
	uint64_t before;

	c = stats_cell_at(s, i);
	before = c->seen ? c->total : 0;
	stats_fold_into(s, c, x, initial);
	if (x->vcpu != SAMPLE_ALL_VCPUS)
		return;
	if (type == FIELD_CUMULATIVE) {
		sum->total += c->total - before;
	} else {
		/* a gauge's total is this refresh's values only */
		if (!sum->fresh)
			sum->total = 0;
		if (type == FIELD_PEAK)
			sum->total = sum->total > c->total ? sum->total :
							     c->total;
		else
			sum->total += c->total;
	}
	sum->delta += c->delta;
	if (!sum->seen)
		s->gen = util_serial();
	sum->seen = true;
	sum->fresh = true;
}

/* The readings the arbiter counts as they are, then the ones it lets fill
 * in (they add to totals the owners' readings set). */
static void stats_fold_arbitrated(struct stats *s, bool initial)
{
	const struct arbiter *a = &s->arbiter;

	for (size_t i = 0; i < s->set.n; i++)
		if (arbiter_verdict(a, &s->set.v[i]) == ARBITER_COUNT)
			stats_fold_sample(s, i, initial);
	for (size_t i = 0; i < s->set.n; i++)
		if (arbiter_verdict(a, &s->set.v[i]) == ARBITER_FILL_IN)
			stats_fill_in(s, i, initial);
}

void stats_update(struct stats *s, uint64_t now_ns)
{
	bool initial = s->refreshes == 0;

	if (s->nsum < s->fields.n) {
		s->sum = xrealloc(s->sum, s->fields.n * sizeof(*s->sum));
		memset(s->sum + s->nsum, 0,
		       (s->fields.n - s->nsum) * sizeof(*s->sum));
		s->nsum = s->fields.n;
	}
	if (s->set.n > s->nmemo)
		s->memo = xgrow_index(s->memo, &s->nmemo, s->set.n - 1,
				      sizeof(*s->memo), 0xff);
	for (size_t i = 0; i < s->nsum; i++) {
		s->sum[i].fresh = false;
		s->sum[i].delta = 0;
	}
	for (size_t i = 0; i < s->nkeys; i++) {
		s->cells[i].fresh = false;
		s->cells[i].delta = 0;
	}
	if (arbiter_judge(&s->arbiter, &s->set)) {
		stats_fold_arbitrated(s, initial);
	} else {
		for (size_t i = 0; i < s->set.n; i++)
			stats_fold_sample(s, i, initial);
	}
	arbiter_end(&s->arbiter);
	sample_set_clear(&s->set);
	s->interval_ns = initial ? 0 : now_ns - s->now_ns;
	s->now_ns = now_ns;
	clock_gettime(CLOCK_REALTIME, &s->wall);
	s->refreshes++;
}

void stats_reset(struct stats *s)
{
	for (size_t i = 0; i < s->nsum; i++) {
		if (s->fields.v[i].type == FIELD_CUMULATIVE)
			s->sum[i].total = 0;
		s->sum[i].delta = 0;
	}
	for (size_t i = 0; i < s->nkeys; i++) {
		if (s->fields.v[s->keys[i].field].type == FIELD_CUMULATIVE)
			s->cells[i].total = 0;
		s->cells[i].delta = 0;
	}
}

static int stats_int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

size_t stats_vcpus_of(const struct stats *s, pid_t pid, int **out)
{
	int *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < s->nkeys; i++) {
		const struct stats_key *k = &s->keys[i];
		bool known = false;

		if (k->pid != pid || k->vcpu < 0 || !s->cells[i].seen)
			continue;
		for (size_t j = 0; j < n && !known; j++)
			known = v[j] == k->vcpu;
		if (known)
			continue;
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = k->vcpu;
	}
	if (n)
		qsort(v, n, sizeof(*v), stats_int_cmp);
	*out = v;
	return n;
}
