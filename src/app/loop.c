// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run, from the options to the end: open the front-ends the options
 * select and the providers they ask for, then one loop (sample, aggregate,
 * render a const snapshot to every open front-end, poll on a timer, the
 * signals and the monitor's input), then close it all quickly. Which
 * providers open and what each snapshot holds come from the provider
 * ops and the front-ends' views; this file names neither.
  */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "handoff.h"
#include "latency.h"
#include "loop.h"
#include "loop_int.h"
#include "mounts.h"
#include "options_parse.h"
#include "signals.h"
#include "util.h"
#include "vcpu_check.h"
#include "vm.h"
#include "vmscan.h"

void loop_say(struct loop *l, const char *msg)
{
	if (l->say)
		l->say(msg);
}

/* Says why the run cannot go on: rc, with the line in l->msg. */
int loop_fail(struct loop *l, int rc, bool usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_vset(&l->msg, rc, fmt, ap);
	va_end(ap);
	l->usage = usage;
	return rc;
}

/* The rows fe's view asks for: the whole selection, or everything, one
 * vCPU or per vCPU as the options say; child events where the view or
 * the monitor's 'x' wants them; guest names where VMs are shown. */
static void take_snapshot(struct loop *l, const struct frontend *fe,
			  const struct hist_set *hists, struct snapshot *snap)
{
	const struct options *o = l->opts;
	/* the providers may count child events for another front-end: this
	 * one shows what -f (and 'x') alone keep */
	struct snap_request req = {
		.filter = &l->run.filter,
		.children = fe->view->children || l->children,
		.vcpu = SAMPLE_ALL_VCPUS,
		.vms = l->want_vms || fe->view->vms ? &l->vms : NULL,
		.hists = hists,
	};

	if (!fe->view->whole && o->vcpu >= 0) {
		req.pid = l->run.pid;
		req.vcpu = o->vcpu;
	} else if (!fe->view->whole && o->per_vcpu) {
		req.pid = l->run.pid;
		req.per_vcpu = true;
	}
	snapshot_rebuild(&l->stats, &req, snap);
	for (size_t i = 0; i < l->nnotes; i++)
		l->snap_notes[i] = (struct snap_note){
			.source = l->notes[i].source,
			.failed = l->notes[i].failed,
			.text = l->notes[i].text.text,
		};
	snap->notes = l->snap_notes;
	snap->nnotes = l->nnotes;
	snap->notes_gen = l->notes_gen;
	snap->vms = &l->vms;
	snap->header = (struct snap_header){
		.pid = l->run.pid,
		.guest = l->run.guest,
		.filter = l->run.fields,
		.delay = l->run.delay,
		.children = l->children,
		.sources = l->providers,
		.replay = l->replay ? l->replay_at : NULL,
	};
}

/* The directory of VMs for this refresh's snapshots: names and vCPU
 * threads where a view shows VMs, the VM watched, and every running VM
 * while the monitor asks for one. */
void loop_scan_vms(struct loop *l)
{
	const struct options *o = l->opts;
	/* /proc alone, as the snapshots always read it: KVM's debugfs tree
	 * would be listed once per VM and refresh, O(VMs^2) on a host of
	 * unnamed vCPU threads (the providers fall back to it themselves) */
	struct vmscan_req r = {
		.proc_root = o->proc_root,
		.run_root = o->run_root,
		.stats = &l->stats,
		.watched = l->run.pid,
		.vms = l->want_vms,
		.all = l->list_vms,
	};

	/* a replay's directory is the recording's; the recorder looked
	 * this refresh's up already */
	if (l->replay || l->vms_scanned)
		return;
	for (size_t i = 0; i < l->nfes; i++)
		r.vms |= l->fe_open[i] && l->fes[i].view->vms;
	r.vcpus = r.vms && loop_want_vcpus(l);
	vmscan_update(&l->vms, &r);
}

/* Starts or stops exit latency (--latency, the monitor's 'l'); a
 * failure stays in l->lat_msg. */
int loop_latency(struct loop *l, bool on)
{
	const struct options *o = l->opts;
	struct latency_cfg cfg = { .tracefs_root = o->tracefs_root,
				   .proc_root = o->proc_root,
				   .debugfs_root = o->debugfs_root,
				   .pid = l->run.pid };
	struct errmsg did;
	int rc = 0;

	latency_close(l->lat);
	l->lat = NULL;
	errmsg_clear(&l->lat_msg);
	l->lat_on = on;
	if (on) {
		/* its tracepoints, where no source has mounted tracefs (-S) */
		if (!o->tracefs_root &&
		    mounts_ensure(MOUNTS_TRACEFS, &did, NULL) == 1)
			loop_note_from(l, "latency", NULL, false, false,
				       did.text);
		rc = latency_open(&l->lat, &cfg, &l->lat_msg);
	}
	if (l->brk_kinds) /* breakdowns timed, or no longer */
		loop_breakdown(l, l->brk_kinds);
	return rc;
}

/* Exit latency this render: its histograms into hs and its header facts
 * into info (and into the recording); NULL when off. */
static const struct snap_latency *
loop_lat_read(struct loop *l, struct hist_set *hs, struct snap_latency *info)
{
	const struct snap_latency *lat = NULL;

	/* a replay's is the one recorded, at the refresh it holds */
	if (l->replay)
		return replay_latency(l->replay, hs, info);
	if (l->lat) {
		latency_read(l->lat, &l->stats.fields, hs, info);
		lat = info;
	} else if (l->lat_on) {
		*info = (struct snap_latency){ .exit_field = -1,
					       .vmm_field = -1,
					       .error = l->lat_msg.text };
		lat = info;
	}
	loop_record_latency(l, hs, lat);
	return lat;
}

/* Renders from the last sample one front-end (only), or those of a
 * refresh (only NULL): an on_demand one is then told of the sample, not
 * rendered. */
static int loop_render_some(struct loop *l, bool at_once_only,
			    struct frontend *only)
{
	struct hist_set hs;
	struct snap_latency info;
	const struct snap_latency *lat;
	const struct snap_breakdown *brk;
	bool any = false;
	int first = 0;

	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];

		if (!l->fe_open[i] || (only && fe != only))
			continue;
		if (!only && fe->view->on_demand)
			fe->ops->sampled(fe);
		else
			any |= only || !at_once_only || fe->view->at_once;
	}
	/* no front-end renders: no scan, no latency read either */
	if (!any)
		return 0;
	loop_scan_vms(l);
	l->vms_scanned = false;
	hist_set_init(&hs);
	lat = loop_lat_read(l, &hs, &info);
	brk = loop_brk_read(l);
	loop_vcputime(l, &hs, lat);
	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];
		struct snapshot *snap = &l->fe_snap[i];
		int rc;

		if (!l->fe_open[i] || (only && fe != only) ||
		    (!only && fe->view->on_demand) ||
		    (!only && at_once_only && !fe->view->at_once))
			continue;
		take_snapshot(l, fe, &hs, snap);
		snap->latency = lat;
		snap->breakdown = brk;
		snap->vcputime = loop_vcputime_result(l);
		rc = fe->ops->render(fe, snap);
		if (rc && !first) {
			first = rc;
			loop_fail(l, rc, fe->usage, "%s", fe->msg.text);
		}
	}
	hist_set_free(&hs);
	return first;
}

