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
	s->include_past = include_past;
}

void stats_free(struct stats *s)
{
	sample_set_free(&s->set);
	field_table_free(&s->fields);
	free(s->sum);
	free(s->keys);
	free(s->cells);
	hashtab_free(&s->index);
	served_free(&s->owned);
	free(s->brk);
	memset(s, 0, sizeof(*s));
}

static uint32_t key_hash(int field, pid_t pid, int vcpu)
{
	return hashtab_hash3((uint32_t)field, (uint32_t)pid,
			     (uint32_t)(vcpu + 1));
}

/* Position of a breakdown series in keys/cells, whose hash is h, or -1. */
static long stats_lookup(const struct stats *s, int field, pid_t pid,
			 int vcpu, uint32_t h)
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
	return stats_lookup(s, field, pid, vcpu, key_hash(field, pid, vcpu));
}

/* The cell of one breakdown series, created on first use. */
static struct stat_cell *stats_breakdown(struct stats *s, int field, pid_t pid,
					 int vcpu)
{
	uint32_t h = key_hash(field, pid, vcpu);
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
 */
static void cell_update(struct stat_cell *c, enum field_type type,
			uint64_t raw, unsigned int flags, bool initial,
			bool include_past)
{
	if (type != FIELD_CUMULATIVE) {
		c->delta = c->seen ? (int64_t)(raw - c->raw) : 0;
		c->total = raw;
	} else if (!c->seen) {
		if (initial && !include_past) {
			c->delta = 0;
			c->total = 0;
		} else {
			c->delta = initial ? 0 : (int64_t)raw;
			c->total = raw;
		}
	} else if (raw >= c->raw) {
		c->delta = (int64_t)(raw - c->raw);
		c->total += raw - c->raw;
	} else if (flags & SAMPLE_REBASE) {
		c->delta = 0;
	} else {
		c->delta = (int64_t)raw;
		c->total += raw;
	}
	c->raw = raw;
	c->seen = true;
	c->fresh = true;
}

/* What a field's owner reported in this refresh (stats.brk). */
enum { OWNER_TOTAL = 1, OWNER_BY_VM = 2 };

/* Whether x comes from its field's owner (or from an unnamed source). */
static bool sample_is_owners(const struct stats *s, const struct sample *x)
{
	const char *owner = s->fields.v[x->field].provider;

	return !x->src || !owner || x->src == owner || !strcmp(x->src, owner);
}

/* Folds x into c, the cell of its scope. */
static void fold_into(struct stats *s, struct stat_cell *c,
		      const struct sample *x, bool initial)
{
	cell_update(c, s->fields.v[x->field].type, x->value, x->flags,
		    initial, s->include_past);
	if (x->tid)
		c->tid = x->tid;
}

static void fold_sample(struct stats *s, const struct sample *x, bool initial)
{
	if (!x->pid && x->vcpu == SAMPLE_ALL_VCPUS)
		fold_into(s, &s->sum[x->field], x, initial);
	else
		fold_into(s, stats_breakdown(s, x->field, x->pid, x->vcpu), x,
			  initial);
}

/*
 * A reading of a claimed field by another provider than its owner: kept
 * for a VM the owner did not serve in this refresh, and then added to the
 * field's total (a counter by what it counted, a gauge by its value).
 */
static void fill_in(struct stats *s, const struct sample *x, bool initial)
{
	enum field_type type = s->fields.v[x->field].type;
	struct stat_cell *c, *sum = &s->sum[x->field];
	uint64_t before;

	if (!x->pid)
		return;		/* the owner's total stands */
	if (s->brk[x->field] == OWNER_TOTAL)
		return;		/* a total without breakdown sees every VM */
	if (served_has(s->owned.v, s->owned.n, x->field, x->pid))
		return;		/* the owner served this VM */
	c = stats_breakdown(s, x->field, x->pid, x->vcpu);
	before = c->seen ? c->total : 0;
	fold_into(s, c, x, initial);
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
	sum->seen = true;
	sum->fresh = true;
}

/* Whether every reading of this refresh is its field owner's (the usual
 * case: nothing to arbitrate). */
static bool owners_only(const struct stats *s)
{
	for (size_t i = 0; i < s->set.n; i++)
		if (!sample_is_owners(s, &s->set.v[i]))
			return false;
	return true;
}

/* The owners' readings first, noting which VMs they served; then the
 * others' fill in the rest. */
static void fold_arbitrated(struct stats *s, bool initial)
{
	if (s->capbrk < s->nsum) {
		s->capbrk = s->nsum;
		s->brk = xrealloc(s->brk, s->capbrk);
	}
	if (s->nsum)
		memset(s->brk, 0, s->nsum);
	s->owned.n = 0;
	for (size_t i = 0; i < s->set.n; i++) {
		const struct sample *x = &s->set.v[i];

		if (!sample_is_owners(s, x))
			continue;
		if (x->pid && x->vcpu == SAMPLE_ALL_VCPUS) {
			served_add(&s->owned, x->field, x->pid);
			s->brk[x->field] |= OWNER_BY_VM;
		} else if (!x->pid && x->vcpu == SAMPLE_ALL_VCPUS) {
			s->brk[x->field] |= OWNER_TOTAL;
		}
		fold_sample(s, x, initial);
	}
	served_sort(&s->owned);
	for (size_t i = 0; i < s->set.n; i++) {
		const struct sample *x = &s->set.v[i];

		if (!sample_is_owners(s, x))
			fill_in(s, x, initial);
	}
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
	for (size_t i = 0; i < s->nsum; i++) {
		s->sum[i].fresh = false;
		s->sum[i].delta = 0;
	}
	for (size_t i = 0; i < s->nkeys; i++) {
		s->cells[i].fresh = false;
		s->cells[i].delta = 0;
	}
	if (owners_only(s)) {
		for (size_t i = 0; i < s->set.n; i++)
			fold_sample(s, &s->set.v[i], initial);
	} else {
		fold_arbitrated(s, initial);
	}
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

static int row_cmp(const void *a, const void *b)
{
	return util_name_cmp(((const struct snap_row *)a)->name,
			     ((const struct snap_row *)b)->name);
}

/* The cell of a field in a scope, or NULL. */
static const struct stat_cell *scope_cell(const struct stats *s, int field,
					  pid_t pid, int vcpu)
{
	if (!pid && vcpu == SAMPLE_ALL_VCPUS)
		return (size_t)field < s->nsum ? &s->sum[field] : NULL;
	return stats_cell(s, field, pid, vcpu);
}

/*
 * Appends the rows of one scope to rows[*nrows]: fields with a reading,
 * parents without readings of their own as the sum of their children,
 * then only what the filter keeps. suffix names the rows "NAME/vcpuN".
 */
static void scope_rows(const struct stats *s, const struct field_filter *filter,
		       pid_t pid, int vcpu, const char *suffix,
		       struct snapshot *out, double secs)
{
	size_t n = s->fields.n, first = out->nrows, nrows = first;
	struct snap_row *rows = out->rows;
	int *row_of = xmalloc((n ? n : 1) * sizeof(*row_of));

	for (size_t i = 0; i < n; i++) {
		const struct field_info *f = &s->fields.v[i];
		const struct stat_cell *c = scope_cell(s, (int)i, pid, vcpu);

		row_of[i] = -1;
		if (!c || !c->seen)
			continue;
		rows[nrows] = (struct snap_row){ .field = (int)i,
			.name = f->name, .parent = f->parent, .type = f->type,
			.total = c->total, .delta = c->delta,
			.valid = c->fresh };
		row_of[i] = (int)nrows++;
	}
	for (size_t i = 0; i < n; i++) {
		int p = s->fields.v[i].parent;
		const struct stat_cell *pc;

		if (p < 0 || row_of[i] < 0)
			continue;
		pc = scope_cell(s, p, pid, vcpu);
		if (pc && pc->seen)
			continue;
		if (row_of[p] < 0) {
			const struct field_info *f = &s->fields.v[p];

			rows[nrows] = (struct snap_row){ .field = p,
				.name = f->name, .parent = -1, .type = f->type,
				.valid = true };
			row_of[p] = (int)nrows++;
		}
		rows[row_of[p]].total += rows[row_of[i]].total;
		rows[row_of[p]].delta += rows[row_of[i]].delta;
		rows[row_of[p]].valid &= rows[row_of[i]].valid;
	}
	out->nrows = first;
	for (size_t i = first; i < nrows; i++) {
		struct snap_row r = rows[i];

		if (!filter_match(filter, r.name))
			continue;
		r.rate = secs > 0 ? r.delta / secs : 0;
		if (suffix) {
			char *name = xasprintf("%s%s", r.name, suffix);

			out->owned = xrealloc(out->owned, (out->nowned + 1) *
					      sizeof(*out->owned));
			out->owned[out->nowned++] = name;
			r.name = name;
		}
		rows[out->nrows++] = r;
	}
	free(row_of);
}

static int int_cmp(const void *a, const void *b)
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
		qsort(v, n, sizeof(*v), int_cmp);
	*out = v;
	return n;
}

void stats_snapshot_scope(const struct stats *s,
			  const struct field_filter *filter,
			  const struct snap_scope *scope, struct snapshot *out)
{
	double secs = s->interval_ns / 1e9;
	int *vcpus = NULL;
	size_t nv = 0;

	memset(out, 0, sizeof(*out));
	if (scope->per_vcpu && scope->pid)
		nv = stats_vcpus_of(s, scope->pid, &vcpus);
	out->rows = xcalloc((s->fields.n ? s->fields.n : 1) * (nv + 1),
			    sizeof(*out->rows));
	scope_rows(s, filter, scope->pid, scope->vcpu, NULL, out, secs);
	for (size_t i = 0; i < nv; i++) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), "/vcpu%d", vcpus[i]);
		scope_rows(s, filter, scope->pid, vcpus[i], suffix, out, secs);
	}
	free(vcpus);
	qsort(out->rows, out->nrows, sizeof(*out->rows), row_cmp);
	out->stats = s;
	out->interval_ns = s->interval_ns;
	out->wall = s->wall;
}

