/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exit-latency engine: loads src/bpf/latency.bpf.c (its own bpftool
 * skeleton, separate from the counting engine's, so a run that does not
 * ask for latency loads nothing of it) with libbpf, attaches the start
 * and end marks the caller names, and walks the per-thread histograms.
 */
#ifndef KVMSTAT_LAT_ENGINE_H
#define KVMSTAT_LAT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_shared.h"
#include "lat_shared.h"

/* What marks a thread's return to the guest after a userspace exit,
 * besides kvm_entry where that fires. */
enum lat_mark {
	LAT_MARK_NONE = 0,
	LAT_MARK_FENTRY,  /* fentry on kvm_arch_vcpu_ioctl_run (BTF) */
	LAT_MARK_FPU,	  /* kvm_fpu(load), a raw tracepoint */
	LAT_MARK_SYSCALL, /* raw_syscalls:sys_enter, ioctl KVM_RUN (where
			   * sys_arg1_off is known: x86-64, arm64; every
			   * system call of the host pays) */
};

/* Where a value sits in a trace record. */
struct lat_rec_field {
	uint32_t off;
	uint32_t size; /* 1, 2, 4 or 8; 0: absent */
};

struct lat_engine_cfg {
	uint32_t tgid; /* only this process; 0: all */
	/* kvm_exit: tracepoint id (its record program), or -1 */
	int exit_id;
	struct lat_rec_field exit_reason, exit_isa;
	int64_t exit_guard; /* cls = (isa field == exit_guard) */
	/* with exit_id set, kvm_exit's raw tracepoint instead, its reason
	 * read from the vCPU as exit_vcpu says, or with exit_by_arg from
	 * the raw arguments as exit_arg says (no perf event); or NULL */
	const char *exit_raw;
	struct ks_vcpu_cfg exit_vcpu;
	bool exit_by_arg;
	struct ks_arg_cfg exit_arg;
	/* kvm_userspace_exit: a raw tracepoint by name, or (uexit_raw
	 * NULL) its record by id, or neither (uexit_id -1) */
	const char *uexit_raw;
	int uexit_id;
	struct lat_rec_field uexit_reason;
	const char *entry_raw; /* kvm_entry's raw tracepoint, or NULL */
	enum lat_mark mark;
	const char *fpu_raw; /* kvm_fpu's raw tracepoint, for LAT_MARK_FPU */
	/* for LAT_MARK_SYSCALL: where a system call's second argument sits
	 * in the kernel's struct pt_regs (the arch descriptor's); 0: no
	 * such mark */
	uint32_t sys_arg1_off;
	/* keep the exits in flight in an LRU hash by thread even where the
	 * kernel has task storage (the fallback, forced for its test) */
	bool hash_state;
};

struct lat_engine;

/* Opens, loads and attaches; NULL with *err = -errno and *what naming
 * the step that failed. */
struct lat_engine *lat_engine_open(const struct lat_engine_cfg *cfg, int *err,
				   const char **what);
/* Calls fn for every histogram; 0 or -errno. */
int lat_engine_walk(struct lat_engine *e,
		    void (*fn)(void *ctx, const struct lat_key *k,
			       const struct lat_val *v),
		    void *ctx);
/* Empties every histogram (a reset). */
void lat_engine_clear(struct lat_engine *e);
/* Whether fentry on kvm_arch_vcpu_ioctl_run can be used here. */
bool lat_engine_has_fentry(void);
/* Where e keeps the exits in flight: "task storage" or "hash". */
const char *lat_engine_state(const struct lat_engine *e);
/* The map of the threads' state (struct lat_start), which the breakdown
 * programs share; *task: task storage (else the LRU hash by thread). */
int lat_engine_state_fd(const struct lat_engine *e, bool *task);
void lat_engine_free(struct lat_engine *e);

#endif
