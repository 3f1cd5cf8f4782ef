// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmstat's counting programs: run in the kernel on every hit of a kvm
 * tracepoint and bump a per-CPU counter, the "slot" of the event or of one
 * of its exit reasons. Plain events and kvm_userspace_exit are raw
 * tracepoints (the kernel's arguments, no trace record is filled).
 * x86's kvm_exit's raw arguments are the vCPU and the ISA, not the reason:
 * where the kernel's BTF gives the vendor's vCPU struct, a raw program
 * reads the reason there; arm64's hold it, which a raw program reads;
 * elsewhere a program on the trace record reads it from the record (which
 * takes a perf event). Reasons become slots through a
 * table the loader fills; reasons it does not know go to a small hash.
 * With per-thread counting on (the per-VM and per-vCPU rows), each hit is
 * also counted under (tgid, tid, slot); with a tgid set (-p), only that
 * process's hits count. Both are read-only data, fixed at load time, so
 * the verifier drops the code a run does not use.
 */
/* in this order: the helpers' declarations use the kernel's types */
#include <linux/types.h>

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

#include "bpf_shared.h"
#include "vcpu_reason.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 ks_tgid = 0;	/* count only this process; 0: all */
const volatile __u32 ks_per_thread = 0; /* also count per thread */
const volatile __u32 ks_uexit_parent = KS_NONE; /* kvm_userspace_exit */
const volatile __u32 ks_uexit_src = 0;
const volatile __u32 ks_other_slot = 0; /* counts hits of ks_other */
const volatile __u32 ks_stride = 0;	/* slots per CPU in ks_counts */
const volatile struct ks_rec_cfg ks_rec[KS_NREC] = {};
const volatile struct ks_vcpu_cfg ks_vcpu = {};
const volatile struct ks_arg_cfg ks_earg = {};

/* Count per CPU and slot, at cpu * ks_stride + slot: CPU-private like a
 * per-CPU array, but mapped into the reader, which sums it without a
 * system call. The loader sets the size. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ks_counts SEC(".maps");

/* KS_SLOT_KEY(source, class, reason) -> slot + 1; 0: unknown reason. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_NSRC * 2 * KS_MAXR);
	__type(key, __u32);
	__type(value, __u32);
} ks_slots SEC(".maps");

/* Per-thread counts; the loader sizes it (1 when unused). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1);
	__type(key, struct ks_thread_key);
	__type(value, __u64);
} ks_threads SEC(".maps");

/* Thread id -> the vCPU it runs (struct ks_tvcpu), noted at a thread's
 * first kvm_exit hits (those that add its per-thread keys), so a reader
 * knows every vCPU thread that has exited whatever the VMM names it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ks_tvcpu);
} ks_tvcpus SEC(".maps");

/* Notes added to ks_tvcpus: a reader walks that map only when it moved. */
__u64 ks_tvcpu_adds = 0;

/* Notes that thread id (tgid << 32 | tid) runs vCPU vcpu. */
static __always_inline void ks_note_vcpu(__u64 id, __s32 vcpu)
{
	struct ks_tvcpu t = { .tgid = id >> 32, .vcpu = vcpu };
	__u32 tid = (__u32)id;

	if (!bpf_map_update_elem(&ks_tvcpus, &tid, &t, BPF_ANY))
		__sync_fetch_and_add(&ks_tvcpu_adds, 1);
}

/* The same, the vCPU's id read from the struct kvm_vcpu at vcpu, id_off
 * bytes in (-1: not known, nothing noted). */
static __always_inline void ks_note_vcpu_at(__u64 id, const void *vcpu,
					    __s32 id_off)
{
	__s32 v;

	if (id_off >= 0 &&
	    !bpf_probe_read_kernel(&v, sizeof(v), (const char *)vcpu + id_off))
		ks_note_vcpu(id, v);
}

/* Reasons without a slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ks_other_key);
	__type(value, __u64);
} ks_other SEC(".maps");

/* Whether this hit counts (the -p process, or any); *id: tgid << 32 | tid,
 * 0 when neither -p nor per-thread counts need it: the verifier knows the
 * read-only settings and drops the helper call then (a hit costs less). */
static __always_inline int ks_mine(__u64 *id)
{
	if (!ks_tgid && !ks_per_thread) {
		*id = 0;
		return 1;
	}
	*id = bpf_get_current_pid_tgid();
	return !ks_tgid || (__u32)(*id >> 32) == ks_tgid;
}

/* Counts a hit in slot; with per-thread counting, 1 when the thread had
 * no key of that slot yet (its first hits), else 0. */
static __always_inline int ks_count(__u64 id, __u32 slot)
{
	struct ks_thread_key k = {};
	__u32 i = bpf_get_smp_processor_id() * ks_stride + slot;
	__u64 *c = bpf_map_lookup_elem(&ks_counts, &i), one = 1;

	if (c)
		*c += 1;
	if (!ks_per_thread)
		return 0;
	k.tgid = id >> 32;
	k.tid = (__u32)id;
	k.slot = slot;
	c = bpf_map_lookup_elem(&ks_threads, &k);
	if (c) {
		*c += 1;
		return 0;
	}
	bpf_map_update_elem(&ks_threads, &k, &one, BPF_NOEXIST);
	return 1;
}

/* Counts a reason of child source src, through the slot table; 1 as
 * ks_count, for a new per-thread key. */
static __always_inline int ks_child(__u64 id, __u32 src, __u32 cls, __u64 reason)
{
	struct ks_other_key k = {};
	__u32 os = bpf_get_smp_processor_id() * ks_stride + ks_other_slot;
	__u64 *c, one = 1;

	if (reason < KS_MAXR) {
		__u32 key = KS_SLOT_KEY(src, cls, (__u32)reason);
		__u32 *s = bpf_map_lookup_elem(&ks_slots, &key);

		if (s && *s)
			return ks_count(id, *s - 1);
	}
	k.src = src;
	k.cls = cls;
	k.reason = (__u32)reason;
	if (ks_per_thread) {
		k.tgid = id >> 32;
		k.tid = (__u32)id;
	}
	c = bpf_map_lookup_elem(&ks_other, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
	else if (bpf_map_update_elem(&ks_other, &k, &one, BPF_NOEXIST))
		if ((c = bpf_map_lookup_elem(&ks_other, &k)))
			__sync_fetch_and_add(c, 1);
	/* after the update: a reader that sees this count finds the key */
	c = bpf_map_lookup_elem(&ks_counts, &os);
	if (c)
		*c += 1;
	return 0;
}

/* Plain counter number abcd (base-4 digits, 0000..3333 = 0..255): slot
 * a*64 + b*16 + c*4 + d. */
#define KS_PLAIN(a, b, c, d)                                         \
	SEC("raw_tp")                                                \
	int ks_plain_##a##b##c##d(void *ctx)                         \
	{                                                            \
		__u64 id;                                            \
                                                                     \
		if (ks_mine(&id))                                    \
			ks_count(id, (a)*64 + (b)*16 + (c)*4 + (d)); \
		return 0;                                            \
	}
#define KS_PLAIN4(a, b, c)   \
	KS_PLAIN(a, b, c, 0) \
	KS_PLAIN(a, b, c, 1) KS_PLAIN(a, b, c, 2) KS_PLAIN(a, b, c, 3)
#define KS_PLAIN16(a, b)   \
	KS_PLAIN4(a, b, 0) \
	KS_PLAIN4(a, b, 1) KS_PLAIN4(a, b, 2) KS_PLAIN4(a, b, 3)
#define KS_PLAIN64(a) \
	KS_PLAIN16(a, 0) KS_PLAIN16(a, 1) KS_PLAIN16(a, 2) KS_PLAIN16(a, 3)

KS_PLAIN64(0)
KS_PLAIN64(1)
KS_PLAIN64(2)
KS_PLAIN64(3)

/* Every plain event at once where the kernel gives raw tracepoints
 * attach cookies (6.10+): one program, attached once per event with the
 * event's slot as the cookie, loaded once instead of once per event. */
SEC("raw_tp")
int ks_plain_cookie(void *ctx)
{
	__u64 id;

	if (ks_mine(&id))
		ks_count(id, (__u32)bpf_get_attach_cookie(ctx));
	return 0;
}

/* A plain event whose first raw argument is the vCPU (kvm_exit counted
 * without its reasons): counted in ks_pv_slot; a thread's first hits note
 * which vCPU it runs, as ks_exit_vcpu's do. */
const volatile __u32 ks_pv_slot = 0;
const volatile __s32 ks_pv_id_off = -1;

SEC("raw_tp")
int ks_plain_vcpu(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id;

	if (!ks_mine(&id))
		return 0;
	if (ks_count(id, ks_pv_slot))
		ks_note_vcpu_at(id, (const void *)ctx->args[0], ks_pv_id_off);
	return 0;
}

/* kvm_userspace_exit(u32 reason, int errno): the reason is argument 0. */
SEC("raw_tp")
int ks_uexit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id;

	if (!ks_mine(&id))
		return 0;
	if (ks_uexit_parent != KS_NONE)
		ks_count(id, ks_uexit_parent);
	ks_child(id, ks_uexit_src, 0, (__u32)ctx->args[0]);
	return 0;
}

/*
 * kvm_exit(vcpu, isa) on x86: the reason read where the kernel's record
 * copies it from (the VMCB's exit code, vcpu_vmx's exit reason), at the
 * offsets the loader found in the kernel's BTF. A raw tracepoint, so no
 * perf event (which kernel.perf_event_paranoid 3 keeps from all but
 * CAP_SYS_ADMIN) and no record to fill. A hit whose reason cannot be read
 * (vcpu_reason.h) counts for the parent only.
 */
SEC("raw_tp")
int ks_exit_vcpu(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id, reason;
	__u32 cls;
	int added = 0;

	if (!ks_mine(&id))
		return 0;
	if (ks_vcpu.parent_slot != KS_NONE)
		added = ks_count(id, ks_vcpu.parent_slot);
	if (!vcpu_reason_read(&ks_vcpu, ctx, &reason, &cls))
		added |= ks_child(id, ks_vcpu.src, cls, reason);
	/* a thread's first hits (a new key): which vCPU it runs */
	if (added)
		ks_note_vcpu_at(id, (const void *)ctx->args[0], ks_vcpu.id_off);
	return 0;
}

/*
 * kvm_exit(ret, esr_ec, vcpu_pc) on arm64: the reason from the raw
 * arguments (vcpu_reason.h), as the record holds it, with no perf event
 * and no record to fill. No vCPU to note: the thread's is what /proc
 * shows of it.
 */
SEC("raw_tp")
int ks_exit_arg(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id;

	if (!ks_mine(&id))
		return 0;
	if (ks_earg.parent_slot != KS_NONE)
		ks_count(id, ks_earg.parent_slot);
	ks_child(id, ks_earg.src, 0, arg_reason_read(&ks_earg, ctx));
	return 0;
}

static __always_inline __u64 ks_field(void *rec, __u32 off, __u32 size)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (char *)rec + off);
	return size >= 8 ? v : v & ((1ull << (size * 8)) - 1);
}

