// SPDX-License-Identifier: GPL-2.0-only
/*
 * The providers of the run: which open (those asked for, or every one the
 * host supports), with the config the run gives them; one refresh of them
 * all; closing them quickly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "handoff.h"
#include "loop.h"
#include "loop_int.h"
#include "util.h"

/* What the providers are told: the options they need and the run's VM. */
static void loop_provider_cfg(struct loop *l)
{
	provider_cfg_init(&l->pcfg, l->opts);
	l->pcfg.pid = l->run.pid;
	l->pcfg.guest = l->run.guest;
	l->pcfg.include_past = l->run.include_past;
}

/* Whether the providers break their readings down by VM. */
static bool loop_wants_vms(const struct loop *l)
{
	return l->run.pid || l->run.guest || l->want_vms;
}

bool loop_want_vcpus(const struct loop *l)
{
	/* --vcpu-time, 't': each vCPU's halt statistics */
	return l->run.pid || l->run.guest || l->opts->per_vcpu ||
	       l->need.pace == FRONTEND_INTERACTIVE || l->opts->vcpu_time ||
	       l->vt;
}

bool loop_set_vms_live(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++)
		if (!l->provs[i].ops->vms_live)
			return false;
	for (size_t i = 0; i < l->nprovs; i++) {
		struct provider *p = &l->provs[i];

		p->want_vms = loop_wants_vms(l);
		p->want_vcpus = p->want_vms && loop_want_vcpus(l);
	}
	return true;
}

/* Whether ops opens alone, for every field, in a field table of its
 * own (what it did on the host on the way is noted). */
bool loop_opens_alone(struct loop *l, const struct provider_ops *ops)
{
	struct field_table fields;
	struct provider p = {
		.ops = ops,
		.fields = &fields,
		.want_vms = l->run.pid != 0,
		.want_vcpus = l->run.pid != 0,
	};
	bool ok;

	field_table_init(&fields);
	ok = !ops->open(&p, &l->pcfg);
	loop_report_did(l, &p);
	if (ok)
		ops->close(&p);
	field_table_free(&fields);
	return ok;
}

/*
 * Whether ops, whose open failed with rc, opens when -f keeps every field:
 * then the filter alone left it without a field, which is no failure
 * (kvm_stat prints nothing and ends with status 0). Only -ENOENT says no
 * field was found; another failure that does not come again (a QMP
 * greeting later than the reply timeout) is the run's, not the filter's.
 */
static bool opens_unfiltered(struct loop *l, const struct provider_ops *ops,
			     int rc)
{
	return rc == -ENOENT && l->run.fields && loop_opens_alone(l, ops);
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
int loop_open_providers(struct loop *l, bool all_fields)
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
	lenient = explicit && (l->reopening || (l->run.pid && nasked > 1));
	loop_provider_cfg(l);
	for (size_t i = 0; provider_registry[i]; i++) {
		const struct provider_ops *ops = provider_registry[i];
		struct provider *p;
		int rc;

		if (explicit && !provider_asked(ops, o))
			continue;
		if (!explicit && ops->probe && !ops->probe(&l->pcfg))
			continue;
		if (l->nprovs == ARRAY_SIZE(l->provs))
			break;
		p = &l->provs[l->nprovs];
		memset(p, 0, sizeof(*p));
		p->ops = ops;
		p->fields = &l->stats.fields;
		/* -f (all_fields: every field); the names an earlier provider
		 * declared are that one's (the arbiter says) */
		/* --vcpu-time reads the halt statistics whatever -f keeps */
		p->filter = all_fields || l->need.counts_all ||
					    l->opts->vcpu_time ?
				    NULL :
				    &l->run.filter;
		p->children = all_fields || l->run.children;
		p->arbiter = &l->stats.arbiter;
		p->want_vms = loop_wants_vms(l);
		p->want_vcpus = p->want_vms && loop_want_vcpus(l);
		rc = ops->open(p, &l->pcfg);
		loop_report_did(l, p);
		if (rc) {
			const char *reason = errmsg_isset(&p->msg) ?
						     p->msg.text :
						     strerror(-rc);

			/* refused for want of privilege is a failure, even
			 * where other fields (outside -f) could be read */
			if (!all_fields && opens_unfiltered(l, ops, rc)) {
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
	loop_brk_providers(l);
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
void loop_close_providers_fast(struct loop *l)
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
void loop_sample_all(struct loop *l)
{
	if (l->replay) {
		loop_replay_sample(l);
		return;
	}
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
	loop_record(l);
	loop_report_notices(l);
	if (!l->need.owns_terminal)
		loop_say_notes(l, true);
}
