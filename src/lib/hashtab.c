// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hash index over a caller's dense array (see hashtab.h): insertion
 * and growth; lookups and the hashes are inline in the header.
 */
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "util.h"

/* Slots of a first table: enough for a few dozen entries. */
#define HASHTAB_MIN_CAP 64

void hashtab_init(struct hashtab *t)
{
	memset(t, 0, sizeof(*t));
}

void hashtab_free(struct hashtab *t)
{
	free(t->slot);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

void hashtab_clear(struct hashtab *t)
{
	if (t->n)
		memset(t->slot, 0, t->cap * sizeof(*t->slot));
	t->n = 0;
}

/* Puts position pos at the end of its hash's probe run. */
static void hashtab_put(uint32_t *slot, size_t cap, uint32_t hash, size_t pos)
{
	size_t at = hash & (cap - 1);

	while (slot[at])
		at = (at + 1) & (cap - 1);
	slot[at] = (uint32_t)pos + 1;
}

/* Indexes every position again in a table of cap slots. */
static void hashtab_grow(struct hashtab *t, size_t cap)
{
	free(t->slot);
	t->slot = xcalloc(cap, sizeof(*t->slot));
	t->cap = cap;
	for (size_t i = 0; i < t->n; i++)
		hashtab_put(t->slot, cap, t->hash[i], i);
}

void hashtab_add(struct hashtab *t, uint32_t hash, size_t pos)
{
	if (pos != t->n || pos >= UINT32_MAX - 1)
		util_die("hash index: position %zu added after %zu", pos, t->n);
	if (t->n == t->caphash) {
		t->caphash = t->caphash ? t->caphash * 2 : HASHTAB_MIN_CAP / 2;
		t->hash = xrealloc(t->hash, t->caphash * sizeof(*t->hash));
	}
	t->hash[t->n] = hash;
	if ((t->n + 1) * 2 > t->cap)
		hashtab_grow(t, t->cap ? t->cap * 2 : HASHTAB_MIN_CAP);
	hashtab_put(t->slot, t->cap, hash, pos);
	t->n++;
}
