// SPDX-License-Identifier: GPL-2.0-only
/*
 * Child events of the tracepoint provider, such as kvm_exit(HLT): for each
 * source the arch/ descriptor names (a tracepoint and its reason field),
 * the reason tables of the running kernel's format file, the descriptor's
 * table for the host's ISA as fallback, the field each wanted reason
 * counts into, and names for reasons no table knows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "provider.h"
#include "tpformat.h"
#include "tracepoint_int.h"
#include "util.h"

static int tp_reason_cmp(const void *a, const void *b)
{
	const struct tp_reason *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/*
 * Whether t decodes a record whose guard field holds isa (a guard value);
 * with isa unknown (negative), every table does.
 */
bool tp_table_applies(const struct tp_table *t, int64_t isa)
{
	if (!t->guarded || isa < 0)
		return true;
	return t->negated ? isa != t->guard : isa == t->guard;
}

/*
 * Child field name: prefix + name with the source's strip prefix removed.
 * Blanks, commas, quotes and parentheses in a reason (SVM's "DE excp",
 * s390's "host interruption") become '_': log and batch lines are split
 * on blanks, CSV on commas, and the parent is what precedes the '('.
 */
static void tp_child_name(char *out, size_t len, const struct tp_source *s,
			  const char *strip, const char *name)
{
	size_t n = strip ? strlen(strip) : 0, pre = strlen(s->prefix);

	if (n && !strncmp(name, strip, n) && name[n])
		name += n;
	snprintf(out, len, "%s%s)", s->prefix, name);
	for (char *c = out + pre; *c && c[1]; c++)
		if (*c <= ' ' || *c == 0x7f || strchr(",\"'()", *c))
			*c = '_';
}

/* Adds one table's reasons, interning the children the filter keeps. */
static void tp_add_table(struct tp_priv *tp, struct tp_source *s,
			 const char *strip, uint64_t mask, bool guarded,
			 bool negated, int64_t guard, size_t n,
			 const uint64_t *values, const char *const *names)
{
	struct tp_table *t = &s->tabs[s->ntabs++];
	char name[160];

	t->mask = mask;
	t->guarded = guarded;
	t->negated = negated;
	t->guard = guard;
	t->r = xcalloc(n ? n : 1, sizeof(*t->r));
	for (size_t i = 0; i < n; i++) {
		tp_child_name(name, sizeof(name), s, strip, names[i]);
		t->r[t->n].value = values[i];
		t->r[t->n].field = provider_wants(tp->p, name) ?
					   field_table_intern(tp->fields, name,
							      s->parent,
							      FIELD_CUMULATIVE,
							      "tracepoint") :
					   -1;
		t->n++;
	}
	qsort(t->r, t->n, sizeof(*t->r), tp_reason_cmp);
}

static const char *tp_strip_for(const struct tp_symtab *t, const char *strip)
{
	return t->prefix ? t->prefix : strip;
}

/*
 * Sets up the children of one source of the arch descriptor from the
 * kernel's format file, or from the descriptor's table for the host's ISA
 * when the format names no reasons.
 */
