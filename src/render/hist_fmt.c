// SPDX-License-Identifier: GPL-2.0-only
/*
 * Histograms written out (hist_fmt.h): bucket ranges and percentile bounds
 * in the histogram's unit, with units.c. The buckets and percentiles are
 * core/hist.c's.
 */
#include <stdio.h>
#include <string.h>

#include "hist_fmt.h"
#include "units.h"

const char *hist_format_range(const struct field_info *f,
			      const struct hist_bucket *b, unsigned int flags,
			      char *buf, size_t len)
{
	char lo[UNITS_BUF], hi[UNITS_BUF];

	units_format(f, (double)b->lo, flags & ~UNITS_COUNT, lo, sizeof(lo));
	if (b->hi == UINT64_MAX) {
		snprintf(buf, len, "[%s, inf)", lo);
		return buf;
	}
	units_format(f, (double)b->hi, flags & ~UNITS_COUNT, hi, sizeof(hi));
	snprintf(buf, len, "[%s, %s)", lo, hi);
	return buf;
}

const char *hist_format_bound(const struct field_info *f,
			      const struct hist_bucket *b, unsigned int flags,
			      char *buf, size_t len)
{
	char v[UNITS_BUF];

	if (b->hi == UINT64_MAX) {
		units_format(f, (double)b->lo, flags, v, sizeof(v));
		snprintf(buf, len, ">= %s", v);
	} else {
		units_format(f, (double)b->hi, flags, v, sizeof(v));
		snprintf(buf, len, "< %s", v);
	}
	return buf;
}

const char *hist_format_percentiles(const struct field_info *f,
				    const struct hist_bucket *b, size_t n,
				    unsigned int flags, char *buf, size_t len)
{
	static const unsigned int pm[] = { HIST_P50, HIST_P90, HIST_P99 };
	static const char *const names[] = { "p50", "p90", "p99" };
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (hist_quantile(b, n, HIST_P50) < 0) {
		snprintf(buf, len, "no samples");
		return buf;
	}
	for (size_t i = 0; i < 3 && pos < len; i++) {
		long k = hist_quantile(b, n, pm[i]);
		char bound[UNITS_BUF + 4];
		int w;

		hist_format_bound(f, &b[k], flags, bound, sizeof(bound));
		w = snprintf(buf + pos, len - pos, "%s%s %s", i ? ", " : "",
			     names[i], bound);
		if (w < 0)
			break;
		pos += (size_t)w;
	}
	return buf;
}
