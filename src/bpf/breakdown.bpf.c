// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exits broken down below the reason, in the kernel (--breakdown): each
 * hit of kvm_pio, kvm_mmio, kvm_msr or kvm_hypercall counts under its key
 * (port, guest physical address, MSR index, hypercall number) and
 * direction, per thread, in a fixed-size array of slots; keys past its
 * bound count as their kind's "other". With latency on, the hit also starts a clock
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

/* Slots taken (hints: brk_owner decides): of keys, below BRK_NKEYS, and
 * of others, from BRK_NKEYS on. */
__u32 brk_nkeys = 0;
__u32 brk_nother = 0;
/* kvm_entry has fired: from then on it alone ends a time. */
__u32 brk_entry_fired = 0;

/*
 * The counts, one slot per key of a thread, in an array the reader maps
 * (no system call per key): a slot is taken once, by the one thread whose
 * key it holds, which alone
 * adds to it afterwards (a thread runs on one CPU at a time), so a hit
 * needs no locked instruction. brk_index finds a key's slot; each CPU
 * keeps the slot of its last hit in brk_hint, checked against the slot's
 * key, so a thread hitting the same key as before costs two array
 * lookups, no hash. Slots are claimed in brk_owner (without the atomic
 * fetch that older BPF targets lack) and never given back.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, __u32);
	__type(value, struct brk_slot);
} brk_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, struct brk_key);
	__type(value, __u32);
} brk_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} brk_hint SEC(".maps");

/* The slots claimed (slot to 1). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, __u32);
	__type(value, __u32);
} brk_owner SEC(".maps");

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

/* In the thread's own task storage where the kernel has it (a pointer
 * from the task, no hashing: the timed hit's cost), else in an LRU hash
 * by thread id (the *_h programs; the loader picks one set, and creates
 * one of the two maps), as the latency programs keep theirs. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct brk_pending);
} brk_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct brk_pending);
} brk_pend SEC(".maps");

/* The thread's pending hit, made when create and absent; NULL when it has
 * none (or none could be made). */
static __always_inline struct brk_pending *brk_pending(int task, __u32 tid,
						       int create)
{
	struct brk_pending *p, z = {};

	if (task)
		return bpf_task_storage_get(&brk_task,
					    bpf_get_current_task_btf(), 0,
					    create ?
						    BPF_LOCAL_STORAGE_GET_F_CREATE :
						    0);
	p = bpf_map_lookup_elem(&brk_pend, &tid);
	if (p || !create)
		return p;
	bpf_map_update_elem(&brk_pend, &tid, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&brk_pend, &tid);
}

static __always_inline void brk_start(int task, struct brk_key *k, __u32 counted)
{
	struct brk_pending *p = brk_pending(task, k->tid, 1);

	if (!p)
		return;
	/* the completion of the read that went to the VMM: same exit */
	if (p->ts && !p->counted && counted && p->k.key == k->key &&
	    p->k.kind == k->kind) {
		p->counted = 1;
		return;
	}
	/* in place: an update would take a new element each hit */
	p->k = *k;
	p->counted = counted;
	p->ts = bpf_ktime_get_ns();
}

static __always_inline int brk_same(const struct brk_key *a,
				    const struct brk_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

/* A free slot of [base, base + n) from the hint *taken (slots below it
 * are taken), claimed in brk_owner, whose insertion decides between CPUs
 * claiming one at once; -1 when none is left. */
static __always_inline __s64 brk_take(__u32 base, __u32 n, __u32 *taken)
{
	__u32 i = *taken, one = 1, slot;

#pragma unroll
	for (int t = 0; t < 8; t++, i++) {
		if (i >= n)
			return -1;
		slot = base + i;
		if (bpf_map_update_elem(&brk_owner, &slot, &one, BPF_NOEXIST))
			continue;
		if (i >= *taken)
			*taken = i + 1;
		return slot;
	}
	return -1;
}

/* A new slot for k: from the keys' while they last (else k becomes its
 * kind's other), from the others' for an other; -1 when none is left. */
static __always_inline __s64 brk_claim(struct brk_key *k)
{
	struct brk_slot *s;
	__s64 slot = -1;
	__u32 *p, n;

	if (k->key != BRK_OTHER) {
		slot = brk_take(0, BRK_NKEYS, &brk_nkeys);
		if (slot < 0) {
			k->key = BRK_OTHER;
			p = bpf_map_lookup_elem(&brk_index, k);
			if (p)
				return *p;
		}
	}
	if (slot < 0)
		slot = brk_take(BRK_NKEYS, BRK_NOTHER, &brk_nother);
	if (slot < 0)
		return -1;
	n = (__u32)slot;
	s = bpf_map_lookup_elem(&brk_slots, &n);
	if (!s)
		return -1;
	/* the key first: a reader that sees the count sees whose it is */
	s->k = *k;
	/* only this thread makes its keys: none can be there already */
	if (bpf_map_update_elem(&brk_index, k, &n, BPF_NOEXIST))
		return -1;
	return slot;
}

/* Counts one hit of kind at key; count 0 only starts the clock. */
static __always_inline void brk_hit(int task, __u32 kind, __u64 key, __u32 dir,
				    __u32 count)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct brk_key k = {};
	struct brk_slot *s = NULL;
	__u32 zero = 0, *hint, *p;
	__s64 slot;

	if (brk_tgid && (__u32)(id >> 32) != brk_tgid)
		return;
	k.tgid = id >> 32;
	k.tid = (__u32)id;
	k.key = key;
	k.kind = kind;
	k.dir = dir;
	if (count) {
		hint = bpf_map_lookup_elem(&brk_hint, &zero);
		if (hint) {
			s = bpf_map_lookup_elem(&brk_slots, hint);
			if (s && !brk_same(&s->k, &k))
				s = NULL;
		}
		if (!s) {
			p = bpf_map_lookup_elem(&brk_index, &k);
			slot = p ? *p : brk_claim(&k);
			if (slot < 0)
				return;
			s = bpf_map_lookup_elem(&brk_slots, &(__u32){ slot });
			if (!s)
				return;
			if (hint)
				*hint = (__u32)slot;
		}
		s->count += 1;
	}
	if (brk_timed)
		brk_start(task, &k, count);
}

