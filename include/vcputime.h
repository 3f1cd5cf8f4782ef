/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where each vCPU's time goes: for each vCPU thread, and summed per VM,
 * the wall time split into five states that add up to it: guest (running
 * guest code), kernel (the host kernel handling exits), vmm (the VMM's
 * user space on the vCPU thread, running or asleep), halted (blocked or
 * polling in KVM's halt) and waiting (runnable, waiting for a host CPU).
 * Beside them, the CPU time of the VMM's other threads, by thread name.
 *
 * The arithmetic here is pure: it takes cumulative readings of a thread
 * (scheduler statistics, CPU ticks by mode, KVM's halt statistics, exit
 * latency's times where loaded) and splits each interval. Where a split
 * cannot be measured the two states are kept as one merged state
 * ("guest+kernel", "halted+vmm"), never guessed. The readings come from
 * the layer that may read /proc (app/vtscan.c); front-ends get the result
 * through the snapshot (snapshot.vcputime).
 */
#ifndef KVMSTAT_VCPUTIME_H
#define KVMSTAT_VCPUTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The states; the last two are merges of two states no source split. */
enum vcputime_state {
	VT_GUEST,
	VT_KERNEL,
	VT_VMM,
	VT_HALTED,
	VT_WAITING,
	VT_GUEST_KERNEL, /* guest time not told from system time */
	VT_HALTED_VMM,	 /* asleep, with no halt statistics to say why */
	VT_NSTATES,
};

#define VT_NBASIC 5 /* the five states proper */

/* The state's name as the outputs spell it ("guest", "guest+kernel"). */
const char *vcputime_state_name(enum vcputime_state s);

/*
 * One vCPU thread's cumulative readings at one time. Times in ns; ticks
 * as /proc's stat gives them (clock ticks, utime including guest time).
 */
struct vcputime_in {
	uint64_t now_ns;	      /* CLOCK_BOOTTIME of the reading */
	uint64_t run_ns, delay_ns;    /* schedstat: on a CPU, runnable */
	uint64_t utime, stime, gtime; /* stat: ticks in user, system, guest */
	char state;		      /* stat: R, S, D... */
	bool halt_known;	      /* KVM's halt statistics were read: */
	uint64_t halt_wait_ns;	      /* blocked in halts that ended */
	uint64_t halt_poll_ns;	      /* halt_poll_success_ns + _fail_ns */
	bool blocking_known;
	bool blocking;	 /* the vCPU is blocked in a halt now */
	bool vmm_known;	 /* exit latency's time in the VMM */
	uint64_t vmm_ns; /* (kvm_userspace_exit to re-entry), summed */
	bool exit_known; /* exit latency's kvm_exit to kvm_entry */
	uint64_t exit_ns;
};

/* What one thread's arithmetic keeps between readings. */
struct vcputime_acc {
	struct vcputime_in prev;
	bool have_prev;
	/* an ongoing halt's sleep already counted as halted that
	 * halt_wait_ns does not hold yet (it grows when a halt ends) */
	uint64_t ahead_ns;
};

/* A vCPU or a VM: its states since it started and in the last interval. */
struct vcputime_row {
	int vcpu;  /* index, or -1 for a VM's sum */
	pid_t tid; /* a vCPU's thread, or 0 */
	uint64_t total_ns[VT_NSTATES];
	uint64_t delta_ns[VT_NSTATES];
	uint64_t interval_ns; /* wall time of the last interval (a VM's:
			       * its vCPUs' longest) */
	unsigned merged;      /* bits (1 << state) of the merged states
			       * the last interval used */
	unsigned measured;    /* bits of the states ever attributed */
	bool fresh;	      /* read in the last refresh */
};

/* A thread of the VMM that is not a vCPU (vhost workers included). */
struct vcputime_thread {
	pid_t tid;
	char name[20];	      /* its comm */
	uint64_t total_ns;    /* on a CPU since it started */
	uint64_t delta_ns;    /* in the last interval */
	uint64_t interval_ns; /* its wall time (0: not read then) */
	bool vhost;	      /* a vhost worker of the VM's */
};

struct vcputime_vm {
	pid_t pid;
	const char *guest; /* or NULL */
	uint64_t interval_ns;
	struct vcputime_row sum;	  /* its vCPUs summed */
	const struct vcputime_row *vcpus; /* by index */
	size_t nvcpus;
	const struct vcputime_thread *threads; /* by tid */
	size_t nthreads;
};

/* What front-ends render (snapshot.vcputime); the collector's. */
struct vcputime {
	const struct vcputime_vm *vms; /* by pid */
	size_t nvms;
	bool per_vcpu;	    /* series per vCPU too (--per-vcpu) */
	const char *source; /* what split which states ("halt: binary
			     * stats; guest+kernel: merged ..."), or NULL */
};

/*
 * Splits the interval from a's previous reading to in into out's deltas
 * (and adds them to its totals). The first reading of a thread splits its
 * life: a's previous reading is zero at start_ns, its start. The states
 * sum to the interval exactly (the sleep is what the run and the wait
 * leave: a clock skew that makes them longer stretches the interval).
 */
void vcputime_step(struct vcputime_acc *a, const struct vcputime_in *in,
		   uint64_t start_ns, struct vcputime_row *out);

/* Adds a vCPU's last interval and totals to a VM's sum. */
void vcputime_add(struct vcputime_row *sum, const struct vcputime_row *r);

/* The seconds per second of state s in the row's last interval; false
 * when it was not measured there (merged, or no interval). */
bool vcputime_rate(const struct vcputime_row *r, enum vcputime_state s,
		   double *out);

#endif
