// SPDX-License-Identifier: GPL-2.0-only
/*
 * The architecture descriptors and the lookup over them. The library holds
 * the host's descriptor and the generic one; the runner links the other
 * architectures' too (each has its own name, arch_x86_desc, ...), so every
 * descriptor is checked on any build host: child sources, guards, tables
 * with sorted unique values, unique non-empty names, masks that keep every
 * value. The x86 tables and guard values are checked value by value and
 * against the real kvm_exit format fixture, the arm64 table against its
 * fixture, the lookup on made-up descriptors too, and x86 ISA detection on
 * fake sysfs trees made in a temporary directory.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "arch.h"
#include "suites.h"
#include "testlib.h"
#include "tpformat.h"

/* Every descriptor: the runner links the other architectures' too. */
static const struct arch_desc *const all_descs[] = {
	&arch_x86_desc,	 &arch_arm64_desc,   &arch_powerpc_desc,
	&arch_s390_desc, &arch_generic_desc,
};

/* How many tables each of all_descs has. */
static const size_t all_ntables[] = { 2, 1, 1, 1, 0 };

#define NDESCS (sizeof(all_descs) / sizeof(all_descs[0]))

/* The value called name in t; fails the test if there is none. */
static uint64_t reason_value(const struct arch_exit_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->reasons[i].name, name))
			return t->reasons[i].value;
	ck_abort_msg("%s: no reason %s", t->isa, name);
	return 0;
}

/* The name of value in t, or NULL. */
static const char *reason_name(const struct arch_exit_table *t, uint64_t value)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->reasons[i].value == value)
			return t->reasons[i].name;
	return NULL;
}

static void check_table(const struct arch_exit_table *t)
{
	ck_assert_ptr_nonnull(t->isa);
	ck_assert_ptr_nonnull(t->event);
	ck_assert_ptr_nonnull(t->field);
	ck_assert_uint_gt(strlen(t->isa), 0);
	ck_assert_uint_gt(strlen(t->event), 0);
	ck_assert_uint_gt(strlen(t->field), 0);
	ck_assert_uint_gt(t->n, 0);
	ck_assert_ptr_nonnull(t->reasons);
	for (size_t i = 0; i < t->n; i++) {
		const struct arch_exit_reason *r = &t->reasons[i];

		ck_assert_ptr_nonnull(r->name);
		ck_assert_msg(r->name[0] && r->name[0] != ' ' &&
				      r->name[strlen(r->name) - 1] != ' ',
			      "%s: bad name \"%s\"", t->isa, r->name);
		ck_assert_msg((r->value & t->mask) == r->value,
			      "%s: %s (%#llx) outside the mask", t->isa,
			      r->name, (unsigned long long)r->value);
		if (i)
			ck_assert_msg(t->reasons[i - 1].value < r->value,
				      "%s: %s not sorted or duplicate", t->isa,
				      r->name);
		for (size_t j = 0; j < i; j++) {
			ck_assert_msg(strcmp(t->reasons[j].name, r->name),
				      "%s: duplicate name %s", t->isa, r->name);
			/* the names shown (kvm_stat's first) are unique too */
			ck_assert_msg(strcmp(arch_reason_display(&t->reasons[j]),
					     arch_reason_display(r)),
				      "%s: two reasons shown as %s", t->isa,
				      arch_reason_display(r));
		}
		ck_assert(!r->kvm_stat || r->kvm_stat[0]);
	}
}

START_TEST(test_all_arch_tables)
{
	for (size_t k = 0; k < NDESCS; k++) {
		const struct arch_desc *d = all_descs[k];
		const struct arch_exit_table *const *tabs = d->tables;
		size_t n = 0;

		ck_assert_ptr_nonnull(d->name);
		ck_assert_ptr_nonnull(tabs);
		for (; tabs[n]; n++) {
			check_table(tabs[n]);
			ck_assert_ptr_eq(arch_table_for(d, tabs[n]->isa),
					 tabs[n]);
			for (size_t j = 0; j < n; j++)
				ck_assert_str_ne(tabs[j]->isa, tabs[n]->isa);
		}
		ck_assert_uint_eq(n, all_ntables[k]);
		ck_assert_ptr_null(arch_table_for(d, NULL));
		ck_assert_ptr_null(arch_table_for(d, "nope"));
		ck_assert_ptr_null(arch_table_for(d, ""));
	}
}
END_TEST

/* Whether event.field is among the child sources of d. */
static bool desc_has_source(const struct arch_desc *d, const char *event,
			    const char *field)
{
	for (size_t i = 0; d->sources[i]; i++)
		if (!strcmp(d->sources[i]->event, event) &&
		    !strcmp(d->sources[i]->field, field))
			return true;
	return false;
}

/*
 * Each descriptor is well-formed: a unique name; child sources that name an
 * event and a field, none twice, ending in the common kvm_userspace_exit
 * one; every table decoding one of them; guards only with a guard field,
 * each for an ISA that has a table, values distinct; and an ISA the
 * generic detection can name where there is no detector.
 */
