// SPDX-License-Identifier: GPL-2.0-only
/*
 * The field table (names interned once, looked up by id afterwards) and the
 * per-refresh sample array that providers fill.
 */
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "util.h"

/* FNV-1a: short names, few thousand entries at most. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

void field_table_init(struct field_table *t)
{
	memset(t, 0, sizeof(*t));
}

void field_table_free(struct field_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

static void field_table_rehash(struct field_table *t, size_t cap)
{
	free(t->hash);
	t->hash = xmalloc(cap * sizeof(*t->hash));
	t->cap_hash = cap;
	for (size_t i = 0; i < cap; i++)
		t->hash[i] = -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = name_hash(t->v[i].name) & (cap - 1);

		while (t->hash[h] >= 0)
			h = (h + 1) & (cap - 1);
		t->hash[h] = (int)i;
	}
}

int field_table_find(const struct field_table *t, const char *name)
{
	size_t h;

	if (!t->cap_hash)
		return -1;
	h = name_hash(name) & (t->cap_hash - 1);
	while (t->hash[h] >= 0) {
		if (!strcmp(t->v[t->hash[h]].name, name))
			return t->hash[h];
		h = (h + 1) & (t->cap_hash - 1);
	}
	return -1;
}

int field_table_intern(struct field_table *t, const char *name, int parent,
		       enum field_type type, const char *provider)
{
	int id = field_table_find(t, name);
	struct field_info *f;

	if (id >= 0)
		return id;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	if ((t->n + 1) * 2 > t->cap_hash)
		field_table_rehash(t, t->cap_hash ? t->cap_hash * 2 : 128);
	f = &t->v[t->n];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->parent = parent;
	f->type = type;
	f->provider = provider;
	f->bucket = -1;
	id = (int)t->n++;
	{
		size_t h = name_hash(name) & (t->cap_hash - 1);

		while (t->hash[h] >= 0)
			h = (h + 1) & (t->cap_hash - 1);
		t->hash[h] = id;
	}
	return id;
}

struct field_info *field_table_info(struct field_table *t, int id)
{
	return id >= 0 && (size_t)id < t->n ? &t->v[id] : NULL;
}

void sample_set_init(struct sample_set *s, struct field_table *fields)
{
	memset(s, 0, sizeof(*s));
	s->fields = fields;
}

void sample_set_free(struct sample_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void sample_set_clear(struct sample_set *s)
{
	s->n = 0;
}

void sample_set_push(struct sample_set *s, int field, pid_t pid, int vcpu,
		     pid_t tid, uint64_t value, unsigned int flags)
{
	struct sample *x;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	x = &s->v[s->n++];
	x->field = field;
	x->pid = pid;
	x->vcpu = vcpu;
	x->tid = tid;
	x->value = value;
	x->flags = flags;
	x->src = s->src;
}
