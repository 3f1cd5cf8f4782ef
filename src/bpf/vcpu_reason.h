/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one way the BPF programs read kvm_exit's reason on its raw
 * tracepoint: from the vCPU's structs (x86: struct ks_vcpu_cfg of
 * bpf_shared.h says where), or from the raw arguments (arm64: struct
 * ks_arg_cfg); the counting programs' and the exit-latency programs'.
 * For clang -target bpf only.
 */
#ifndef KVMSTAT_VCPU_REASON_H
#define KVMSTAT_VCPU_REASON_H

#include "bpf_shared.h"

/*
 * The reason of the hit whose raw arguments are ctx (the vCPU, the guard),
 * as c says, into *reason and its guard class into *cls: 0, or -1 when it
 * cannot be read: a hit of another ISA (another vendor's module beside
 * it), whose reason is not where this layout says, or a fault.
 */
static __always_inline int
vcpu_reason_read(const volatile struct ks_vcpu_cfg *c,
		 const struct bpf_raw_tracepoint_args *ctx, __u64 *reason,
		 __u32 *cls)
{
	const char *p = (const char *)ctx->args[0] - c->vcpu_off;
	__u64 guard;
	int rc;

	*reason = 0;
	*cls = 0;
	if (c->guarded) {
		guard = (__u32)ctx->args[1];
		if (guard != (__u64)c->layout_isa)
			return -1;
		*cls = guard == (__u64)c->isa_guard;
	}
	if (c->ptr_off >= 0 &&
	    (bpf_probe_read_kernel(&p, sizeof(p), p + c->ptr_off) || !p))
		return -1;
	p += c->reason_off;
	/* the size a constant for the verifier, as many bytes as the
	 * record's field (x86 is little-endian: the low ones first) */
	if (c->reason_size == 1)
		rc = bpf_probe_read_kernel(reason, 1, p);
	else if (c->reason_size == 2)
		rc = bpf_probe_read_kernel(reason, 2, p);
	else if (c->reason_size == 4)
		rc = bpf_probe_read_kernel(reason, 4, p);
	else
		rc = bpf_probe_read_kernel(reason, 8, p);
	return rc ? -1 : 0;
}

/*
 * The reason of the hit whose raw arguments are ctx and hold it, as c
 * says (arm64's kvm_exit(ret, esr_ec, vcpu_pc): esr_ec for a trap, else
 * 0, as the kernel's record). The first two arguments are read at fixed
 * offsets, as the verifier wants of a context, and hidden from the
 * compiler before one is picked, so that the pick cannot become a load
 * at a computed offset; c is read-only data, so the verifier keeps one
 * branch.
 */
static __always_inline __u64
arg_reason_read(const volatile struct ks_arg_cfg *c,
		const struct bpf_raw_tracepoint_args *ctx)
{
	__u64 a0 = ctx->args[0], a1 = ctx->args[1];
	__u64 gate;

	asm volatile("" : "+r"(a0), "+r"(a1));
	gate = c->gate_arg ? a1 : a0;
	if (c->gate_mask && (gate & c->gate_mask) != c->gate_value)
		return 0;
	return (c->arg ? a1 : a0) & c->mask;
}

#endif
