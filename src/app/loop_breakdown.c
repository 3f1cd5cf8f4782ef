// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop's side of the breakdowns (--breakdown, the monitor's 'k'):
 * opening the collector for the kinds asked (timed when latency is on,
 * for the pid watched), reading it once per render for every front-end
 * (and into the recording: what a replay shows), and what a snapshot says
 * when it could not start.
 */
#include "breakdown.h"
#include "loop.h"
#include "loop_int.h"
#include "mounts.h"
#include "replay.h"

int loop_breakdown(struct loop *l, unsigned kinds)
{
	const struct options *o = l->opts;
	struct breakdown_cfg cfg = { .tracefs_root = o->tracefs_root,
				     .proc_root = o->proc_root,
				     .debugfs_root = o->debugfs_root,
				     .pid = l->run.pid,
				     .kinds = kinds,
				     .timed = l->lat_on,
				     .per_vcpu = o->per_vcpu };
	struct errmsg did;

	breakdown_close(l->brk);
	l->brk = NULL;
	errmsg_clear(&l->brk_msg);
	l->brk_kinds = kinds;
	if (!kinds)
		return 0;
	if (!o->tracefs_root && mounts_ensure(MOUNTS_TRACEFS, &did, NULL) == 1)
		loop_note_from(l, "breakdown", NULL, false, false, did.text);
	return breakdown_open(&l->brk, &cfg, &l->brk_msg);
}

const struct snap_breakdown *loop_brk_read(struct loop *l)
{
	const struct snap_breakdown *brk = NULL;

	/* a replay's are the ones recorded, at the refresh it holds */
	if (l->replay)
		return replay_breakdown(l->replay);
	if (l->brk) {
		brk = breakdown_read(l->brk);
	} else if (l->brk_kinds) {
		l->brk_off = (struct snap_breakdown){ .kinds = l->brk_kinds,
						      .error = l->brk_msg.text };
		brk = &l->brk_off;
	}
	loop_record_breakdown(l, brk);
	return brk;
}
