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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "handoff.h"
#include "latency.h"
#include "loop.h"
#include "mounts.h"
#include "signals.h"
#include "util.h"
#include "vcpu_check.h"
#include "vm.h"

/* The monitor's next screen after a key changed something. */
#define LOOP_SOON_NS 250000000ull
/* How often the monitor tries again the sources that could not start. */
#define LOOP_RETRY_NS 5000000000ull

static void loop_say(struct loop *l, const char *msg)
{
	if (l->say)
		l->say(msg);
}

/* Says why the run cannot go on: rc, with the line in l->msg. */
__attribute__((format(printf, 4, 5))) static int
loop_fail(struct loop *l, int rc, bool usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_vset(&l->msg, rc, fmt, ap);
	va_end(ap);
	l->usage = usage;
	return rc;
}

/* Says a note on stderr, once: a failure as "NAME provider left out:
 * why", anything else as it is. */
static void loop_say_note(struct loop *l, struct loop_note *n)
{
	char line[ERRMSG_MAX + 64];

	if (n->said || n->quiet)
		return;
	if (n->failed && !n->reading)
		snprintf(line, sizeof(line), "%s provider left out: %s",
			 n->source, n->text.text);
	else
		snprintf(line, sizeof(line), "%s", n->text.text);
	loop_say(l, line);
	n->said = true;
}

/* Says the notes not said yet (with failures, or only the others). */
static void loop_say_notes(struct loop *l, bool failures)
{
	for (size_t i = 0; i < l->nnotes; i++)
		if (failures || !l->notes[i].failed)
			loop_say_note(l, &l->notes[i]);
}

/*
 * Keeps a line about a source; the same line again is no news. Where no
 * front-end owns the terminal it is said before the next output, else
 * the monitor shows it and it is said when the monitor ends. When the
 * notes are full, the oldest one that is no failure makes room.
 */
static struct loop_note *loop_note_from(struct loop *l, const char *source,
					const struct provider_ops *ops,
					bool failed, bool quiet,
					const char *text)
{
	struct loop_note *n;

	for (size_t i = 0; i < l->nnotes; i++) {
		n = &l->notes[i];
		if (n->source == source && n->failed == failed &&
		    !strcmp(n->text.text, text)) {
			n->stale = false;
			return n;
		}
	}
	if (l->nnotes == LOOP_MAX_NOTES) {
		size_t k = 0;

		while (k < l->nnotes && l->notes[k].failed)
			k++;
		if (k == l->nnotes)
			return NULL;
		memmove(&l->notes[k], &l->notes[k + 1],
			(l->nnotes - k - 1) * sizeof(*l->notes));
		l->nnotes--;
	}
	n = &l->notes[l->nnotes++];
	*n = (struct loop_note){
		.source = source,
		.ops = ops,
		.failed = failed,
		.quiet = quiet,
	};
	errmsg_set(&n->text, 0, "%s", text);
	l->notes_gen++;
	return n;
}

/* A note about provider ops (loop_note_from). */
static struct loop_note *loop_note(struct loop *l,
				   const struct provider_ops *ops, bool failed,
				   bool quiet, const char *text)
{
	return loop_note_from(l, ops->name, ops, failed, quiet, text);
}

/* Before the providers open again: their failures are kept only if
 * they fail again (loop_forget_stale). */
static void loop_mark_failures(struct loop *l)
{
	for (size_t i = 0; i < l->nnotes; i++)
		l->notes[i].stale = l->notes[i].failed;
}

/* Drops the failures of sources that opened now. No news: the notes
 * generation stays. */
static void loop_forget_stale(struct loop *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->nnotes; i++)
		if (!l->notes[i].stale)
			l->notes[k++] = l->notes[i];
	l->nnotes = k;
}

/* Whether a source could not start. */
static bool loop_has_failures(const struct loop *l)
{
	for (size_t i = 0; i < l->nnotes; i++)
		if (l->notes[i].failed && !l->notes[i].reading)
			return true;
	return false;
}