START_TEST(test_descriptors_well_formed)
{
	for (size_t k = 0; k < NDESCS; k++) {
		const struct arch_desc *d = all_descs[k];
		size_t n = arch_nsources(d), ng = 0;

		ck_assert_uint_gt(strlen(d->name), 0);
		for (size_t j = 0; j < k; j++)
			ck_assert_str_ne(all_descs[j]->name, d->name);

		ck_assert_ptr_nonnull(d->sources);
		ck_assert_uint_ge(n, 1);
		ck_assert_msg(d->sources[n - 1] == &arch_source_userspace_exit,
			      "%s: the common source is not last", d->name);
		for (size_t i = 0; i < n; i++) {
			const struct arch_source *src = d->sources[i];

			ck_assert_ptr_nonnull(src->event);
			ck_assert_ptr_nonnull(src->field);
			ck_assert_uint_gt(strlen(src->event), 0);
			ck_assert_uint_gt(strlen(src->field), 0);
			ck_assert(!src->strip || src->strip[0]);
			for (size_t j = 0; j < i; j++)
				ck_assert_msg(strcmp(d->sources[j]->event,
						     src->event) ||
						      strcmp(d->sources[j]->field,
							     src->field),
					      "%s: source %s.%s twice", d->name,
					      src->event, src->field);
		}
		for (size_t i = 0; d->tables[i]; i++)
			ck_assert_msg(desc_has_source(d, d->tables[i]->event,
						      d->tables[i]->field),
				      "%s: table %s decodes %s.%s, not a source",
				      d->name, d->tables[i]->isa,
				      d->tables[i]->event, d->tables[i]->field);

		if (!d->guard_field)
			ck_assert_ptr_null(d->guards);
		else
			ck_assert_uint_gt(strlen(d->guard_field), 0);
		for (const struct arch_guard *g = d->guards; g && g->isa;
		     g++, ng++) {
			ck_assert_msg(arch_table_for(d, g->isa) != NULL,
				      "%s: guard for %s, no table", d->name,
				      g->isa);
			ck_assert_int_ge(g->value, 0);
			for (const struct arch_guard *h = d->guards; h < g;
			     h++) {
				ck_assert_str_ne(h->isa, g->isa);
				ck_assert_int_ne(h->value, g->value);
			}
			ck_assert_int_eq(arch_guard_value(d, d->guard_field,
							  g->isa),
					 g->value);
		}
		if (d->guard_field)
			ck_assert_uint_gt(ng, 0);

		if (!d->detect_isa && d->tables[0])
			ck_assert_ptr_eq(arch_detect_isa(d, "/nonexistent"),
					 d->tables[0]->isa);

		/* where a reason sits in the vCPU: a source's, of an ISA
		 * the guard tells apart, found by the lookup */
		for (const struct arch_vcpu_reason *r = d->vcpu_reasons;
		     r && r->isa; r++) {
			size_t i = 0;

			while (d->sources[i] &&
			       strcmp(d->sources[i]->event, r->event))
				i++;
			ck_assert_msg(d->sources[i],
				      "%s: %s in the vCPU, not a source",
				      d->name, r->event);
			ck_assert_int_ge(arch_guard_value(d, d->guard_field,
							  r->isa),
					 0);
			ck_assert_ptr_nonnull(r->module);
			ck_assert_ptr_nonnull(r->container);
			ck_assert_ptr_nonnull(r->vcpu);
			ck_assert_ptr_nonnull(r->paths[0]);
			ck_assert_ptr_eq(arch_vcpu_reason_for(d, r->event,
							      r->isa),
					 r);
			ck_assert(arch_vcpu_reason_any(d, r->event));
		}
		ck_assert_ptr_null(arch_vcpu_reason_for(d, "kvm_exit", NULL));
		/* an event no layout names */
		ck_assert(!arch_vcpu_reason_any(d, "kvm_pio"));
	}
}
END_TEST

/* Each architecture's own child sources, then the common one. */
START_TEST(test_sources)
{
	const struct arch_source *const *s;

	s = arch_x86_desc.sources;
	ck_assert_uint_eq(arch_nsources(&arch_x86_desc), 2);
	ck_assert_str_eq(s[0]->event, "kvm_exit");
	ck_assert_str_eq(s[0]->field, "exit_reason");
	ck_assert_ptr_null(s[0]->strip);
	ck_assert_ptr_eq(s[1], &arch_source_userspace_exit);

	s = arch_arm64_desc.sources;
	ck_assert_uint_eq(arch_nsources(&arch_arm64_desc), 2);
	ck_assert_str_eq(s[0]->event, "kvm_exit");
	ck_assert_str_eq(s[0]->field, "esr_ec");

	s = arch_powerpc_desc.sources;
	ck_assert_uint_eq(arch_nsources(&arch_powerpc_desc), 2);
	ck_assert_str_eq(s[0]->event, "kvm_exit");
	ck_assert_str_eq(s[0]->field, "exit_nr");

	s = arch_s390_desc.sources;
	ck_assert_uint_eq(arch_nsources(&arch_s390_desc), 2);
	ck_assert_str_eq(s[0]->event, "kvm_s390_sie_exit");
	ck_assert_str_eq(s[0]->field, "icptcode");

	ck_assert_uint_eq(arch_nsources(&arch_generic_desc), 1);
	ck_assert_ptr_eq(arch_generic_desc.sources[0],
			 &arch_source_userspace_exit);
	ck_assert_str_eq(arch_source_userspace_exit.event, "kvm_userspace_exit");
	ck_assert_str_eq(arch_source_userspace_exit.field, "reason");
	ck_assert_str_eq(arch_source_userspace_exit.strip, "KVM_EXIT_");
}
END_TEST

