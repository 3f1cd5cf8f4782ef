/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exit latency written out (include/latency.h has the rows): a table of
 * perf kvm stat's columns plus percentiles (batch --latency, the
 * monitor's view), a JSON value, and Prometheus histograms in seconds.
 * Percentiles are the upper bound of the log2 bucket that holds them
 * ("< 65.5 µs"), as the binary stats' histograms are written.
 */
#ifndef KVMSTAT_LAT_RENDER_H
#define KVMSTAT_LAT_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "latency.h"
#include "strbuf.h"

/* Both kinds' tables for the rows of scope pid (0: the whole selection),
 * each under a title line (exit latency only where it is timed). */
void lat_render_text(struct strbuf *b, const struct lat_snap *s, pid_t pid);
/* {"mark": ..., "histograms": [{kind, reason, pid, tid, vcpu, count,
 * total_ns, min_ns, max_ns, p50_ns, ..., buckets: [{lo_ns, hi_ns,
 * count}]}]}: every scope, the whole selection's rows with pid 0. */
json_t *lat_render_json(const struct lat_snap *s);
/* kvm_exit_latency_seconds and kvm_vmm_time_seconds histogram families,
 * by reason; per VM with pid, per vCPU with vcpu too. */
void lat_render_prom(struct strbuf *b, const struct lat_snap *s, bool om);

#endif
