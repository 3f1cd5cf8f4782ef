/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * JSON of a snapshot (--json), built with jansson: one object per sample,
 * written whole (-1, indented) or as one line (JSON Lines, -l/-L).
 *
 * {
 *   "timestamp": "2026-11-22T21:49:53.123Z",	UTC, of the sample
 *   "epoch": 1795384193.123,			the same, in seconds
 *   "interval": 1.0,				seconds since the last sample
 *						(0 for the first)
 *   "providers": ["tracepoint", "debugfs"],
 *   "fields": {					the snapshot's rows, by name
 *     "halt_wait_ns": {
 *       "type": "cumulative",			or "instant", "peak"
 *       "unit": "seconds",			"none", "bytes", "seconds",
 *						"cycles", "boolean"
 *       "exponent": -9, "base": 10,		raw x base^exponent is in unit
 *						(with unit or exponent only)
 *       "provider": "statsfd",
 *       "parent": "kvm_exit",			child events only
 *       "valid": true,				false: not read in the last
 *						refresh (delta and rate null)
 *       "total": 123, "delta": 4, "rate": 2.0,	raw units; rate per second
 *       "histogram": "log2",			histogram parents: "log2" or
 *       "buckets": [				"linear", and the buckets
 *         {"lo": 0, "hi": 1, "total": 5, "delta": 1}, ...	raw [lo, hi),
 *         {"lo": 1024, "hi": null, ...}	hi null: open last bucket
 *       ],
 *       "vms": [				per VM, where known, by pid,
 *						where not 0
 *         {"pid": 4242, "guest": "web1",	guest: null when unknown
 *          "valid": true, "total": 100, "delta": 4, "rate": 2.0,
 *          "buckets": [...],			histograms
 *          "vcpus": [				with per_vcpu: per vCPU,
 *						by index
 *            {"vcpu": 0, "tid": 4250, "valid": true, "total": 60,
 *             "delta": 2, "rate": 1.0, "buckets": [...]}]}]
 *     }
 *   }
 * }
 *
 * Bucket children of a histogram (halt_wait_hist(3)) are only in their
 * parent's "buckets", whatever the field filter says about their names.
 * Only VMs and vCPUs read in the last refresh are listed. Levels of
 * detail (levels.h): a VM is listed in a field only where its value there
 * is not 0 (total 0, a histogram without samples: absent means 0); its
 * value is its own, or its vCPUs' summed where its source gave only
 * theirs. vCPUs only with per_vcpu.
 */
#ifndef KVMSTAT_JSON_OUT_H
#define KVMSTAT_JSON_OUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"
#include "strbuf.h"

/* The object of snap (the view's fields, breakdowns from its VM scopes,
 * and with per_vcpu its vCPU scopes); providers is "tracepoint debugfs"
 * or NULL. A new reference the caller json_decref()s. */
json_t *json_out_snapshot(const struct snapshot *snap, const char *providers,
			  bool per_vcpu);

/* Appends the object as text and a newline (written straight into b):
 * indented with pretty, else on one line. */
void json_out_render(struct strbuf *b, const struct snapshot *snap,
		     const char *providers, bool pretty, bool per_vcpu);

#endif
