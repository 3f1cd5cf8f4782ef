/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one hash index of the tree: open addressing with linear probing over
 * a caller's dense array. The caller keeps its entries in an array of its
 * own (field infos, stats keys, breakdown sums) and adds their positions
 * in order; the index maps a hash to the positions in its probe run and
 * the caller compares its keys, inline. Slots hold a position only (4
 * bytes, as dense as the tables this replaced); the hash of each position
 * is kept beside them so that growing needs no callback.
 *
 *	struct hashtab_iter it = hashtab_iter(&t->index, h);
 *	long i;
 *
 *	while ((i = hashtab_next(&t->index, &it)) >= 0)
 *		if (!strcmp(t->v[i].name, name))
 *			return i;
 *	hashtab_add(&t->index, h, t->n);	(absent: the caller appends)
 */
#ifndef KVMSTAT_HASHTAB_H
#define KVMSTAT_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

struct hashtab {
	uint32_t *slot;	   /* cap slots: a position + 1, 0 when empty */
	size_t cap;	   /* a power of two; at most half full */
	uint32_t *hash;	   /* by position: its hash, for growing */
	size_t n, caphash; /* positions indexed; room in hash */
};

/* Where a lookup stands in its probe run. */
struct hashtab_iter {
	size_t at; /* the next slot to look at */
};

void hashtab_init(struct hashtab *t);
void hashtab_free(struct hashtab *t);
/* Forgets every position and keeps the slots for reuse. */
void hashtab_clear(struct hashtab *t);
/*
 * Indexes position pos (the next one: pos == t->n) under hash, after the
 * caller has looked its key up and found it absent. Grows (at most half
 * the slots are used) as needed.
 */
void hashtab_add(struct hashtab *t, uint32_t hash, size_t pos);

/* FNV-1a of a NUL-terminated string. Inline, as are the lookups: they
 * run once per sample. */
static inline uint32_t hashtab_hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* A mix of three integers (a field, a process, a vCPU, say). */
static inline uint32_t hashtab_hash3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t h = a * 2654435761u ^ b * 2246822519u ^ c * 3266489917u;

	return h ^ (h >> 15);
}

/* Starts a lookup of hash. */
static inline struct hashtab_iter hashtab_iter(const struct hashtab *t,
					       uint32_t hash)
{
	return (struct hashtab_iter){ t->cap ? hash & (t->cap - 1) : 0 };
}

/*
 * The next position in the probe run of the iterator's hash, a candidate
 * whose key the caller compares, or -1 when the run ends: the key is not
 * indexed. Runs end, as the table is never more than half full.
 */
static inline long hashtab_next(const struct hashtab *t, struct hashtab_iter *it)
{
	uint32_t pos1;

	if (!t->cap)
		return -1;
	pos1 = t->slot[it->at];
	if (!pos1)
		return -1;
	it->at = (it->at + 1) & (t->cap - 1);
	return (long)pos1 - 1;
}

#endif