int loop_render(struct loop *l, bool at_once_only)
{
	return loop_render_some(l, at_once_only, NULL);
}

/* SIGHUP: every open front-end reopens its output; a failure is said and
 * the old output kept. */
static void reopen_frontends(struct loop *l)
{
	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];

		if (l->fe_open[i] && fe->ops->reopen && fe->ops->reopen(fe) < 0)
			loop_say(l, fe->msg.text);
	}
}

int loop_wait(struct loop *l, uint64_t deadline, enum loop_wake *wake,
	      struct frontend **from)
{
	struct pollfd pfd[1 + LOOP_MAX_FRONTENDS + LOOP_MAX_PROVIDERS];
	struct frontend *in[LOOP_MAX_FRONTENDS];
	struct provider *woke[LOOP_MAX_PROVIDERS];
	sigset_t wait_mask;
	size_t nin = 0, nwake = 0;

	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];
		int fd;

		if (!l->fe_open[i] || !fe->ops->input_fd || !fe->ops->input)
			continue;
		fd = fe->ops->input_fd(fe);
		if (fd < 0)
			continue;
		in[nin] = fe;
		pfd[1 + nin].fd = fd;
		pfd[1 + nin].events = POLLIN;
		nin++;
	}
	/* providers that want to act between refreshes (a VM came or went) */
	for (size_t i = 0; i < l->nprovs; i++) {
		struct provider *p = &l->provs[i];
		int fd = p->ops->wake_fd ? p->ops->wake_fd(p) : -1;

		if (fd < 0 || !p->ops->wake)
			continue;
		woke[nwake] = p;
		pfd[1 + nin + nwake] = (struct pollfd){ fd, POLLIN, 0 };
		nwake++;
	}
	pfd[0].fd = l->sigfd;
	pfd[0].events = POLLIN;
	signals_wait_mask(&wait_mask);
	/* a replay without the monitor goes as fast as it is written, to
	 * the end of the recording or a stop signal */
	if (l->replay && l->need.pace != FRONTEND_INTERACTIVE) {
		*wake = loop_replay_more(l) ? LOOP_TIMEOUT : LOOP_STOP;
		if (poll(pfd, 1, 0) > 0 &&
		    signals_next(l->sigfd) != SIGNALS_NONE)
			*wake = LOOP_STOP;
		return 0;
	}
	for (;;) {
		uint64_t now = util_now_ns();
		enum signals_event ev;
		struct timespec ts;
		int n;

		if (now >= deadline) {
			*wake = LOOP_TIMEOUT;
			return 0;
		}
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ull);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ull);
		/* the signals a front-end handles itself (SIGWINCH) are
		 * blocked but here: one that came while sampling interrupts
		 * this wait at once, none is lost in between */
		n = ppoll(pfd, 1 + nin + nwake, &ts, &wait_mask);
		if (n < 0 && errno != EINTR)
			return loop_fail(l, -errno, false, "poll: %s",
					 strerror(errno));
		if (n < 0) {
			/* a signal a front-end handles itself (the
			 * monitor's SIGWINCH): its input says what it
			 * means now, not at the next refresh */
			for (size_t i = 0; i < nin; i++) {
				enum ui_action a = in[i]->ops->input(in[i]);
				int rc = a == UI_RENDER ?
						 loop_render_some(l, false,
								  in[i]) :
						 0;

				if (rc)
					return rc;
				if (a != UI_NONE && a != UI_RENDER) {
					*wake = LOOP_INPUT;
					*from = in[i];
					return 0;
				}
			}
			continue;
		}
		if (!n)
			continue;
		for (size_t i = 0; i < nwake; i++)
			if (pfd[1 + nin + i].revents)
				woke[i]->ops->wake(woke[i]);
		while ((ev = signals_next(l->sigfd)) != SIGNALS_NONE) {
			if (ev == SIGNALS_HUP) {
				reopen_frontends(l);
				continue;
			}
			*wake = LOOP_STOP;
			return 0;
		}
		for (size_t i = 0; i < nin; i++) {
			enum ui_action act;

			/* the terminal went away (its window closed): end,
			 * do not spin on a descriptor that is always ready */
			if (pfd[1 + i].revents &
			    (POLLHUP | POLLERR | POLLNVAL)) {
				*wake = LOOP_STOP;
				return 0;
			}
			if (!(pfd[1 + i].revents & POLLIN))
				continue;
			act = in[i]->ops->input(in[i]);
			/* an on_demand front-end asks for a render (a
			 * scrape): it gets one from the last sample, and
			 * the wait goes on to the same deadline */
			if (act == UI_RENDER) {
				int rc = loop_render_some(l, false, in[i]);

				if (rc)
					return rc;
				continue;
			}
			if (act != UI_NONE) {
				*wake = LOOP_INPUT;
				*from = in[i];
				return 0;
			}
		}
	}
}

