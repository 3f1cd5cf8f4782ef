// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the BPF programs take from each architecture's descriptor, checked
 * on any build host (the runner links every descriptor): the breakdowns'
 * tracepoints, fields and raw arguments (each field the argument at the
 * same place in its format fixture, as the kernel's records keep
 * TP_PROTO's order), arm64's kinds (mmio, and hypercall by SMCCC function
 * id from kvm_hvc_arm64; no I/O ports or MSRs), the names of SMCCC
 * function ids (sorted, PSCI's as the uapi header has them, the others
 * built from the SMCCC id layout), the reasons raw arguments hold (arm64's
 * kvm_exit: esr_ec for a trap, the code the 6.1 host's own format names
 * TRAP), and where a system call's second argument sits in struct
 * pt_regs.
 */
#include <check.h>
#include <limits.h>
#include <linux/psci.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <sys/user.h>
#elif defined(__aarch64__)
#include <asm/ptrace.h>
#endif

#include "arch.h"
#include "brk_shared.h"
#include "suites.h"
#include "tpformat.h"

static const struct arch_desc *const descs[] = {
	&arch_x86_desc,	 &arch_arm64_desc,   &arch_powerpc_desc,
	&arch_s390_desc, &arch_generic_desc,
};

#define NDESCS (sizeof(descs) / sizeof(descs[0]))

/* The kinds, in brk_shared.h's order. */
static const char *const kinds[BRK_NKINDS] = {
	[BRK_IOPORT] = "ioport",
	[BRK_MMIO] = "mmio",
	[BRK_MSR] = "msr",
	[BRK_HYPERCALL] = "hypercall",
};

static int kind_index(const char *kind)
{
	for (int k = 0; k < BRK_NKINDS; k++)
		if (!strcmp(kinds[k], kind))
			return k;
	return -1;
}

/* The format fixture called name; fails the test if it does not parse. */
static struct tp_format *fixture(const char *name)
{
	const char *dir = getenv("KVMSTAT_TEST_DATA");
	struct tp_format *f = NULL;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/formats/%s",
		 dir && *dir ? dir : "tests/data", name);
	ck_assert_msg(tp_format_load(path, &f) == 0, "%s does not parse", path);
	return f;
}

/* The place of field name among f's own fields (the common_* ones
 * aside): its raw argument; -1 when f has no such field. */
static int field_arg(const struct tp_format *f, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < f->nfields; i++) {
		if (!strncmp(f->fields[i].name, "common_", 7))
			continue;
		if (!strcmp(f->fields[i].name, name))
			return n;
		n++;
	}
	return -1;
}

/* Each descriptor's breakdowns: known kinds, once each, with a
 * tracepoint, a key, arguments the programs read, and names of keys in
 * ranges; every architecture has kvm_mmio, the generic one. */
START_TEST(test_breakdowns_well_formed)
{
	for (size_t d = 0; d < NDESCS; d++) {
		const struct arch_desc *a = descs[d];
		unsigned seen = 0;

		ck_assert_ptr_nonnull(a->breakdowns);
		for (const struct arch_breakdown *b = a->breakdowns; b->kind;
		     b++) {
			int k = kind_index(b->kind);

			ck_assert_msg(k >= 0, "%s: kind %s", a->name, b->kind);
			ck_assert_msg(!(seen & 1u << k), "%s: %s twice",
				      a->name, b->kind);
			seen |= 1u << k;
			ck_assert_ptr_eq(arch_breakdown_for(a, b->kind), b);
			ck_assert(b->event && b->event[0]);
			ck_assert(b->key && b->key[0]);
			ck_assert_uint_lt(b->key_arg, BRK_NARGS(k));
			ck_assert(!b->dir || b->dir[0]);
			if (b->dir)
				ck_assert_uint_lt(b->dir_arg, BRK_NARGS(k));
			ck_assert_int_eq(!b->names, !b->nnames);
			for (size_t i = 0; i < b->nnames; i++) {
				ck_assert(b->names[i].name[0]);
				ck_assert_uint_le(b->names[i].lo,
						  b->names[i].hi);
			}
		}
		ck_assert_msg(seen & 1u << BRK_MMIO, "%s: no mmio", a->name);
		ck_assert_ptr_null(arch_breakdown_for(a, "nope"));
	}
}
END_TEST

/* Each breakdown's fields are where its raw arguments say, in its
 * tracepoint's format: x86's kvm_pio, kvm_msr, kvm_hypercall, the
 * generic kvm_mmio, arm64's kvm_hvc_arm64. */