START_TEST(test_other_arches)
{
	const struct arch_exit_table *t;

	ck_assert_str_eq(arch_arm64_desc.name, "arm64");
	t = arch_table_for(&arch_arm64_desc, "arm64");
	ck_assert_str_eq(t->event, "kvm_exit");
	ck_assert_str_eq(t->field, "esr_ec");
	ck_assert_uint_eq(reason_value(t, "UNKNOWN"), 0x00);
	ck_assert_uint_eq(reason_value(t, "WFx"), 0x01);
	ck_assert_uint_eq(reason_value(t, "CP15_32"), 0x03);
	ck_assert_uint_eq(reason_value(t, "HVC64"), 0x16);
	ck_assert_uint_eq(reason_value(t, "SMC64"), 0x17);
	ck_assert_uint_eq(reason_value(t, "SYS64"), 0x18);
	ck_assert_uint_eq(reason_value(t, "IABT_LOW"), 0x20);
	ck_assert_uint_eq(reason_value(t, "DABT_LOW"), 0x24);
	ck_assert_uint_eq(reason_value(t, "BRK64"), 0x3c);
	ck_assert_str_eq(arch_detect_isa(&arch_arm64_desc, "/nonexistent"),
			 "arm64");

	ck_assert_str_eq(arch_powerpc_desc.name, "powerpc");
	t = arch_table_for(&arch_powerpc_desc, "powerpc");
	ck_assert_str_eq(t->field, "exit_nr");
	ck_assert_uint_eq(reason_value(t, "SYSTEM_RESET"), 0x100);
	ck_assert_uint_eq(reason_value(t, "MACHINE_CHECK"), 0x200);
	ck_assert_uint_eq(reason_value(t, "DATA_STORAGE"), 0x300);
	ck_assert_uint_eq(reason_value(t, "HV_DECREMENTER"), 0x980);
	ck_assert_uint_eq(reason_value(t, "SYSCALL"), 0xc00);
	ck_assert_str_eq(arch_detect_isa(&arch_powerpc_desc, NULL), "powerpc");

	ck_assert_str_eq(arch_s390_desc.name, "s390");
	t = arch_table_for(&arch_s390_desc, "s390");
	ck_assert_str_eq(t->event, "kvm_s390_sie_exit");
	ck_assert_str_eq(t->field, "icptcode");
	ck_assert_uint_eq(reason_value(t, "instruction"), 0x04);
	ck_assert_uint_eq(reason_value(t, "program interruption"), 0x08);
	ck_assert_uint_eq(reason_value(t, "validity"), 0x20);
	ck_assert_str_eq(arch_detect_isa(&arch_s390_desc, "/sys"), "s390");

	ck_assert_str_eq(arch_generic_desc.name, "generic");
	ck_assert_ptr_null(arch_generic_desc.tables[0]);
	ck_assert_ptr_null(arch_detect_isa(&arch_generic_desc, "/sys"));

	/* only x86 tells its ISAs apart by a guard field */
	for (size_t k = 1; k < NDESCS; k++) {
		ck_assert_ptr_null(all_descs[k]->guard_field);
		ck_assert_int_eq(arch_guard_value(all_descs[k], "isa",
						  all_descs[k]->name),
				 -1);
	}
}
END_TEST

START_TEST(test_x86_tables)
{
	const struct arch_exit_table *vmx = arch_table_for(&arch_x86_desc,
							   "vmx");
	const struct arch_exit_table *svm = arch_table_for(&arch_x86_desc,
							   "svm");

	ck_assert_str_eq(arch_x86_desc.name, "x86");
	ck_assert_ptr_eq(arch_x86_desc.tables[0], vmx);
	ck_assert_ptr_eq(arch_x86_desc.tables[1], svm);

	ck_assert_str_eq(vmx->event, "kvm_exit");
	ck_assert_str_eq(vmx->field, "exit_reason");
	ck_assert_uint_eq(vmx->mask, 0xffff);
	ck_assert_uint_eq(reason_value(vmx, "EXCEPTION_NMI"), 0);
	ck_assert_uint_eq(reason_value(vmx, "EXTERNAL_INTERRUPT"), 1);
	ck_assert_uint_eq(reason_value(vmx, "CPUID"), 10);
	ck_assert_uint_eq(reason_value(vmx, "HLT"), 12);
	ck_assert_uint_eq(reason_value(vmx, "IO_INSTRUCTION"), 30);
	ck_assert_uint_eq(reason_value(vmx, "MSR_READ"), 31);
	ck_assert_uint_eq(reason_value(vmx, "MSR_WRITE"), 32);
	ck_assert_uint_eq(reason_value(vmx, "EPT_VIOLATION"), 48);
	ck_assert_uint_eq(reason_value(vmx, "EPT_MISCONFIG"), 49);
	ck_assert_uint_eq(reason_value(vmx, "BUS_LOCK"), 74);
	ck_assert_uint_eq(reason_value(vmx, "NOTIFY"), 75);
	ck_assert_uint_eq(reason_value(vmx, "TDCALL"), 77);
	ck_assert_uint_eq(reason_value(vmx, "MSR_READ_IMM"), 84);
	ck_assert_uint_eq(reason_value(vmx, "MSR_WRITE_IMM"), 85);

	ck_assert_str_eq(svm->event, "kvm_exit");
	ck_assert_str_eq(svm->field, "exit_reason");
	ck_assert_uint_eq(svm->mask, ~0ULL);
	ck_assert_uint_eq(reason_value(svm, "read_cr0"), 0x000);
	ck_assert_uint_eq(reason_value(svm, "write_cr8"), 0x018);
	ck_assert_uint_eq(reason_value(svm, "GP excp"), 0x04d);
	ck_assert_uint_eq(reason_value(svm, "interrupt"), 0x060);
	ck_assert_uint_eq(reason_value(svm, "cpuid"), 0x072);
	ck_assert_uint_eq(reason_value(svm, "hlt"), 0x078);
	ck_assert_uint_eq(reason_value(svm, "io"), 0x07b);
	ck_assert_uint_eq(reason_value(svm, "msr"), 0x07c);
	ck_assert_uint_eq(reason_value(svm, "npf"), 0x400);
	ck_assert_uint_eq(reason_value(svm, "vmgexit"), 0x403);
	ck_assert_uint_eq(reason_value(svm, "vmgexit_mmio_read"), 0x80000001);
	ck_assert_uint_eq(reason_value(svm, "invalid_guest_state"), 0xffffffff);

	/* kvm_exit's isa field: KVM_ISA_VMX 1, KVM_ISA_SVM 2 */
	ck_assert_str_eq(arch_x86_desc.guard_field, "isa");
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "isa", "vmx"), 1);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "isa", "svm"), 2);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "isa", NULL), -1);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "isa", "arm64"), -1);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, NULL, "vmx"), -1);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "exit_reason", "vmx"),
			 -1);
}
END_TEST

