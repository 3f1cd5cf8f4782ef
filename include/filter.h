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
	 * claimed are not its to count (one source per field name). */
	const struct field_table *claimed;
	const char *owner;
};

/* 0, or -EINVAL with a readable reason in err. */
int filter_set(struct field_filter *f, const char *pattern, char *err,
	       size_t errlen);
void filter_free(struct field_filter *f);
/* True when name matches; a filter never set matches everything. */
bool filter_match(const struct field_filter *f, const char *name);

#endif
