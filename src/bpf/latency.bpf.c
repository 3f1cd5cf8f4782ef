// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exit latency, in the kernel: when a vCPU thread leaves the guest
 * (kvm_exit) and when it returns to the VMM (kvm_userspace_exit), the
 * time and reason are kept per thread and kind; when the same thread
 * enters the guest again (kvm_entry ends both; the start of KVM_RUN,
 * fentry kvm_arch_vcpu_ioctl_run or kvm_fpu(load), ends the time in the
 * VMM where kvm_entry never fires) the gap goes into a log2 histogram of
 * nanoseconds per (process, thread, kind, reason), with count, total,
 * min and max. Nothing per exit leaves the kernel: the reader walks the
 * histograms. A separate object from the counting programs, loaded only
 * when latency is asked for.
 */
/* in this order: the helpers' declarations use the kernel's types */
#include <linux/types.h>

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lat_hist.h"
#include "lat_shared.h"
#include "vcpu_reason.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 lat_tgid = 0;	/* only this process; 0: all */
const volatile __u32 lat_exit_off = 0;	/* kvm_exit's reason in its record */
const volatile __u32 lat_exit_size = 4; /* 1, 2, 4 or 8 */
const volatile __u32 lat_isa_off = 0;	/* its guard field (isa) */
const volatile __u32 lat_isa_size = 0;	/* 0: none */
const volatile __s64 lat_isa_guard = 0;
const volatile __u32 lat_uexit_off = 0;	 /* kvm_userspace_exit's, when read */
const volatile __u32 lat_uexit_size = 4; /* from the record (tests) */
/* kvm_exit's reason in the vCPU's structs, for lat_exit_vcpu; in its
 * raw arguments, for lat_exit_arg */
const volatile struct ks_vcpu_cfg lat_vcpu = {};
const volatile struct ks_arg_cfg lat_earg = {};

/* The KVM_RUN mark on raw_syscalls:sys_enter (measured, not chosen: it
 * runs on every system call of the host): the ioctl number, KVM_RUN, and
 * where the second argument sits in struct pt_regs. */
const volatile __u64 lat_sys_ioctl = 0;
const volatile __u64 lat_sys_kvm_run = 0;
const volatile __u32 lat_sys_arg1_off = 0;

/* Set once kvm_entry has fired: from then on it ends the time in the VMM
 * and the KVM_RUN marks leave at once (kvm_entry first where it fires). */
__u32 lat_entry_fired = 0;

/* Exits in flight, by thread: in the thread's own task storage where the
 * kernel has it (a pointer from the task, no hashing), else in an LRU hash
 * by thread id (the *_h programs; the loader picks one set). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lat_start);
} lat_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lat_start);
} lat_starts SEC(".maps");

/*
 * The histograms: values in an array, by slot; which histogram a slot
 * holds in lat_owner (slot to key: what the reader walks), and the way
 * back in lat_index (key to slot). A thread keeps the slot of its last
 * histogram of each kind in its state, so an exit of the same kind and
 * reason as the one before costs an array lookup, not a hash lookup.
 * Slots are taken in order and never given back (a reset zeroes them).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LAT_NSLOTS);
	__type(key, __u32);
	__type(value, struct lat_val);
} lat_vals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LAT_NSLOTS);
	__type(key, __u32);
	__type(value, struct lat_key);
} lat_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LAT_NSLOTS);
	__type(key, struct lat_key);
	__type(value, __u32);
} lat_index SEC(".maps");

/* Slots below this are taken (a hint: lat_owner decides). */
__u32 lat_nslots = 0;

static __always_inline int lat_mine(__u64 *id)
{
	*id = bpf_get_current_pid_tgid();
	return !lat_tgid || (__u32)(*id >> 32) == lat_tgid;
}

/* The thread's exits in flight, made when create and absent; NULL when
 * it has none (or none could be made). */
static __always_inline struct lat_start *lat_state(int task, __u32 tid,
						   int create)
{
	struct lat_start *s, z = {};

	if (task)
		return bpf_task_storage_get(&lat_task,
					    bpf_get_current_task_btf(), 0,
					    create ?
						    BPF_LOCAL_STORAGE_GET_F_CREATE :
						    0);
	s = bpf_map_lookup_elem(&lat_starts, &tid);
	if (s || !create)
		return s;
	bpf_map_update_elem(&lat_starts, &tid, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&lat_starts, &tid);
}

