/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The metrics exposition: a snapshot written as the Prometheus text format
 * (0.0.4) or as OpenMetrics 1.0.0 text, a pure function into a strbuf so
 * the exporter can render in the main loop and tests can compare bytes.
 *
 * What is written, per field the snapshot's rows keep:
 *  - names: "kvm_" then the field name (unless it starts with "kvm_"),
 *    every character outside [a-zA-Z0-9_:] replaced by '_'; seconds and
 *    bytes fields are converted to those base units (raw x base^exponent)
 *    and named so: a "_ns"/"_us"/"_ms" ending is dropped and "_seconds"
 *    appended (halt_wait_ns -> kvm_halt_wait_seconds), "_bytes" appended;
 *    the units are the ones the providers declared (debugfs gives its
 *    *_ns files seconds x 10^-9), never guessed here from a name; a word
 *    left that Prometheus reads as an abbreviated time unit is spelled
 *    out: "ns" -> "nsec", "us" -> "usec", "ms" -> "msec" (the tracepoint
 *    kvm_halt_poll_ns counts events: kvm_halt_poll_nsec_total);
 *  - cumulative fields are counters (NAME_total), instant and peak ones
 *    gauges; the value is the field's total (kvmstat's total: since the
 *    VM started with -i, else since kvmstat started);
 *  - a child event NAME(REASON) is the series {reason="REASON"} of NAME's
 *    family; where a scope has reason series, the parent's own series is
 *    left out of that scope (it is their sum), so sum() adds up;
 *  - a histogram parent (halt_wait_hist) is a histogram: one _bucket per
 *    KVM bucket, le = the largest raw value the bucket holds (KVM buckets
 *    are [lo, hi) over integers, so le = hi - 1, scaled) in OpenMetrics'
 *    canonical number form, "+Inf" for the open last bucket; _count is the
 *    number of samples; _sum is an ESTIMATE: every sample counted at the
 *    middle of its bucket's integer range ((lo + hi - 1) / 2), at its
 *    lower bound in the open last bucket;
 *  - a histogram read whole by its source (exit latency's
 *    kvm_exit_latency(REASON)) is written the same way, as the series
 *    {reason="REASON"} of its parent's family, whatever -f keeps
 *    (FIELD_OWN_SWITCH); its _sum is the one its source measured; a
 *    field's help sentence, where its source gives one, is its # HELP;
 *  - the whole selection has no pid label; each VM's series carry pid and
 *    (when known) guest, each vCPU's series also vcpu. Only series read in
 *    the last refresh are written (a VM that went away drops out), and
 *    the histograms read whole;
 *  - levels of detail (levels.h): the whole selection and each VM, and
 *    with per_vcpu each vCPU too. A VM's value of a field its source gave
 *    only per vCPU is their sum (a histogram bucket-wise). The whole
 *    selection has every field; in a VM or vCPU, a counter or histogram
 *    that is still 0 is left out until it counts, and from then on
 *    written for as long as the VM lives (the writer remembers it). A
 *    VM's or vCPU's histogram writes the buckets that have counted in the
 *    whole selection (from then on: the same le set for every VM, so that
 *    sum by (le) adds up), and +Inf.
 * Families are sorted by metric name; when two fields would produce the
 * same metric or sample name, the first in that order is kept.
 */
#ifndef KVMSTAT_OPENMETRICS_H
#define KVMSTAT_OPENMETRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"
#include "strbuf.h"

enum openmetrics_format {
	OPENMETRICS_PROMETHEUS,	 /* Prometheus text format 0.0.4 */
	OPENMETRICS_OPENMETRICS, /* OpenMetrics text 1.0.0 (# EOF) */
};

#define OPENMETRICS_TYPE_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define OPENMETRICS_TYPE_OPENMETRICS \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"

/* What the exporter keeps between renders: its level of detail, the
 * per-VM series written so far, and its working memory, reused. */
struct openmetrics_writer;

/* A writer of the whole selection and each VM, and with per_vcpu each
 * vCPU too; openmetrics_writer_free frees it (NULL is fine). */
struct openmetrics_writer *openmetrics_writer_new(bool per_vcpu);
void openmetrics_writer_free(struct openmetrics_writer *w);

/*
 * Appends the exposition of snap to b. snap's view is the whole selection:
 * its rows say which fields are exported; the per-VM and per-vCPU series
 * come from the snapshot's VM and vCPU scopes, labelled with their guest
 * names. Renders of one sample in both formats write the same series.
 */
void openmetrics_write(struct openmetrics_writer *w, struct strbuf *b,
		       const struct snapshot *snap,
		       enum openmetrics_format fmt);

/* One render by a writer of its own (nothing written before). */
void openmetrics_render(struct strbuf *b, const struct snapshot *snap,
			enum openmetrics_format fmt, bool per_vcpu);

/* The format an HTTP Accept header value asks for: OpenMetrics 1.0.0
 * when application/openmetrics-text (without a version, or 1.0.0) has a
 * q-value above 0 and at least text/plain's; else the Prometheus format
 * (also for NULL). */
enum openmetrics_format openmetrics_negotiate(const char *accept);

/* Appends s escaped for a label value (quote) or # HELP text: backslash,
 * newline (and double quote) escaped, bytes that are not UTF-8 U+FFFD. */
void openmetrics_escape(struct strbuf *b, const char *s, bool quote);

/* The family name of a field (see above); caller frees. */
char *openmetrics_name(const struct field_info *f);

/* v in OpenMetrics' canonical number form (the shortest round-trip
 * digits, exponent form below 1e-4 and from 1e6, ".0" for whole numbers,
 * "+Inf"), as "le" label values need. len >= 32. */
void openmetrics_canonical(double v, char *buf, size_t len);

#endif
