/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF counting engine: loads kvmstat's counting programs
 * (src/bpf/kvmstat.bpf.c, through a bpftool skeleton) with libbpf and
 * attaches them, one program per tracepoint: raw tracepoints by name for
 * plain events, kvm_userspace_exit and a kvm_exit whose reason is read
 * from the vCPU or the raw arguments, a program on the trace record (one
 * perf event) for sources whose reason is only found there. Every hit
 * bumps a per-CPU counter, its "slot"; a refresh reads them all with one
 * batched lookup. Optionally also per thread, and only for one process.
 *
 * Use: bpf_engine_new, then declare the hooks (plain, uexit, vcpu, arg,
 * record), bpf_engine_load, bpf_engine_set_reason for every known
 * reason, bpf_engine_attach; then read each refresh; bpf_engine_free.
 */
#ifndef KVMSTAT_BPF_ENGINE_H
#define KVMSTAT_BPF_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_shared.h"

struct bpf_engine_cfg {
	uint32_t nslots;	 /* counters: plain events first */
	uint32_t tgid;		 /* count only this process; 0: all */
	bool per_thread;	 /* also count per (tgid, tid, slot) */
	uint32_t thread_entries; /* keys of that breakdown at most */
	/* one program per plain event even where the kernel has raw
	 * tracepoint attach cookies (the older kernels' way; for tests) */
	bool no_cookie;
};

struct bpf_engine;

/* Opens the BPF object; NULL with *err = -errno. The caller frees it. */
struct bpf_engine *bpf_engine_new(const struct bpf_engine_cfg *cfg, int *err);
/* Counts raw tracepoint tp_name (its name without the system) in slot,
 * slot < KS_NPLAIN. 0 or -errno (-ENOSPC past KS_NPLAIN). */
int bpf_engine_plain(struct bpf_engine *e, uint32_t slot, const char *tp_name);
/* A plain event whose first raw argument is a struct kvm_vcpu (x86's
 * kvm_exit), counted in slot, which with per-thread counting also notes
 * the vCPU of a thread's first hits (its vcpu_id at id_off, -1: none) as
 * bpf_engine_vcpu's program does. 0 or -errno (-EBUSY for a second). */
int bpf_engine_plain_vcpu(struct bpf_engine *e, uint32_t slot,
			  const char *tp_name, int32_t id_off);
/* kvm_userspace_exit as a raw tracepoint: the parent in parent_slot (or
 * KS_NONE), its reason argument as child source src. 0 or -errno. */
int bpf_engine_uexit(struct bpf_engine *e, const char *tp_name,
		     uint32_t parent_slot, uint32_t src);
/* Raw tracepoint tp_name (arguments: the vCPU, the guard) whose reason
 * sits in the kernel's structs, as cfg says; 0 or -errno (-EBUSY for a
 * second one). */
int bpf_engine_vcpu(struct bpf_engine *e, const char *tp_name,
		    const struct ks_vcpu_cfg *cfg);
/* Raw tracepoint tp_name whose arguments hold the reason (arm64's
 * kvm_exit), as cfg says; 0 or -errno (-EBUSY for a second one, -EINVAL
 * for an argument past the second). */
int bpf_engine_arg(struct bpf_engine *e, const char *tp_name,
		   const struct ks_arg_cfg *cfg);
/* A tracepoint (by id) whose reason is in its record, as cfg says; 0 or
 * -errno (-ENOSPC past KS_NREC such tracepoints). */
int bpf_engine_record(struct bpf_engine *e, int tp_id,
		      const struct ks_rec_cfg *cfg);
/* Loads the declared programs (the verifier runs here); 0 or -errno. */
int bpf_engine_load(struct bpf_engine *e);
/* After load: hits of source src with guard class cls and reason count
 * in slot (reason < KS_MAXR); 0 or -errno. */
int bpf_engine_set_reason(struct bpf_engine *e, uint32_t src, uint32_t cls,
			  uint32_t reason, uint32_t slot);
/* Attaches every loaded program; 0 or -errno (*what names the hook). */
int bpf_engine_attach(struct bpf_engine *e, const char **what);

/* Every slot's count summed over the CPUs into counts[nslots]; one
 * batched lookup. 0 or -errno. */
int bpf_engine_read(struct bpf_engine *e, uint64_t *counts);
/* Calls fn for every per-thread key and its count; 0 or -errno. */
int bpf_engine_threads(struct bpf_engine *e,
		       void (*fn)(void *ctx, const struct ks_thread_key *k,
				  uint64_t count),
		       void *ctx);
/* When threads were noted as running a vCPU since the last call (at
 * their first kvm_exit hits, with per-thread counting): calls fn for
 * every thread noted (thread id, process, vCPU id); 0 or -errno. */
int bpf_engine_vcpu_threads(struct bpf_engine *e,
			    void (*fn)(void *ctx, uint32_t tid,
				       const struct ks_tvcpu *t),
			    void *ctx);
/* Removes those notes of threads (of processes that exited). */
int bpf_engine_forget_vcpu_threads(struct bpf_engine *e, const uint32_t *tids,
				   size_t n);
/* Calls fn for every reason without a slot and its count; 0 or -errno. */
int bpf_engine_others(struct bpf_engine *e,
		      void (*fn)(void *ctx, const struct ks_other_key *k,
				 uint64_t count),
		      void *ctx);
/*
 * The perf event a program on a tracepoint's record is attached to: on
 * one CPU, the program runs for the tracepoint's hits on every CPU. The
 * fd (caller closes) or -1 with errno. Shared with the latency engine.
 */
int bpf_engine_perf_open(int tp_id);
/* Removes keys of processes that exited; missing keys are no error. */
int bpf_engine_forget_threads(struct bpf_engine *e,
			      const struct ks_thread_key *keys, size_t n);
int bpf_engine_forget_others(struct bpf_engine *e,
			     const struct ks_other_key *keys, size_t n);
/* File descriptors it holds (maps, programs, links, perf events). */
size_t bpf_engine_fds(const struct bpf_engine *e);
/* The last line libbpf logged (for an error message), or "". */
const char *bpf_engine_last_log(void);
void bpf_engine_free(struct bpf_engine *e);

#endif