/* The thread enters the guest again: its hit's time goes to the key's
 * histogram (all: kvm_entry; else the KVM_RUN mark, while kvm_entry has
 * not fired). */
static __always_inline void brk_end(int task, int all)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct brk_pending *p;
	struct lat_val *v, z = {};
	__u64 now, d;

	if (all && !brk_entry_fired)
		brk_entry_fired = 1;
	else if (!all && brk_entry_fired)
		return;
	p = brk_pending(task, tid, 0);
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
static __always_inline void brk_mmio(int task, __u64 type, __u64 gpa)
{
	brk_hit(task, BRK_MMIO, gpa, type == 2, type != 0);
}

/*
 * The raw tracepoints, their arguments as the kernel's TP_PROTO orders
 * them (and BTF's btf_trace_* types show):
 *  kvm_pio(rw, port, size, count, data)
 *  kvm_mmio(type, len, gpa, val)
 *  kvm_msr(write, ecx, data, exception)
 *  kvm_hypercall(nr, a0, a1, a2, a3)
 * Each program twice: with the pending hits in task storage (task 1, the
 * name as is) and in the LRU hash (task 0, the name with _h).
 */
#define BRK_PROGS(sfx, task)                                          \
	SEC("raw_tp")                                                 \
	int brk_pio_raw##sfx(struct bpf_raw_tracepoint_args *ctx)     \
	{                                                             \
		brk_hit(task, BRK_IOPORT, (__u32)ctx->args[1],        \
			!!(__u32)ctx->args[0], 1);                    \
		return 0;                                             \
	}                                                             \
	SEC("raw_tp")                                                 \
	int brk_mmio_raw##sfx(struct bpf_raw_tracepoint_args *ctx)    \
	{                                                             \
		brk_mmio(task, (__u32)ctx->args[0], ctx->args[2]);    \
		return 0;                                             \
	}                                                             \
	SEC("raw_tp")                                                 \
	int brk_msr_raw##sfx(struct bpf_raw_tracepoint_args *ctx)     \
	{                                                             \
		brk_hit(task, BRK_MSR, (__u32)ctx->args[1],           \
			!!(__u32)ctx->args[0], 1);                    \
		return 0;                                             \
	}                                                             \
	SEC("raw_tp")                                                 \
	int brk_hc_raw##sfx(struct bpf_raw_tracepoint_args *ctx)      \
	{                                                             \
		brk_hit(task, BRK_HYPERCALL, ctx->args[0], 0, 1);     \
		return 0;                                             \
	}                                                             \
	BRK_REC(brk_pio_rec##sfx, BRK_IOPORT, task)                   \
	BRK_REC(brk_mmio_rec##sfx, BRK_MMIO, task)                    \
	BRK_REC(brk_msr_rec##sfx, BRK_MSR, task)                      \
	BRK_REC(brk_hc_rec##sfx, BRK_HYPERCALL, task)                 \
	/* re-entry: kvm_entry, and kvm_fpu(load) once per KVM_RUN */ \
	SEC("raw_tp")                                                 \
	int brk_entry_raw##sfx(void *ctx)                             \
	{                                                             \
		brk_end(task, 1);                                     \
		return 0;                                             \
	}                                                             \
	SEC("raw_tp")                                                 \
	int brk_fpu_raw##sfx(struct bpf_raw_tracepoint_args *ctx)     \
	{                                                             \
		if (ctx->args[0])                                     \
			brk_end(task, 0);                             \
		return 0;                                             \
	}

/* The same from a trace record, the fields where the loader says. */
#define BRK_REC(name, kind, task)                                      \
	SEC("tracepoint")                                              \
	int name(void *rec)                                            \
	{                                                              \
		__u64 key = brk_field(rec, brk_key_off[kind],          \
				      brk_key_size[kind]);             \
		__u64 dir = brk_field(rec, brk_dir_off[kind],          \
				      brk_dir_size[kind]);             \
                                                                       \
		if (kind == BRK_MMIO)                                  \
			brk_mmio(task, dir, key);                      \
		else                                                   \
			brk_hit(task, kind, key,                       \
				kind != BRK_HYPERCALL && dir != 0, 1); \
		return 0;                                              \
	}

BRK_PROGS(, 1)
BRK_PROGS(_h, 0)
