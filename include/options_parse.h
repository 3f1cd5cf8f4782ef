/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command line parsed into struct options (options.h), with
 * getopt_long. Parsing checks syntax and ranges only; whether a pid is a
 * VM or a guest name exists is checked by the loop (loop_open) against
 * the running system.
 */
#ifndef KVMSTAT_OPTIONS_PARSE_H
#define KVMSTAT_OPTIONS_PARSE_H

#include <stdio.h>

#include "options.h"

struct errmsg;

/* 0, or -EINVAL with one line (no newline) in msg; options_free() in
 * either case. */
int options_parse(int argc, char **argv, struct options *o, struct errmsg *msg);
void options_free(struct options *o);
/* The -f pattern in force: -f, else every field (-1/-l/-L, -f help) or
 * the default (no child events). */
const char *options_fields_pattern(const struct options *o);
/* The --help text. */
void options_usage(FILE *out);

#endif
