// SPDX-License-Identifier: GPL-2.0-only
/* A growable NUL-terminated string for the output formatters. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util.h"

void strbuf_init(struct strbuf *b)
{
	b->cap = 256;
	b->len = 0;
	b->s = xmalloc(b->cap);
	b->s[0] = '\0';
}

void strbuf_free(struct strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

void strbuf_reset(struct strbuf *b)
{
	b->len = 0;
	b->s[0] = '\0';
}

static void strbuf_grow(struct strbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	while (b->len + more + 1 > b->cap)
		b->cap *= 2;
	b->s = xrealloc(b->s, b->cap);
}

void strbuf_add(struct strbuf *b, const char *s)
{
	size_t n = strlen(s);

	strbuf_grow(b, n);
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void strbuf_addn(struct strbuf *b, const char *s, size_t n)
{
	strbuf_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void strbuf_add_int(struct strbuf *b, char sep, int width, long long v)
{
	char d[24], *p = d + sizeof(d);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v :
				       (unsigned long long)v;
	size_t n, pad;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	n = (size_t)(d + sizeof(d) - p);
	pad = width > 0 && (size_t)width > n ? (size_t)width - n : 0;
	strbuf_grow(b, n + pad + 1);
	if (sep)
		b->s[b->len++] = sep;
	memset(b->s + b->len, ' ', pad);
	b->len += pad;
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		strbuf_grow(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}
