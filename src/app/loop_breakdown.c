// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop's side of the breakdowns (--breakdown, the monitor's 'k'):
 * opening the collector for the kinds asked (timed when latency is on,
 * for the pid watched), reading it once per render for every front-end
 * (and into the recording: what a replay shows), what a snapshot says
 * when it could not start, and the names of MMIO addresses, which the
 * providers that reach a VM's monitor give (QMP: its memory map), asked
 * only while mmio is broken down.
 */
#include "breakdown.h"
#include "brk_shared.h"
#include "loop.h"
#include "loop_int.h"
#include "mounts.h"
#include "provider.h"
#include "replay.h"

/* Whether the providers are to learn the names of guest addresses. */
static bool loop_brk_gpa(const struct loop *l)
{
	return l->brk_kinds & 1u << BRK_MMIO;
}

void loop_brk_providers(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++)
		l->provs[i].want_gpa_names = loop_brk_gpa(l);
}

void loop_brk_names_later(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++)
		l->provs[i].want_gpa_names = false;
}

/* The breakdown's cfg.gpa_name: the first provider's name for it. */
static const char *loop_gpa_name(void *ctx, pid_t pid, uint64_t gpa)
{
	struct loop *l = ctx;

	for (size_t i = 0; i < l->nprovs; i++) {
		struct provider *p = &l->provs[i];
		const char *name;

		if (!p->ops->gpa_name || !p->want_gpa_names)
			continue;
		name = p->ops->gpa_name(p, pid, gpa);
		if (name)
			return name;
	}
	return NULL;
}

int loop_breakdown(struct loop *l, unsigned kinds)
{
	const struct options *o = l->opts;
	struct breakdown_cfg cfg = { .tracefs_root = o->tracefs_root,
				     .proc_root = o->proc_root,
				     .debugfs_root = o->debugfs_root,
				     .pid = l->run.pid,
				     .kinds = kinds,
				     .timed = l->lat_on,
				     .lat = l->lat,
				     .per_vcpu = o->per_vcpu,
				     .gpa_name = loop_gpa_name,
				     .gpa_ctx = l };
	struct errmsg did;

	breakdown_close(l->brk);
	l->brk = NULL;
	errmsg_clear(&l->brk_msg);
	l->brk_kinds = kinds;
	loop_brk_providers(l);
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
