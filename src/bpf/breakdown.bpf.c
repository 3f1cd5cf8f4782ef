// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exits broken down below the reason, in the kernel (--breakdown): each
 * hit of kvm_pio, kvm_mmio, kvm_msr or kvm_hypercall (arm64: kvm_mmio,
 * kvm_hvc_arm64) counts under its key (port, guest physical address, MSR
 * index, hypercall number or SMCCC function id) and
 * direction, per thread, in a fixed-size array of slots; keys past its
 * bound count as their kind's "other". With latency on, the hit also
 * marks its key as waiting for the thread's next entry into the guest
 * (kvm_entry, or kvm_fpu(load) where kvm_entry never fires, as the latency
 * programs mark re-entry), which puts the exit's time into a log2
 * histogram of that key: the time the exit-latency programs measured from
 * its kvm_exit, found in their state of the thread, which both share (or,
 * where they do not run, the time from the hit, which then reads the
 * clock). A separate object from the counting and latency programs,
 * loaded only when a breakdown is asked for.
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
/* timed: the exit-latency programs run, their state of the threads in
 * this object's lat_task or lat_starts (the loader hands theirs over) */
const volatile __u32 brk_shared = 0;
/* brk_pends' entries used, less one (a power of two; fewer, for tests,
 * make threads share entries and take the hash) */
const volatile __u32 brk_pend_mask = BRK_NPEND - 1;
/* The raw arguments holding the key and the direction, per kind (the
 * architecture's, below BRK_NARGS(kind); BRK_NO_ARG: no direction);
 * x86's unless the loader says. */
const volatile __u32 brk_key_arg[BRK_NKINDS] = { 1, 2, 1, 0 };
const volatile __u32 brk_dir_arg[BRK_NKINDS] = { 0, 0, 0, BRK_NO_ARG };
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
/* Some thread keeps its pending hit in brk_pspill. */
__u32 brk_spilled = 0;

/*
 * The counts, one slot per key of a thread, in an array the reader maps
 * (no system call per key): a slot is taken once, by the one thread whose
 * key it holds, which alone
 * adds to it afterwards (a thread runs on one CPU at a time), so a hit
 * needs no locked instruction. brk_index finds a key's slot; each thread
 * keeps the slot of its last hit in its entry of brk_pends (below),
 * checked against the slot's key, so a thread hitting the same key as
 * before costs two array lookups, no hash. Slots are claimed in brk_owner
 * (without the atomic fetch that older BPF targets lack) and never given
 * back.
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

/* The slots claimed (slot to 1). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, __u32);
	__type(value, __u32);
} brk_owner SEC(".maps");

/* The histograms, by slot of the counts (max_entries 1 unless timed),
 * in an array the reader maps as it maps the counts. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BRK_NKEYS + BRK_NOTHER);
	__type(key, __u32);
	__type(value, struct lat_val);
} brk_hvals SEC(".maps");

/* The threads' last slots and pending hits: by thread id
 * modulo BRK_NPEND, mapped by the reader, which frees the entries of
 * threads gone; who holds an entry in brk_powner (entry to thread id),
 * whose insertion decides between threads claiming one at once; the
 * threads whose entry another holds in brk_pspill, by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BRK_NPEND);
	__type(key, __u32);
	__type(value, struct brk_pend);
} brk_pends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BRK_NPEND);
	__type(key, __u32);
	__type(value, __u32);
} brk_powner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct brk_pend);
} brk_pspill SEC(".maps");

/*
 * The exit-latency programs' state of the threads (struct lat_start),
 * their own map when they run (brk_shared): in the thread's own task
 * storage where the kernel has it, else in an LRU hash by thread id (the
 * *_h programs; the loader picks the latency programs' set and hands
 * this object their map). Read at re-entry only.
 */
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

static __always_inline struct lat_start *brk_lat_state(int task, __u32 tid)
{
	if (task)
		return bpf_task_storage_get(&lat_task,
					    bpf_get_current_task_btf(), 0, 0);
	return bpf_map_lookup_elem(&lat_starts, &tid);
}

/* Thread tid's pending hit: its entry of brk_pends (claimed when free
 * and create), else its element of brk_pspill (made when create); NULL
 * when it has none (or none could be made). */
