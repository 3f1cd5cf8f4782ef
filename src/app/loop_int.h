/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the loop's files share: loop.c (the run: open, the paces, render,
 * wait, close), loop_notes.c (the lines about the sources), loop_sources.c
 * (opening, reading and closing the providers) and loop_monitor.c (the
 * monitor's requests and its loop).
 */
#ifndef KVMSTAT_LOOP_INT_H
#define KVMSTAT_LOOP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"
#include "replay.h"

/* The monitor's next screen after a key changed something. */
#define LOOP_SOON_NS 250000000ull
/* How often the monitor tries again the sources that could not start. */
#define LOOP_RETRY_NS 5000000000ull

/* loop.c */
/* Says why the run cannot go on: rc, with the line in l->msg. */
int loop_fail(struct loop *l, int rc, bool usage, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A line for the user, when the run has someone to say it to. */
void loop_say(struct loop *l, const char *msg);
/* Starts or stops exit latency; a failure stays in l->lat_msg. */
int loop_latency(struct loop *l, bool on);
/* loop_breakdown.c: starts (kinds) or stops (0) the breakdowns, timed
 * when latency is on; a failure stays in l->brk_msg. */
int loop_breakdown(struct loop *l, unsigned kinds);
/* The breakdowns this render, or NULL when off. */
const struct snap_breakdown *loop_brk_read(struct loop *l);
/* Tells the open providers whether to learn the names of guest physical
 * addresses (mmio broken down). */
void loop_brk_providers(struct loop *l);
/* Tells them not to, until loop_brk_providers says again: -1's first
 * sample, whose maps would be an interval old at its one render. */
void loop_brk_names_later(struct loop *l);
/* The delay between refreshes, in ns. */
uint64_t loop_delay_ns(const struct loop *l);
/* The first sample, then --vcpu checked against what it found. */
int loop_first_sample(struct loop *l);

/* The directory of VMs for this refresh (names where asked for). */
void loop_scan_vms(struct loop *l);

/* loop_record.c: the flight recorder and the replay */
/* Opens --record's file (a usage error when refused). */
int loop_record_open(struct loop *l);
/* Records the refresh just sampled; a failure stops the recording with
 * one line, the run goes on. */
void loop_record(struct loop *l);
/* Records the breakdowns a render read (NULL: off) with that refresh. */
void loop_record_breakdown(struct loop *l, const struct snap_breakdown *brk);
/* Records exit latency a render read (lat NULL: off) with that refresh. */
void loop_record_latency(struct loop *l, const struct hist_set *hs,
			 const struct snap_latency *lat);
/* Records where vCPU time went, as a render showed it (NULL: off). */
void loop_record_vcputime(struct loop *l, const struct vcputime *vt);
/* Opens --replay's file in place of the providers. */
int loop_replay_open(struct loop *l);
/* Makes the stats hold refresh i of the replay (clamped to the window),
 * reached as how says (replay.h). */
int loop_replay_to(struct loop *l, long i, enum replay_how how);
/* The next refresh the pace asks for: the following one, or with -1 the
 * last of the window. */
void loop_replay_sample(struct loop *l);
/* Whether refreshes are left after the one the stats hold. */
bool loop_replay_more(const struct loop *l);
/* A request of the monitor's time keys; true when it was one. */
bool loop_replay_request(struct loop *l, const struct ui_request *req);
/* Closes the recorder and the replay. */
void loop_record_close(struct loop *l);

/* loop_notes.c: lines about the sources */
/* Says the notes not said yet (with failures, or only the others). */
void loop_say_notes(struct loop *l, bool failures);
/* Keeps a line about a source (see loop_notes.c). */
struct loop_note *loop_note_from(struct loop *l, const char *source,
				 const struct provider_ops *ops, bool failed,
				 bool quiet, const char *text);
/* The same about provider ops. */
struct loop_note *loop_note(struct loop *l, const struct provider_ops *ops,
			    bool failed, bool quiet, const char *text);
/* Before the providers open again: failures kept only if they fail again. */
void loop_mark_failures(struct loop *l);
/* Drops the failures of sources that opened now. */
void loop_forget_stale(struct loop *l);
/* Whether a source could not start. */
bool loop_has_failures(const struct loop *l);
/* An open provider read well again: its reading failures are over. */
void loop_read_well(struct loop *l, const struct provider_ops *ops);
/* The providers' notices, into notes. */
void loop_report_notices(struct loop *l);
/* What a provider's open did on the host (it mounted tracefs), a note. */
void loop_report_did(struct loop *l, struct provider *p);

/* loop_sources.c: the providers of the run */
/*
 * Whether the providers break their readings down by vCPU too when they
 * break them down by VM (and the snapshots get the vCPU threads): when
 * -p/-g or --per-vcpu ask, or when the monitor runs (its per-guest view
 * shows a VM's vCPUs): no other front-end shows vCPUs unasked (the
 * exporter and JSON are per VM by default). Else a refresh neither reads
 * nor keeps a series per vCPU.
 */
bool loop_want_vcpus(const struct loop *l);
/* When every open provider reads its breakdown wish live (vms_live): sets
 * it on each as the run wants now and returns true; else false (they must
 * open again). */
bool loop_set_vms_live(struct loop *l);
/* Whether ops opens alone, for every field (what it did is noted). */
bool loop_opens_alone(struct loop *l, const struct provider_ops *ops);
/* Opens the providers asked for, or every one the host supports. */
int loop_open_providers(struct loop *l, bool all_fields);
/* Closes the providers at once (their last fds to a detached process). */
void loop_close_providers_fast(struct loop *l);
/* One refresh: every provider reads, then the stats fold it in. */
void loop_sample_all(struct loop *l);

/* loop_vcputime.c: where each vCPU's time goes */
/* Starts (or stops) the collector: 0, or a failure in l->msg. */
int loop_vcputime_on(struct loop *l, bool on);
/* Reads it for this render (hs and lat: exit latency, or NULL). */
void loop_vcputime(struct loop *l, const struct hist_set *hs,
		   const struct snap_latency *lat);
/* Its last result, or NULL when off. */
const struct vcputime *loop_vcputime_result(const struct loop *l);

/* loop_monitor.c: the monitor's requests */
/* The monitor's loop until q, a stop signal or a failure. */
int loop_run_interactive(struct loop *l);

#endif