static __always_inline void lat_begin(int task, __u32 kind, __u32 cls,
				      __u64 reason)
{
	struct lat_start *s;
	__u64 id;

	if (!lat_mine(&id) || kind >= LAT_NKINDS)
		return;
	s = lat_state(task, (__u32)id, 1);
	if (!s)
		return;
	s->ts[kind] = bpf_ktime_get_ns();
	if (kind == LAT_EXIT)
		s->exit_last = 0;
	s->cls[kind] = cls;
	s->reason[kind] = (__u32)reason;
}

/* The slot of k's histogram, taken when it has none; -1 when none can be
 * (all taken). A new one is the first free slot from the hint: the
 * kernel's insertion into lat_owner (BPF_NOEXIST) decides between CPUs
 * taking one at once. */
static __always_inline __s64 lat_slot_new(struct lat_key *k)
{
	__u32 *p = bpf_map_lookup_elem(&lat_index, k), slot = lat_nslots;

	if (p)
		return *p;
#pragma unroll
	for (int i = 0; i < 8; i++, slot++) {
		if (slot >= LAT_NSLOTS)
			return -1;
		if (bpf_map_update_elem(&lat_owner, &slot, k, BPF_NOEXIST))
			continue;
		if (slot >= lat_nslots)
			lat_nslots = slot + 1;
		/* only this thread looks k up, so none took it meanwhile */
		if (bpf_map_update_elem(&lat_index, k, &slot, BPF_NOEXIST))
			return -1;
		return slot;
	}
	return -1;
}

/* Adds d ns to the histogram of key k, of the thread whose state is s. */
static __always_inline void lat_add(struct lat_start *s, struct lat_key *k,
				    __u64 d)
{
	__u32 kind = k->kind, slot;
	struct lat_val *v;

	if (kind >= LAT_NKINDS)
		return;
	if (s->hslot[kind] && s->hreason[kind] == k->reason &&
	    s->hcls[kind] == k->cls) {
		slot = s->hslot[kind] - 1;
	} else {
		__s64 n = lat_slot_new(k);

		if (n < 0)
			return;
		slot = (__u32)n;
		s->hslot[kind] = slot + 1;
		s->hreason[kind] = k->reason;
		s->hcls[kind] = k->cls;
	}
	v = bpf_map_lookup_elem(&lat_vals, &slot);
	if (!v)
		return;
	/* only this thread writes this slot, and it runs on one CPU */
	lat_hist_add(v, d);
}

/* Closes the thread's exit of kind in flight, if any, at now. */
static __always_inline void lat_close(struct lat_start *s, __u64 id, __u32 kind,
				      __u64 now)
{
	struct lat_key k = {};
	__u64 t = s->ts[kind], d;

	if (!t)
		return;
	s->ts[kind] = 0;
	d = now > t ? now - t : 0;
	if (kind == LAT_EXIT)
		s->exit_last = d ? d : 1;
	k.tgid = id >> 32;
	k.tid = (__u32)id;
	k.kind = kind;
	k.cls = s->cls[kind];
	k.reason = s->reason[kind];
	lat_add(s, &k, d);
}

/* The thread enters the guest again: closes its exits in flight (only the
 * time in the VMM when all is false). */
static __always_inline void lat_end(int task, int all)
{
	struct lat_start *s;
	__u64 id, now;

	if (all && !lat_entry_fired)
		lat_entry_fired = 1;
	else if (!all && lat_entry_fired)
		return;
	if (!lat_mine(&id))
		return;
	s = lat_state(task, (__u32)id, 0);
	if (!s)
		return;
	now = bpf_ktime_get_ns();
	lat_close(s, id, LAT_VMM, now);
	if (all)
		lat_close(s, id, LAT_EXIT, now);
}

static __always_inline __u64 lat_field(void *rec, __u32 off, __u32 size)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (char *)rec + off);
	return size >= 8 ? v : v & ((1ull << (size * 8)) - 1);
}