/*
 * The x86 fallback knows every reason the kernel fixture's tables name, and
 * names VMX reasons as the kernel does (SVM names may differ where the
 * manual's register name is used, e.g. read_tr). The fixture's tables are
 * picked with the descriptor's guard values, so those are the kernel's too.
 */
START_TEST(test_x86_covers_kernel_tables)
{
	const struct arch_exit_table *vmx = arch_table_for(&arch_x86_desc,
							   "vmx");
	const struct arch_exit_table *svm = arch_table_for(&arch_x86_desc,
							   "svm");
	const char *dir = getenv("KVMSTAT_TEST_DATA");
	struct tp_format *f = NULL;
	const struct tp_symtab *kv, *ks;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/formats/kvm_exit",
		 dir && *dir ? dir : "tests/data");
	ck_assert_int_eq(tp_format_load(path, &f), 0);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "isa", "vmx"), 1);
	ck_assert_int_eq(arch_guard_value(&arch_x86_desc, "isa", "svm"), 2);
	kv = tp_format_symtab_for(f, "exit_reason",
				  arch_guard_value(&arch_x86_desc, "isa",
						   "vmx"));
	ks = tp_format_symtab_for(f, "exit_reason",
				  arch_guard_value(&arch_x86_desc, "isa",
						   "svm"));
	ck_assert_ptr_nonnull(kv);
	ck_assert_ptr_nonnull(ks);
	ck_assert_str_eq(kv->guard_field, arch_x86_desc.guard_field);
	ck_assert_str_eq(ks->guard_field, arch_x86_desc.guard_field);
	ck_assert_uint_eq(kv->mask, vmx->mask);
	for (size_t i = 0; i < kv->nsyms; i++) {
		const char *mine = reason_name(vmx, kv->syms[i].value);

		ck_assert_msg(mine && !strcmp(mine, kv->syms[i].name),
			      "VMX %llu: kernel %s, ours %s",
			      (unsigned long long)kv->syms[i].value,
			      kv->syms[i].name, mine ? mine : "(none)");
	}
	for (size_t i = 0; i < ks->nsyms; i++)
		ck_assert_msg(reason_name(svm, ks->syms[i].value),
			      "SVM %#llx (%s) missing",
			      (unsigned long long)ks->syms[i].value,
			      ks->syms[i].name);
	tp_format_free(f);
}
END_TEST

/* The arm64 fallback names every exception class the arm64 fixture names. */
START_TEST(test_arm64_covers_kernel_table)
{
	const struct arch_exit_table *ec = arch_table_for(&arch_arm64_desc,
							  "arm64");
	const char *dir = getenv("KVMSTAT_TEST_DATA");
	struct tp_format *f = NULL;
	const struct tp_symtab *k;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/formats/arm64_kvm_exit",
		 dir && *dir ? dir : "tests/data");
	ck_assert_int_eq(tp_format_load(path, &f), 0);
	ck_assert_str_eq(f->name, arch_arm64_desc.sources[0]->event);
	k = tp_format_symtab(f, arch_arm64_desc.sources[0]->field);
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_gt(k->nsyms, 0);
	for (size_t i = 0; i < k->nsyms; i++) {
		const char *mine = arch_reason_name(ec, k->syms[i].value);

		ck_assert_msg(mine && !strcmp(mine, k->syms[i].name),
			      "EC %#llx: kernel %s, ours %s",
			      (unsigned long long)k->syms[i].value,
			      k->syms[i].name, mine ? mine : "(none)");
	}
	tp_format_free(f);
}
END_TEST