uint64_t loop_delay_ns(const struct loop *l)
{
	return (uint64_t)(l->run.delay * 1e9 + 0.5);
}

/* -g that the providers matched themselves (resolve_vm() left -p 0):
 * the one VM the first sample found is the -p of --vcpu, --per-vcpu and
 * the snapshots. */
static void guest_pid(struct loop *l)
{
	pid_t pid = 0;

	if (!l->run.guest || l->run.pid)
		return;
	for (size_t i = 0; i < l->stats.nkeys; i++) {
		pid_t p = l->stats.keys[i].pid;

		if (!p || p == pid)
			continue;
		if (pid)
			return; /* more than one: leave the choice open */
		pid = p;
	}
	l->run.pid = pid;
}

/* The first sample, then --vcpu checked against what it found. */
int loop_first_sample(struct loop *l)
{
	int rc;

	loop_sample_all(l);
	guest_pid(l);
	if (l->vt) {
		/* where vCPU time goes: the start of the first interval */
		struct hist_set hs;
		struct snap_latency info;

		hist_set_init(&hs);
		loop_vcputime(l, &hs, loop_lat_read(l, &hs, &info));
		hist_set_free(&hs);
	}
	rc = vcpu_check(&l->stats, l->opts, l->run.pid, &l->msg);
	if (rc)
		l->usage = true;
	return rc;
}

