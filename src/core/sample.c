// SPDX-License-Identifier: GPL-2.0-only
/*
 * The field table (names interned once, looked up by id afterwards) and the
 * per-refresh sample array that providers fill.
 */
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "util.h"

void field_table_init(struct field_table *t)
{
	memset(t, 0, sizeof(*t));
	hashtab_init(&t->index);
}

void field_table_free(struct field_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	hashtab_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* Id of name, whose hash is h, or -1. */
static int field_table_lookup(const struct field_table *t, const char *name,
			      uint32_t h)
{
	struct hashtab_iter it = hashtab_iter(&t->index, h);
	long i;

	while ((i = hashtab_next(&t->index, &it)) >= 0)
		if (!strcmp(t->v[i].name, name))
			return (int)i;
	return -1;
}

int field_table_find(const struct field_table *t, const char *name)
{
	return field_table_lookup(t, name, hashtab_hash_str(name));
}

int field_table_intern(struct field_table *t, const char *name, int parent,
		       enum field_type type, const char *provider)
{
	uint32_t h = hashtab_hash_str(name);
	int id = field_table_lookup(t, name, h);
	struct field_info *f;

	if (id >= 0)
		return id;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	f = &t->v[t->n];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->parent = parent;
	f->type = type;
	f->provider = provider;
	f->bucket = -1;
	/* the names after it move down one place */
	for (size_t i = 0; i < t->n; i++) {
		if (util_name_cmp(t->v[i].name, name) < 0)
			f->order++;
		else
			t->v[i].order++;
	}
	hashtab_add(&t->index, h, t->n);
	t->gen = util_serial();
	return (int)t->n++;
}

struct field_info *field_table_info(struct field_table *t, int id)
{
	if (id < 0 || (size_t)id >= t->n)
		return NULL;
	t->gen = util_serial();
	return &t->v[id];
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
