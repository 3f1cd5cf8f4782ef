// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the exporter and the JSON share about per-VM series (levels.h): a
 * VM's value of a field, from its own row or summed from its vCPUs';
 * which values are 0; and the memory of the series written, so that a
 * series once written stays while its VM lives.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "levels.h"
#include "util.h"

/* A block of scratch room; blocks are chained and never move. */
struct levels_block {
	struct levels_block *next;
	size_t used, cap; /* in bytes */
	max_align_t data[];
};

#define LEVELS_BLOCK_MIN (64u * 1024)

void levels_scratch_init(struct levels_scratch *s)
{
	s->head = s->cur = NULL;
}

void levels_scratch_reset(struct levels_scratch *s)
{
	for (struct levels_block *b = s->head; b; b = b->next)
		b->used = 0;
	s->cur = s->head;
}

void levels_scratch_free(struct levels_scratch *s)
{
	while (s->head) {
		struct levels_block *b = s->head;

		s->head = b->next;
		free(b);
	}
	s->cur = NULL;
}

/* n bytes of scratch room, aligned for any type, until the next reset. */
static void *levels_alloc(struct levels_scratch *s, size_t n)
{
	struct levels_block *b;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	for (b = s->cur; b && b->used + n > b->cap; b = b->next)
		b->used = b->cap; /* skipped: full until the reset */
	if (!b) {
		size_t cap = n > LEVELS_BLOCK_MIN ? n : LEVELS_BLOCK_MIN;

		b = xmalloc(sizeof(*b) + cap);
		b->used = 0;
		b->cap = cap;
		/* a new block goes first in line of the free ones */
		b->next = NULL;
		if (!s->head) {
			s->head = b;
		} else {
			struct levels_block *t = s->head;

			while (t->next)
				t = t->next;
			t->next = b;
		}
	}
	s->cur = b;
	p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

bool levels_vm_fresh(const struct snap_scope *vm)
{
	for (size_t j = 0; !vm->fresh && j < vm->nchildren; j++)
		if (vm->children[j].fresh)
			return true;
	return vm->fresh;
}

bool levels_sticky(const struct field_info *f)
{
	return f->type == FIELD_CUMULATIVE || f->hist != HIST_NONE;
}

bool levels_zero(const struct snap_row *r, const struct snap_hist *h)
{
	if (!h)
		return r->total == 0;
	if (h->measured)
		return h->count == 0;
	for (size_t i = 0; i < h->nbuckets; i++)
		if (h->buckets[i].seen && h->buckets[i].total)
			return false;
	return true;
}

/* The sum of field's rows in the vCPUs of vm into *sum (false: none). */
static bool levels_vcpu_sum(const struct snapshot *snap,
			    const struct snap_scope *vm, int field,
			    struct snap_row *sum, struct levels_scratch *s)
{
	const struct field_info *f = &snap->fields[field];
	bool found = false;
	size_t nb = 0;

	for (size_t j = 0; j < vm->nchildren; j++) {
		const struct snap_row *r = snapshot_scope_row(&vm->children[j],
							      field);

		if (!r)
			continue;
		if (!found) {
			*sum = *r;
			sum->total = 0;
			sum->delta = 0;
			sum->rate = 0;
			sum->valid = false;
			sum->per_vcpu = false;
			sum->hist = NULL;
			found = true;
		}
		sum->valid |= r->valid;
		if (f->type == FIELD_PEAK) {
			if (r->total >= sum->total) {
				sum->total = r->total;
				sum->delta = r->delta;
				sum->rate = r->rate;
			}
		} else {
			sum->total += r->total;
			sum->delta += r->delta;
			sum->rate += r->rate;
		}
		if (r->hist)
			nb += r->hist->nbuckets;
	}
	if (found && f->hist != HIST_NONE && nb) {
		struct snap_hist *h = levels_alloc(s, sizeof(*h));
		struct snap_bucket *b = levels_alloc(s, nb * sizeof(*b));

		hist_sum_scopes(vm->children, vm->nchildren, field, h, b, nb);
		sum->hist = h;
	}
	return found;
}

bool levels_vm_value(const struct snapshot *snap, const struct snap_scope *vm,
		     int field, struct snap_row *sum,
		     const struct snap_row **row, struct levels_scratch *s)
{
	*row = snapshot_scope_row(vm, field);
	if (*row)
		return true;
	if (!levels_vcpu_sum(snap, vm, field, sum, s))
		return false;
	*row = sum;
	return true;
}

void levels_seen_init(struct levels_seen *s)
{
	memset(s, 0, sizeof(*s));
	hashtab_init(&s->index);
}

void levels_seen_free(struct levels_seen *s)
{
	free(s->v);
	hashtab_free(&s->index);
	memset(s, 0, sizeof(*s));
}

static uint32_t levels_hash(pid_t pid, int vcpu, int field)
{
	return hashtab_hash3((uint32_t)field, (uint32_t)pid,
			     (uint32_t)(vcpu + 1));
}

bool levels_seen_keep(struct levels_seen *s, pid_t pid, int vcpu, int field,
		      bool zero)
{
	uint32_t h = levels_hash(pid, vcpu, field);
	struct hashtab_iter it = hashtab_iter(&s->index, h);
	long i;

	while ((i = hashtab_next(&s->index, &it)) >= 0) {
		const struct levels_key *k = &s->v[i];

		if (k->pid == pid && k->vcpu == vcpu && k->field == field)
			return true;
	}
	if (zero)
		return false;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n] = (struct levels_key){ pid, vcpu, field };
	hashtab_add(&s->index, h, s->n++);
	return true;
}

/* Whether VM pid is in snap (its VMs are listed by pid). */
static bool levels_has_vm(const struct snapshot *snap, pid_t pid)
{
	const struct snap_scope *w = snap->whole;
	size_t lo = 0, hi = w ? w->nchildren : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->children[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return w && lo < w->nchildren && w->children[lo].pid == pid;
}

void levels_seen_prune(struct levels_seen *s, const struct snapshot *snap)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++)
		if (levels_has_vm(snap, s->v[i].pid))
			s->v[kept++] = s->v[i];
	if (kept == s->n)
		return;
	s->n = kept;
	hashtab_clear(&s->index);
	for (size_t i = 0; i < s->n; i++)
		hashtab_add(&s->index,
			    levels_hash(s->v[i].pid, s->v[i].vcpu,
					s->v[i].field),
			    i);
}