/* A tracepoint whose reason sits in its trace record, as ks_rec[i] says. */
static __always_inline int ks_record(void *rec, int i)
{
	__u64 id, reason;
	__u32 cls = 0;
	int added = 0;

	if (!ks_mine(&id))
		return 0;
	if (ks_rec[i].parent_slot != KS_NONE)
		added = ks_count(id, ks_rec[i].parent_slot);
	reason = ks_field(rec, ks_rec[i].reason_off, ks_rec[i].reason_size);
	if (ks_rec[i].isa_size)
		cls = ks_field(rec, ks_rec[i].isa_off, ks_rec[i].isa_size) ==
		      (__u64)ks_rec[i].isa_guard;
	added |= ks_child(id, ks_rec[i].src, cls, reason);
	/* a thread's first hits: the vCPU the record names */
	if (added && ks_rec[i].id_size == 4)
		ks_note_vcpu(id, (__s32)ks_field(rec, ks_rec[i].id_off, 4));
	return 0;
}

SEC("tracepoint")
int ks_rec_0(void *rec)
{
	return ks_record(rec, 0);
}

SEC("tracepoint")
int ks_rec_1(void *rec)
{
	return ks_record(rec, 1);
}

SEC("tracepoint")
int ks_rec_2(void *rec)
{
	return ks_record(rec, 2);
}

SEC("tracepoint")
int ks_rec_3(void *rec)
{
	return ks_record(rec, 3);
}