static __always_inline struct brk_pend *brk_pend_of(__u32 tid, int create)
{
	__u32 ix = tid & brk_pend_mask;
	struct brk_pend *e = bpf_map_lookup_elem(&brk_pends, &ix), z = {};

	if (!e)
		return NULL;
	if (e->tid == tid)
		return e;
	if (create && !e->tid &&
	    !bpf_map_update_elem(&brk_powner, &ix, &tid, BPF_NOEXIST)) {
		e->slot = 0;
		e->pend = 0;
		e->tid = tid;
		return e;
	}
	/* another thread's */
	if (!create && !brk_spilled)
		return NULL;
	e = bpf_map_lookup_elem(&brk_pspill, &tid);
	if (e || !create)
		return e;
	brk_spilled = 1;
	z.tid = tid;
	bpf_map_update_elem(&brk_pspill, &tid, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&brk_pspill, &tid);
}

/* The hit at count slot, of the thread whose pending hit is e, waits for
 * the re-entry (timed from now where no exit start is shared). */
static __always_inline void brk_start(struct brk_pend *e, __u32 slot,
				      __u32 counted)
{
	/* the completion of the read that went to the VMM: same exit */
	if (e->pend && !e->counted && counted && e->slot == slot + 1) {
		e->counted = 1;
		return;
	}
	e->slot = slot + 1;
	e->counted = counted;
	e->pend = 1;
	if (!brk_shared)
		e->ts = bpf_ktime_get_ns();
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

/* Counts one hit of kind at key; count 0 only starts its time. */
static __always_inline void brk_hit(int task, __u32 kind, __u64 key, __u32 dir,
				    __u32 count)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct brk_pend *pe = NULL;
	struct brk_key k = {};
	struct brk_slot *s = NULL;
	__u32 *p, cand = ~0u;
	__s64 slot;

	if ((brk_tgid && (__u32)(id >> 32) != brk_tgid) ||
	    (!count && !brk_timed))
		return;
	k.tgid = id >> 32;
	k.tid = (__u32)id;
	k.key = key;
	k.kind = kind;
	k.dir = dir;
	/* the slot of the thread's last hit, to try first, in its entry
	 * (slot + 1, so 0 finds none; none without an entry) */
	pe = brk_pend_of(k.tid, 1);
	if (pe)
		cand = pe->slot - 1;
	slot = cand;
	s = bpf_map_lookup_elem(&brk_slots, &cand);
	if (!s || !brk_same(&s->k, &k)) {
		p = bpf_map_lookup_elem(&brk_index, &k);
		slot = p ? *p : brk_claim(&k);
		if (slot < 0)
			return;
		s = bpf_map_lookup_elem(&brk_slots, &(__u32){ slot });
		if (!s)
			return;
		if (pe && !brk_timed)
			pe->slot = (__u32)slot + 1;
	}
	if (count)
		s->count += 1;
	if (pe && brk_timed)
		brk_start(pe, (__u32)slot, count);
}

/* The thread enters the guest again: its hit's exit's time goes to the
 * key's histogram (all: kvm_entry; else the KVM_RUN mark, while kvm_entry
 * has not fired). The exit-latency programs' time of it where they run:
 * their start, when their own re-entry program has not closed it yet
 * (kvm_fpu, or run after this one), else the time they closed it with. */
static __always_inline void brk_end(int task, int all)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), slot;
	struct lat_start *st;
	struct brk_pend *e;
	struct lat_val *v;
	__u64 now, t, d;

	if (all && !brk_entry_fired)
		brk_entry_fired = 1;
	else if (!all && brk_entry_fired)
		return;
	e = brk_pend_of(tid, 0);
	if (!e || !e->pend)
		return;
	e->pend = 0;
	if (!e->counted)
		return;
	slot = e->slot - 1;
	if (brk_shared) {
		st = brk_lat_state(task, tid);
		if (!st)
			return;
		t = st->ts[LAT_EXIT];
		if (t) {
			now = bpf_ktime_get_ns();
			d = now > t ? now - t : 0;
		} else if (st->exit_last) {
			d = st->exit_last;
			/* taken: no later hit without an exit of its own
			 * (none on KVM) gets it again */
			st->exit_last = 0;
		} else {
			return; /* an exit they did not see begin */
		}
	} else {
		now = bpf_ktime_get_ns();
		d = now > e->ts ? now - e->ts : 0;
	}
	v = bpf_map_lookup_elem(&brk_hvals, &slot);
	if (!v)
		return;
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
 * Raw argument i of a hit of kind (below BRK_NARGS(kind)); 0 for any
 * other i (BRK_NO_ARG). The arguments are read at fixed offsets, as the
 * verifier wants of a context, only as many as kind's tracepoint has
 * (attaching fails past them), and hidden from the compiler before one
 * is picked, so that the pick cannot become a load at a computed offset;
 * i is read-only data, so the verifier keeps one branch.
 */