/*
 * Batch and log modes with a -f that keeps no field: kvm_stat prints
 * nothing and ends with status 0; kvmstat also says why on stderr.
 */
static bool nothing_matches(struct loop *l)
{
	const struct options *o = l->opts;
	bool empty = true;

	if (!o->scripted || !l->run.fields)
		return false;
	for (size_t i = 0; empty && i < l->nfes; i++) {
		struct snapshot snap = { 0 };

		if (!l->fe_open[i])
			continue;
		take_snapshot(l, &l->fes[i], NULL, &snap);
		empty = !snap.nrows;
		snapshot_free(&snap);
	}
	if (empty) {
		char line[512];

		snprintf(line, sizeof(line),
			 "no field matches -f '%s': nothing to show (see -f help)",
			 l->run.fields);
		loop_say(l, line);
	}
	return empty;
}

/* The run came to its end: front-ends write what waited for it. */
static int loop_finish(struct loop *l)
{
	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];
		int rc;

		if (!l->fe_open[i] || !fe->ops->finish)
			continue;
		rc = fe->ops->finish(fe);
		if (rc)
			return loop_fail(l, rc, fe->usage, "%s", fe->msg.text);
	}
	return 0;
}

/* One interval, then one render; as -1 always did, a write that fails
 * ends the run quietly. */
static int run_once(struct loop *l)
{
	struct frontend *from;
	enum loop_wake wake;
	int rc;

	/* the VMs' memory maps (names of MMIO addresses) are asked by the
	 * sample the render reads, not by the first: the guest may place
	 * BARs in between (it boots), and a name the render misses is
	 * asked again by no later refresh */
	loop_brk_names_later(l);
	rc = loop_first_sample(l);
	if (!rc && nothing_matches(l))
		return 0;
	if (!rc)
		rc = loop_wait(l, util_now_ns() + loop_delay_ns(l), &wake,
			       &from);
	if (rc || wake == LOOP_STOP)
		return rc;
	loop_brk_providers(l);
	loop_sample_all(l);
	rc = loop_render(l, false);
	return rc == -EPIPE ? 0 : rc;
}

/* A render every interval until stopped; the reader going away is a
 * quiet end, another write failure the run's. */