/* An open provider read well again: its reading failures are over. */
static void loop_read_well(struct loop *l, const struct provider_ops *ops)
{
	size_t k = 0;

	for (size_t i = 0; i < l->nnotes; i++)
		if (!(l->notes[i].reading && l->notes[i].ops == ops))
			l->notes[k++] = l->notes[i];
	l->nnotes = k;
}

/* A provider's notices: said (once) when the user asked for it (-t, -d,
 * -S, --qmp, or the tracepoints -1/-l/-L use without one), shown by the
 * monitor in any case. */
static void report_notices(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++) {
		struct provider *p = &l->provs[i];

		if (p->notice && errmsg_isset(&p->msg))
			loop_note(l, p->ops, false,
				  !provider_asked(p->ops, l->opts),
				  p->msg.text);
		p->notice = false;
		errmsg_clear(&p->msg);
	}
}

/* What a provider's open did on the host (it mounted tracefs): a note. */
static void report_did(struct loop *l, struct provider *p)
{
	if (errmsg_isset(&p->did))
		loop_note(l, p->ops, false, false, p->did.text);
	errmsg_clear(&p->did);
}

/* Whether ops opens alone, for every field, in a field table of its
 * own (what it did on the host on the way is noted). */
static bool opens_alone(struct loop *l, const struct provider_ops *ops)
{
	struct field_table fields;
	struct provider p = {
		.ops = ops,
		.fields = &fields,
		.want_vms = l->opts->pid != 0,
	};
	bool ok;

	field_table_init(&fields);
	ok = !ops->open(&p, l->opts);
	report_did(l, &p);
	if (ok)
		ops->close(&p);
	field_table_free(&fields);
	return ok;
}

/*
 * Whether ops opens when -f keeps every field: then the filter alone left
 * it without a field, which is no failure (kvm_stat prints nothing and
 * ends with status 0).
 */
static bool opens_unfiltered(struct loop *l, const struct provider_ops *ops)
{
	return l->opts->fields && opens_alone(l, ops);
}

/*
 * Opens the providers asked for (-t/-d/-S/--qmp, or the tracepoints that
 * -1/-l/-L imply) or every one the host supports. One that -f leaves
 * without a field is left out without a word (the run says it when
 * nothing is left). One asked for that cannot serve the VM chosen (by
 * the monitor, or by -p/-g with other providers asked too: "-d -S -p PID"
 * for a VM without stats fds) is left out and said, rather than fatal, as
 * long as another one opens.
 */
