/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Values in their units: a raw reading of a field times base^exponent,
 * written as a person reads it (ns/µs/ms/s, B/KiB/MiB/GiB, yes/no, plain
 * counts), and a cumulative time counter as a share of wall time.
 *
 * Number format, everywhere: the largest unit in which the value is at
 * least 1 (times stay in s, bytes stop at PiB); a value that is a whole
 * number in that unit is written whole ("999 ns", "2 ms", "4 KiB"),
 * others with three significant digits ("1.50 µs", "12.3 ms", "123 ms").
 * Negative values (deltas of gauges) keep their sign. Microseconds are
 * "µs" where the user's locale is UTF-8 and "us" elsewhere (the POSIX
 * locale of cron jobs and bare ssh sessions, whose terminals cannot be
 * trusted with the µ): text front-ends ask units_locale_flags once.
 */
#ifndef KVMSTAT_UNITS_H
#define KVMSTAT_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

/* Room for any formatted value. */
#define UNITS_BUF 32

enum units_flags {
	UNITS_ASCII = 1u << 0, /* "us" rather than "µs" */
	UNITS_COUNT = 1u << 1, /* a sum of several values: booleans are
				 * written as the count of true ones */
};

/*
 * UNITS_ASCII unless the character set of the user's locale (LC_ALL,
 * LC_CTYPE, LANG, as setlocale(LC_CTYPE, "") reads them) is UTF-8; 0
 * then. Leaves the process's locale as it is.
 */
unsigned int units_locale_flags(void);

/* base^exponent of f: what one raw unit is worth in f's unit (1 for
 * plain counts). */
double units_scale(const struct field_info *f);

/*
 * Writes raw (in f's raw units; may be fractional, as a rate, or negative,
 * as a delta) into buf and returns buf. UNIT_BOOLEAN: 0 is "no", 1 "yes",
 * anything else (or with UNITS_COUNT) a count. "-" for NaN or infinity.
 */
const char *units_format(const struct field_info *f, double raw,
			 unsigned int flags, char *buf, size_t len);
/* The same for a value already in seconds, in bytes, or a plain count. */
const char *units_format_seconds(double secs, unsigned int flags, char *buf,
				 size_t len);
const char *units_format_bytes(double bytes, char *buf, size_t len);
const char *units_format_count(double n, char *buf, size_t len);

/* s right-aligned in width terminal columns, written into buf (a "µ"
 * takes two bytes and one column, which printf's widths do not know);
 * returns buf, or s itself when it is as wide already. */
const char *units_rjust(const char *s, int width, char *buf, size_t len);

/* Whether f is a cumulative time counter (a *_ns stat, not a histogram)
 * that units_share_pct applies to. */
bool units_has_share(const struct field_info *f);
/*
 * Time counted by f over an interval as a percentage of that interval of
 * wall time: delta in seconds / interval * 100 (halt_wait_ns of one vCPU:
 * how much of the time it waited halted). A sum over several vCPUs can
 * exceed 100. -1 when f is not a time counter or interval_ns is 0.
 */
double units_share_pct(const struct field_info *f, int64_t delta,
		       uint64_t interval_ns);

#endif
