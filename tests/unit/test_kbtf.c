// SPDX-License-Identifier: GPL-2.0-only
/*
 * Struct layouts from BTF files (kbtf) on files the test writes with
 * libbpf's BTF writer, shaped as a kernel's: a vmlinux with struct kvm_vcpu
 * and a vendor module's split BTF on it with vcpu_svm (the vCPU at 0, a
 * pointer to struct vmcb whose exit code sits behind a nested struct and
 * an anonymous union), a bitfield and a vmlinux-only tree (the module built
 * in, or missing). Offsets are checked against the ones written.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "kbtf.h"
#include "suites.h"
#include "testlib.h"

static char dir[64];

/* Writes b's raw BTF as dir/name. */
static void put_btf(const struct btf *b, const char *name)
{
	char path[128];
	uint32_t size;
	const void *data = btf__raw_data(b, &size);
	FILE *fp;

	ck_assert_ptr_nonnull(data);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(data, 1, size, fp), size);
	ck_assert_int_eq(fclose(fp), 0);
}

/*
 * vmlinux: unsigned int (1), struct kvm_vcpu { unsigned int vcpu_id; }
 * of 64 bytes (2), and, when with_module is false, the module's types
 * below built in. The module: struct vmcb_control_area { char pad[16];
 * unsigned int exit_code; unsigned int exit_code_hi; unsigned int
 * flags:3; }, struct vmcb { struct vmcb_control_area control; union {
 * unsigned int save; }; } behind a 1024-byte offset, struct vcpu_svm {
 * struct kvm_vcpu vcpu; struct vmcb *vmcb; }.
 */
static void write_tree(bool with_module)
{
	struct btf *base = btf__new_empty(), *mod;
	int u32, vcpu, arr, ctl, un, vmcb, ptr, svm;

	ck_assert_ptr_nonnull(base);
	u32 = btf__add_int(base, "unsigned int", 4, 0);
	vcpu = btf__add_struct(base, "kvm_vcpu", 64);
	ck_assert_int_eq(btf__add_field(base, "vcpu_id", u32, 0, 0), 0);
	mod = with_module ? btf__new_empty_split(base) : base;
	ck_assert_ptr_nonnull(mod);
	arr = btf__add_array(mod, u32, u32, 4);
	ctl = btf__add_struct(mod, "vmcb_control_area", 28);
	ck_assert_int_eq(btf__add_field(mod, "pad", arr, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(mod, "exit_code", u32, 128, 0), 0);
	ck_assert_int_eq(btf__add_field(mod, "exit_code_hi", u32, 160, 0), 0);
	ck_assert_int_eq(btf__add_field(mod, "flags", u32, 192, 3), 0);
	un = btf__add_union(mod, NULL, 4);
	ck_assert_int_eq(btf__add_field(mod, "save", u32, 0, 0), 0);
	vmcb = btf__add_struct(mod, "vmcb", 1028);
	ck_assert_int_eq(btf__add_field(mod, "control", ctl, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(mod, NULL, un, 1024 * 8, 0), 0);
	ptr = btf__add_ptr(mod, vmcb);
	svm = btf__add_struct(mod, "vcpu_svm", 72);
	ck_assert_int_eq(btf__add_field(mod, "vcpu", vcpu, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(mod, "vmcb", ptr, 64 * 8, 0), 0);
	ck_assert_int_gt(svm, 0);
	put_btf(base, "vmlinux");
	if (with_module) {
		put_btf(mod, "kvm_amd");
		btf__free(mod);
	}
	btf__free(base);
}

static void tree_create(void)
{
	strcpy(dir, "/tmp/kvmstat-kbtf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void tree_remove(void)
{
	test_rm_tree(dir);
}

/* The exit code's way, in the module's split BTF and built in. */
START_TEST(test_vcpu_svm)
{
	struct kbtf_member m;
	struct kbtf *k;
	int err = 0;

	write_tree(_i == 0);
	k = kbtf_open(dir, "kvm_amd", &err);
	ck_assert_msg(k, "kbtf_open: %s", strerror(-err));
	ck_assert_int_eq(kbtf_member(k, "vcpu_svm", "vcpu", &m), 0);
	ck_assert_uint_eq(m.offset, 0);
	ck_assert_uint_eq(m.size, 64);
	ck_assert_str_eq(m.type, "kvm_vcpu");
	ck_assert(!m.integer);
	ck_assert_ptr_null(m.pointee);
	ck_assert_int_eq(kbtf_member(k, "vcpu_svm", "vmcb", &m), 0);
	ck_assert_uint_eq(m.offset, 64);
	ck_assert_uint_eq(m.size, 8);
	ck_assert_str_eq(m.pointee, "vmcb");
	ck_assert_int_eq(kbtf_member(k, m.pointee, "control.exit_code", &m), 0);
	ck_assert_uint_eq(m.offset, 16);
	ck_assert_uint_eq(m.size, 4);
	ck_assert(m.integer);
	ck_assert_str_eq(m.type, "unsigned int");
	/* through the anonymous union */
	ck_assert_int_eq(kbtf_member(k, "vmcb", "save", &m), 0);
	ck_assert_uint_eq(m.offset, 1024);
	/* what a program cannot read as a reason, or is not there */
	ck_assert_int_eq(kbtf_member(k, "vmcb", "control.flags", &m), -EINVAL);
	ck_assert_int_eq(kbtf_member(k, "vmcb", "control.pad", &m), 0);
	ck_assert(!m.integer);
	ck_assert_int_eq(kbtf_member(k, "vmcb", "control.exit_code.x", &m),
			 -EINVAL);
	ck_assert_int_eq(kbtf_member(k, "vmcb", "control.nope", &m), -ENOENT);
	ck_assert_int_eq(kbtf_member(k, "vcpu_vmx", "vcpu", &m), -ENOENT);
	kbtf_close(k);
}
END_TEST

/* No vmlinux BTF: an error, not a guess. */
START_TEST(test_no_btf)
{
	int err = 0;

	ck_assert_ptr_null(kbtf_open(dir, "kvm_amd", &err));
	ck_assert_int_eq(err, -ENOENT);
}
END_TEST

Suite *kbtf_suite(void)
{
	Suite *s = suite_create("kbtf");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, tree_create, tree_remove);
	tcase_add_loop_test(tc, test_vcpu_svm, 0, 2);
	tcase_add_test(tc, test_no_btf);
	suite_add_tcase(s, tc);
	return s;
}