static int run_every(struct loop *l)
{
	struct frontend *from;
	enum loop_wake wake;
	uint64_t deadline;
	bool more = true;
	int rc;

	rc = loop_first_sample(l);
	if (rc || nothing_matches(l))
		return rc;
	/* scrapes get the first sample at once, not after a delay */
	rc = loop_render(l, true);
	deadline = util_now_ns() + loop_delay_ns(l);
	while (!rc && more) {
		uint64_t now;

		rc = loop_wait(l, deadline, &wake, &from);
		if (rc)
			return rc;
		/* a stop request still renders the partial interval: no
		 * count is lost between the last line and the end (a
		 * replay's last refresh is rendered already) */
		more = wake != LOOP_STOP;
		if (!more && l->replay)
			break;
		loop_sample_all(l);
		rc = loop_render(l, false);
		now = util_now_ns();
		deadline += loop_delay_ns(l);
		if (deadline <= now)
			deadline = now + loop_delay_ns(l);
	}
	if (!rc)
		rc = loop_finish(l);
	return rc == -EPIPE ? 0 : rc;
}

int loop_run(struct loop *l)
{
	switch (l->need.pace) {
	case FRONTEND_ONCE:
		return run_once(l);
	case FRONTEND_INTERACTIVE:
		return loop_run_interactive(l);
	case FRONTEND_EVERY:
		break;
	}
	return run_every(l);
}

/* -p/-g against the running system: a usage error when they name no VM. */
static int resolve_vm(struct loop *l)
{
	const struct options *o = l->opts;
	struct errmsg err;
	pid_t pid;
	int rc;

	/* a provider that checks -p/-g itself needs no root (QMP matches
	 * sockets by their peer and asks the VMM its name), and /proc may
	 * show nothing: when only such providers are asked for, they judge */
	bool checked = false, others = false;

	/* a replay's VMs are the recording's */
	if (o->replay)
		return 0;
	for (size_t i = 0; provider_registry[i]; i++) {
		const struct provider_ops *ops = provider_registry[i];

		if (!provider_asked(ops, o))
			continue;
		checked |= ops->own_pid_check;
		others |= !ops->own_pid_check;
	}
	if (o->guest) {
		if (checked && !others)
			return 0;
		rc = vm_resolve_guest(o->proc_root, o->run_root, o->guest, &pid,
				      &err);
		if (rc)
			return loop_fail(l, rc, true, "%s", err.text);
		l->run.pid = pid;
	} else if (o->pid) {
		rc = vm_resolve_pid(o->proc_root, o->pid, &err);
		if (rc && (others || !checked))
			return loop_fail(l, rc, true, "%s", err.text);
	}
	return 0;
}

/* Opens the selected front-ends that own the terminal (late) or not. */
static int open_frontends(struct loop *l, bool late)
{
	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];
		int rc;

		if (fe->view->owns_terminal != late)
			continue;
		rc = fe->ops->open(fe, l->opts);
		if (rc)
			return loop_fail(l, rc, !fe->runtime, "%s",
					 fe->msg.text);
		l->fe_open[i] = true;
	}
	return 0;
}

/* The run's state as the options start it: the VM watched, the filter,
 * the delay (the monitor changes them, the options stay as parsed). */
static int loop_run_init(struct loop *l)
{
	const struct options *o = l->opts;
	struct errmsg err;

	l->run = (struct loop_run){
		.pid = o->pid,
		.guest = o->guest,
		.fields = o->fields,
		.children = o->children,
		.delay = o->delay,
		.include_past = o->include_past,
	};
	if (filter_set(&l->run.filter, options_fields_pattern(o), &err))
		return loop_fail(l, -EINVAL, true, "%s", err.text);
	return 0;
}

