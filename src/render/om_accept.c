// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exporter's HTTP content negotiation: which exposition format an
 * Accept header asks for (openmetrics.h). Apart from the renderer, so that
 * the fuzzer of outside input links this alone.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "openmetrics.h"

/* Skips blanks. */
static const char *openmetrics_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Whether [s, end) (trimmed) equals word, ignoring case. */
static bool openmetrics_is(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);

	s = openmetrics_blank(s, end);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return (size_t)(end - s) == n && !strncasecmp(s, word, n);
}

enum openmetrics_format openmetrics_negotiate(const char *accept)
{
	double best_om = -1, best_text = -1;
	const char *p = accept;

	if (!accept)
		return OPENMETRICS_PROMETHEUS;
	while (*p) {
		const char *end = strchr(p, ','), *semi, *type_end;
		bool om, text, version_ok = true;
		double q = 1;

		if (!end)
			end = p + strlen(p);
		semi = memchr(p, ';', (size_t)(end - p));
		type_end = semi ? semi : end;
		om = openmetrics_is(p, type_end,
				    "application/openmetrics-text") ||
		     openmetrics_is(p, type_end, "application/*");
		text = openmetrics_is(p, type_end, "text/plain") ||
		       openmetrics_is(p, type_end, "text/*") ||
		       openmetrics_is(p, type_end, "*/*");
		/* parameters: q and, for OpenMetrics, version */
		while (semi && semi < end) {
			const char *next = memchr(semi + 1, ';',
						  (size_t)(end - semi - 1));
			const char *pend = next ? next : end;
			const char *eq = memchr(semi + 1, '=',
						(size_t)(pend - semi - 1));

			if (eq && openmetrics_is(semi + 1, eq, "q"))
				q = strtod(openmetrics_blank(eq + 1, pend),
					   NULL);
			else if (eq && openmetrics_is(semi + 1, eq, "version"))
				version_ok = openmetrics_is(eq + 1, pend,
							    "1.0.0");
			semi = next;
		}
		if (om && version_ok && q > best_om)
			best_om = q;
		if (text && q > best_text)
			best_text = q;
		p = *end ? end + 1 : end;
	}
	return best_om > 0 && best_om >= best_text ? OPENMETRICS_OPENMETRICS :
						     OPENMETRICS_PROMETHEUS;
}
