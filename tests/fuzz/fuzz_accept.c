// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the exporter's HTTP Accept negotiation: any header
 * value (NUL-terminated, as libmicrohttpd hands it over) gives one of the
 * two formats, and the answer does not depend on bytes after a NUL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "openmetrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	enum openmetrics_format f, g;

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	f = openmetrics_negotiate(s);
	if (f != OPENMETRICS_PROMETHEUS && f != OPENMETRICS_OPENMETRICS)
		abort();
	/* what follows the string's end never counts */
	s = realloc(s, size + 9);
	if (!s)
		abort();
	memcpy(s + strlen(s) + 1, "q=1;,*/*", 8);
	g = openmetrics_negotiate(s);
	if (f != g)
		abort();
	free(s);
	return 0;
}