int tp_setup_source(struct tp_priv *tp, const struct arch_desc *arch,
		    const struct arch_source *src, const char *isa)
{
	const char *ev_name = src->event;
	const char *fname = src->field;
	const char *strip = src->strip;
	struct tp_source *s = &tp->src[tp->nsrc];
	const struct tp_field *f, *g;
	char path[PATH_MAX + 256];
	int ev = tp_event_index(tp, ev_name), rc;

	if (ev < 0)
		return 0;
	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/%s/format", tp->events_dir, ev_name);
	rc = tp_format_load(path, &s->fmt);
	if (rc)
		return 0;
	f = tp_format_field(s->fmt, fname);
	if (!f) {
		tp_format_free(s->fmt);
		return 0;
	}
	/* the host's ISA only, spelled as kvm_stat spells them (arch.h) */
	arch_name_reasons(arch, src, isa, s->fmt);
	s->ev = ev;
	s->reason.offset = f->offset;
	s->reason.size = f->size;
	snprintf(s->reason_name, sizeof(s->reason_name), "%s", fname);
	snprintf(s->prefix, sizeof(s->prefix), "%s(", ev_name);
	s->parent = field_table_intern(tp->fields, ev_name, -1,
				       FIELD_CUMULATIVE, "tracepoint");
	for (size_t i = 0; i < s->fmt->ntabs && s->ntabs < ARRAY_SIZE(s->tabs);
	     i++) {
		const struct tp_symtab *t = &s->fmt->tabs[i];
		uint64_t *values;
		const char **names;
		struct tp_table probe = { .guarded = t->guard_field != NULL,
					  .negated = t->guard_negated,
					  .guard = t->guard_value };
		int64_t guard = arch_guard_value(arch, t->guard_field, isa);

		if (strcmp(t->field, fname) || !tp_table_applies(&probe, guard))
			continue;
		if (t->guard_field && !s->isa.size) {
			g = tp_format_field(s->fmt, t->guard_field);
			if (!g)
				continue;
			s->isa.offset = g->offset;
			s->isa.size = g->size;
			snprintf(s->isa_name, sizeof(s->isa_name), "%s",
				 t->guard_field);
		}
		values = xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*values));
		names = xcalloc(t->nsyms ? t->nsyms : 1, sizeof(*names));
		for (size_t j = 0; j < t->nsyms; j++) {
			values[j] = t->syms[j].value;
			names[j] = t->syms[j].name;
		}
		tp_add_table(tp, s, tp_strip_for(t, strip), t->mask,
			     probe.guarded, probe.negated, probe.guard,
			     t->nsyms, values, names);
		free(values);
		free(names);
	}
	if (!s->ntabs) {
		const struct arch_exit_table *at = arch_table_for(arch, isa);

		if (at && !strcmp(at->event, ev_name) &&
		    !strcmp(at->field, fname)) {
			uint64_t *values = xcalloc(at->n + 1, sizeof(*values));
			const char **names = xcalloc(at->n + 1, sizeof(*names));

			for (size_t j = 0; j < at->n; j++) {
				values[j] = at->reasons[j].value;
				names[j] = at->reasons[j].name;
			}
			tp_add_table(tp, s, strip, at->mask, false, false, 0,
				     at->n, values, names);
			free(values);
			free(names);
		}
	}
	if (!s->ntabs) {
		tp_format_free(s->fmt);
		return 0;
	}
	tp->nsrc++;
	return 0;
}

bool tp_source_wanted(const struct tp_source *s)
{
	for (size_t i = 0; i < s->ntabs; i++)
		for (size_t j = 0; j < s->tabs[i].n; j++)
			if (s->tabs[i].r[j].field >= 0)
				return true;
	return false;
}

/* Field id of reason raw of source s whose guard field held isa (negative:
 * unknown, every table), interning "event(123)" for an unknown reason. */
int tp_reason_field(struct tp_priv *tp, struct tp_source *s, uint64_t raw,
		    int64_t isa)
{
	char name[160];
	int field;

	for (size_t i = 0; i < s->ntabs; i++) {
		const struct tp_table *t = &s->tabs[i];
		struct tp_reason key = { .value = raw & t->mask }, *r;

		if (!tp_table_applies(t, isa))
			continue;
		r = bsearch(&key, t->r, t->n, sizeof(*t->r), tp_reason_cmp);
		if (r)
			return r->field;
	}
	snprintf(name, sizeof(name), "%s%llu)", s->prefix,
		 (unsigned long long)raw);
	if (!provider_wants(tp->p, name))
		return -1;
	field = field_table_find(tp->fields, name);
	if (field < 0) {
		field = field_table_intern(tp->fields, name, s->parent,
					   FIELD_CUMULATIVE, "tracepoint");
		tp_report(tp, field);
		tp_grow_acc(tp);
	}
	return field;
}

void tp_sources_free(struct tp_priv *tp)
{
	for (size_t i = 0; i < tp->nsrc; i++) {
		for (size_t j = 0; j < tp->src[i].ntabs; j++)
			free(tp->src[i].tabs[j].r);
		tp_format_free(tp->src[i].fmt);
	}
	free(tp->src);
}
