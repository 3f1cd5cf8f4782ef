/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exit latency per reason (--latency, the monitor's 'l'): how long each
 * kind of exit keeps a vCPU out of the guest. Two kinds:
 *  - exit latency: kvm_exit to the next kvm_entry of the same thread, by
 *    kvm_exit's reason (where those tracepoints fire);
 *  - time in the VMM: kvm_userspace_exit until the thread enters the
 *    guest again, by its reason (MMIO, IO, HLT...). Re-entry is
 *    kvm_entry where it fires, and the start of KVM_RUN (fentry on
 *    kvm_arch_vcpu_ioctl_run, or kvm_fpu(load) without BTF) everywhere.
 * The collector finds those tracepoints under the run's tracefs, loads
 * the latency engine (include/lat_engine.h) and reads its per-thread
 * histograms as the snapshot's (hist.h's hist_set): for the whole
 * selection, each VM and each vCPU, per kind and reason, every one a log2
 * histogram of nanoseconds with count, sum, min and max since latency was
 * turned on (or reset).
 */
#ifndef KVMSTAT_LATENCY_H
#define KVMSTAT_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"
#include "hist.h"
#include "lat_shared.h"
#include "sample.h"
#include "snapshot.h"

struct latency_cfg {
	const char *tracefs_root; /* NULL: the kernel's */
	const char *proc_root;	  /* vCPU indices of threads: their names, */
	const char *debugfs_root; /* else KVM's vcpuN/pid files */
	pid_t pid;		  /* only this VM; 0: all */
};

struct latency;

/* Finds the tracepoints and loads the engine. 0, or -errno with a line
 * in msg (what failed and what to do). */
int latency_open(struct latency **out, const struct latency_cfg *cfg,
		 struct errmsg *msg);
/*
 * The histograms now, into out (emptied first): one per kind and reason
 * for the whole selection, each VM and each vCPU thread with an index
 * (a thread without one counts in its VM's), their fields interned in t
 * (latency_field). info gets the header facts.
 */
void latency_read(struct latency *l, struct field_table *t,
		  struct hist_set *out, struct snap_latency *info);
/* Empties the histograms (the monitor's reset). */
void latency_reset(struct latency *l);
void latency_close(struct latency *l);
/* Its engine where it times exits from kvm_exit (else NULL): whose
 * state of the threads a timed breakdown reads (struct breakdown_cfg's
 * lat). */
struct lat_engine;
const struct lat_engine *latency_engine(const struct latency *l);

/*
 * The field of kind k's histograms: kvm_exit_latency (kvm_exit to
 * kvm_entry) or kvm_vmm_time, log2 histograms of nanoseconds, shown
 * whatever -f keeps (FIELD_OWN_SWITCH); with reason, its keyed child
 * "kvm_exit_latency(HLT)". Interned in t when new; the id.
 */
int latency_field(struct field_table *t, enum lat_kind k, const char *reason);

#endif