static int open_providers(struct loop *l, bool all_fields)
{
	const struct options *o = l->opts;
	int nasked = 0;
	bool explicit, lenient;
	struct errmsg why = { "" };

	l->no_match = false;
	loop_mark_failures(l);
	for (size_t i = 0; provider_registry[i]; i++)
		nasked += provider_asked(provider_registry[i], o);
	explicit = nasked > 0;
	lenient = explicit && (l->reopening || (o->pid && nasked > 1));
	for (size_t i = 0; provider_registry[i]; i++) {
		const struct provider_ops *ops = provider_registry[i];
		struct provider *p;
		int rc;

		if (explicit && !provider_asked(ops, o))
			continue;
		if (!explicit && ops->probe && !ops->probe(o))
			continue;
		if (l->nprovs == ARRAY_SIZE(l->provs))
			break;
		p = &l->provs[l->nprovs];
		memset(p, 0, sizeof(*p));
		p->ops = ops;
		p->fields = &l->stats.fields;
		/* -f (all_fields: every field); the names an earlier provider
		 * declared are that one's (the arbiter says) */
		p->filter = all_fields || l->need.counts_all ? NULL :
							       &o->filter;
		p->children = all_fields || o->children;
		p->arbiter = &l->stats.arbiter;
		p->want_vms = o->pid != 0 || o->guest || l->want_vms;
		rc = ops->open(p, o);
		report_did(l, p);
		if (rc) {
			const char *reason = errmsg_isset(&p->msg) ?
						     p->msg.text :
						     strerror(-rc);

			/* refused for want of privilege is a failure, even
			 * where other fields (outside -f) could be read */
			if (!all_fields && rc != -EACCES && rc != -EPERM &&
			    opens_unfiltered(l, ops)) {
				l->no_match = true;
				continue;
			}
			if (explicit && !lenient && o->tracepoints_implied)
				return loop_fail(l, rc, false,
						 "%s provider: %s (the default source of -1, -l, -L and -f help, as in kvm_stat; -d, -S or --qmp name others)",
						 ops->name, reason);
			if (explicit && !lenient)
				return loop_fail(l, rc, false,
						 "%s provider: %s", ops->name,
						 reason);
			errmsg_add(&why, "%s%s: %s",
				   errmsg_isset(&why) ? "; " : "", ops->name,
				   reason);
			/* said once, and shown by the monitor until the
			 * source starts (or the user dismisses it) */
			loop_note(l, ops, true, false, reason);
			continue;
		}
		l->nprovs++;
	}
	loop_forget_stale(l);
	if (!l->nprovs && l->no_match)
		return 0; /* -f keeps nothing: the run says so and ends */
	/* the monitor opens even so: its screen says why, and it tries
	 * again until a source starts */
	if (!l->nprovs && !(l->need.owns_terminal && !explicit))
		return loop_fail(l, -ENODEV, false,
				 "no statistics source could be opened (%s)",
				 errmsg_isset(&why) ?
					 why.text :
					 "no provider supports this host");
	snprintf(l->providers, sizeof(l->providers), "%s",
		 l->nprovs ? "" : "no source");
	for (size_t i = 0; i < l->nprovs; i++)
		snprintf(l->providers + strlen(l->providers),
			 sizeof(l->providers) - strlen(l->providers), "%s%s",
			 i ? " " : "", l->provs[i].ops->name);
	return 0;
}

static void close_providers(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++)
		l->provs[i].ops->close(&l->provs[i]);
	l->nprovs = 0;
}

/* Closes the providers at once, handing the last references of perf
 * events and BPF objects to a detached process (see handoff.h). */
static void close_providers_fast(struct loop *l)
{
	struct handoff h;
	bool kernel_fds = false;

	for (size_t i = 0; i < l->nprovs; i++)
		kernel_fds |= l->provs[i].ops->holds_kernel_fds;
	if (!kernel_fds || handoff_start(&h)) {
		close_providers(l);
		return;
	}
	close_providers(l);
	handoff_finish(&h);
}

/* One refresh: every provider reads, the arbiter noting after each what
 * it served for the ones after it, then the stats layer folds it all in. */
static void sample_all(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++) {
		struct provider *p = &l->provs[i];

		l->stats.set.src = p->ops->name;
		if (!p->ops->read(p, &l->stats.set)) {
			loop_read_well(l, p->ops);
		} else if (errmsg_isset(&p->msg)) {
			/* kept, and shown, until a read goes well */
			struct loop_note *n = loop_note(l, p->ops, true,
							!provider_asked(p->ops,
									l->opts),
							p->msg.text);

			if (n)
				n->reading = true;
			errmsg_clear(&p->msg);
			p->notice = false;
		}
		arbiter_note(&l->stats.arbiter, &l->stats.set);
	}
	l->stats.set.src = NULL;
	stats_update(&l->stats, util_now_ns());
	report_notices(l);
	if (!l->need.owns_terminal)
		loop_say_notes(l, true);
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
		.filter = &o->filter,
		.children = fe->view->children || l->children,
		.vcpu = SAMPLE_ALL_VCPUS,
		.guests = l->want_vms || fe->view->vms ? &l->guests : NULL,
		.hists = hists,
	};

	if (!fe->view->whole && o->vcpu >= 0) {
		req.pid = o->pid;
		req.vcpu = o->vcpu;
	} else if (!fe->view->whole && o->per_vcpu) {
		req.pid = o->pid;
		req.per_vcpu = true;
	}
	snapshot_build(&l->stats, &req, snap);
	for (size_t i = 0; i < l->nnotes; i++)
		l->snap_notes[i] = (struct snap_note){
			.source = l->notes[i].source,
			.failed = l->notes[i].failed,
			.text = l->notes[i].text.text,
		};
	snap->notes = l->snap_notes;
	snap->nnotes = l->nnotes;
	snap->notes_gen = l->notes_gen;
}