START_TEST(test_breakdowns_match_formats)
{
	size_t checked = 0;

	for (size_t d = 0; d < NDESCS; d++) {
		for (const struct arch_breakdown *b = descs[d]->breakdowns;
		     b && b->kind; b++) {
			struct tp_format *f = fixture(b->event);
			const struct tp_field *key = tp_format_field(f, b->key);

			ck_assert_str_eq(f->name, b->event);
			ck_assert_ptr_nonnull(key);
			ck_assert_uint_le(key->size, 8);
			ck_assert_msg(field_arg(f, b->key) == (int)b->key_arg,
				      "%s %s: %s is argument %d, not %u",
				      descs[d]->name, b->kind, b->key,
				      field_arg(f, b->key), b->key_arg);
			if (b->dir)
				ck_assert_int_eq(field_arg(f, b->dir),
						 (int)b->dir_arg);
			tp_format_free(f);
			checked++;
		}
	}
	ck_assert_uint_eq(checked, 4 + 2 + 3);
}
END_TEST

/* x86 breaks down all four kinds; arm64 MMIO and HVCs by SMCCC function
 * id, and refuses I/O ports and MSRs; the others MMIO alone. */
START_TEST(test_kinds_per_arch)
{
	const struct arch_breakdown *b;

	b = arch_breakdown_for(&arch_x86_desc, "ioport");
	ck_assert_str_eq(b->event, "kvm_pio");
	ck_assert_str_eq(b->key, "port");
	ck_assert_str_eq(b->dir, "rw");
	b = arch_breakdown_for(&arch_x86_desc, "msr");
	ck_assert_str_eq(b->event, "kvm_msr");
	ck_assert_str_eq(b->key, "ecx");
	b = arch_breakdown_for(&arch_x86_desc, "hypercall");
	ck_assert_str_eq(b->event, "kvm_hypercall");
	ck_assert_str_eq(b->key, "nr");
	ck_assert_uint_eq(b->key_arg, 0);
	ck_assert_ptr_null(b->dir);
	ck_assert_ptr_null(b->names);

	ck_assert_ptr_null(arch_breakdown_for(&arch_arm64_desc, "ioport"));
	ck_assert_ptr_null(arch_breakdown_for(&arch_arm64_desc, "msr"));
	b = arch_breakdown_for(&arch_arm64_desc, "mmio");
	ck_assert_str_eq(b->event, "kvm_mmio");
	ck_assert_str_eq(b->key, "gpa");
	ck_assert_uint_eq(b->key_arg, 2);
	ck_assert_str_eq(b->dir, "type");
	ck_assert_uint_eq(b->dir_arg, 0);
	b = arch_breakdown_for(&arch_arm64_desc, "hypercall");
	ck_assert_str_eq(b->event, "kvm_hvc_arm64");
	ck_assert_str_eq(b->key, "r0");
	ck_assert_uint_eq(b->key_arg, 1);
	ck_assert_ptr_null(b->dir);
	ck_assert_ptr_nonnull(b->names);

	for (size_t d = 2; d < NDESCS; d++) {
		ck_assert_ptr_nonnull(arch_breakdown_for(descs[d], "mmio"));
		ck_assert_ptr_null(arch_breakdown_for(descs[d], "ioport"));
		ck_assert_ptr_null(arch_breakdown_for(descs[d], "msr"));
		ck_assert_ptr_null(arch_breakdown_for(descs[d], "hypercall"));
	}
}
END_TEST

/* An SMCCC function id: fast call, 32- or 64-bit convention, owner,
 * function number (SMCCC, DEN0028: bits 31, 30, 29:24, 15:0). */
#define SMCCC_ID(smc64, owner, fn) \
	(0x80000000u | (smc64) << 30 | (owner) << 24 | (fn))

/* The SMCCC names: each id once, sorted, no range, fitting the text
 * table's 20 columns, each the value its spec gives (PSCI's as the uapi
 * header has them), none beside those; looked up by id alone. */
