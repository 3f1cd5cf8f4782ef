// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's side of the loop: the requests its keys make (filter, pid,
 * delay, child events, latency...), following a guest chosen by name,
 * trying again the sources that could not start, and its loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown.h"
#include "errmsg.h"
#include "latency.h"
#include "loop.h"
#include "loop_int.h"
#include "recorder.h"
#include "replay.h"
#include "util.h"
#include "vm.h"

/* Providers again after the monitor changed what they must count; the
 * counts restart from zero, as in kvm_stat. */
static int reopen_providers(struct loop *l)
{
	int rc;

	/* a replay starts the stats afresh at the refresh shown */
	if (l->replay)
		return loop_replay_to(l, (long)replay_pos(l->replay),
				      REPLAY_AS_LIVE);
	loop_close_providers_fast(l);
	stats_free(&l->stats);
	stats_init(&l->stats, l->run.include_past);
	recorder_restart(l->rec);
	l->rec_keys = 0;
	l->reopening = true;
	rc = loop_open_providers(l, false);
	l->reopening = false;
	if (rc)
		return rc;
	loop_sample_all(l);
	return 0;
}

/* Latency and breakdowns again, for the pid now watched. */
static void loop_restart_timers(struct loop *l)
{
	if (l->lat_on)
		loop_latency(l, true); /* breakdowns too */
	else if (l->brk_kinds)
		loop_breakdown(l, l->brk_kinds);
}

/* Carries out what a key asked for; *quit when it asks for the end. */
static int handle_request(struct loop *l, const struct ui_request *req,
			  bool *quit)
{
	struct loop_run *run = &l->run;
	bool pid_changed = false;
	struct errmsg err;

	*quit = false;
	if (l->replay && loop_replay_request(l, req))
		return 0;
	/* every running VM is listed while a prompt asks for one */
	l->list_vms = req->action == UI_LIST_VMS;
	switch (req->action) {
	case UI_QUIT:
		*quit = true;
		break;
	case UI_RESET:
		stats_reset(&l->stats);
		if (l->lat)
			latency_reset(l->lat);
		if (l->brk)
			breakdown_reset(l->brk);
		break;
	case UI_SET_LATENCY:
		if (!l->replay) /* a replay shows what was recorded */
			loop_latency(l, req->on);
		break;
	case UI_SET_BREAKDOWN:
		if (req->kinds != l->brk_kinds && !l->replay)
			loop_breakdown(l, req->kinds);
		break;
	case UI_SET_VCPUTIME:
		if (l->replay)
			break;
		loop_vcputime_on(l, req->on || l->opts->vcpu_time);
		/* the halt statistics of each vCPU, from now on */
		if (!req->on || l->want_vms)
			break;
		l->want_vms = true;
		if (loop_set_vms_live(l))
			break;
		return reopen_providers(l);
	case UI_SET_DELAY:
		run->delay = req->delay;
		break;
	case UI_CLEAR:
		pid_changed = run->pid != 0;
		run->pid = 0;
		run->guest = NULL;
		loop_restart_timers(l);
		/* fall through */
	case UI_SET_FILTER:
		free(l->fields);
		l->fields = req->action == UI_SET_FILTER && req->filter[0] ?
				    xstrdup(req->filter) :
				    NULL;
		run->fields = l->fields;
		if (filter_set(&run->filter,
			       run->fields ? run->fields : FILTER_DEFAULT, &err))
			break;
		/* every field is counted already: only the view changes */
		if (l->need.counts_all && !pid_changed)
			break;
		return reopen_providers(l);
	case UI_SET_PID:
		run->pid = req->pid;
		snprintf(l->guest, sizeof(l->guest), "%s", req->guest);
		run->guest = l->guest[0] ? l->guest : NULL;
		loop_restart_timers(l);
		return reopen_providers(l);
	case UI_SET_CHILDREN:
		l->children = req->on;
		/* counted from the start: only the snapshots change */
		if (l->need.counts_all)
			break;
		run->children = req->on || l->need.children;
		return reopen_providers(l);
	case UI_SET_VMS:
		l->want_vms = req->on || l->need.vms;
		/* the guests view at once, its counts going on, where every
		 * provider can say per VM without opening again */
		if (loop_set_vms_live(l))
			break;
		return reopen_providers(l);
	case UI_LIST_VMS:
	case UI_RENDER:
	case UI_REPLAY_PAUSE:
	case UI_REPLAY_STEP:
	case UI_REPLAY_JUMP:
	case UI_REFRESH:
	case UI_NONE:
		break;
	}
	return 0;
}

