/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The text formats of batch, log and CSV output, kept byte compatible with
 * kvm_stat so existing scripts keep working. Pure functions over a
 * snapshot, tested byte for byte.
 */
#ifndef KVMSTAT_UI_TEXT_H
#define KVMSTAT_UI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "snapshot.h"
#include "strbuf.h"

/*
 * Appends name to b with every byte that would break a line-, blank- or
 * comma-separated format escaped as \xHH (lower-case hex): control
 * characters, DEL, blanks, commas and the backslash itself. Other bytes
 * (UTF-8 included) are kept, so a kernel or VMM name that needs no escape
 * is written as it is. Shared by batch, log and CSV output.
 */
void ui_text_escape_name(struct strbuf *b, const char *name);

/*
 * kvm_stat's "%-42s%10llu%10lld\n" per row, rows as sorted in the
 * snapshot, names escaped (ui_text_escape_name); rows that could not be read
 * are left out. With units (--units), those rows are shown with "-" and
 * the lines of fields with a unit, a histogram or a yes/no value go on
 * with them after the columns, written with flags (units.h's
 * UNITS_ASCII: "us" for "µs").
 */
void ui_text_batch(struct strbuf *b, const struct snapshot *snap, bool units,
		   unsigned int flags);
/*
 * The log's and CSV's columns are fixed when the run starts (the log
 * front-end keeps them): these take the names, or one interval's deltas,
 * in column order.
 */
/* Field names, each escaped and followed by a space, then a newline. */
void ui_text_log_header(struct strbuf *b, char *const *names, size_t n);
/* "YYYY-MM-DD HH:MM:SS" then " %9lld" per column. */
void ui_text_log_line(struct strbuf *b, const struct timespec *wall,
		      const int64_t *deltas, size_t n);
/* "timestamp,NAME,NAME...\n", names escaped */
void ui_text_csv_header(struct strbuf *b, char *const *names, size_t n);
/* "YYYY-MM-DD HH:MM:SS,DELTA,...\n" */
void ui_text_csv_line(struct strbuf *b, const struct timespec *wall,
		      const int64_t *deltas, size_t n);
/* True when every delta in the snapshot is zero (or unknown): -z skips it. */
bool ui_text_all_zero(const struct snapshot *snap);
/* Local time as "YYYY-MM-DD HH:MM:SS" into buf (at least 20 bytes). */
void ui_text_timestamp(char *buf, size_t len, const struct timespec *wall);

/* A number in at most width characters: scaled by k, M, G... when it does
 * not fit, never cut (the monitor's columns). */
void ui_text_scaled(char *buf, size_t len, double v, int width);

#endif
