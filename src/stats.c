// SPDX-License-Identifier: GPL-2.0-only
/*
 * The aggregator. Providers push raw readings (cumulative counters or
 * gauges); here they become a total since kvmstat started (or since the VM
 * started with -i) and a delta over the last interval, for the whole
 * selection and for every VM and vCPU a provider breaks them down by.
 */
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
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

static uint32_t key_hash(int field, pid_t pid, int vcpu)
{
	uint32_t h = (uint32_t)field * 2654435761u;

	h ^= (uint32_t)pid * 2246822519u;
	h ^= (uint32_t)(vcpu + 1) * 3266489917u;
	return h ^ (h >> 15);
}

static long stats_find(const struct stats *s, int field, pid_t pid, int vcpu)
{
	size_t h;

	if (!s->cap_slot)
		return -1;
	h = key_hash(field, pid, vcpu) & (s->cap_slot - 1);
	while (s->slot[h]) {
		const struct stats_key *k = &s->keys[s->slot[h] - 1];

		if (k->field == field && k->pid == pid && k->vcpu == vcpu)
			return (long)s->slot[h] - 1;
		h = (h + 1) & (s->cap_slot - 1);
	}
	return -1;
}

static void stats_rehash(struct stats *s, size_t cap)
{
	free(s->slot);
	s->slot = xcalloc(cap, sizeof(*s->slot));
	s->cap_slot = cap;
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct stats_key *k = &s->keys[i];
		size_t h = key_hash(k->field, k->pid, k->vcpu) & (cap - 1);

		while (s->slot[h])
			h = (h + 1) & (cap - 1);
		s->slot[h] = (uint32_t)i + 1;
	}
}

/* The cell of one breakdown series, created on first use. */
static struct stat_cell *stats_breakdown(struct stats *s, int field, pid_t pid,
					 int vcpu)
{
	long i = stats_find(s, field, pid, vcpu);
	size_t h;

	if (i >= 0)
		return &s->cells[i];
	if (s->nkeys == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->keys = xrealloc(s->keys, s->cap * sizeof(*s->keys));
		s->cells = xrealloc(s->cells, s->cap * sizeof(*s->cells));
	}
	if ((s->nkeys + 1) * 2 > s->cap_slot)
		stats_rehash(s, s->cap_slot ? s->cap_slot * 2 : 512);
	s->keys[s->nkeys] = (struct stats_key){ field, pid, vcpu };
	memset(&s->cells[s->nkeys], 0, sizeof(s->cells[0]));
	h = key_hash(field, pid, vcpu) & (s->cap_slot - 1);
	while (s->slot[h])
		h = (h + 1) & (s->cap_slot - 1);
	s->slot[h] = (uint32_t)++s->nkeys;
	return &s->cells[s->nkeys - 1];
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
	for (size_t i = 0; i < s->set.n; i++) {
		const struct sample *x = &s->set.v[i];
		enum field_type type = s->fields.v[x->field].type;
		struct stat_cell *c;

		if (!x->pid && x->vcpu == SAMPLE_ALL_VCPUS)
			c = &s->sum[x->field];
		else
			c = stats_breakdown(s, x->field, x->pid, x->vcpu);
		cell_update(c, type, x->value, x->flags, initial,
			    s->include_past);
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
	return strcmp(((const struct snap_row *)a)->name,
		      ((const struct snap_row *)b)->name);
}

void stats_snapshot(const struct stats *s, const struct field_filter *filter,
		    struct snapshot *out)
{
	size_t n = s->nsum;
	struct snap_row *rows = xcalloc(n, sizeof(*rows));
	int *row_of = xmalloc(n * sizeof(*row_of));
	double secs = s->interval_ns / 1e9;
	size_t nrows = 0;

	/* Parents without readings of their own are the sum of their children. */
	for (size_t i = 0; i < n; i++) {
		const struct field_info *f = &s->fields.v[i];

		row_of[i] = -1;
		if (!s->sum[i].seen)
			continue;
		rows[nrows].field = (int)i;
		rows[nrows].name = f->name;
		rows[nrows].parent = f->parent;
		rows[nrows].type = f->type;
		rows[nrows].total = s->sum[i].total;
		rows[nrows].delta = s->sum[i].delta;
		rows[nrows].valid = s->sum[i].fresh;
		row_of[i] = (int)nrows++;
	}
	for (size_t i = 0; i < n; i++) {
		int p = s->fields.v[i].parent;

		if (p < 0 || row_of[i] < 0 || s->sum[p].seen)
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
	/* Drop children that never read and what the filter hides. */
	size_t kept = 0;

	for (size_t i = 0; i < nrows; i++) {
		struct snap_row r = rows[i];

		if (!filter_match(filter, r.name))
			continue;
		r.rate = secs > 0 ? r.delta / secs : 0;
		rows[kept++] = r;
	}
	qsort(rows, kept, sizeof(*rows), row_cmp);
	free(row_of);
	out->stats = s;
	out->rows = rows;
	out->nrows = kept;
	out->interval_ns = s->interval_ns;
	out->wall = s->wall;
}

void snapshot_free(struct snapshot *snap)
{
	free(snap->rows);
	snap->rows = NULL;
	snap->nrows = 0;
}
