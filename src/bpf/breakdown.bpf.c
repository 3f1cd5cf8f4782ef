// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exits broken down below the reason, in the kernel (--breakdown): each
 * hit of kvm_pio, kvm_mmio, kvm_msr or kvm_hypercall counts under its key
 * (port, guest physical address, MSR index, hypercall number) and
 * direction, per thread, in one fixed-size hash; keys past its bound count
 * as their kind's "other". With latency on, the hit also starts a clock
 * for the thread, which its next entry into the guest stops (kvm_entry,
 * or kvm_fpu(load) where kvm_entry never fires, as the latency programs
 * mark re-entry), the gap going into a log2 histogram of that key. A
 * separate object from the counting and latency programs, loaded only
 * when a breakdown is asked for.
 */
/* in this order: the helpers' declarations use the kernel's types */
#include <linux/types.h>

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

#include "brk_shared.h"
#include "lat_hist.h"
#include "lat_shared.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 brk_tgid = 0;  /* only this process; 0: all */
const volatile __u32 brk_timed = 0; /* time to re-entry per key */
/* Where the record programs (a tracepoint standing in for a kvm one, in
 * tests) find the key and the direction, per kind; size 0: absent. */
const volatile __u32 brk_key_off[BRK_NKINDS] = {};
const volatile __u32 brk_key_size[BRK_NKINDS] = {};
const volatile __u32 brk_dir_off[BRK_NKINDS] = {};
const volatile __u32 brk_dir_size[BRK_NKINDS] = {};

/* Keys taken in brk_counts (a hint for the bound: a few more may slip
 * in when CPUs race, which BRK_NOTHER's room absorbs). */
__u32 brk_nkeys = 0;
/* kvm_entry has fired: from then on it alone ends a time. */
__u32 brk_entry_fired = 0;

/* The counts, per CPU: a hit adds without a locked instruction. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, struct brk_key);
	__type(value, __u64);
} brk_counts SEC(".maps");

/* The histograms (max_entries 1 unless timed). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, struct brk_key);
	__type(value, struct lat_val);
} brk_hists SEC(".maps");

/* A thread's hit waiting for its re-entry (max_entries 1 unless timed). */
struct brk_pending {
	__u64 ts;
	struct brk_key k;
	__u32 counted; /* 0: an unsatisfied MMIO read, counted when the read
			* completes */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct brk_pending);
} brk_pend SEC(".maps");

static __always_inline void brk_start(struct brk_key *k, __u32 counted)
{
	struct brk_pending *p, n = {};

	p = bpf_map_lookup_elem(&brk_pend, &k->tid);
	/* the completion of the read that went to the VMM: same exit */
	if (p && p->ts && !p->counted && counted && p->k.key == k->key &&
	    p->k.kind == k->kind) {
		p->counted = 1;
		return;
	}
	n.ts = bpf_ktime_get_ns();
	n.k = *k;
	n.counted = counted;
	bpf_map_update_elem(&brk_pend, &k->tid, &n, BPF_ANY);
}

/* Counts one hit of kind at key; count 0 only starts the clock. */
static __always_inline void brk_hit(__u32 kind, __u64 key, __u32 dir,
				    __u32 count)
{
	__u64 id = bpf_get_current_pid_tgid(), zero = 0, *c;
	struct brk_key k = {};

	if (brk_tgid && (__u32)(id >> 32) != brk_tgid)
		return;
	k.tgid = id >> 32;
	k.tid = (__u32)id;
	k.key = key;
	k.kind = kind;
	k.dir = dir;
	if (count) {
		c = bpf_map_lookup_elem(&brk_counts, &k);
		if (!c) {
			if (brk_nkeys >= BRK_NKEYS)
				k.key = BRK_OTHER;
			if (!bpf_map_update_elem(&brk_counts, &k, &zero,
						 BPF_NOEXIST) &&
			    k.key != BRK_OTHER)
				__sync_fetch_and_add(&brk_nkeys, 1);
			c = bpf_map_lookup_elem(&brk_counts, &k);
			if (!c)
				return;
		}
		*c += 1;
	}
	if (brk_timed)
		brk_start(&k, count);
}