/* Starts or stops exit latency (--latency, the monitor's 'l'); a
 * failure stays in l->lat_msg. */
static int loop_latency(struct loop *l, bool on)
{
	const struct options *o = l->opts;
	struct latency_cfg cfg = { .tracefs_root = o->tracefs_root,
				   .proc_root = o->proc_root,
				   .debugfs_root = o->debugfs_root,
				   .pid = o->pid };
	struct errmsg did;

	latency_close(l->lat);
	l->lat = NULL;
	errmsg_clear(&l->lat_msg);
	l->lat_on = on;
	if (!on)
		return 0;
	/* its tracepoints, where no source has mounted tracefs (-S) */
	if (!o->tracefs_root && mounts_ensure(MOUNTS_TRACEFS, &did, NULL) == 1)
		loop_note_from(l, "latency", NULL, false, false, did.text);
	return latency_open(&l->lat, &cfg, &l->lat_msg);
}

/* Exit latency this render: its histograms into hs and its header facts
 * into info; NULL when off. */
static const struct snap_latency *
loop_lat_read(struct loop *l, struct hist_set *hs, struct snap_latency *info)
{
	if (!l->lat_on)
		return NULL;
	if (l->lat) {
		latency_read(l->lat, &l->stats.fields, hs, info);
		return info;
	}
	*info = (struct snap_latency){ .exit_field = -1,
				       .vmm_field = -1,
				       .error = l->lat_msg.text };
	return info;
}

int loop_render(struct loop *l, bool at_once_only)
{
	struct hist_set hs;
	struct snap_latency info;
	const struct snap_latency *lat;
	int first = 0;

	hist_set_init(&hs);
	lat = loop_lat_read(l, &hs, &info);
	for (size_t i = 0; i < l->nfes; i++) {
		struct frontend *fe = &l->fes[i];
		struct snapshot snap;
		int rc;

		if (!l->fe_open[i] || (at_once_only && !fe->view->at_once))
			continue;
		take_snapshot(l, fe, &hs, &snap);
		snap.latency = lat;
		rc = fe->ops->render(fe, &snap);
		snapshot_free(&snap);
		if (rc && !first) {
			first = rc;
			loop_fail(l, rc, fe->usage, "%s", fe->msg.text);
		}
	}
	hist_set_free(&hs);
	return first;
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
			for (size_t i = 0; i < nin; i++)
				if (in[i]->ops->input(in[i]) != UI_NONE) {
					*wake = LOOP_INPUT;
					*from = in[i];
					return 0;
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
			/* the terminal went away (its window closed): end,
			 * do not spin on a descriptor that is always ready */
			if (pfd[1 + i].revents &
			    (POLLHUP | POLLERR | POLLNVAL)) {
				*wake = LOOP_STOP;
				return 0;
			}
			if ((pfd[1 + i].revents & POLLIN) &&
			    in[i]->ops->input(in[i]) != UI_NONE) {
				*wake = LOOP_INPUT;
				*from = in[i];
				return 0;
			}
		}
	}
}

static uint64_t delay_ns(const struct loop *l)
{
	return (uint64_t)(l->opts->delay * 1e9 + 0.5);
}

/* -g that the providers matched themselves (resolve_vm() left -p 0):
 * the one VM the first sample found is the -p of --vcpu, --per-vcpu and
 * the snapshots. */
static void guest_pid(struct loop *l)
{
	struct options *o = l->opts;
	pid_t pid = 0;

	if (!o->guest || o->pid)
		return;
	for (size_t i = 0; i < l->stats.nkeys; i++) {
		pid_t p = l->stats.keys[i].pid;

		if (!p || p == pid)
			continue;
		if (pid)
			return; /* more than one: leave the choice open */
		pid = p;
	}
	o->pid = pid;
}