/*
 * The programs, each twice: with the thread's state in task storage (task
 * 1, the name as is) and in the LRU hash (task 0, the name with _h).
 *  lat_exit_vcpu: kvm_exit(vcpu, isa), its reason read from the vCPU's
 *   structs (vcpu_reason.h); an exit whose reason cannot be read is not
 *   timed.
 *  lat_exit_arg: kvm_exit(ret, esr_ec, vcpu_pc) on arm64, its reason
 *   from the raw arguments (vcpu_reason.h).
 *  lat_exit_rec: kvm_exit, its reason from the trace record (where
 *   neither the kernel's BTF nor the arguments say where it is).
 *  lat_uexit_raw: kvm_userspace_exit(u32 reason, int errno), reason arg 0.
 *  lat_uexit_rec: kvm_userspace_exit read from its record (a tracepoint
 *   standing in for it, in tests).
 *  lat_entry_raw: kvm_entry, the thread runs the guest again: ends its
 *   exit (kvm_exit on) and its time in the VMM where no mark ended it.
 *  lat_run_fentry: the start of KVM_RUN, the VMM hands the vCPU back:
 *   ends only a return to the VMM (an exit handled in the kernel ends at
 *   kvm_entry).
 *  lat_fpu_raw: kvm_fpu(load), the guest's FPU state loaded on the way
 *   into the guest, once per KVM_RUN (the other re-entry mark); kvm_fpu
 *   (put), as often, leaves at once.
 *  lat_sys_raw: raw_syscalls:sys_enter(regs, id), an ioctl KVM_RUN: the
 *   start of KVM_RUN where nothing else marks it (every other system call
 *   of the host leaves at the first test).
 */
#define LAT_PROGS(sfx, task)                                                    \
	SEC("raw_tp")                                                           \
	int lat_exit_vcpu##sfx(struct bpf_raw_tracepoint_args *ctx)             \
	{                                                                       \
		__u64 reason;                                                   \
		__u32 cls;                                                      \
                                                                                \
		if (!vcpu_reason_read(&lat_vcpu, ctx, &reason, &cls))           \
			lat_begin(task, LAT_EXIT, cls, reason);                 \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp")                                                           \
	int lat_exit_arg##sfx(struct bpf_raw_tracepoint_args *ctx)              \
	{                                                                       \
		lat_begin(task, LAT_EXIT, 0, arg_reason_read(&lat_earg, ctx));  \
		return 0;                                                       \
	}                                                                       \
	SEC("tracepoint")                                                       \
	int lat_exit_rec##sfx(void *rec)                                        \
	{                                                                       \
		__u32 cls = 0;                                                  \
                                                                                \
		if (lat_isa_size)                                               \
			cls = lat_field(rec, lat_isa_off, lat_isa_size) ==      \
			      (__u64)lat_isa_guard;                             \
		lat_begin(task, LAT_EXIT, cls,                                  \
			  lat_field(rec, lat_exit_off, lat_exit_size));         \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp")                                                           \
	int lat_uexit_raw##sfx(struct bpf_raw_tracepoint_args *ctx)             \
	{                                                                       \
		lat_begin(task, LAT_VMM, 0, (__u32)ctx->args[0]);               \
		return 0;                                                       \
	}                                                                       \
	SEC("tracepoint")                                                       \
	int lat_uexit_rec##sfx(void *rec)                                       \
	{                                                                       \
		lat_begin(task, LAT_VMM, 0,                                     \
			  lat_field(rec, lat_uexit_off, lat_uexit_size));       \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp")                                                           \
	int lat_entry_raw##sfx(void *ctx)                                       \
	{                                                                       \
		lat_end(task, 1);                                               \
		return 0;                                                       \
	}                                                                       \
	SEC("fentry/kvm_arch_vcpu_ioctl_run")                                   \
	int BPF_PROG(lat_run_fentry##sfx)                                       \
	{                                                                       \
		lat_end(task, 0);                                               \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp")                                                           \
	int lat_fpu_raw##sfx(struct bpf_raw_tracepoint_args *ctx)               \
	{                                                                       \
		if (ctx->args[0])                                               \
			lat_end(task, 0);                                       \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp")                                                           \
	int lat_sys_raw##sfx(struct bpf_raw_tracepoint_args *ctx)               \
	{                                                                       \
		__u64 cmd = 0;                                                  \
                                                                                \
		if (ctx->args[1] != lat_sys_ioctl)                              \
			return 0;                                               \
		bpf_probe_read_kernel(&cmd, sizeof(cmd),                        \
				      (char *)ctx->args[0] + lat_sys_arg1_off); \
		if ((__u32)cmd == (__u32)lat_sys_kvm_run)                       \
			lat_end(task, 0);                                       \
		return 0;                                                       \
	}

LAT_PROGS(, 1)
LAT_PROGS(_h, 0)