/* The thread enters the guest again: its hit's time goes to the key's
 * histogram (all: kvm_entry; else the KVM_RUN mark, while kvm_entry has
 * not fired). */
static __always_inline void brk_end(int all)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct brk_pending *p;
	struct lat_val *v, z = {};
	__u64 now, d;

	if (all && !brk_entry_fired)
		brk_entry_fired = 1;
	else if (!all && brk_entry_fired)
		return;
	p = bpf_map_lookup_elem(&brk_pend, &tid);
	if (!p || !p->ts)
		return;
	now = bpf_ktime_get_ns();
	d = now > p->ts ? now - p->ts : 0;
	p->ts = 0;
	if (!p->counted)
		return;
	v = bpf_map_lookup_elem(&brk_hists, &p->k);
	if (!v) {
		bpf_map_update_elem(&brk_hists, &p->k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&brk_hists, &p->k);
		if (!v)
			return;
	}
	/* only this thread writes its keys' histograms */
	lat_hist_add(v, d);
}

static __always_inline __u64 brk_field(void *rec, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (!size)
		return 0;
	bpf_probe_read_kernel(&v, sizeof(v), (char *)rec + off);
	return size >= 8 ? v : v & ((1ull << (size * 8)) - 1);
}

/* kvm_mmio's type: 0 a read that goes to the VMM (counted when it
 * completes, as type 1), 1 read, 2 write. */
static __always_inline void brk_mmio(__u64 type, __u64 gpa)
{
	brk_hit(BRK_MMIO, gpa, type == 2, type != 0);
}

/*
 * The raw tracepoints, their arguments as the kernel's TP_PROTO orders
 * them (and BTF's btf_trace_* types show):
 *  kvm_pio(rw, port, size, count, data)
 *  kvm_mmio(type, len, gpa, val)
 *  kvm_msr(write, ecx, data, exception)
 *  kvm_hypercall(nr, a0, a1, a2, a3)
 */
SEC("raw_tp")
int brk_pio_raw(struct bpf_raw_tracepoint_args *ctx)
{
	brk_hit(BRK_IOPORT, (__u32)ctx->args[1], !!(__u32)ctx->args[0], 1);
	return 0;
}

SEC("raw_tp")
int brk_mmio_raw(struct bpf_raw_tracepoint_args *ctx)
{
	brk_mmio((__u32)ctx->args[0], ctx->args[2]);
	return 0;
}

SEC("raw_tp")
int brk_msr_raw(struct bpf_raw_tracepoint_args *ctx)
{
	brk_hit(BRK_MSR, (__u32)ctx->args[1], !!(__u32)ctx->args[0], 1);
	return 0;
}

SEC("raw_tp")
int brk_hc_raw(struct bpf_raw_tracepoint_args *ctx)
{
	brk_hit(BRK_HYPERCALL, ctx->args[0], 0, 1);
	return 0;
}

/* The same from a trace record, the fields where the loader says. */
#define BRK_REC(name, kind)                                                   \
	SEC("tracepoint")                                                     \
	int name(void *rec)                                                   \
	{                                                                     \
		__u64 key = brk_field(rec, brk_key_off[kind],                 \
				      brk_key_size[kind]);                    \
		__u64 dir = brk_field(rec, brk_dir_off[kind],                 \
				      brk_dir_size[kind]);                    \
                                                                              \
		if (kind == BRK_MMIO)                                         \
			brk_mmio(dir, key);                                   \
		else                                                          \
			brk_hit(kind, key, kind != BRK_HYPERCALL && dir != 0, \
				1);                                           \
		return 0;                                                     \
	}

BRK_REC(brk_pio_rec, BRK_IOPORT)
BRK_REC(brk_mmio_rec, BRK_MMIO)
BRK_REC(brk_msr_rec, BRK_MSR)
BRK_REC(brk_hc_rec, BRK_HYPERCALL)

/* Re-entry: kvm_entry, and kvm_fpu(load) once per KVM_RUN. */
SEC("raw_tp")
int brk_entry_raw(void *ctx)
{
	brk_end(1);
	return 0;
}

SEC("raw_tp")
int brk_fpu_raw(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[0])
		brk_end(0);
	return 0;
}
