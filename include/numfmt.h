/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Numbers into text for the writers that print thousands of them per
 * refresh (the exporter's scrape, JSON): integers without printf, and a
 * double in OpenMetrics' canonical form with one printf instead of one
 * per candidate precision. Every function writes a NUL-terminated string
 * into buf and returns its length.
 */
#ifndef KVMSTAT_NUMFMT_H
#define KVMSTAT_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* Room for any integer: "-9223372036854775808" and its NUL. */
#define NUMFMT_INT_SIZE 24
/* Room for any double numfmt_canonical writes. */
#define NUMFMT_DOUBLE_SIZE 32

/* v in decimal, as "%" PRIu64 and "%" PRId64 write it. */
size_t numfmt_u64(char *buf, uint64_t v);
size_t numfmt_i64(char *buf, int64_t v);

/*
 * v in OpenMetrics' canonical number form: the fewest significant digits
 * that strtod() reads back as v exactly (the digits "%.*e" gives at that
 * precision), exponent form "d.ddde-05" below 1e-4 and from 1e6, ".0"
 * after whole numbers, "NaN", "+Inf", "-Inf", "0.0" for either zero.
 */
size_t numfmt_canonical(char *buf, double v);

#endif