/* arch_reason_name() finds what a plain search finds, after the mask. */
START_TEST(test_reason_lookup)
{
	const struct arch_exit_table *vmx = arch_table_for(&arch_x86_desc,
							   "vmx");
	const struct arch_exit_table *svm = arch_table_for(&arch_x86_desc,
							   "svm");
	const struct arch_exit_table *ec = arch_table_for(&arch_arm64_desc,
							  "arm64");

	for (size_t k = 0; k < NDESCS; k++) {
		for (size_t i = 0; all_descs[k]->tables[i]; i++) {
			const struct arch_exit_table *t = all_descs[k]->tables[i];

			for (size_t j = 0; j < t->n; j++) {
				uint64_t v = t->reasons[j].value;

				ck_assert_ptr_eq(arch_reason_name(t, v),
						 t->reasons[j].name);
				if (!reason_name(t, (v + 1) & t->mask))
					ck_assert_ptr_null(
						arch_reason_name(t, v + 1));
			}
		}
	}
	ck_assert_str_eq(arch_reason_name(vmx, 12), "HLT");
	ck_assert_str_eq(arch_reason_name(vmx, 0x8000000c),
			 "HLT"); /* failed entry */
	ck_assert_ptr_null(arch_reason_name(vmx, 35));
	ck_assert_ptr_null(arch_reason_name(vmx, 0xffff));
	ck_assert_str_eq(arch_reason_name(svm, 0x78), "hlt");
	ck_assert_str_eq(arch_reason_name(svm, 0xffffffff),
			 "invalid_guest_state");
	ck_assert_ptr_null(arch_reason_name(svm, 0x10078));
	ck_assert_str_eq(arch_reason_name(ec, 0x41), "WFx"); /* EC is six bits */
	ck_assert_ptr_null(arch_reason_name(ec, 0x02));
}
END_TEST

static const char *fake_sysfs_seen;

/* A detector that remembers its root and names an ISA. */
static const char *fake_detect(const char *sysfs_root)
{
	fake_sysfs_seen = sysfs_root;
	return "b";
}

/* The generic lookups on made-up descriptors, not only the real five. */
START_TEST(test_generic_lookup)
{
	static const struct arch_exit_reason one[] = { { 1, "ONE", NULL } };
	static const struct arch_exit_table ta = {
		"a", "ev", "f", ~0ULL, 1, one, false,
	};
	static const struct arch_exit_table ta2 = {
		"a", "ev2", "f", ~0ULL, 1, one, false,
	};
	static const struct arch_exit_table tb = {
		"b", "ev", "f", ~0ULL, 1, one, false,
	};
	static const struct arch_exit_table *const tabs_a[] = { &ta, NULL };
	static const struct arch_exit_table *const tabs_aa[] = { &ta, &ta2,
								 NULL };
	static const struct arch_exit_table *const tabs_ab[] = { &ta, &tb,
								 NULL };
	static const struct arch_exit_table *const none[] = { NULL };
	static const struct arch_guard guards[] = { { "a", 0 },
						    { "b", 7 },
						    { NULL, 0 } };
	struct arch_desc d = { .name = "fake", .tables = tabs_a };
	const char root[] = "/fake/sys";

	/* no detector: the ISA all tables share, if any */
	ck_assert_str_eq(arch_detect_isa(&d, root), "a");
	d.tables = tabs_aa;
	ck_assert_str_eq(arch_detect_isa(&d, root), "a");
	ck_assert_ptr_eq(arch_table_for(&d, "a"), &ta);
	d.tables = tabs_ab;
	ck_assert_ptr_null(arch_detect_isa(&d, root));
	ck_assert_ptr_eq(arch_table_for(&d, "b"), &tb);
	d.tables = none;
	ck_assert_ptr_null(arch_detect_isa(&d, root));
	ck_assert_ptr_null(arch_table_for(&d, "a"));
	d.tables = NULL;
	ck_assert_ptr_null(arch_detect_isa(&d, root));
	ck_assert_ptr_null(arch_table_for(&d, "a"));

	/* a detector decides, given the root */
	d.tables = tabs_ab;
	d.detect_isa = fake_detect;
	ck_assert_str_eq(arch_detect_isa(&d, root), "b");
	ck_assert_ptr_eq(fake_sysfs_seen, root);

	/* guards: only for the descriptor's guard field */
	ck_assert_uint_eq(arch_nsources(&d), 0);
	ck_assert_int_eq(arch_guard_value(&d, "g", "b"), -1);
	d.guard_field = "g";
	ck_assert_int_eq(arch_guard_value(&d, "g", "b"), -1);
	d.guards = guards;
	ck_assert_int_eq(arch_guard_value(&d, "g", "a"), 0);
	ck_assert_int_eq(arch_guard_value(&d, "g", "b"), 7);
	ck_assert_int_eq(arch_guard_value(&d, "g", "c"), -1);
	ck_assert_int_eq(arch_guard_value(&d, "h", "b"), -1);
	ck_assert_int_eq(arch_guard_value(&d, NULL, "b"), -1);
}
END_TEST

/*
 * arch_host is one of the five, the one the Makefile picks for this
 * machine (uname's machine, as the Makefile maps it).
 */
START_TEST(test_linked_arch)
{
	struct utsname u;
	const char *want = "generic";
	bool found = false;

	for (size_t k = 0; k < NDESCS; k++)
		found |= arch_host == all_descs[k];
	ck_assert_msg(found, "arch_host is not one of the descriptors");
	ck_assert_int_eq(uname(&u), 0);
	if (!strcmp(u.machine, "x86_64") ||
	    (u.machine[0] == 'i' && !strcmp(u.machine + 2, "86")))
		want = "x86";
	else if (!strcmp(u.machine, "aarch64"))
		want = "arm64";
	else if (!strncmp(u.machine, "ppc64", 5))
		want = "powerpc";
	else if (!strcmp(u.machine, "s390x"))
		want = "s390";
	ck_assert_str_eq(arch_host->name, want);
}
END_TEST

