/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The field filter: a POSIX extended regex matched at the start of a field
 * name, as kvm_stat's -f does (Python's re.match). The default hides child
 * events such as kvm_exit(HLT).
 */
#ifndef KVMSTAT_FILTER_H
#define KVMSTAT_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "sample.h"

#define FILTER_DEFAULT "^[^(]*$"

struct field_filter {
	char *pattern;		/* as given, owned */
	regex_t re;
	bool compiled;
	bool children;		/* also keep NAME(...) when NAME matches */
	/* A provider's view: names another provider already declared in
	 * claimed are not its to count for the host; it may serve them for
	 * VMs their owner cannot see (one owner per field name). */
	const struct field_table *claimed;
	const char *owner;
};

/* 0, or -EINVAL with a readable reason in err when the pattern is bad (f
 * is left as it was), or -ENOMEM (f is left unset). */
int filter_set(struct field_filter *f, const char *pattern, char *err,
	       size_t errlen);
void filter_free(struct field_filter *f);
/* True when name matches and no other provider claimed it; a filter never
 * set matches everything. */
bool filter_match(const struct field_filter *f, const char *name);
/* The regex alone (and 'x'), whoever claimed the name. */
bool filter_match_any(const struct field_filter *f, const char *name);
/* True when another provider declared name first: this provider may only
 * fill in the VMs that one does not see (see stats_update()). */
bool filter_claimed(const struct field_filter *f, const char *name);

#endif