START_TEST(test_smccc_names)
{
	static const struct {
		uint64_t id;
		const char *name;
	} want[] = {
		{ SMCCC_ID(0, 0, 0), "SMCCC_VERSION" },
		{ SMCCC_ID(0, 0, 1), "SMCCC_ARCH_FEATURES" },
		{ SMCCC_ID(0, 0, 0x8000), "ARCH_WORKAROUND_1" },
		{ SMCCC_ID(0, 0, 0x7fff), "ARCH_WORKAROUND_2" },
		{ SMCCC_ID(0, 0, 0x3fff), "ARCH_WORKAROUND_3" },
		{ PSCI_0_2_FN_PSCI_VERSION, "PSCI_VERSION" },
		{ PSCI_0_2_FN_CPU_SUSPEND, "CPU_SUSPEND" },
		{ PSCI_0_2_FN_CPU_OFF, "CPU_OFF" },
		{ PSCI_0_2_FN_CPU_ON, "CPU_ON" },
		{ PSCI_0_2_FN_AFFINITY_INFO, "AFFINITY_INFO" },
		{ PSCI_0_2_FN_MIGRATE_INFO_TYPE, "MIGRATE_INFO_TYPE" },
		{ PSCI_0_2_FN_SYSTEM_OFF, "SYSTEM_OFF" },
		{ PSCI_0_2_FN_SYSTEM_RESET, "SYSTEM_RESET" },
		{ PSCI_1_0_FN_PSCI_FEATURES, "PSCI_FEATURES" },
		{ PSCI_1_0_FN_SYSTEM_SUSPEND, "SYSTEM_SUSPEND" },
		{ PSCI_0_2_FN(0x12), "SYSTEM_RESET2" },
		{ PSCI_0_2_FN64_CPU_SUSPEND, "CPU_SUSPEND64" },
		{ PSCI_0_2_FN64_CPU_ON, "CPU_ON64" },
		{ PSCI_0_2_FN64_AFFINITY_INFO, "AFFINITY_INFO64" },
		{ PSCI_1_0_FN64_SYSTEM_SUSPEND, "SYSTEM_SUSPEND64" },
		{ PSCI_0_2_FN64(0x12), "SYSTEM_RESET2_64" },
		{ SMCCC_ID(0, 4, 0x50), "TRNG_VERSION" },
		{ SMCCC_ID(0, 4, 0x51), "TRNG_FEATURES" },
		{ SMCCC_ID(0, 4, 0x52), "TRNG_GET_UUID" },
		{ SMCCC_ID(0, 4, 0x53), "TRNG_RND32" },
		{ SMCCC_ID(1, 4, 0x53), "TRNG_RND64" },
		{ SMCCC_ID(1, 5, 0x20), "PV_TIME_FEATURES" },
		{ SMCCC_ID(1, 5, 0x21), "PV_TIME_ST" },
		{ SMCCC_ID(0, 6, 0), "KVM_FEATURES" },
		{ SMCCC_ID(0, 6, 1), "KVM_PTP" },
		{ SMCCC_ID(0, 6, 0xff01), "VENDOR_HYP_CALL_UID" },
	};
	const struct arch_breakdown *b = arch_breakdown_for(&arch_arm64_desc,
							    "hypercall");
	char buf[64];

	ck_assert_uint_eq(b->nnames, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < b->nnames; i++) {
		const struct arch_key_name *n = &b->names[i];

		ck_assert_uint_eq(n->lo, n->hi);
		ck_assert(!n->indexed);
		ck_assert_uint_le(strlen(n->name), 20);
		if (i)
			ck_assert_msg(b->names[i - 1].hi < n->lo,
				      "%s not sorted", n->name);
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *got = arch_key_name(b, want[i].id, buf, sizeof(buf));

		ck_assert_msg(got && !strcmp(got, want[i].name),
			      "%#llx: want %s, got %s",
			      (unsigned long long)want[i].id, want[i].name,
			      got ? got : "(none)");
	}
	ck_assert_ptr_null(arch_key_name(b, PSCI_0_2_FN_MIGRATE, buf, 64));
	ck_assert_ptr_null(arch_key_name(b, 0x12345, buf, 64));
	/* the id is W0: an x0 with bits above it is no id of the table */
	ck_assert_ptr_null(
		arch_key_name(b, 0x100000000ull | PSCI_0_2_FN_CPU_ON, buf, 64));
	/* x86's names are its own */
	ck_assert_str_eq(arch_key_name(arch_breakdown_for(&arch_x86_desc,
							  "ioport"),
				       0x3f8, buf, sizeof(buf)),
			 "COM1");
	ck_assert_str_eq(arch_key_name(arch_breakdown_for(&arch_x86_desc, "msr"),
				       0xc3, buf, sizeof(buf)),
			 "PMC2");
}
END_TEST

/* The record's value a raw program reads as r says from the arguments
 * a0 and a1 (a mirror of vcpu_reason.h's arg_reason_read). */
static uint64_t raw_reason(const struct arch_raw_reason *r, uint64_t a0,
			   uint64_t a1)
{
	uint64_t gate = r->gate_arg ? a1 : a0;

	if (r->gate_mask && (gate & r->gate_mask) != r->gate_value)
		return 0;
	return (r->arg ? a1 : a0) & r->mask;
}

/*
 * Reasons in raw arguments: arm64's kvm_exit(ret, esr_ec, vcpu_pc) holds
 * esr_ec for a trap (ret's code TRAP, as the 6.1 host's kvm_exit format
 * names it, with or without the SError bit) and 0 for any other exit;
 * kvm_userspace_exit(reason, errno) its reason; x86's kvm_exit(vcpu, isa)
 * none. Every such argument is one the programs read (the first two) and
 * the field at its place in the format.
 */
