// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exit-reason fallback tables. The build links one arch/<arch>/arch.c;
 * this file also compiles every arch file itself, each under its own names
 * (arch_x86_name, arch_arm64_exit_tables, ...), so every architecture's
 * tables are checked on any build host: sorted unique values, unique
 * non-empty names, masks that keep every value. The x86 tables are checked
 * value by value and against the real kvm_exit format fixture, and x86 ISA
 * detection runs on fake sysfs trees made in a temporary directory.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "suites.h"
#include "tpformat.h"

#define arch_name arch_x86_name
#define arch_exit_tables arch_x86_exit_tables
#define arch_exit_table_for arch_x86_exit_table_for
#define arch_detect_isa arch_x86_detect_isa
#include "../arch/x86/arch.c"
#undef arch_name
#undef arch_exit_tables
#undef arch_exit_table_for
#undef arch_detect_isa

#define arch_name arch_arm64_name
#define arch_exit_tables arch_arm64_exit_tables
#define arch_exit_table_for arch_arm64_exit_table_for
#define arch_detect_isa arch_arm64_detect_isa
#include "../arch/arm64/arch.c"
#undef arch_name
#undef arch_exit_tables
#undef arch_exit_table_for
#undef arch_detect_isa

#define arch_name arch_powerpc_name
#define arch_exit_tables arch_powerpc_exit_tables
#define arch_exit_table_for arch_powerpc_exit_table_for
#define arch_detect_isa arch_powerpc_detect_isa
#include "../arch/powerpc/arch.c"
#undef arch_name
#undef arch_exit_tables
#undef arch_exit_table_for
#undef arch_detect_isa

#define arch_name arch_s390_name
#define arch_exit_tables arch_s390_exit_tables
#define arch_exit_table_for arch_s390_exit_table_for
#define arch_detect_isa arch_s390_detect_isa
#include "../arch/s390/arch.c"
#undef arch_name
#undef arch_exit_tables
#undef arch_exit_table_for
#undef arch_detect_isa

#define arch_name arch_generic_name
#define arch_exit_tables arch_generic_exit_tables
#define arch_exit_table_for arch_generic_exit_table_for
#define arch_detect_isa arch_generic_detect_isa
#include "../arch/generic/arch.c"
#undef arch_name
#undef arch_exit_tables
#undef arch_exit_table_for
#undef arch_detect_isa

/* One architecture as compiled into this test. */
struct arch_copy {
	const char *const *name;
	const struct arch_exit_table *const *(*tables)(void);
	const struct arch_exit_table *(*table_for)(const char *isa);
	const char *(*detect)(const char *sysfs_root);
	size_t ntables;
};

static const struct arch_copy arch_copies[] = {
	{ &arch_x86_name, arch_x86_exit_tables, arch_x86_exit_table_for, arch_x86_detect_isa, 2 },
	{ &arch_arm64_name, arch_arm64_exit_tables, arch_arm64_exit_table_for,
	  arch_arm64_detect_isa, 1 },
	{ &arch_powerpc_name, arch_powerpc_exit_tables, arch_powerpc_exit_table_for,
	  arch_powerpc_detect_isa, 1 },
	{ &arch_s390_name, arch_s390_exit_tables, arch_s390_exit_table_for,
	  arch_s390_detect_isa, 1 },
	{ &arch_generic_name, arch_generic_exit_tables, arch_generic_exit_table_for,
	  arch_generic_detect_isa, 0 },
};

#define NCOPIES (sizeof(arch_copies) / sizeof(arch_copies[0]))

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
		ck_assert_msg((r->value & t->mask) == r->value, "%s: %s (%#llx) outside the mask",
			      t->isa, r->name, (unsigned long long)r->value);
		if (i)
			ck_assert_msg(t->reasons[i - 1].value < r->value,
				      "%s: %s not sorted or duplicate", t->isa, r->name);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(strcmp(t->reasons[j].name, r->name),
				      "%s: duplicate name %s", t->isa, r->name);
	}
}

START_TEST(test_all_arch_tables)
{
	for (size_t k = 0; k < NCOPIES; k++) {
		const struct arch_copy *a = &arch_copies[k];
		const struct arch_exit_table *const *tabs = a->tables();
		size_t n = 0;

		ck_assert_ptr_nonnull(*a->name);
		ck_assert_ptr_nonnull(tabs);
		for (; tabs[n]; n++) {
			check_table(tabs[n]);
			ck_assert_ptr_eq(a->table_for(tabs[n]->isa), tabs[n]);
			for (size_t j = 0; j < n; j++)
				ck_assert_str_ne(tabs[j]->isa, tabs[n]->isa);
		}
		ck_assert_uint_eq(n, a->ntables);
		ck_assert_ptr_null(a->table_for(NULL));
		ck_assert_ptr_null(a->table_for("nope"));
		ck_assert_ptr_null(a->table_for(""));
	}
}
END_TEST

