/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The field filter: a POSIX extended regex matched at the start of a field
 * name, as kvm_stat's -f does (Python's re.match). The default hides child
 * events such as kvm_exit(HLT). A filter holds a compiled regex: share it
 * by pointer, never copy it by value.
 */
#ifndef KVMSTAT_FILTER_H
#define KVMSTAT_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

struct errmsg;

#define FILTER_DEFAULT "^[^(]*$"

struct field_filter {
	char *pattern; /* as given, owned; NULL: never set */
	regex_t re;    /* pattern compiled, while pattern is set */
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

#endif
