/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small helpers shared by every module: checked allocation that restores the
 * terminal before dying, monotonic and wall clocks and strict number
 * parsing (files are read through fs.h).
 */
#ifndef KVMSTAT_UTIL_H
#define KVMSTAT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Called before a fatal exit so a front-end can restore the terminal. */
void util_set_fatal_hook(void (*hook)(void));
void util_run_fatal_hook(void);
void util_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t util_now_ns(void);

/* Strict decimal u64: optional surrounding blanks, nothing else. */
int util_parse_u64(const char *s, uint64_t *out);
/* Strict decimal int in [min, max]. */
int util_parse_int(const char *s, long min, long max, long *out);
/* Orders field names as strcmp does, but for a number in parentheses (a
 * histogram bucket "hist(10)"), which goes by its value: "(2)" < "(10)". */
int util_name_cmp(const char *a, const char *b);

#endif