START_TEST(test_other_arches)
{
	const struct arch_exit_table *t;

	ck_assert_str_eq(arch_arm64_name, "arm64");
	t = arch_arm64_exit_table_for("arm64");
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
	ck_assert_str_eq(arch_arm64_detect_isa("/nonexistent"), "arm64");

	ck_assert_str_eq(arch_powerpc_name, "powerpc");
	t = arch_powerpc_exit_table_for("powerpc");
	ck_assert_str_eq(t->field, "exit_nr");
	ck_assert_uint_eq(reason_value(t, "SYSTEM_RESET"), 0x100);
	ck_assert_uint_eq(reason_value(t, "MACHINE_CHECK"), 0x200);
	ck_assert_uint_eq(reason_value(t, "DATA_STORAGE"), 0x300);
	ck_assert_uint_eq(reason_value(t, "HV_DECREMENTER"), 0x980);
	ck_assert_uint_eq(reason_value(t, "SYSCALL"), 0xc00);
	ck_assert_str_eq(arch_powerpc_detect_isa(NULL), "powerpc");

	ck_assert_str_eq(arch_s390_name, "s390");
	t = arch_s390_exit_table_for("s390");
	ck_assert_str_eq(t->event, "kvm_s390_sie_exit");
	ck_assert_str_eq(t->field, "icptcode");
	ck_assert_uint_eq(reason_value(t, "instruction"), 0x04);
	ck_assert_uint_eq(reason_value(t, "program interruption"), 0x08);
	ck_assert_uint_eq(reason_value(t, "validity"), 0x20);
	ck_assert_str_eq(arch_s390_detect_isa("/sys"), "s390");

	ck_assert_str_eq(arch_generic_name, "generic");
	ck_assert_ptr_null(arch_generic_exit_tables()[0]);
	ck_assert_ptr_null(arch_generic_detect_isa("/sys"));
}
END_TEST

START_TEST(test_x86_tables)
{
	const struct arch_exit_table *vmx = arch_x86_exit_table_for("vmx");
	const struct arch_exit_table *svm = arch_x86_exit_table_for("svm");

	ck_assert_str_eq(arch_x86_name, "x86");
	ck_assert_ptr_eq(arch_x86_exit_tables()[0], vmx);
	ck_assert_ptr_eq(arch_x86_exit_tables()[1], svm);

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
}
END_TEST

/*
 * The x86 fallback knows every reason the kernel fixture's tables name, and
 * names VMX reasons as the kernel does (SVM names may differ where the
 * manual's register name is used, e.g. read_tr).
 */
START_TEST(test_x86_covers_kernel_tables)
{
	const struct arch_exit_table *vmx = arch_x86_exit_table_for("vmx");
	const struct arch_exit_table *svm = arch_x86_exit_table_for("svm");
	const char *dir = getenv("KVMSTAT_TEST_DATA");
	struct tp_format *f = NULL;
	const struct tp_symtab *kv, *ks;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/formats/kvm_exit", dir && *dir ? dir : "tests/data");
	ck_assert_int_eq(tp_format_load(path, &f), 0);
	kv = tp_format_symtab_for(f, "exit_reason", 1);
	ks = tp_format_symtab_for(f, "exit_reason", 2);
	ck_assert_ptr_nonnull(kv);
	ck_assert_ptr_nonnull(ks);
	ck_assert_uint_eq(kv->mask, vmx->mask);
	for (size_t i = 0; i < kv->nsyms; i++) {
		const char *mine = reason_name(vmx, kv->syms[i].value);

		ck_assert_msg(mine && !strcmp(mine, kv->syms[i].name),
			      "VMX %llu: kernel %s, ours %s",
			      (unsigned long long)kv->syms[i].value, kv->syms[i].name,
			      mine ? mine : "(none)");
	}
	for (size_t i = 0; i < ks->nsyms; i++)
		ck_assert_msg(reason_name(svm, ks->syms[i].value), "SVM %#llx (%s) missing",
			      (unsigned long long)ks->syms[i].value, ks->syms[i].name);
	tp_format_free(f);
}
END_TEST