void stats_snapshot(const struct stats *s, const struct field_filter *filter,
		    struct snapshot *out)
{
	struct snap_scope all = { .pid = 0, .vcpu = SAMPLE_ALL_VCPUS };

	stats_snapshot_scope(s, filter, &all, out);
}

void snapshot_free(struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nowned; i++)
		free(snap->owned[i]);
	free(snap->owned);
	free(snap->rows);
	snap->owned = NULL;
	snap->nowned = 0;
	snap->rows = NULL;
	snap->nrows = 0;
}

/* Whether a field counts events (not a child, not a unit, not a bucket). */
static bool is_event(const struct field_info *f)
{
	return f->parent < 0 && f->type == FIELD_CUMULATIVE &&
	       f->unit == UNIT_NONE && f->hist == HIST_NONE;
}

static struct snap_group *group_get(struct snap_group **g, size_t *n,
				    pid_t pid, int vcpu)
{
	for (size_t i = 0; i < *n; i++)
		if ((*g)[i].pid == pid && (*g)[i].vcpu == vcpu)
			return &(*g)[i];
	*g = xrealloc(*g, (*n + 1) * sizeof(**g));
	memset(&(*g)[*n], 0, sizeof(**g));
	(*g)[*n].pid = pid;
	(*g)[*n].vcpu = vcpu;
	for (int t = 0; t < SNAP_TOP; t++)
		(*g)[*n].top[t] = -1;
	return &(*g)[(*n)++];
}