static __always_inline __u64 brk_arg(const struct bpf_raw_tracepoint_args *ctx,
				     __u32 kind, __u32 i)
{
	__u64 a0 = ctx->args[0], a1 = ctx->args[1], a2 = 0;

	if (BRK_NARGS(kind) > 2)
		a2 = ctx->args[2];
	asm volatile("" : "+r"(a0), "+r"(a1), "+r"(a2));
	if (i == 0)
		return a0;
	if (i == 1)
		return a1;
	if (i == 2 && BRK_NARGS(kind) > 2)
		return a2;
	return 0;
}

/*
 * The raw tracepoints, their arguments as the kernel's TP_PROTO orders
 * them (and BTF's btf_trace_* types show), where the loader says (the
 * architecture's descriptor); on x86:
 *  kvm_pio(rw, port, size, count, data)
 *  kvm_mmio(type, len, gpa, val)
 *  kvm_msr(write, ecx, data, exception)
 *  kvm_hypercall(nr, a0, a1, a2, a3)
 * and arm64's kvm_hvc_arm64(vcpu_pc, r0, imm), r0 the SMCCC function id.
 * Each program twice: with the pending hits in task storage (task 1, the
 * name as is) and in the LRU hash (task 0, the name with _h).
 */
#define BRK_KEY(ctx, k) brk_arg(ctx, k, brk_key_arg[k])
#define BRK_DIR(ctx, k) brk_arg(ctx, k, brk_dir_arg[k])
#define BRK_PROGS(sfx, task)                                                 \
	SEC("raw_tp")                                                        \
	int brk_pio_raw##sfx(struct bpf_raw_tracepoint_args *ctx)            \
	{                                                                    \
		brk_hit(task, BRK_IOPORT, (__u32)BRK_KEY(ctx, BRK_IOPORT),   \
			!!(__u32)BRK_DIR(ctx, BRK_IOPORT), 1);               \
		return 0;                                                    \
	}                                                                    \
	SEC("raw_tp")                                                        \
	int brk_mmio_raw##sfx(struct bpf_raw_tracepoint_args *ctx)           \
	{                                                                    \
		brk_mmio(task, (__u32)BRK_DIR(ctx, BRK_MMIO),                \
			 BRK_KEY(ctx, BRK_MMIO));                            \
		return 0;                                                    \
	}                                                                    \
	SEC("raw_tp")                                                        \
	int brk_msr_raw##sfx(struct bpf_raw_tracepoint_args *ctx)            \
	{                                                                    \
		brk_hit(task, BRK_MSR, (__u32)BRK_KEY(ctx, BRK_MSR),         \
			!!(__u32)BRK_DIR(ctx, BRK_MSR), 1);                  \
		return 0;                                                    \
	}                                                                    \
	SEC("raw_tp")                                                        \
	int brk_hc_raw##sfx(struct bpf_raw_tracepoint_args *ctx)             \
	{                                                                    \
		brk_hit(task, BRK_HYPERCALL, BRK_KEY(ctx, BRK_HYPERCALL), 0, \
			1);                                                  \
		return 0;                                                    \
	}                                                                    \
	BRK_REC(brk_pio_rec##sfx, BRK_IOPORT, task)                          \
	BRK_REC(brk_mmio_rec##sfx, BRK_MMIO, task)                           \
	BRK_REC(brk_msr_rec##sfx, BRK_MSR, task)                             \
	BRK_REC(brk_hc_rec##sfx, BRK_HYPERCALL, task)                        \
	/* re-entry: kvm_entry, and kvm_fpu(load) once per KVM_RUN */        \
	SEC("raw_tp")                                                        \
	int brk_entry_raw##sfx(void *ctx)                                    \
	{                                                                    \
		brk_end(task, 1);                                            \
		return 0;                                                    \
	}                                                                    \
	SEC("raw_tp")                                                        \
	int brk_fpu_raw##sfx(struct bpf_raw_tracepoint_args *ctx)            \
	{                                                                    \
		if (ctx->args[0])                                            \
			brk_end(task, 0);                                    \
		return 0;                                                    \
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
