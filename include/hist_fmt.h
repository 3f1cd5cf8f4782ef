/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Histograms written out in their field's unit: a bucket's range, the
 * bound a percentile is written as, and p50/p90/p99 (hist.h has the
 * buckets and the percentile convention).
 */
#ifndef KVMSTAT_HIST_FMT_H
#define KVMSTAT_HIST_FMT_H

#include <stddef.h>

#include "hist.h"
#include "sample.h"

/* "[1.02 µs, 2.05 µs)", "[2.15 s, inf)", "[0 ns, 1 ns)", in the unit of
 * the histogram's field f (a parent or a bucket). flags: units_flags. */
const char *hist_format_range(const struct field_info *f,
			      const struct hist_bucket *b, unsigned int flags,
			      char *buf, size_t len);
/* The bound a percentile is written as: "< 2.05 µs", or ">= 2.15 s" for
 * the open bucket. */
const char *hist_format_bound(const struct field_info *f,
			      const struct hist_bucket *b, unsigned int flags,
			      char *buf, size_t len);
/* "p50 < 2.05 µs, p90 < 16.4 µs, p99 < 1.05 ms", or "no samples". */
const char *hist_format_percentiles(const struct field_info *f,
				    const struct hist_bucket *b, size_t n,
				    unsigned int flags, char *buf, size_t len);

#endif
