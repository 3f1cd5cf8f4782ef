// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one lookup over any architecture descriptor (tables by ISA, reasons
 * by value, guard values by ISA, ISA detection, sources and breakdown
 * kinds by name, names of keys) and arch_host, the
 * descriptor of the architecture this build is for, and the naming of
 * child events: the kernel's reason tables brought to kvm_stat's spelling
 * for the host's ISA only. Compiled into every build; the Makefile names
 * the host's descriptor in KVMSTAT_ARCH_HOST.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "fs.h"
#include "tpformat.h"

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

const struct arch_vcpu_reason *arch_vcpu_reason_for(const struct arch_desc *d,
						    const char *event,
						    const char *isa)
{
	for (const struct arch_vcpu_reason *r = d->vcpu_reasons;
	     isa && r && r->isa; r++)
		if (!strcmp(r->isa, isa) && !strcmp(r->event, event))
			return r;
	return NULL;
}

bool arch_vcpu_reason_any(const struct arch_desc *d, const char *event)
{
	for (const struct arch_vcpu_reason *r = d->vcpu_reasons; r && r->isa;
	     r++)
		if (!strcmp(r->event, event))
			return true;
	return false;
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

/* The largest cpuinfo read: vendor_id is in the first CPU's block. */
#define ARCH_CPUINFO_MAX (4u << 20)

/*
 * The vendor_id of the first CPU in proc_root/cpuinfo, into buf; false
 * when the file or the line is missing.
 */
static bool arch_cpu_vendor(const char *proc_root, char *buf, size_t len)
{
	char path[PATH_MAX], *text = NULL, *line;
	bool found = false;
	int n = snprintf(path, sizeof(path), "%s/cpuinfo",
			 proc_root ? proc_root : "/proc");

	if (n < 0 || (size_t)n >= sizeof(path) ||
	    fs_read_all_at(AT_FDCWD, path, ARCH_CPUINFO_MAX, &text, NULL))
		return false;
	for (line = text; line && *line && !found;) {
		char *nl = strchr(line, '\n'), *colon;

		if (nl)
			*nl = '\0';
		colon = strchr(line, ':');
		if (!strncmp(line, "vendor_id", 9) && colon &&
		    strspn(line + 9, " \t") == (size_t)(colon - line - 9)) {
			char *v = colon + 1;
			size_t vl;

			v += strspn(v, " \t");
			vl = strlen(v);
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t' ||
				      v[vl - 1] == '\r'))
				vl--;
			if (vl && vl < len) {
				memcpy(buf, v, vl);
				buf[vl] = '\0';
				found = true;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return found;
}

const char *arch_detect_isa_at(const struct arch_desc *d,
			       const char *sysfs_root, const char *proc_root)
{
	const char *isa = arch_detect_isa(d, sysfs_root);
	char vendor[64];

	if (isa || !d->vendor_isa ||
	    !arch_cpu_vendor(proc_root, vendor, sizeof(vendor)))
		return isa;
	return d->vendor_isa(vendor);
}

const struct arch_exit_table *arch_source_table(const struct arch_desc *d,
						const struct arch_source *src,
						const char *isa)
{
	const struct arch_exit_table *t;

	if (src->table)
		return src->table;
	t = arch_table_for(d, isa);
	if (t && !strcmp(t->event, src->event) && !strcmp(t->field, src->field))
		return t;
	return NULL;
}

const struct arch_source *arch_source_find(const struct arch_desc *d,
					   const char *event, const char *field)
{
	for (size_t i = 0; d->sources && d->sources[i]; i++)
		if (!strcmp(d->sources[i]->event, event) &&
		    !strcmp(d->sources[i]->field, field))
			return d->sources[i];
	return NULL;
}

const struct arch_breakdown *arch_breakdown_for(const struct arch_desc *d,
						const char *kind)
{
	for (const struct arch_breakdown *b = d->breakdowns; b && b->kind; b++)
		if (!strcmp(b->kind, kind))
			return b;
	return NULL;
}

const char *arch_key_name(const struct arch_breakdown *b, uint64_t key,
			  char *buf, size_t len)
{
	/* first match: a narrower range is listed before a wider one */
	for (size_t i = 0; b->names && i < b->nnames; i++) {
		const struct arch_key_name *n = &b->names[i];

		if (key < n->lo || key > n->hi)
			continue;
		if (n->indexed)
			snprintf(buf, len, "%s%llu", n->name,
				 (unsigned long long)(key - n->lo));
		else
			snprintf(buf, len, "%s", n->name);
		return buf;
	}
	return NULL;
}

const char *arch_reason_display(const struct arch_exit_reason *r)
{
	return r->kvm_stat ? r->kvm_stat : r->name;
}

/*
 * Whether the format table t may name src's children on a host running
 * isa: an unguarded table always, a guarded one only when its guard is d's
 * and the host's guard value selects it.
 */
static bool arch_table_applies(const struct arch_desc *d,
			       const struct tp_symtab *t, const char *isa)
{
	int64_t g;

	if (!t->guard_field)
		return true;
	g = arch_guard_value(d, t->guard_field, isa);
	return g >= 0 && tp_symtab_applies(t, g);
}

int arch_name_reasons(const struct arch_desc *d, const struct arch_source *src,
		      const char *isa, struct tp_format *fmt)
{
	const struct arch_exit_table *at = arch_source_table(d, src, isa);
	struct tp_symtab *keep = NULL;
	size_t i = 0, kept = 0;
	bool made = false;

	/* one table of src's field, the first for the host's ISA */
	while (i < fmt->ntabs) {
		const struct tp_symtab *t = &fmt->tabs[i];

		if (strcmp(t->field, src->field)) {
			i++;
		} else if (!keep && arch_table_applies(d, t, isa)) {
			keep = &fmt->tabs[i];
			kept = i++;
		} else {
			tp_format_drop_symtab(fmt, i);
		}
	}
	if (keep) {
		keep = &fmt->tabs[kept];
	} else {
		if (!at)
			return -ENOENT;
		keep = tp_format_add_symtab(fmt, src->field, at->mask);
		made = true;
	}
	for (size_t j = 0; at && j < at->n; j++) {
		const struct arch_exit_reason *r = &at->reasons[j];

		if (r->kvm_stat)
			tp_symtab_set(keep, r->value, r->kvm_stat);
		else if ((at->listed || made) && !tp_symtab_name(keep, r->value))
			tp_symtab_set(keep, r->value, r->name);
	}
	return 0;
}
