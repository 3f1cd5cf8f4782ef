/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exit latency written out from a snapshot: its histograms are the
 * scopes' (the keyed children of snap_latency's two fields), its header
 * facts snapshot.latency. A table of perf kvm stat's columns plus
 * percentiles (batch --latency, the monitor's view) and a JSON value; the
 * exposition is openmetrics.c's, as for every histogram. Percentiles are
 * the upper bound of the log2 bucket that holds them ("< 65.5 µs"), as
 * the binary stats' histograms are written (hist.h).
 */
#ifndef KVMSTAT_LAT_RENDER_H
#define KVMSTAT_LAT_RENDER_H

#include <jansson.h>

#include "snapshot.h"
#include "strbuf.h"

/* Both kinds' tables for the whole selection, each under a title line
 * (exit latency only where it is timed), times written with units.h's
 * flags (UNITS_ASCII: "us"). snap->latency must be set. */
void lat_render_text(struct strbuf *b, const struct snapshot *snap,
		     unsigned int units);
/* {"reentry", "exits_timed", "histograms": [{kind, reason, pid, tid,
 * vcpu, count, total_ns, min_ns, max_ns, p50_ns, ..., buckets: [{lo_ns,
 * hi_ns, count}]}]}: every scope, the whole selection's with pid 0.
 * snap->latency must be set. */
json_t *lat_render_json(const struct snapshot *snap);

#endif