/* ---- x86 ISA detection on fake sysfs trees ---- */

static char sysfs_root[PATH_MAX];

static void make_dir(const char *rel)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", sysfs_root, rel);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s",
		      path, strerror(errno));
}

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", sysfs_root, rel);
	fp = fopen(path, "w");
	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	fputs(text, fp);
	fclose(fp);
}

static void remove_path(const char *rel)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", sysfs_root, rel);
	if (remove(path) && errno != ENOENT && errno != ENOTDIR)
		ck_abort_msg("remove %s: %s", path, strerror(errno));
}

static void sysfs_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(sysfs_root, sizeof(sysfs_root), "%s/kvmstat-arch-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(sysfs_root));
	make_dir("module");
	make_dir("module/kvm");
}

static void sysfs_teardown(void)
{
	static const char *const paths[] = {
		"module/kvm_intel/initstate",
		"module/kvm_amd/initstate",
		"cpuinfo",
		"module/kvm_intel",
		"module/kvm_amd",
		"module/kvm",
		"module",
		"",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		remove_path(paths[i]);
}

START_TEST(test_detect_intel)
{
	const char *isa;

	make_dir("module/kvm_intel");
	isa = arch_detect_isa(&arch_x86_desc, sysfs_root);
	ck_assert_str_eq(isa, "vmx");
	ck_assert_ptr_eq(arch_table_for(&arch_x86_desc, isa),
			 arch_table_for(&arch_x86_desc, "vmx"));
}
END_TEST

START_TEST(test_detect_amd)
{
	make_dir("module/kvm_amd");
	write_file("module/kvm_amd/initstate", "live\n");
	ck_assert_str_eq(arch_detect_isa(&arch_x86_desc, sysfs_root), "svm");
}
END_TEST

START_TEST(test_detect_neither)
{
	/* kvm alone (or nothing at all) does not say which vendor. */
	ck_assert_ptr_null(arch_detect_isa(&arch_x86_desc, sysfs_root));
	ck_assert_ptr_null(
		arch_detect_isa(&arch_x86_desc, "/nonexistent/kvmstat"));
	/* A file where the module directory should be is not a module. */
	write_file("module/kvm_intel", "");
	ck_assert_ptr_null(arch_detect_isa(&arch_x86_desc, sysfs_root));
}
END_TEST

START_TEST(test_detect_both)
{
	make_dir("module/kvm_intel");
	make_dir("module/kvm_amd");
	/* Both built in: no initstate, no answer. */
	ck_assert_ptr_null(arch_detect_isa(&arch_x86_desc, sysfs_root));
	/* The one that is live decides. */
	write_file("module/kvm_intel/initstate", "live\n");
	write_file("module/kvm_amd/initstate", "coming\n");
	ck_assert_str_eq(arch_detect_isa(&arch_x86_desc, sysfs_root), "vmx");
	write_file("module/kvm_intel/initstate", "going\n");
	write_file("module/kvm_amd/initstate", "live");
	ck_assert_str_eq(arch_detect_isa(&arch_x86_desc, sysfs_root), "svm");
	write_file("module/kvm_intel/initstate", "live\n");
	ck_assert_ptr_null(arch_detect_isa(&arch_x86_desc, sysfs_root));
}
END_TEST

/* ---- child names as kvm_stat spells them (issue 11) ---- */

static struct tp_format *load_format(const char *name)
{
	const char *dir = getenv("KVMSTAT_TEST_DATA");
	struct tp_format *f = NULL;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/formats/%s",
		 dir && *dir ? dir : "tests/data", name);
	ck_assert_msg(tp_format_load(path, &f) == 0, "%s", path);
	return f;
}

/* The one table of field f keeps after naming; fails if not exactly one. */
static const struct tp_symtab *only_table(const struct tp_format *f,
					  const char *field)
{
	const struct tp_symtab *t = NULL;

	for (size_t i = 0; i < f->ntabs; i++) {
		if (strcmp(f->tabs[i].field, field))
			continue;
		ck_assert_msg(t == NULL, "two tables of %s", field);
		t = &f->tabs[i];
	}
	ck_assert_msg(t != NULL, "no table of %s", field);
	return t;
}

static void assert_named(const struct tp_symtab *t, uint64_t value,
			 const char *name)
{
	const char *got = tp_symtab_name(t, value);

	ck_assert_msg(got && !strcmp(got, name), "%#llx: %s, want %s",
		      (unsigned long long)value, got ? got : "(none)", name);
}

/* Whether any name of t has a lower-case letter (kernel SVM spelling). */
static bool has_lower(const struct tp_symtab *t)
{
	for (size_t i = 0; i < t->nsyms; i++)
		for (const char *c = t->syms[i].name; *c; c++)
			if (*c >= 'a' && *c <= 'z')
				return true;
	return false;
}

