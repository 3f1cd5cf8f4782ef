// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one error-line type (errmsg.h): set, append, clear. A line cut to
 * the buffer ends in "..." so a reader sees that something is missing.
 */
#include <stdio.h>
#include <string.h>

#include "errmsg.h"

/* Formats at offset pos of m's line, marking a cut with "...". */
static void errmsg_vformat(struct errmsg *m, size_t pos, const char *fmt,
			   va_list ap)
{
	size_t room = sizeof(m->text) - pos;
	int n = vsnprintf(m->text + pos, room, fmt, ap);

	if (n < 0) {
		m->text[pos] = '\0';
		return;
	}
	if ((size_t)n >= room)
		memcpy(m->text + sizeof(m->text) - 4, "...", 4);
}

int errmsg_vset(struct errmsg *m, int err, const char *fmt, va_list ap)
{
	if (m)
		errmsg_vformat(m, 0, fmt, ap);
	return err;
}

int errmsg_set(struct errmsg *m, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_vset(m, err, fmt, ap);
	va_end(ap);
	return err;
}

void errmsg_vadd(struct errmsg *m, const char *fmt, va_list ap)
{
	size_t len;

	if (!m)
		return;
	len = strlen(m->text);
	if (len + 1 >= sizeof(m->text))
		return; /* already full (and marked) */
	errmsg_vformat(m, len, fmt, ap);
}

void errmsg_add(struct errmsg *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_vadd(m, fmt, ap);
	va_end(ap);
}

void errmsg_clear(struct errmsg *m)
{
	if (m)
		m->text[0] = '\0';
}

bool errmsg_isset(const struct errmsg *m)
{
	return m && m->text[0];
}