/*
 * The monitor's -g NAME (or g NAME): when the VM watched is gone and one VM
 * of that name runs again (restarted), it is watched instead. True when
 * the pid changed.
 */
static bool follow_guest(struct loop *l)
{
	struct loop_run *run = &l->run;
	pid_t *pids = NULL;
	bool moved = false;
	int n;

	if (l->replay || !run->pid || !run->guest ||
	    vm_pid_is_vm(l->opts->proc_root, run->pid))
		return false;
	n = vm_find_by_name(l->opts->proc_root, l->opts->run_root, run->guest,
			    &pids);
	if (n == 1 && pids[0] != run->pid) {
		run->pid = pids[0];
		moved = true;
	}
	free(pids);
	return moved;
}

/* A setting the monitor asked for could not be applied (a VM that left
 * between the key and now): the monitor stays, its header says why. */
static void monitor_failed(struct loop *l)
{
	/* cut to the header's room */
	snprintf(l->providers, sizeof(l->providers), "no source: %.100s",
		 l->msg.text);
	errmsg_clear(&l->msg);
}

/*
 * The monitor, every LOOP_RETRY_NS while a source could not start: when
 * one would open now (tracefs mounted by hand, the kvm module loaded), the
 * providers open again with it (the counts restart, as after 'p' or 'f').
 */
static void retry_failed(struct loop *l)
{
	uint64_t now = util_now_ns();
	bool again = false;

	if (!loop_has_failures(l) || now < l->retry_ns)
		return;
	l->retry_ns = now + LOOP_RETRY_NS;
	for (size_t i = 0; i < l->nnotes && !again; i++) {
		const struct provider_ops *ops = l->notes[i].ops;

		if (ops && l->notes[i].failed && !l->notes[i].reading &&
		    (!ops->probe || ops->probe(&l->pcfg)))
			again = loop_opens_alone(l, ops);
	}
	if (again && reopen_providers(l))
		monitor_failed(l);
}

/* The monitor: the first screen at once, the next after 0.25 s, then
 * every delay; keys may ask for a refresh, a reset, other settings or the
 * end. */
int loop_run_interactive(struct loop *l)
{
	uint64_t deadline;
	int rc;

	rc = loop_first_sample(l);
	if (rc)
		return rc;
	loop_render(l, true);
	deadline = util_now_ns() + LOOP_SOON_NS;
	l->retry_ns = util_now_ns() + LOOP_RETRY_NS;
	for (;;) {
		struct frontend *from;
		enum loop_wake wake;
		enum ui_action act;
		bool quit;

		rc = loop_wait(l, deadline, &wake, &from);
		if (rc || wake == LOOP_STOP)
			return rc;
		if (wake == LOOP_INPUT) {
			act = from->req.action;
			rc = handle_request(l, &from->req, &quit);
			if (quit)
				return rc;
			if (rc)
				monitor_failed(l);
			if (act != UI_REFRESH && act != UI_RESET) {
				loop_render(l, false);
				if (act != UI_SET_DELAY)
					deadline = util_now_ns() + LOOP_SOON_NS;
				else
					deadline = util_now_ns() +
						   loop_delay_ns(l);
				continue;
			}
			if (act == UI_RESET) {
				loop_render(l, false);
				continue;
			}
		}
		if (follow_guest(l) && reopen_providers(l))
			monitor_failed(l);
		retry_failed(l);
		loop_sample_all(l);
		loop_render(l, false);
		deadline = util_now_ns() + loop_delay_ns(l);
	}
}
