/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A growable string that output formatters write into, so that every
 * format can be tested byte for byte without a terminal or a file.
 */
#ifndef KVMSTAT_STRBUF_H
#define KVMSTAT_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *s; /* NUL-terminated, owned */
	size_t len, cap;
};

void strbuf_init(struct strbuf *b);
void strbuf_free(struct strbuf *b);
void strbuf_reset(struct strbuf *b);
void strbuf_add(struct strbuf *b, const char *s);
/* Appends the n bytes at s (no NUL among them). */
void strbuf_addn(struct strbuf *b, const char *s, size_t n);
/* Appends sep (unless 0), then v right-aligned in width characters:
 * what " %9lld" gives, without the cost of a printf per number. */
void strbuf_add_int(struct strbuf *b, char sep, int width, long long v);
void strbuf_addf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
