/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The breakdowns of a snapshot (snapshot.breakdown) written out: tables
 * of perf kvm stat's columns plus percentiles (batch -1 after kvm_stat's
 * rows, the monitor's keyed view), JSON (a "breakdown" object per scope)
 * and OpenMetrics series (kvm_ioport_exits_total{port,direction} and
 * friends, and their latency histograms in seconds). Keys in hex, lower
 * case, with 0x.
 */
#ifndef KVMSTAT_BREAKDOWN_RENDER_H
#define KVMSTAT_BREAKDOWN_RENDER_H

#include <jansson.h>
#include <stdbool.h>

#include "snapshot.h"
#include "strbuf.h"

/* The table of kind ("ioport"...) in scope (pid, vcpu), or NULL. */
const struct snap_brk_table *breakdown_render_find(const struct snapshot *snap,
						   const char *kind, pid_t pid,
						   int vcpu);
/* Table t as text: a header, a row per key (count since the start,
 * share, rate over the last interval; with timed, the share of time,
 * min, avg, max, p50 and p99 of the time to re-entry, written with
 * units.h's flags: UNITS_ASCII for "us"). */
void breakdown_render_table(struct strbuf *b, const struct snap_brk_table *t,
			    bool timed, unsigned int units);
/* The whole selection's table of kind, or of every kind asked for (kind
 * NULL: -1), each under a title; or the reason breakdowns are off. */
void breakdown_render_text(struct strbuf *b, const struct snapshot *snap,
			   const char *kind, unsigned int units);
/* The bits of every kind (1 << kind; ioport, mmio, msr, hypercall). */
#define BREAKDOWN_RENDER_ALL_KINDS 0xfu

/* The kind ("ioport"...) whose exits event breaks down ("kvm_pio",
 * "kvm_exit(IO_INSTRUCTION)", "kvm_userspace_exit(MMIO)"), its bit
 * (1 << kind) in *bit; NULL when none. */
const char *breakdown_render_kind_of(const char *event, unsigned *bit);
/* The "breakdown" object of scope (pid, vcpu): {"ioport": [rows]...};
 * NULL when it has no table. */
json_t *breakdown_render_json(const struct snapshot *snap, pid_t pid, int vcpu);
/* The "breakdown" value of --json: the whole selection's tables by kind,
 * "vms" with each VM's and, in it, "vcpus" with each vCPU's; "timed",
 * "top", and "error" when off. */
json_t *breakdown_render_json_all(const struct snapshot *snap);
/* The breakdowns' metric families (vCPU series only where tables per
 * vCPU were made: --per-vcpu). */
void breakdown_render_metrics(struct strbuf *b, const struct snapshot *snap,
			      bool openmetrics);

#endif