/* SVM on the real x86 fixture: kvm_stat's upper-case names, SVM only. */
START_TEST(test_names_svm)
{
	const struct arch_source *src = arch_x86_desc.sources[0];
	struct tp_format *f = load_format("kvm_exit");
	const struct arch_exit_table *svm = arch_table_for(&arch_x86_desc,
							   "svm");
	const struct tp_symtab *t;

	ck_assert_int_eq(arch_name_reasons(&arch_x86_desc, src, "svm", f), 0);
	t = only_table(f, "exit_reason");
	/* the kernel's table is the SVM one: no VMX name is left */
	ck_assert_ptr_null(tp_symtab_find(t, "IO_INSTRUCTION"));
	ck_assert_ptr_null(tp_symtab_find(t, "EXCEPTION_NMI"));
	assert_named(t, 0x07b, "IOIO");
	assert_named(t, 0x07c, "MSR");
	assert_named(t, 0x400, "NPF");
	assert_named(t, 0x078, "HLT");
	assert_named(t, 0x081, "VMMCALL");
	assert_named(t, 0x069, "TR_READ");   /* kernel: read_rt */
	assert_named(t, 0x040, "EXCP_BASE"); /* kernel: DE excp */
	/* kvm_stat knows them, this kernel's table does not: added */
	assert_named(t, 0x05f, "LAST_EXCP");
	assert_named(t, 0x08c, "MWAIT_COND");
	assert_named(t, 0x091, "CR1_WRITE_TRAP");
	/* the kernel knows them, kvm_stat does not: the kernel's name */
	assert_named(t, 0x041, "DB excp");
	assert_named(t, 0x0a6, "idle-halt");
	assert_named(t, 0x80000001, "vmgexit_mmio_read");
	assert_named(t, 0xffffffff, "invalid_guest_state");
	ck_assert_ptr_null(tp_symtab_find(t, "io"));
	ck_assert_ptr_null(tp_symtab_find(t, "msr"));
	ck_assert_ptr_null(tp_symtab_find(t, "npf"));
	/* every reason kvm_stat names is there, under kvm_stat's name */
	for (size_t i = 0; i < svm->n; i++)
		if (svm->reasons[i].kvm_stat)
			assert_named(t, svm->reasons[i].value,
				     svm->reasons[i].kvm_stat);
	tp_format_free(f);
}
END_TEST

/* VMX on the same fixture: the VMX table alone, names unchanged. */
START_TEST(test_names_vmx)
{
	const struct arch_source *src = arch_x86_desc.sources[0];
	struct tp_format *f = load_format("kvm_exit");
	struct tp_format *raw = load_format("kvm_exit");
	const struct tp_symtab *t,
		*k = tp_format_symtab_for(raw, "exit_reason", 1);

	ck_assert_int_eq(arch_name_reasons(&arch_x86_desc, src, "vmx", f), 0);
	t = only_table(f, "exit_reason");
	ck_assert_uint_eq(t->mask, 0xffff);
	assert_named(t, 12, "HLT");
	assert_named(t, 30, "IO_INSTRUCTION");
	assert_named(t, 0x8000000c, "HLT"); /* failed entry bit masked */
	ck_assert_ptr_null(tp_symtab_find(t, "IOIO"));
	ck_assert_ptr_null(tp_symtab_find(t, "NPF"));
	ck_assert(!has_lower(t));
	/* kvm_stat's VMX names are the kernel's: same set as the kernel's */
	ck_assert_uint_eq(t->nsyms, k->nsyms);
	tp_format_free(raw);
	tp_format_free(f);
}
END_TEST

/* An unknown ISA lists neither table rather than both side by side. */
START_TEST(test_names_unknown_isa)
{
	const struct arch_source *src = arch_x86_desc.sources[0];
	struct tp_format *f = load_format("kvm_exit");

	ck_assert_int_eq(arch_name_reasons(&arch_x86_desc, src, NULL, f),
			 -ENOENT);
	ck_assert_ptr_null(tp_format_symtab(f, "exit_reason"));
	tp_format_free(f);
	f = load_format("kvm_exit");
	ck_assert_int_eq(arch_name_reasons(&arch_x86_desc, src, "arm64", f),
			 -ENOENT);
	ck_assert_ptr_null(tp_format_symtab(f, "exit_reason"));
	tp_format_free(f);
}
END_TEST

/* A format with no table: the host ISA's fallback, in kvm_stat's names. */
START_TEST(test_names_fallback)
{
	const struct arch_source *src = arch_x86_desc.sources[0];
	const struct arch_exit_table *svm = arch_table_for(&arch_x86_desc,
							   "svm");
	struct tp_format *f = load_format("kvm_exit_nosym");
	const struct tp_symtab *t;

	ck_assert_int_eq(arch_name_reasons(&arch_x86_desc, src, "svm", f), 0);
	t = only_table(f, "exit_reason");
	ck_assert_ptr_null(t->guard_field);
	ck_assert_uint_eq(t->nsyms, svm->n);
	assert_named(t, 0x07b, "IOIO");
	assert_named(t, 0x001, "read_cr1"); /* only our table knows it */
	tp_format_free(f);
}
END_TEST

/*
 * kvm_userspace_exit: the fixture's kernel names 31 reasons; every
 * KVM_EXIT_* of the uapi header is listed (kvm_stat names 38).
 */
