/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One value a provider reads in one refresh, summed over what contributes
 * to it (a VM's vCPUs, a process's VMs, every VM): nothing read yet, a
 * value, or unreadable because a contributor could not be read. Only a
 * value becomes a sample; an unreadable one is left out (the stats layer
 * shows it stale), never pushed as a partial sum or a zero.
 */
#ifndef KVMSTAT_READING_H
#define KVMSTAT_READING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sample.h"

enum reading_state {
	READING_NONE = 0,   /* nothing read (yet) */
	READING_OK,	    /* value is what was read */
	READING_UNREADABLE, /* a contributor failed: no value at all */
};

struct reading {
	uint64_t value; /* meaningful when state is READING_OK */
	enum reading_state state;
};

/* Forgets n readings for a new refresh (r may be NULL when n is 0). */
static inline void readings_clear(struct reading *r, size_t n)
{
	if (n)
		memset(r, 0, n * sizeof(*r));
}

/* Whether r holds a value to push. */
static inline bool reading_ok(const struct reading *r)
{
	return r->state == READING_OK;
}

/*
 * Adds one contributor's value: the first sets it, the next add to it, or
 * for a peak keep the maximum. An unreadable reading stays unreadable.
 */
static inline void reading_add(struct reading *r, uint64_t v,
			       enum field_type type)
{
	if (r->state == READING_UNREADABLE)
		return;
	if (r->state == READING_NONE) {
		r->value = v;
		r->state = READING_OK;
	} else if (type == FIELD_PEAK) {
		if (v > r->value)
			r->value = v;
	} else {
		r->value += v;
	}
}

/* A contributor could not be read: r has no value in this refresh. */
static inline void reading_fail(struct reading *r)
{
	r->state = READING_UNREADABLE;
}

/* Folds a part (a vCPU's sum, a VM's) into the whole: its value adds as
 * reading_add() does, its failure makes the whole unreadable. */
static inline void reading_fold(struct reading *whole,
				const struct reading *part,
				enum field_type type)
{
	if (part->state == READING_UNREADABLE)
		reading_fail(whole);
	else if (part->state == READING_OK)
		reading_add(whole, part->value, type);
}

#endif