/* The linked architecture is one of the copies above, table for table. */
START_TEST(test_linked_arch)
{
	const struct arch_copy *a = NULL;
	const struct arch_exit_table *const *mine = arch_exit_tables();

	for (size_t k = 0; k < NCOPIES; k++)
		if (!strcmp(*arch_copies[k].name, arch_name))
			a = &arch_copies[k];
	ck_assert_msg(a != NULL, "unknown arch_name %s", arch_name);
	for (size_t i = 0; i <= a->ntables; i++) {
		const struct arch_exit_table *t = a->tables()[i];

		if (!t) {
			ck_assert_ptr_null(mine[i]);
			break;
		}
		ck_assert_ptr_nonnull(mine[i]);
		ck_assert_str_eq(mine[i]->isa, t->isa);
		ck_assert_uint_eq(mine[i]->n, t->n);
		ck_assert_ptr_eq(arch_exit_table_for(t->isa), mine[i]);
		for (size_t j = 0; j < t->n; j++) {
			ck_assert_uint_eq(mine[i]->reasons[j].value, t->reasons[j].value);
			ck_assert_str_eq(mine[i]->reasons[j].name, t->reasons[j].name);
		}
	}
	ck_assert_ptr_null(arch_exit_table_for(NULL));
}
END_TEST

/* ---- x86 ISA detection on fake sysfs trees ---- */

static char sysfs_root[PATH_MAX];

static void make_dir(const char *rel)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", sysfs_root, rel);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path,
		      strerror(errno));
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
		"module/kvm_intel/initstate", "module/kvm_amd/initstate", "module/kvm_intel",
		"module/kvm_amd", "module/kvm", "module", "",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		remove_path(paths[i]);
}

START_TEST(test_detect_intel)
{
	make_dir("module/kvm_intel");
	ck_assert_str_eq(arch_x86_detect_isa(sysfs_root), "vmx");
	ck_assert_ptr_eq(arch_x86_exit_table_for(arch_x86_detect_isa(sysfs_root)),
			 arch_x86_exit_table_for("vmx"));
}
END_TEST

START_TEST(test_detect_amd)
{
	make_dir("module/kvm_amd");
	write_file("module/kvm_amd/initstate", "live\n");
	ck_assert_str_eq(arch_x86_detect_isa(sysfs_root), "svm");
}
END_TEST

START_TEST(test_detect_neither)
{
	/* kvm alone (or nothing at all) does not say which vendor. */
	ck_assert_ptr_null(arch_x86_detect_isa(sysfs_root));
	ck_assert_ptr_null(arch_x86_detect_isa("/nonexistent/kvmstat"));
	/* A file where the module directory should be is not a module. */
	write_file("module/kvm_intel", "");
	ck_assert_ptr_null(arch_x86_detect_isa(sysfs_root));
}
END_TEST

START_TEST(test_detect_both)
{
	make_dir("module/kvm_intel");
	make_dir("module/kvm_amd");
	/* Both built in: no initstate, no answer. */
	ck_assert_ptr_null(arch_x86_detect_isa(sysfs_root));
	/* The one that is live decides. */
	write_file("module/kvm_intel/initstate", "live\n");
	write_file("module/kvm_amd/initstate", "coming\n");
	ck_assert_str_eq(arch_x86_detect_isa(sysfs_root), "vmx");
	write_file("module/kvm_intel/initstate", "going\n");
	write_file("module/kvm_amd/initstate", "live");
	ck_assert_str_eq(arch_x86_detect_isa(sysfs_root), "svm");
	write_file("module/kvm_intel/initstate", "live\n");
	ck_assert_ptr_null(arch_x86_detect_isa(sysfs_root));
}
END_TEST

Suite *arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("tables");
	TCase *td = tcase_create("detect");

	tcase_add_test(tc, test_all_arch_tables);
	tcase_add_test(tc, test_other_arches);
	tcase_add_test(tc, test_x86_tables);
	tcase_add_test(tc, test_x86_covers_kernel_tables);
	tcase_add_test(tc, test_linked_arch);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(td, sysfs_setup, sysfs_teardown);
	tcase_add_test(td, test_detect_intel);
	tcase_add_test(td, test_detect_amd);
	tcase_add_test(td, test_detect_neither);
	tcase_add_test(td, test_detect_both);
	suite_add_tcase(s, td);
	return s;
}
