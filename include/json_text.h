/* SPDX-License-Identifier: GPL-2.0-only */
/* A jansson tree as the text json_dumps() writes, into a strbuf. */
#ifndef KVMSTAT_JSON_TEXT_H
#define KVMSTAT_JSON_TEXT_H

#include <jansson.h>
#include <stdbool.h>

#include "strbuf.h"

/* Appends j as json_dumps() writes it with JSON_COMPACT or (pretty)
 * JSON_INDENT(2), at indent depth (0 for a whole document). */
void json_text_write(struct strbuf *b, const json_t *j, bool pretty, int depth);

#endif