/* The first sample, then --vcpu checked against what it found. */
static int first_sample(struct loop *l)
{
	int rc;

	sample_all(l);
	guest_pid(l);
	rc = vcpu_check(&l->stats, l->opts, &l->msg);
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

	if (!o->scripted || !o->fields)
		return false;
	for (size_t i = 0; empty && i < l->nfes; i++) {
		struct snapshot snap;

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
			 o->fields);
		loop_say(l, line);
	}
	return empty;
}

/* One interval, then one render; as -1 always did, a write that fails
 * ends the run quietly. */
static int run_once(struct loop *l)
{
	struct frontend *from;
	enum loop_wake wake;
	int rc;

	rc = first_sample(l);
	if (!rc && nothing_matches(l))
		return 0;
	if (!rc)
		rc = loop_wait(l, util_now_ns() + delay_ns(l), &wake, &from);
	if (rc || wake == LOOP_STOP)
		return rc;
	sample_all(l);
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

	rc = first_sample(l);
	if (rc || nothing_matches(l))
		return rc;
	/* scrapes get the first sample at once, not after a delay */
	rc = loop_render(l, true);
	deadline = util_now_ns() + delay_ns(l);
	while (!rc && more) {
		uint64_t now;

		rc = loop_wait(l, deadline, &wake, &from);
		if (rc)
			return rc;
		/* a stop request still renders the partial interval: no
		 * count is lost between the last line and the end */
		more = wake != LOOP_STOP;
		sample_all(l);
		rc = loop_render(l, false);
		now = util_now_ns();
		deadline += delay_ns(l);
		if (deadline <= now)
			deadline = now + delay_ns(l);
	}
	return rc == -EPIPE ? 0 : rc;
}

/* Providers again after the monitor changed what they must count; the
 * counts restart from zero, as in kvm_stat. */
static int reopen_providers(struct loop *l)
{
	int rc;

	close_providers_fast(l);
	stats_free(&l->stats);
	stats_init(&l->stats, l->opts->include_past);
	l->reopening = true;
	rc = open_providers(l, false);
	l->reopening = false;
	if (rc)
		return rc;
	sample_all(l);
	return 0;
}

/* Carries out what a key asked for; *quit when it asks for the end. */
static int handle_request(struct loop *l, const struct ui_request *req,
			  bool *quit)
{
	struct options *o = l->opts;
	bool pid_changed = false;
	struct errmsg err;

	*quit = false;
	switch (req->action) {
	case UI_QUIT:
		*quit = true;
		break;
	case UI_RESET:
		stats_reset(&l->stats);
		if (l->lat)
			latency_reset(l->lat);
		break;
	case UI_SET_LATENCY:
		loop_latency(l, req->on);
		break;
	case UI_SET_DELAY:
		o->delay = req->delay;
		break;
	case UI_CLEAR:
		pid_changed = o->pid != 0;
		o->pid = 0;
		o->guest = NULL;
		if (l->lat_on)
			loop_latency(l, true);
		/* fall through */
	case UI_SET_FILTER:
		free(l->fields);
		l->fields = req->action == UI_SET_FILTER && req->filter[0] ?
				    xstrdup(req->filter) :
				    NULL;
		o->fields = l->fields;
		if (filter_set(&o->filter,
			       o->fields ? o->fields : FILTER_DEFAULT, &err))
			break;
		/* every field is counted already: only the view changes */
		if (l->need.counts_all && !pid_changed)
			break;
		return reopen_providers(l);
	case UI_SET_PID:
		o->pid = req->pid;
		snprintf(l->guest, sizeof(l->guest), "%s", req->guest);
		o->guest = l->guest[0] ? l->guest : NULL;
		if (l->lat_on)
			loop_latency(l, true);
		return reopen_providers(l);
	case UI_SET_CHILDREN:
		l->children = req->on;
		/* counted from the start: only the snapshots change */
		if (l->need.counts_all)
			break;
		o->children = req->on || l->need.children;
		return reopen_providers(l);
	case UI_SET_VMS:
		l->want_vms = req->on || l->need.vms;
		return reopen_providers(l);
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
	struct options *o = l->opts;
	pid_t *pids = NULL;
	bool moved = false;
	int n;

	if (!o->pid || !o->guest || vm_pid_is_vm(o->proc_root, o->pid))
		return false;
	n = vm_find_by_name(o->proc_root, o->guest, &pids);
	if (n == 1 && pids[0] != o->pid) {
		o->pid = pids[0];
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
		    (!ops->probe || ops->probe(l->opts)))
			again = opens_alone(l, ops);
	}
	if (again && reopen_providers(l))
		monitor_failed(l);
}