static int group_cmp(const void *a, const void *b)
{
	const struct snap_group *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->vcpu - y->vcpu;
}

/* Keeps the SNAP_TOP busiest fields of a group. */
static void group_top(struct snap_group *g, int field, double rate)
{
	for (int t = 0; t < SNAP_TOP; t++) {
		if (g->top[t] >= 0 && g->top_rate[t] >= rate)
			continue;
		for (int u = SNAP_TOP - 1; u > t; u--) {
			g->top[u] = g->top[u - 1];
			g->top_rate[u] = g->top_rate[u - 1];
		}
		g->top[t] = field;
		g->top_rate[t] = rate;
		return;
	}
}

/*
 * Events that have a child the filter keeps: they are left out of the
 * busiest events, where "kvm_exit(HLT) 900/s" says more than "kvm_exit
 * 900/s" beside it. Caller frees.
 */
static bool *split_parents(const struct stats *s,
			   const struct field_filter *filter)
{
	bool *split = xcalloc(s->fields.n + 1, sizeof(*split));

	for (size_t i = 0; i < s->fields.n; i++) {
		const struct field_info *f = &s->fields.v[i];

		if (f->parent >= 0 && (size_t)f->parent < s->fields.n &&
		    s->fields.v[f->parent].hist == HIST_NONE &&
		    filter_match(filter, f->name))
			split[f->parent] = true;
	}
	return split;
}

size_t stats_groups(const struct stats *s, const struct field_filter *filter,
		    pid_t pid, struct snap_group **out)
{
	int exits = field_table_find(&s->fields, "exits");
	double secs = s->interval_ns / 1e9;
	struct snap_group *g = NULL;
	bool *split = split_parents(s, filter);
	size_t n = 0;

	/* VMs: (pid, all vCPUs) series; vCPUs: (pid, N) series */
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct stats_key *k = &s->keys[i];
		const struct stat_cell *c = &s->cells[i];
		const struct field_info *f = &s->fields.v[k->field];
		struct snap_group *grp;

		if (!c->seen || !k->pid)
			continue;
		if (pid ? (k->pid != pid || k->vcpu < 0) :
			  k->vcpu != SAMPLE_ALL_VCPUS)
			continue;
		grp = group_get(&g, &n, k->pid, k->vcpu);
		if (c->fresh)
			grp->fresh = true;
		if (c->tid)
			grp->tid = c->tid;
		/* histogram buckets are not events; their parent counts */
		if (!filter_match(filter, f->name) || split[k->field] ||
		    f->bucket >= 0)
			continue;
		if (f->type == FIELD_CUMULATIVE && c->delta > 0)
			group_top(grp, k->field, secs > 0 ? c->delta / secs : 0);
	}
	free(split);
	for (size_t i = 0; i < n; i++) {
		struct snap_group *grp = &g[i];
		const struct stat_cell *c = exits >= 0 ?
			stats_cell(s, exits, grp->pid, grp->vcpu) : NULL;

		if (c && c->seen) {
			grp->total = c->total;
			grp->delta = c->delta;
		} else {
			for (size_t f = 0; f < s->fields.n; f++) {
				if (!is_event(&s->fields.v[f]))
					continue;
				c = stats_cell(s, (int)f, grp->pid, grp->vcpu);
				if (!c || !c->seen)
					continue;
				grp->total += c->total;
				grp->delta += c->delta;
			}
		}
		grp->rate = secs > 0 ? grp->delta / secs : 0;
	}
	if (n)
		qsort(g, n, sizeof(*g), group_cmp);
	*out = g;
	return n;
}