START_TEST(test_raw_reasons)
{
	const struct arch_source *x = arch_source_find(&arch_arm64_desc,
						       "kvm_exit", "esr_ec");
	const struct arch_source *u = &arch_source_userspace_exit;
	const struct tp_symtab *ret;
	const struct tp_symbol *trap;
	struct tp_format *f;

	for (size_t d = 0; d < NDESCS; d++)
		for (size_t i = 0; descs[d]->sources[i]; i++) {
			const struct arch_raw_reason *r = &descs[d]->sources[i]
								   ->raw;

			if (!r->known)
				continue;
			ck_assert_uint_le(r->arg, 1);
			ck_assert_uint_le(r->gate_arg, 1);
			ck_assert_uint_ne(r->mask, 0);
			ck_assert_uint_eq(r->gate_value & r->gate_mask,
					  r->gate_value);
		}
	ck_assert(!arch_source_find(&arch_x86_desc, "kvm_exit", "exit_reason")
			   ->raw.known);
	ck_assert_ptr_null(
		arch_source_find(&arch_x86_desc, "kvm_exit", "esr_ec"));
	ck_assert_ptr_eq(x, arch_arm64_desc.sources[0]);
	ck_assert(x->raw.known);
	ck_assert(u->raw.known);
	ck_assert_ptr_eq(arch_source_find(&arch_generic_desc,
					  "kvm_userspace_exit", "reason"),
			 u);

	f = fixture("arm64_6.1_kvm_exit");
	ck_assert_int_eq(field_arg(f, "esr_ec"), (int)x->raw.arg);
	ck_assert_int_eq(field_arg(f, "ret"), (int)x->raw.gate_arg);
	ret = tp_format_symtab(f, "ret");
	ck_assert_ptr_nonnull(ret);
	trap = tp_symtab_find(ret, "TRAP");
	ck_assert_ptr_nonnull(trap);
	ck_assert_uint_eq(trap->value, x->raw.gate_value);
	tp_format_free(f);
	f = fixture("kvm_userspace_exit");
	ck_assert_int_eq(field_arg(f, "reason"), (int)u->raw.arg);
	tp_format_free(f);

	/* a trap: its class; with SError pending too (bit 31, the int
	 * sign-extended as a raw argument); an IRQ, an SError: 0 */
	ck_assert_uint_eq(raw_reason(&x->raw, 2, 0x16), 0x16);
	ck_assert_uint_eq(raw_reason(&x->raw,
				     (uint64_t)(int64_t)(int32_t)0x80000002u,
				     0x24),
			  0x24);
	ck_assert_uint_eq(raw_reason(&x->raw, 0, 0x16), 0);
	ck_assert_uint_eq(raw_reason(&x->raw, 1, 0x16), 0);
	ck_assert_uint_eq(raw_reason(&x->raw,
				     (uint64_t)(int64_t)(int32_t)0x80000000u,
				     0x16),
			  0);
	ck_assert_uint_eq(raw_reason(&u->raw, 6, (uint64_t)-4), 6);
}
END_TEST

/* Where a system call's second argument sits in the kernel's struct
 * pt_regs: x86-64's rsi, arm64's regs[1] (as the uapi's user_pt_regs
 * lays them out where this is built), unknown elsewhere. */
START_TEST(test_syscall_arg1)
{
	ck_assert_uint_eq(arch_x86_desc.syscall_arg1_off, 104);
	ck_assert_uint_eq(arch_arm64_desc.syscall_arg1_off, 8);
	ck_assert_uint_eq(arch_powerpc_desc.syscall_arg1_off, 0);
	ck_assert_uint_eq(arch_s390_desc.syscall_arg1_off, 0);
	ck_assert_uint_eq(arch_generic_desc.syscall_arg1_off, 0);
#if defined(__x86_64__)
	ck_assert_uint_eq(arch_x86_desc.syscall_arg1_off,
			  offsetof(struct user_regs_struct, rsi));
	ck_assert_ptr_eq(arch_host, &arch_x86_desc);
#elif defined(__aarch64__)
	ck_assert_uint_eq(arch_arm64_desc.syscall_arg1_off,
			  offsetof(struct user_pt_regs, regs[1]));
	ck_assert_ptr_eq(arch_host, &arch_arm64_desc);
#endif
}
END_TEST

Suite *arch_raw_suite(void)
{
	Suite *s = suite_create("arch_raw");
	TCase *tc = tcase_create("descriptors");

	tcase_add_test(tc, test_breakdowns_well_formed);
	tcase_add_test(tc, test_breakdowns_match_formats);
	tcase_add_test(tc, test_kinds_per_arch);
	tcase_add_test(tc, test_smccc_names);
	tcase_add_test(tc, test_raw_reasons);
	tcase_add_test(tc, test_syscall_arg1);
	suite_add_tcase(s, tc);
	return s;
}
