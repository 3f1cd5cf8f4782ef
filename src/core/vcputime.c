// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arithmetic of where a vCPU's time goes (vcputime.h): one interval of
 * a thread's cumulative readings split into guest, kernel, vmm, halted and
 * waiting, or merged states where the host does not tell two apart.
 *
 * The interval is cut, in this order, by what is measured best:
 *  - waiting: the scheduler's run delay (schedstat, ns, exact);
 *  - on a CPU: the scheduler's run time (schedstat, ns, exact); asleep:
 *    what the run and the wait leave of the wall time;
 *  - halted: halt polling (halt_poll_success_ns + halt_poll_fail_ns, on
 *    a CPU) and the sleep that halt_wait_ns accounts for (it also holds
 *    the wait after the wake-up, so it is capped by the sleep); a halt
 *    still going on (the vCPU's blocking stat set, its thread not
 *    runnable) counts its sleep now, and what halt_wait_ns adds when it
 *    ends is not counted again. Without the halt statistics the sleep is
 *    "halted+vmm";
 *  - the rest of the time on a CPU, by the shares of user, system and
 *    guest ticks the thread's stat gives (clock ticks, sampled, so a
 *    share over a short interval is coarse): user is the VMM's, the rest
 *    guest and kernel; a sleep outside a halt is the VMM's too (its own
 *    waits: locks, its halt handling without an in-kernel irqchip);
 *  - guest against kernel: exit latency's kvm_exit to kvm_entry time
 *    less its time in the VMM, where both are timed; else the guest and
 *    system ticks where the host reports guest time; else one merged
 *    state, "guest+kernel" (hosts that report guest time as system time).
 */
#include <string.h>

#include "vcputime.h"

static const char *const vcputime_names[VT_NSTATES] = {
	[VT_GUEST] = "guest",
	[VT_KERNEL] = "kernel",
	[VT_VMM] = "vmm",
	[VT_HALTED] = "halted",
	[VT_WAITING] = "waiting",
	[VT_GUEST_KERNEL] = "guest+kernel",
	[VT_HALTED_VMM] = "halted+vmm",
};

const char *vcputime_state_name(enum vcputime_state s)
{
	return (unsigned)s < VT_NSTATES ? vcputime_names[s] : "?";
}

/* A counter's growth; a counter that went back (a reset) grew by 0. */
static uint64_t vcputime_d(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : 0;
}

static uint64_t vcputime_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* x * num / den without overflow; 0 when den is 0. */
static uint64_t vcputime_share(uint64_t x, uint64_t num, uint64_t den)
{
	if (!den)
		return 0;
	return (uint64_t)((unsigned __int128)x * num / den);
}

/* Ticks over the interval, or over the thread's life when the interval
 * had none (a run shorter than a tick): user (VMM), system, guest. */
static void vcputime_ticks(const struct vcputime_in *in,
			   const struct vcputime_in *p, uint64_t *user,
			   uint64_t *sys, uint64_t *guest)
{
	uint64_t u = vcputime_d(in->utime, p->utime);
	uint64_t s = vcputime_d(in->stime, p->stime);
	uint64_t g = vcputime_d(in->gtime, p->gtime);

	if (!u && !s) {
		u = in->utime;
		s = in->stime;
		g = in->gtime;
	}
	/* utime holds the guest time */
	g = vcputime_min(g, u);
	*user = u - g;
	*sys = s;
	*guest = g;
}

/* Records state s taking ns in out. */
static void vcputime_put(struct vcputime_row *out, enum vcputime_state s,
			 uint64_t ns)
{
	out->delta_ns[s] = ns;
	out->total_ns[s] += ns;
	out->measured |= 1u << s;
}

