// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of json_text.h: any JSON document jansson reads
 * (strings with NUL bytes too) must come out of json_text_write exactly
 * as json_dumps() writes it, compact and indented.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size,
			       JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	if (!j)
		return 0;
	for (int pretty = 0; pretty < 2; pretty++) {
		char *want = json_dumps(j, JSON_ENCODE_ANY |
						   (pretty ? JSON_INDENT(2) :
							     JSON_COMPACT));
		struct strbuf b;

		strbuf_init(&b);
		json_text_write(&b, j, pretty, 0);
		if (!want || strcmp(b.s, want))
			abort();
		strbuf_free(&b);
		free(want);
	}
	json_decref(j);
	return 0;
}
