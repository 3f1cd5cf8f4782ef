// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one lookup over any architecture descriptor (tables by ISA, reasons
 * by value, guard values by ISA, ISA detection) and arch_host, the
 * descriptor of the architecture this build is for. Compiled into every
 * build; the Makefile names the host's descriptor in KVMSTAT_ARCH_HOST.
 */
#include <stdlib.h>
#include <string.h>

#include "arch.h"

#ifndef KVMSTAT_ARCH_HOST
#error "build with -DKVMSTAT_ARCH_HOST=arch_<arch>_desc (the Makefile does)"
#endif

const struct arch_desc *const arch_host = &KVMSTAT_ARCH_HOST;

size_t arch_nsources(const struct arch_desc *d)
{
	size_t n = 0;

	while (d->sources && d->sources[n])
		n++;
	return n;
}

const struct arch_exit_table *arch_table_for(const struct arch_desc *d,
					     const char *isa)
{
	for (size_t i = 0; isa && d->tables && d->tables[i]; i++)
		if (!strcmp(d->tables[i]->isa, isa))
			return d->tables[i];
	return NULL;
}

static int arch_reason_cmp(const void *key, const void *elem)
{
	uint64_t v = *(const uint64_t *)key;
	const struct arch_exit_reason *r = elem;

	return v < r->value ? -1 : v > r->value;
}

/* The reasons are sorted by value (the unit tests hold every table to it). */
const char *arch_reason_name(const struct arch_exit_table *t, uint64_t value)
{
	const struct arch_exit_reason *r;

	value &= t->mask;
	r = bsearch(&value, t->reasons, t->n, sizeof(*t->reasons),
		    arch_reason_cmp);
	return r ? r->name : NULL;
}

int64_t arch_guard_value(const struct arch_desc *d, const char *field,
			 const char *isa)
{
	if (!isa || !field || !d->guard_field || strcmp(field, d->guard_field))
		return -1;
	for (const struct arch_guard *g = d->guards; g && g->isa; g++)
		if (!strcmp(g->isa, isa))
			return g->value;
	return -1;
}

const char *arch_detect_isa(const struct arch_desc *d, const char *sysfs_root)
{
	if (d->detect_isa)
		return d->detect_isa(sysfs_root);
	if (!d->tables || !d->tables[0])
		return NULL;
	/* without a detector, every table must be of the same ISA */
	for (size_t i = 1; d->tables[i]; i++)
		if (strcmp(d->tables[i]->isa, d->tables[0]->isa))
			return NULL;
	return d->tables[0]->isa;
}