START_TEST(test_names_userspace_exit)
{
	struct tp_format *f = load_format("kvm_userspace_exit");
	const struct tp_symtab *t = tp_format_symtab(f, "reason");
	const struct arch_exit_table *u = arch_source_userspace_exit.table;

	ck_assert_ptr_nonnull(u);
	ck_assert(u->listed);
	check_table(u);
	ck_assert_uint_eq(t->nsyms, 31);
	ck_assert_int_eq(arch_name_reasons(&arch_x86_desc,
					   &arch_source_userspace_exit, "vmx",
					   f),
			 0);
	t = only_table(f, "reason");
	ck_assert_uint_eq(t->nsyms, u->n);
	ck_assert_uint_ge(t->nsyms, 38);
	assert_named(t, 5, "HLT");
	assert_named(t, 31, "DIRTY_RING_FULL");
	assert_named(t, 37, "NOTIFY");
	/* the same with an unknown ISA: these do not depend on it */
	tp_format_free(f);
	f = load_format("kvm_userspace_exit");
	ck_assert_int_eq(arch_name_reasons(&arch_generic_desc,
					   &arch_source_userspace_exit, NULL, f),
			 0);
	ck_assert_uint_eq(only_table(f, "reason")->nsyms, u->n);
	tp_format_free(f);
}
END_TEST

/*
 * The userspace table holds every KVM_EXIT_* of the build host's uapi
 * header with its value: the run of defines from KVM_EXIT_UNKNOWN up, until
 * the values stop growing (KVM_EXIT_IO_IN starts another list).
 */
START_TEST(test_uapi_exit_reasons)
{
	const struct arch_exit_table *u = arch_source_userspace_exit.table;
	FILE *fp = fopen("/usr/include/linux/kvm.h", "r");
	char line[512];
	long last = -1;
	bool in_run = false;
	size_t seen = 0;

	if (!fp) {
		test_skip("test_uapi_exit_reasons",
			  "no /usr/include/linux/kvm.h (apt-get install linux-libc-dev)");
		return;
	}
	while (fgets(line, sizeof(line), fp)) {
		char name[128];
		long v;

		if (sscanf(line, "#define KVM_EXIT_%127s %li", name, &v) != 2)
			continue;
		if (!strcmp(name, "UNKNOWN"))
			in_run = true;
		if (!in_run)
			continue;
		if (v <= last)
			break;
		last = v;
		ck_assert_msg(arch_reason_name(u, (uint64_t)v) &&
				      !strcmp(arch_reason_name(u, (uint64_t)v),
					      name),
			      "KVM_EXIT_%s (%ld) missing", name, v);
		seen++;
	}
	fclose(fp);
	ck_assert_uint_ge(seen, 38);
}
END_TEST

/* The CPU vendor decides when no vendor module does. */
START_TEST(test_detect_vendor)
{
	static const struct {
		const char *vendor, *isa;
	} cases[] = {
		{ "GenuineIntel", "vmx" }, { "AuthenticAMD", "svm" },
		{ "HygonGenuine", "svm" }, { "  Shanghai  ", "vmx" },
		{ "SomethingElse", NULL },
	};
	char text[256];

	/* no cpuinfo: unknown */
	ck_assert_ptr_null(
		arch_detect_isa_at(&arch_x86_desc, sysfs_root, sysfs_root));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *isa;

		snprintf(text, sizeof(text),
			 "processor\t: 0\nvendor_id\t: %s\ncpu family\t: 6\n"
			 "flags\t\t: fpu sse\n\nprocessor\t: 1\n"
			 "vendor_id\t: AuthenticAMD\n",
			 cases[i].vendor);
		write_file("cpuinfo", text);
		isa = arch_detect_isa_at(&arch_x86_desc, sysfs_root, sysfs_root);
		if (cases[i].isa)
			ck_assert_str_eq(isa, cases[i].isa);
		else
			ck_assert_ptr_null(isa);
	}
	/* the vendor module wins over the CPU vendor (AMD CPU, kvm_intel
	 * as a nested host may show) */
	write_file("cpuinfo", "vendor_id\t: AuthenticAMD\n");
	make_dir("module/kvm_intel");
	ck_assert_str_eq(arch_detect_isa_at(&arch_x86_desc, sysfs_root,
					    sysfs_root),
			 "vmx");
	/* architectures without a vendor rule ignore cpuinfo */
	ck_assert_str_eq(arch_detect_isa_at(&arch_arm64_desc, sysfs_root,
					    sysfs_root),
			 "arm64");
	ck_assert_ptr_null(
		arch_detect_isa_at(&arch_generic_desc, sysfs_root, sysfs_root));
	remove_path("cpuinfo");
}
END_TEST

Suite *arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("tables");
	TCase *td = tcase_create("detect");

	tcase_add_test(tc, test_all_arch_tables);
	tcase_add_test(tc, test_descriptors_well_formed);
	tcase_add_test(tc, test_sources);
	tcase_add_test(tc, test_other_arches);
	tcase_add_test(tc, test_x86_tables);
	tcase_add_test(tc, test_x86_covers_kernel_tables);
	tcase_add_test(tc, test_arm64_covers_kernel_table);
	tcase_add_test(tc, test_reason_lookup);
	tcase_add_test(tc, test_generic_lookup);
	tcase_add_test(tc, test_linked_arch);
	tcase_add_test(tc, test_names_svm);
	tcase_add_test(tc, test_names_vmx);
	tcase_add_test(tc, test_names_unknown_isa);
	tcase_add_test(tc, test_names_fallback);
	tcase_add_test(tc, test_names_userspace_exit);
	tcase_add_test(tc, test_uapi_exit_reasons);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(td, sysfs_setup, sysfs_teardown);
	tcase_add_test(td, test_detect_intel);
	tcase_add_test(td, test_detect_amd);
	tcase_add_test(td, test_detect_neither);
	tcase_add_test(td, test_detect_both);
	tcase_add_test(td, test_detect_vendor);
	suite_add_tcase(s, td);
	return s;
}