void vcputime_step(struct vcputime_acc *a, const struct vcputime_in *in,
		   uint64_t start_ns, struct vcputime_row *out)
{
	struct vcputime_in zero = { .now_ns = start_ns };
	const struct vcputime_in *p = a->have_prev ? &a->prev : &zero;
	uint64_t dt = vcputime_d(in->now_ns, p->now_ns);
	uint64_t run = vcputime_d(in->run_ns, p->run_ns);
	uint64_t wait = vcputime_d(in->delay_ns, p->delay_ns);
	uint64_t sleep, poll = 0, blocked = 0, other, on, vmm_on, gk;
	uint64_t tu, ts, tg, ticks;
	bool halt = in->halt_known && (!a->have_prev || p->halt_known);
	bool lat = a->have_prev && in->vmm_known && in->exit_known &&
		   p->vmm_known && p->exit_known;

	memset(out->delta_ns, 0, sizeof(out->delta_ns));
	out->merged = 0;
	if (run + wait > dt)
		dt = run + wait;
	sleep = dt - run - wait;
	out->interval_ns = dt;
	vcputime_put(out, VT_WAITING, wait);

	if (halt) {
		uint64_t hw = vcputime_d(in->halt_wait_ns, p->halt_wait_ns);
		uint64_t used = vcputime_min(a->ahead_ns, hw);

		poll = vcputime_min(vcputime_d(in->halt_poll_ns,
					       p->halt_poll_ns),
				    run);
		a->ahead_ns -= used;
		hw -= used;
		blocked = vcputime_min(sleep, hw);
		if (in->blocking_known && in->blocking && in->state != 'R') {
			/* halted now: its sleep so far is the halt's */
			a->ahead_ns += sleep - blocked;
			blocked = sleep;
		} else {
			a->ahead_ns = 0;
		}
	} else {
		a->ahead_ns = 0;
	}
	other = sleep - blocked;
	on = run - poll;

	vcputime_ticks(in, p, &tu, &ts, &tg);
	ticks = tu + ts + tg;
	vmm_on = vcputime_min(vcputime_share(run, tu, ticks), on);
	gk = on - vmm_on;

	if (halt) {
		vcputime_put(out, VT_HALTED, poll + blocked);
		vcputime_put(out, VT_VMM, vmm_on + other);
	} else {
		vcputime_put(out, VT_HALTED_VMM, sleep + vmm_on);
		out->merged |= 1u << VT_HALTED_VMM;
	}

	if (lat) {
		uint64_t ex = vcputime_d(in->exit_ns, p->exit_ns);
		uint64_t vm = vcputime_d(in->vmm_ns, p->vmm_ns);
		uint64_t kernel = vcputime_min(gk, ex - vcputime_min(ex, vm));

		vcputime_put(out, VT_KERNEL, kernel);
		vcputime_put(out, VT_GUEST, gk - kernel);
	} else if (in->gtime) {
		uint64_t g = vcputime_share(run, tg, ticks);
		uint64_t k = vcputime_share(run, ts, ticks);
		uint64_t guest;

		k -= vcputime_min(k, poll);
		guest = vcputime_share(gk, g, g + k);
		vcputime_put(out, VT_GUEST, guest);
		vcputime_put(out, VT_KERNEL, gk - guest);
	} else {
		vcputime_put(out, VT_GUEST_KERNEL, gk);
		out->merged |= 1u << VT_GUEST_KERNEL;
	}
	out->fresh = true;
	a->prev = *in;
	a->have_prev = true;
}

void vcputime_add(struct vcputime_row *sum, const struct vcputime_row *r)
{
	for (int s = 0; s < VT_NSTATES; s++) {
		sum->total_ns[s] += r->total_ns[s];
		if (r->fresh)
			sum->delta_ns[s] += r->delta_ns[s];
	}
	sum->measured |= r->measured;
	if (!r->fresh)
		return;
	sum->merged |= r->merged;
	sum->fresh = true;
	if (r->interval_ns > sum->interval_ns)
		sum->interval_ns = r->interval_ns;
}

bool vcputime_rate(const struct vcputime_row *r, enum vcputime_state s,
		   double *out)
{
	unsigned bit = 0;

	if (!r->fresh || !r->interval_ns)
		return false;
	if (s == VT_GUEST || s == VT_KERNEL)
		bit = 1u << VT_GUEST_KERNEL;
	else if (s == VT_HALTED || s == VT_VMM)
		bit = 1u << VT_HALTED_VMM;
	if (s >= VT_NBASIC && !(r->merged & (1u << s)))
		return false;
	if (bit && (r->merged & bit) && !r->delta_ns[s])
		return false;
	*out = (double)r->delta_ns[s] / (double)r->interval_ns;
	return true;
}