/* The monitor: the first screen at once, the next after 0.25 s, then
 * every delay; keys may ask for a refresh, a reset, other settings or the
 * end. */
static int run_interactive(struct loop *l)
{
	uint64_t deadline;
	int rc;

	rc = first_sample(l);
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
					deadline = util_now_ns() + delay_ns(l);
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
		sample_all(l);
		loop_render(l, false);
		deadline = util_now_ns() + delay_ns(l);
	}
}

int loop_run(struct loop *l)
{
	switch (l->need.pace) {
	case FRONTEND_ONCE:
		return run_once(l);
	case FRONTEND_INTERACTIVE:
		return run_interactive(l);
	case FRONTEND_EVERY:
		break;
	}
	return run_every(l);
}

/* -p/-g against the running system: a usage error when they name no VM. */
static int resolve_vm(struct loop *l)
{
	struct options *o = l->opts;
	struct errmsg err;
	pid_t pid;
	int rc;

	/* a provider that checks -p/-g itself needs no root (QMP matches
	 * sockets by their peer and asks the VMM its name), and /proc may
	 * show nothing: when only such providers are asked for, they judge */
	bool checked = false, others = false;

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
		rc = vm_resolve_guest(o->proc_root, o->guest, &pid, &err);
		if (rc)
			return loop_fail(l, rc, true, "%s", err.text);
		o->pid = pid;
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

int loop_open(struct loop *l, struct options *opts, void (*say)(const char *msg))
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->opts = opts;
	guests_init(&l->guests, opts->proc_root);
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
	for (size_t i = 0; i < l->nfes; i++)
		l->fes[i].providers = l->providers;
	/* what the front-ends need the providers to count */
	/* the monitor starts with child events hidden, as kvm_stat's,
	 * until its 'x' */
	l->children = opts->children && !l->need.counts_all;
	if (l->need.past)
		opts->include_past = true;
	if (l->need.children || l->need.counts_all)
		opts->children = true;
	l->want_vms = l->need.vms;
	stats_init(&l->stats, opts->include_past);
	if (opts->fields_help)
		return 0;

	/* a bad -L file is a usage error before anything opens; the
	 * monitor takes the terminal only once the providers are up */
	rc = open_frontends(l, false);
	if (!rc)
		rc = open_providers(l, false);
	if (!rc && opts->latency) {
		rc = loop_latency(l, true);
		if (rc)
			loop_fail(l, rc, false, "%s", l->lat_msg.text);
	}
	if (rc) {
		loop_say_notes(l, false); /* what was mounted on the way */
		return rc;
	}
	if (!l->need.owns_terminal)
		loop_say_notes(l, true); /* before any output */
	return open_frontends(l, true);
}

int loop_list_fields(struct loop *l, struct snapshot *snap)
{
	int rc = open_providers(l, true);

	loop_say_notes(l, !rc);
	if (rc)
		return rc;
	sample_all(l);
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
		report_notices(l);
		loop_say_notes(l, true);
	}
	latency_close(l->lat);
	l->lat = NULL;
	close_providers_fast(l);
	guests_free(&l->guests);
	free(l->fields);
	l->fields = NULL;
	stats_free(&l->stats);
	if (l->sigfd >= 0)
		close(l->sigfd);
	l->sigfd = -1;
}
