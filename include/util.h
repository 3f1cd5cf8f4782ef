/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small helpers shared by every module: checked allocation, monotonic and
 * wall clocks and strict number parsing (files are read through fs.h).
 *
 * The allocation policy: allocation never fails. Every allocation goes
 * through xmalloc and its kin (jansson's too: main sets them with
 * json_set_alloc_funcs), and a library that can only say "out of memory"
 * (libmicrohttpd, regcomp) is treated the same way: the program ends with
 * util_die, which restores the terminal first. So no code carries an
 * -ENOMEM path, and NULL from an x* function never needs a check.
 *
 * Dying on a thread other than the main one (the exporter's HTTP thread)
 * skips the fatal hook: the hook may touch curses, which belongs to the
 * main thread, and exit() would run exit handlers and flush stdio under
 * the main thread's feet. That thread writes its line with one write(2)
 * and ends the process with _exit(1). No terminal is left to restore:
 * the options never run the monitor and the exporter together.
 *
 * Failures a user can fix are not this file's: they come back as -errno
 * with a line in a struct errmsg (errmsg.h).
 */
#ifndef KVMSTAT_UTIL_H
#define KVMSTAT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Called before a fatal exit on the main thread, so a front-end can
 * restore the terminal. */
void util_set_fatal_hook(void (*hook)(void));
void util_run_fatal_hook(void);
/* "kvmstat: MESSAGE" on stderr, then exit status 1 (see above). */
void util_die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
/* Grows the array p of *n elements of size bytes, when index i is beyond
 * it, to i + 64 elements, each new one's bytes set to fill; returns p. */
void *xgrow_index(void *p, size_t *n, size_t i, size_t size, int fill);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

uint64_t util_now_ns(void);
/* A number no earlier call returned (never 0), from any thread: what a
 * generation counter takes when what it counts changes, so that two
 * states of two objects never share one. */
uint64_t util_serial(void);

/* Strict decimal u64: optional surrounding blanks, nothing else. */
int util_parse_u64(const char *s, uint64_t *out);
/* Strict decimal int in [min, max]. */
int util_parse_int(const char *s, long min, long max, long *out);
/* Orders field names as strcmp does, but for a number in parentheses (a
 * histogram bucket "hist(10)"), which goes by its value: "(2)" < "(10)". */
int util_name_cmp(const char *a, const char *b);
/* The next word of the space-separated list *s (NULL: none), its length in
 * *n; *s moves past it. NULL after the last. */
const char *util_next_word(const char **s, size_t *n);

#endif
