// SPDX-License-Identifier: GPL-2.0-only
/*
 * A jansson tree as JSON text, byte for byte what json_dumps() writes
 * (JSON_COMPACT, or JSON_INDENT(2)), straight into a strbuf and with
 * numfmt for the integers: at hundreds of VMs the --json documents hold
 * tens of thousands of numbers, and jansson's dump formats each with
 * printf through a callback.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_text.h"
#include "numfmt.h"

/* Appends a newline and depth levels of indent (pretty), else nothing. */
static void json_text_indent(struct strbuf *b, bool pretty, int depth)
{
	static const char spaces[] = "                                ";

	if (!pretty)
		return;
	strbuf_addn(b, "\n", 1);
	for (int n = 2 * depth; n > 0; n -= (int)sizeof(spaces) - 1)
		strbuf_addn(b, spaces,
			    n < (int)sizeof(spaces) - 1 ? (size_t)n :
							  sizeof(spaces) - 1);
}

/* Appends s (n bytes of UTF-8) quoted: '"', '\\' and control characters
 * escaped, the rest as it is. */
static void json_text_quote(struct strbuf *b, const char *s, size_t n)
{
	size_t run = 0;

	strbuf_addn(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		strbuf_addn(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':
		case '\\':
			esc[0] = '\\';
			esc[1] = (char)c;
			strbuf_addn(b, esc, 2);
			break;
		case '\b':
			strbuf_addn(b, "\\b", 2);
			break;
		case '\f':
			strbuf_addn(b, "\\f", 2);
			break;
		case '\n':
			strbuf_addn(b, "\\n", 2);
			break;
		case '\r':
			strbuf_addn(b, "\\r", 2);
			break;
		case '\t':
			strbuf_addn(b, "\\t", 2);
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", c);
			strbuf_addn(b, esc, 6);
		}
	}
	strbuf_addn(b, s + run, n - run);
	strbuf_addn(b, "\"", 1);
}

/*
 * Appends real v: "%.17g" with ".0" where it has neither '.' nor 'e' (a
 * reader would take it for an integer) and the exponent's '+' and
 * leading zeros dropped ("1e20", "1e-7"). Whole numbers below 2^53 (0.0
 * among them, as most rates are) without printf.
 */
static void json_text_real(struct strbuf *b, double v)
{
	char buf[48];
	size_t n;
	char *e;

	if (v > -9007199254740992.0 && v < 9007199254740992.0 &&
	    v == (double)(int64_t)v) {
		n = signbit(v) && v == 0 ? (memcpy(buf, "-0", 3), 2) :
					   numfmt_i64(buf, (int64_t)v);
		memcpy(buf + n, ".0", 2);
		strbuf_addn(b, buf, n + 2);
		return;
	}
	n = (size_t)snprintf(buf, sizeof(buf) - 2, "%.17g", v);
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	e = strchr(buf, 'e');
	if (e) {
		char *from = e + 1, *to = e + 1;

		if (*from == '-')
			from = ++to;
		else if (*from == '+')
			from++;
		while (*from == '0' && from[1])
			from++;
		memmove(to, from, (size_t)(buf + n - from) + 1);
		n -= (size_t)(from - to);
	}
	strbuf_addn(b, buf, n);
}

/*
 * Appends j as text, as json_dumps() writes it with JSON_COMPACT or
 * JSON_INDENT(2) (pretty): object keys in the order they were set; no
 * printf per integer.
 */
void json_text_write(struct strbuf *b, const json_t *j, bool pretty, int depth)
{
	char num[NUMFMT_INT_SIZE];
	size_t n, i = 0;

	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *sep = pretty ? ": " : ":";
		void *it = json_object_iter((json_t *)j);

		if (!it) {
			strbuf_addn(b, "{}", 2);
			return;
		}
		strbuf_addn(b, "{", 1);
		json_text_indent(b, pretty, depth + 1);
		while (it) {
			void *next = json_object_iter_next((json_t *)j, it);

			json_text_quote(b, json_object_iter_key(it),
					json_object_iter_key_len(it));
			strbuf_add(b, sep);
			json_text_write(b, json_object_iter_value(it), pretty,
					depth + 1);
			if (next)
				strbuf_addn(b, ",", 1);
			json_text_indent(b, pretty, next ? depth + 1 : depth);
			it = next;
		}
		strbuf_addn(b, "}", 1);
		return;
	}
	case JSON_ARRAY:
		n = json_array_size(j);
		if (!n) {
			strbuf_addn(b, "[]", 2);
			return;
		}
		strbuf_addn(b, "[", 1);
		json_text_indent(b, pretty, depth + 1);
		for (i = 0; i < n; i++) {
			json_text_write(b, json_array_get(j, i), pretty,
					depth + 1);
			if (i + 1 < n)
				strbuf_addn(b, ",", 1);
			json_text_indent(b, pretty,
					 i + 1 < n ? depth + 1 : depth);
		}
		strbuf_addn(b, "]", 1);
		return;
	case JSON_STRING:
		json_text_quote(b, json_string_value(j), json_string_length(j));
		return;
	case JSON_INTEGER:
		strbuf_addn(b, num, numfmt_i64(num, json_integer_value(j)));
		return;
	case JSON_REAL:
		json_text_real(b, json_real_value(j));
		return;
	case JSON_TRUE:
		strbuf_addn(b, "true", 4);
		return;
	case JSON_FALSE:
		strbuf_addn(b, "false", 5);
		return;
	case JSON_NULL:
		strbuf_addn(b, "null", 4);
		return;
	}
}
