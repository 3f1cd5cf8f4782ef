/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The replay (--replay FILE): a recording (recorder.h) fed back into the
 * run's stats and directory of VMs, refresh by refresh, in place of the
 * providers. The stats are given each recorded cell's total as a reading
 * at the refresh's recorded monotonic time, so they fold the same totals,
 * deltas and interval as the live run did, and every front-end renders
 * the snapshots built from them as it rendered the live ones.
 */
#ifndef KVMSTAT_REPLAY_H
#define KVMSTAT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"
#include "hist.h"
#include "snapshot.h"
#include "stats.h"
#include "vcputime.h"
#include "vmdir.h"

struct replay;

/* Opens path, a recording; from and to (or NULL) bound the refreshes
 * replayed (see replay_parse_time). 0, or -errno with a line. */
int replay_open(struct replay **out, const char *path, const char *from,
		const char *to, struct errmsg *msg);
void replay_close(struct replay *r);

/* Wall-clock time of text in ns since the epoch: "YYYY-MM-DD HH:MM[:SS]"
 * (or with a T), "HH:MM[:SS]" on the day of the recording's first refresh
 * (local time), or "@SECONDS[.FRACTION]" since the epoch, read exactly, so
 * that a refresh's own time is that refresh's (its digits past the
 * nanosecond round up with up, else down). -EINVAL when it is none of
 * them, -ERANGE when it is past 2262. */
int replay_parse_time(const struct replay *r, const char *text, bool up,
		      int64_t *ns);

/* Refreshes in the window, and the index of the one the stats hold
 * (SIZE_MAX before the first feed). */
size_t replay_count(const struct replay *r);
size_t replay_pos(const struct replay *r);
/* Wall clock of refresh i of the window. */
struct timespec replay_wall(const struct replay *r, size_t i);
/* The index of the last refresh at or before wall-clock ns since the
 * epoch (0 when none is). */
size_t replay_find(const struct replay *r, int64_t ns);
/* The sources of the session of refresh i, its delay (-s) in seconds. */
const char *replay_sources(const struct replay *r, size_t i);
double replay_delay(const struct replay *r, size_t i);

/* How replay_feed reaches a refresh. */
enum replay_how {
	/* as the live run held it right after sampling it: the next
	 * refresh is one fold of its rows; any other is reached by starting
	 * the stats afresh (their fields interned again, in the same order)
	 * and folding the refresh before, then it */
	REPLAY_AS_LIVE,
	/* as a run's first sample: the stats afresh, no interval, no delta */
	REPLAY_START,
	/* a later refresh of the session folded on top of the one the stats
	 * hold: its deltas are those between the two (-1 over a window) */
	REPLAY_OVER,
};

/* Makes s and d hold refresh i of the window, reached as how says. 0, or
 * -errno with a line. */
int replay_feed(struct replay *r, size_t i, enum replay_how how,
		struct stats *s, struct vmdir *d, struct errmsg *msg);
/* The breakdowns' tables of the refresh the stats hold (as the live
 * run's renders read them), or NULL when they were off; the replay's,
 * valid until the next feed. */
const struct snap_breakdown *replay_breakdown(const struct replay *r);
/* Exit latency's histograms of the refresh the stats hold into hs and
 * its header facts into info: info, or NULL when it was off. */
const struct snap_latency *replay_latency(const struct replay *r,
					  struct hist_set *hs,
					  struct snap_latency *info);
/* Where vCPU time went at the refresh the stats hold (over a window, the
 * intervals from its first refresh summed), or NULL when it was not
 * recorded there; the replay's, valid until the next feed. per_vcpu: the
 * outputs' series per vCPU (--per-vcpu). */
const struct vcputime *replay_vcputime(const struct replay *r, bool per_vcpu);
/* Whether a refresh of the window holds vCPU time (--vcpu-time). */
bool replay_has_vcputime(const struct replay *r);
/* The recording's fields into t (a fresh table), in their ids' order. */
void replay_fields(const struct replay *r, struct field_table *t);

#endif
