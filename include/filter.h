/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The field filter: a regex in Python's dialect (PCRE2 here: (?i), \d,
 * (?!...) work) matched at the start of a field name and not necessarily
 * to its end, as kvm_stat's -f behaves (Python's re.match). A child event
 * such as kvm_exit(HLT) that the filter keeps brings in its parent, as in
 * kvm_stat. A filter holds a compiled pattern: share it by pointer, never
 * copy it by value.
 */
#ifndef KVMSTAT_FILTER_H
#define KVMSTAT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct errmsg;

/* The monitor's, --json's and --listen's default: no child events. */
#define FILTER_DEFAULT "^[^(]*$"
/* kvm_stat's default in batch and log modes: every field, children too. */
#define FILTER_ALL ""

struct filter_cache;

struct field_filter {
	char *pattern; /* as given, owned; NULL: never set */
	void *code;    /* the compiled pcre2_code, while pattern is set */
	/* verdicts by field id, made once per pattern (owned; a cache, so
	 * it changes behind a const filter) */
	struct filter_cache *cache;
	/* util_serial() of the pattern set, 0 when none: which fields it
	 * keeps changes only with it */
	uint64_t serial;
};

/* 0, or -EINVAL with a readable reason in msg when the pattern is bad (f
 * is left as it was). */
int filter_set(struct field_filter *f, const char *pattern, struct errmsg *msg);
void filter_free(struct field_filter *f);
/* Whether the regex matches name at its start; a NULL filter or one never
 * set keeps everything. */
bool filter_match(const struct field_filter *f, const char *name);
/* The same, or with children a child event NAME(...) whose NAME matches
 * (the monitor's 'x'). */
bool filter_keeps(const struct field_filter *f, const char *name, bool children);
/*
 * filter_keeps() of the field whose id is id and name is name, the
 * verdict kept per id so that the regex runs once per field and pattern,
 * not once per refresh (field names never change; the name is checked,
 * so ids of another field table only cost a match).
 */
bool filter_keeps_field(const struct field_filter *f, int id, const char *name,
			bool children);
/*
 * Whether some child event name(...) could match, so that a provider
 * counts the event name as a parent the filter brings in ("-f
 * 'kvm_exit\(HLT'" counts kvm_exit too). It may say yes for a name
 * without such a child: the snapshot shows a parent only when one of its
 * children actually matched.
 */
bool filter_may_keep_children(const struct field_filter *f, const char *name);
/* What f keeps, as a number that changes whenever the pattern does (0:
 * everything, as a NULL filter or one never set). */
uint64_t filter_serial(const struct field_filter *f);

#endif
