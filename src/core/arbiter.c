// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arbiter: one owner per field, and who fills in the VMs the owner
 * does not see. It keeps one sorted set of the (field, VM) pairs served in
 * the current refresh, each marked when the field's owner served it, and
 * per field what the owner reported; providers ask it during their reads,
 * the stats layer asks it for a verdict on every reading (see arbiter.h).
 */
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "util.h"

/* What a field's owner reported in this refresh (arbiter.reported). */
enum {
	REPORTED_TOTAL = 1u << 0, /* the whole selection (pid 0) */
	REPORTED_BY_VM = 1u << 1, /* at least one VM-wide reading */
};

void arbiter_init(struct arbiter *a, const struct field_table *fields)
{
	memset(a, 0, sizeof(*a));
	a->fields = fields;
}

void arbiter_free(struct arbiter *a)
{
	free(a->served);
	free(a->reported);
	memset(a, 0, sizeof(*a));
}

const char *arbiter_owner(const struct arbiter *a, int field)
{
	if (!a || field < 0 || (size_t)field >= a->fields->n)
		return NULL;
	return a->fields->v[field].provider;
}

bool arbiter_claimed(const struct arbiter *a, const char *name, const char *me)
{
	const char *owner;

	if (!a)
		return false;
	owner = arbiter_owner(a, field_table_find(a->fields, name));
	return owner && me && strcmp(owner, me);
}

/* Whether x is its field owner's reading (or names no source). */
static bool arbiter_is_owners(const struct arbiter *a, const struct sample *x)
{
	const char *owner = arbiter_owner(a, x->field);

	return !x->src || !owner || x->src == owner || !strcmp(x->src, owner);
}

/* By VM, then field: the order providers push their VMs' readings in,
 * so that a refresh of one provider needs no sort. */
static int arbiter_key_cmp(const void *a, const void *b)
{
	const struct arbiter_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->field < y->field ? -1 : x->field > y->field;
}

/* Whether served[from..] is sorted without repeats, and after the rest. */
static bool arbiter_sorted(const struct arbiter *a, size_t from)
{
	for (size_t i = from ? from : 1; i < a->nserved; i++)
		if (arbiter_key_cmp(&a->served[i - 1], &a->served[i]) >= 0)
			return false;
	return true;
}

/* Sorts the pairs served since from and merges repeats (served by the
 * owner if any reading of the pair was the owner's). */
static void arbiter_sort(struct arbiter *a, size_t from)
{
	size_t m = 0;

	if (arbiter_sorted(a, from))
		return;
	qsort(a->served, a->nserved, sizeof(*a->served), arbiter_key_cmp);
	for (size_t i = 0; i < a->nserved; i++) {
		if (m && !arbiter_key_cmp(&a->served[m - 1], &a->served[i]))
			a->served[m - 1].by_owner |= a->served[i].by_owner;
		else
			a->served[m++] = a->served[i];
	}
	a->nserved = m;
}

static const struct arbiter_key *arbiter_find(const struct arbiter *a,
					      int field, pid_t pid)
{
	struct arbiter_key k = { .field = field, .pid = pid };

	if (!a || !a->nserved)
		return NULL;
	return bsearch(&k, a->served, a->nserved, sizeof(k), arbiter_key_cmp);
}

static void arbiter_add(struct arbiter *a, int field, pid_t pid, bool by_owner)
{
	if (a->nserved == a->capserved) {
		a->capserved = a->capserved ? a->capserved * 2 : 256;
		a->served = xrealloc(a->served,
				     a->capserved * sizeof(*a->served));
	}
	a->served[a->nserved++] = (struct arbiter_key){ field, pid, by_owner };
}

/* Room in reported for every field the table holds now. */
static void arbiter_fit(struct arbiter *a)
{
	size_t n = a->fields->n;

	if (a->nreported >= n)
		return;
	a->reported = xrealloc(a->reported, n);
	memset(a->reported + a->nreported, 0, n - a->nreported);
	a->nreported = n;
}

void arbiter_note(struct arbiter *a, const struct sample_set *set)
{
	size_t before = a->nserved;

	arbiter_fit(a);
	for (size_t i = a->noted; i < set->n; i++) {
		const struct sample *x = &set->v[i];
		bool owners = arbiter_is_owners(a, x);

		a->mixed |= !owners;
		if (x->vcpu != SAMPLE_ALL_VCPUS)
			continue;
		if (x->pid)
			arbiter_add(a, x->field, x->pid, owners);
		if (owners && (size_t)x->field < a->nreported)
			a->reported[x->field] |= x->pid ? REPORTED_BY_VM :
							  REPORTED_TOTAL;
	}
	a->noted = set->n;
	if (a->nserved != before)
		arbiter_sort(a, before);
}

bool arbiter_served(const struct arbiter *a, int field, pid_t pid)
{
	return arbiter_find(a, field, pid) != NULL;
}

bool arbiter_judge(struct arbiter *a, const struct sample_set *set)
{
	arbiter_note(a, set);
	return a->mixed;
}

enum arbiter_verdict arbiter_verdict(const struct arbiter *a,
				     const struct sample *x)
{
	const struct arbiter_key *k;

	if (!a->mixed || arbiter_is_owners(a, x))
		return ARBITER_COUNT;
	if (!x->pid)
		return ARBITER_DROP; /* the owner's total stands */
	if ((size_t)x->field < a->nreported &&
	    a->reported[x->field] == REPORTED_TOTAL)
		return ARBITER_DROP; /* a total without VMs sees them all */
	k = arbiter_find(a, x->field, x->pid);
	if (k && k->by_owner)
		return ARBITER_DROP; /* the owner served this VM */
	return ARBITER_FILL_IN;
}

void arbiter_end(struct arbiter *a)
{
	a->nserved = 0;
	if (a->nreported)
		memset(a->reported, 0, a->nreported);
	a->noted = 0;
	a->mixed = false;
}