/* loop_open's steps; on a failure loop_open frees what only it made. */
static int loop_open_steps(struct loop *l, const struct options *opts,
			   void (*say)(const char *msg))
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->opts = opts;
	vmdir_init(&l->vms);
	rc = loop_run_init(l);
	if (rc)
		return rc;
	l->say = say;
	l->sigfd = -1;
	rc = resolve_vm(l);
	if (rc)
		return rc;
	rc = signals_open();
	if (rc < 0)
		return loop_fail(l, rc, false, "signalfd: %s", strerror(-rc));
	l->sigfd = rc;
	handoff_raise_nofile();
	l->nfes = frontend_select(opts, l->fes, LOOP_MAX_FRONTENDS);
	frontend_needs(l->fes, l->nfes, &l->need);
	/* what cannot open (the monitor without a terminal) fails before
	 * the providers take seconds to open and close */
	for (size_t i = 0; i < l->nfes && !opts->fields_help; i++) {
		struct frontend *fe = &l->fes[i];

		if (fe->ops->check && (rc = fe->ops->check(fe, opts)))
			return loop_fail(l, rc, true, "%s", fe->msg.text);
	}
	/* what the front-ends need the providers to count */
	/* the monitor starts with child events hidden, as kvm_stat's,
	 * until its 'x' */
	l->children = opts->children && !l->need.counts_all;
	if (l->need.past)
		l->run.include_past = true;
	if (l->need.children || l->need.counts_all)
		l->run.children = true;
	/* --vcpu-time: the halt statistics of each vCPU */
	l->want_vms = l->need.vms || opts->vcpu_time;
	stats_init(&l->stats, l->run.include_past);
	if (opts->fields_help)
		return 0;

	/* a bad -L file is a usage error before anything opens; the
	 * monitor takes the terminal only once the providers are up */
	rc = open_frontends(l, false);
	if (!rc)
		rc = loop_record_open(l);
	if (!rc)
		rc = opts->replay ? loop_replay_open(l) :
				    loop_open_providers(l, false);
	if (!rc && opts->latency) {
		rc = loop_latency(l, true);
		if (rc)
			loop_fail(l, rc, false, "%s", l->lat_msg.text);
	}
	if (!rc && opts->breakdown) {
		rc = loop_breakdown(l, opts->breakdown);
		if (rc)
			loop_fail(l, rc, false, "%s", l->brk_msg.text);
	}
	if (!rc && opts->vcpu_time && !opts->replay)
		rc = loop_vcputime_on(l, true);
	if (rc) {
		loop_say_notes(l, false); /* what was mounted on the way */
		return rc;
	}
	if (!l->need.owns_terminal)
		loop_say_notes(l, true); /* before any output */
	return open_frontends(l, true);
}

int loop_open(struct loop *l, const struct options *opts,
	      void (*say)(const char *msg))
{
	int rc = loop_open_steps(l, opts, say);

	/* after a failure the caller does not call loop_close: what the
	 * run allocated of its own is freed here */
	if (rc)
		filter_free(&l->run.filter);
	return rc;
}

int loop_list_fields(struct loop *l, struct snapshot *snap)
{
	int rc = loop_open_providers(l, true);

	loop_say_notes(l, !rc);
	if (rc)
		return rc;
	loop_sample_all(l);
	snapshot_build(&l->stats, NULL, snap);
	return 0;
}

void loop_close(struct loop *l)
{
	bool ran = false;

	for (size_t i = l->nfes; i-- > 0;) {
		if (!l->fe_open[i])
			continue;
		l->fes[i].ops->close(&l->fes[i]);
		l->fe_open[i] = false;
		ran = true;
	}
	if (ran) {
		/* what waited for the terminal */
		loop_report_notices(l);
		loop_say_notes(l, true);
	}
	for (size_t i = 0; i < LOOP_MAX_FRONTENDS; i++)
		snapshot_free(&l->fe_snap[i]);
	latency_close(l->lat);
	l->lat = NULL;
	loop_breakdown(l, 0);
	loop_vcputime_on(l, false);
	loop_close_providers_fast(l);
	vmdir_free(&l->vms);
	filter_free(&l->run.filter);
	free(l->fields);
	l->fields = NULL;
	stats_free(&l->stats);
	/* after the stats: its fields name the replay's strings */
	loop_record_close(l);
	if (l->sigfd >= 0)
		close(l->sigfd);
	l->sigfd = -1;
}
