// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint format parser against real format files copied from an
 * x86 host (tests/data/formats: kvm_exit, kvm_userspace_exit, kvm_pio,
 * kvm_mmio, kvm_entry), hand-written ones (an older kvm_exit, an arm64
 * kvm_exit, one without a table, malformed ones), inline snippets for the
 * expression, string and guard rules, and a fuzz-style pass over every
 * truncation and many corruptions of the real files, which must never
 * crash or read out of bounds (run under ASan in CI).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "testlib.h"
#include "tpformat.h"

static const char *data_dir(void)
{
	const char *d = getenv("KVMSTAT_TEST_DATA");

	return d && *d ? d : "tests/data";
}

static void fixture_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/formats/%s", data_dir(), name);
}

static struct tp_format *load_fixture(const char *name)
{
	struct tp_format *f = NULL;
	char path[4096];
	int rc;

	fixture_path(path, sizeof(path), name);
	rc = tp_format_load(path, &f);
	ck_assert_msg(rc == 0, "%s: %s", path, strerror(-rc));
	ck_assert_ptr_nonnull(f);
	return f;
}

/* Reads a fixture into a malloc'ed buffer of exactly its size. */
static char *read_fixture(const char *name, size_t *lenp)
{
	char path[4096], *buf = NULL;
	size_t len = 0;
	FILE *fp;

	fixture_path(path, sizeof(path), name);
	fp = fopen(path, "rb");
	ck_assert_msg(fp != NULL, "%s", path);
	for (;;) {
		buf = realloc(buf, len + 4096);
		ck_assert_ptr_nonnull(buf);
		size_t n = fread(buf + len, 1, 4096, fp);

		len += n;
		if (n < 4096)
			break;
	}
	fclose(fp);
	*lenp = len;
	return buf;
}

/* Parses len bytes from an exact-size heap copy, so over-reads trip ASan. */
static struct tp_format *parse_exact(const char *text, size_t len, int *err)
{
	char *copy = malloc(len ? len : 1);
	struct tp_format *f;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, text, len);
	f = tp_format_parse(copy, len, err);
	free(copy);
	return f;
}

static const char fmt_head[] =
	"name: test_event\n"
	"ID: 7\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:u8 b8;\toffset:16;\tsize:1;\tsigned:0;\n"
	"\tfield:short s16;\toffset:18;\tsize:2;\tsigned:1;\n"
	"\tfield:u64 q;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:char comm[16];\toffset:32;\tsize:16;\tsigned:1;\n"
	"\tfield:__data_loc char[] name;\toffset:48;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: ";

/* Parses fmt_head followed by the given print fmt arguments. */
static struct tp_format *parse_fmt(const char *print_fmt, int *err)
{
	size_t hl = strlen(fmt_head), pl = strlen(print_fmt);
	char *text = malloc(hl + pl);
	struct tp_format *f;

	ck_assert_ptr_nonnull(text);
	memcpy(text, fmt_head, hl);
	memcpy(text + hl, print_fmt, pl);
	f = parse_exact(text, hl + pl, err);
	free(text);
	return f;
}

static struct tp_format *parse_fmt_ok(const char *print_fmt)
{
	int err = 1;
	struct tp_format *f = parse_fmt(print_fmt, &err);

	ck_assert_msg(f != NULL, "rejected (%d): %s", err, print_fmt);
	ck_assert_int_eq(err, 0);
	return f;
}

static void assert_sym(const struct tp_symtab *t, const char *name,
		       uint64_t value)
{
	const struct tp_symbol *s = tp_symtab_find(t, name);

	ck_assert_msg(s != NULL, "no symbol %s", name);
	ck_assert_msg(s->value == value, "%s = %#llx, want %#llx", name,
		      (unsigned long long)s->value, (unsigned long long)value);
}

static void assert_field(const struct tp_format *f, const char *name,
			 unsigned int offset, unsigned int size, bool is_signed,
			 const char *type)
{
	const struct tp_field *fld = tp_format_field(f, name);

	ck_assert_msg(fld != NULL, "no field %s", name);
	ck_assert_uint_eq(fld->offset, offset);
	ck_assert_uint_eq(fld->size, size);
	ck_assert(fld->is_signed == is_signed);
	ck_assert_str_eq(fld->type, type);
}

/* ---- real and hand-written fixtures ---- */

START_TEST(test_kvm_exit_fields)
{
	struct tp_format *f = load_fixture("kvm_exit");

	ck_assert_str_eq(f->name, "kvm_exit");
	ck_assert_int_eq(f->id, 103);
	ck_assert_uint_eq(f->nfields, 13);
	ck_assert_str_eq(f->fields[0].name, "common_type");
	assert_field(f, "common_pid", 4, 4, true, "int");
	assert_field(f, "exit_reason", 8, 4, false, "unsigned int");
	assert_field(f, "guest_rip", 16, 8, false, "unsigned long");
	assert_field(f, "isa", 24, 4, false, "u32");
	assert_field(f, "requests", 64, 8, false, "u64");
	ck_assert_ptr_null(tp_format_field(f, "nope"));
	ck_assert_ptr_null(tp_format_field(f, "exit"));
	/* The __print_flags table of FAILED_VMENTRY is not a symbol table. */
	ck_assert_uint_eq(f->ntabs, 2);
	tp_format_free(f);
}
END_TEST

START_TEST(test_kvm_exit_vmx)
{
	struct tp_format *f = load_fixture("kvm_exit");
	const struct tp_symtab *t = tp_format_symtab_for(f, "exit_reason", 1);

	ck_assert_ptr_eq(t, &f->tabs[0]);
	ck_assert_ptr_eq(tp_format_symtab(f, "exit_reason"), t);
	ck_assert_str_eq(t->field, "exit_reason");
	ck_assert_uint_eq(t->field_size, 4);
	ck_assert_uint_eq(t->mask, 0xffff);
	ck_assert_str_eq(t->guard_field, "isa");
	ck_assert_int_eq(t->guard_value, 1);
	ck_assert(!t->guard_negated);
	ck_assert_ptr_null(t->prefix);
	ck_assert_uint_eq(t->nsyms, 65);
	ck_assert_str_eq(t->syms[0].name, "EXCEPTION_NMI");
	assert_sym(t, "EXCEPTION_NMI", 0);
	assert_sym(t, "HLT", 12);
	assert_sym(t, "IO_INSTRUCTION", 30);
	assert_sym(t, "EPT_VIOLATION", 48);
	assert_sym(t, "BUS_LOCK", 74);
	assert_sym(t, "TDCALL", 77);
	assert_sym(t, "MSR_READ_IMM", 84);
	assert_sym(t, "MSR_WRITE_IMM", 85);
	ck_assert_str_eq(tp_symtab_name(t, 12), "HLT");
	/* FAILED_VMENTRY (bit 31) is masked off. */
	ck_assert_str_eq(tp_symtab_name(t, 0x8000000c), "HLT");
	ck_assert_ptr_null(tp_symtab_name(t, 11));
	ck_assert_ptr_null(tp_symtab_find(t, "hlt"));
	ck_assert(tp_symtab_applies(t, 1));
	ck_assert(!tp_symtab_applies(t, 2));
	tp_format_free(f);
}
END_TEST

START_TEST(test_kvm_exit_svm)
{
	struct tp_format *f = load_fixture("kvm_exit");
	const struct tp_symtab *t = tp_format_symtab_for(f, "exit_reason", 2);

	ck_assert_ptr_eq(t, &f->tabs[1]);
	ck_assert_str_eq(t->field, "exit_reason");
	ck_assert_uint_eq(t->mask, ~0ULL);
	ck_assert_str_eq(t->guard_field, "isa");
	ck_assert_int_eq(t->guard_value, 1);
	ck_assert(t->guard_negated);
	ck_assert_ptr_null(t->prefix);
	ck_assert_uint_eq(t->nsyms, 110);
	assert_sym(t, "read_cr0", 0);
	assert_sym(t, "write_dr7", 0x37);
	assert_sym(t, "DE excp", 0x40);
	assert_sym(t, "GP excp", 0x4d);
	assert_sym(t, "hlt", 0x78);
	assert_sym(t, "io", 0x7b);
	assert_sym(t, "idle-halt", 0xa6);
	assert_sym(t, "npf", 0x400);
	assert_sym(t, "vmgexit", 0x403);
	assert_sym(t, "vmgexit_mmio_read", 0x80000001);
	assert_sym(t, "vmgexit_hypervisor_feature", 0x8000fffd);
	assert_sym(t, "invalid_guest_state", 0xffffffff);
	ck_assert_str_eq(tp_symtab_name(t, 0x78), "hlt");
	ck_assert_str_eq(tp_symtab_name(t, 0xffffffff), "invalid_guest_state");
	/* The value read is cut to the 4-byte field. */
	ck_assert_str_eq(tp_symtab_name(t, ~0ULL), "invalid_guest_state");
	ck_assert_ptr_null(tp_symtab_name(t, 0x1000));
	ck_assert(tp_symtab_applies(t, 2));
	ck_assert(!tp_symtab_applies(t, 1));
	tp_format_free(f);
}
END_TEST

START_TEST(test_kvm_userspace_exit)
{
	struct tp_format *f = load_fixture("kvm_userspace_exit");
	const struct tp_symtab *t;

	ck_assert_str_eq(f->name, "kvm_userspace_exit");
	ck_assert_int_eq(f->id, 42);
	assert_field(f, "reason", 8, 4, false, "__u32");
	assert_field(f, "errno", 12, 4, true, "int");
	ck_assert_uint_eq(f->ntabs, 1);
	t = tp_format_symtab(f, "reason");
	ck_assert_ptr_nonnull(t);
	/* "REC->errno < 0 ? ... :" is not an equality guard. */
	ck_assert_ptr_null(t->guard_field);
	ck_assert(tp_symtab_applies(t, 12345));
	ck_assert_ptr_eq(tp_format_symtab_for(f, "reason", -1), t);
	ck_assert_str_eq(t->prefix, "KVM_EXIT_");
	ck_assert_uint_eq(t->mask, ~0ULL);
	ck_assert_uint_eq(t->nsyms, 31);
	assert_sym(t, "KVM_EXIT_UNKNOWN", 0);
	assert_sym(t, "KVM_EXIT_IO", 2);
	assert_sym(t, "KVM_EXIT_HLT", 5);
	assert_sym(t, "KVM_EXIT_MMIO", 6);
	assert_sym(t, "KVM_EXIT_X86_WRMSR", 30);
	ck_assert_str_eq(tp_symtab_name(t, 6), "KVM_EXIT_MMIO");
	tp_format_free(f);
}
END_TEST

START_TEST(test_kvm_mmio_pio_entry)
{
	struct tp_format *f = load_fixture("kvm_mmio");
	const struct tp_symtab *t = tp_format_symtab(f, "type");

	ck_assert_int_eq(f->id, 38);
	ck_assert_uint_eq(f->ntabs, 1);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(t->prefix);
	ck_assert_ptr_null(t->guard_field);
	ck_assert_uint_eq(t->nsyms, 3);
	assert_sym(t, "unsatisfied-read", 0);
	assert_sym(t, "read", 1);
	assert_sym(t, "write", 2);
	assert_field(f, "gpa", 16, 8, false, "u64");
	tp_format_free(f);

	f = load_fixture("kvm_pio");
	ck_assert_str_eq(f->name, "kvm_pio");
	ck_assert_int_eq(f->id, 110);
	ck_assert_uint_eq(f->ntabs, 0);
	ck_assert_uint_eq(f->nfields, 9);
	assert_field(f, "rw", 8, 4, false, "unsigned int");
	assert_field(f, "port", 12, 4, false, "unsigned int");
	assert_field(f, "size", 16, 4, false, "unsigned int");
	assert_field(f, "count", 20, 4, false, "unsigned int");
	assert_field(f, "val", 24, 4, false, "unsigned int");
	ck_assert_ptr_null(tp_format_symtab(f, "rw"));
	tp_format_free(f);

	f = load_fixture("kvm_entry");
	ck_assert_int_eq(f->id, 115);
	ck_assert_uint_eq(f->ntabs, 0);
	assert_field(f, "vcpu_id", 8, 4, false, "unsigned int");
	assert_field(f, "immediate_exit", 24, 1, false, "bool");
	assert_field(f, "error_code", 32, 4, false, "u32");
	tp_format_free(f);
}
END_TEST

START_TEST(test_kvm_exit_old)
{
	struct tp_format *f = load_fixture("kvm_exit_old");
	const struct tp_symtab *vmx, *svm;

	ck_assert_int_eq(f->id, 1876);
	ck_assert_ptr_null(tp_format_field(f, "requests"));
	assert_field(f, "vcpu_id", 56, 4, false, "unsigned int");
	ck_assert_uint_eq(f->ntabs, 2);
	vmx = tp_format_symtab_for(f, "exit_reason", 1);
	svm = tp_format_symtab_for(f, "exit_reason", 2);
	ck_assert_ptr_eq(vmx, &f->tabs[0]);
	ck_assert_ptr_eq(svm, &f->tabs[1]);
	ck_assert_uint_eq(vmx->nsyms, 60);
	assert_sym(vmx, "HLT", 12);
	assert_sym(vmx, "TPAUSE", 68);
	ck_assert_ptr_null(tp_symtab_find(vmx, "MSR_READ_IMM"));
	ck_assert_ptr_null(tp_symtab_find(vmx, "BUS_LOCK"));
	ck_assert_ptr_null(tp_symtab_name(vmx, 84));
	assert_sym(svm, "hlt", 0x78);
	assert_sym(svm, "vmgexit", 0x403);
	ck_assert_ptr_null(tp_symtab_find(svm, "vmgexit_mmio_read"));
	ck_assert_ptr_null(tp_symtab_find(svm, "invalid_guest_state"));
	tp_format_free(f);
}
END_TEST

START_TEST(test_arm64_kvm_exit)
{
	struct tp_format *f = load_fixture("arm64_kvm_exit");
	const struct tp_symtab *ec, *ret;

	ck_assert_str_eq(f->name, "kvm_exit");
	assert_field(f, "ret", 8, 4, true, "int");
	assert_field(f, "esr_ec", 12, 4, false, "unsigned int");
	ck_assert_uint_eq(f->ntabs, 2);
	ck_assert_ptr_null(tp_format_symtab(f, "exit_reason"));
	ck_assert_ptr_null(tp_format_symtab(f, "vcpu_pc"));

	ec = tp_format_symtab(f, "esr_ec");
	ck_assert_ptr_eq(ec, &f->tabs[1]);
	ck_assert_ptr_null(ec->guard_field);
	ck_assert_uint_eq(ec->mask, ~0ULL);
	ck_assert_uint_eq(ec->nsyms, 43);
	assert_sym(ec, "UNKNOWN", 0);
	assert_sym(ec, "WFx", 0x01);
	assert_sym(ec, "HVC64", 0x16);
	assert_sym(ec, "SYS64", 0x18);
	assert_sym(ec, "IABT_LOW", 0x20);
	assert_sym(ec, "DABT_LOW", 0x24);
	assert_sym(ec, "BRK64", 0x3c);
	ck_assert_str_eq(tp_symtab_name(ec, 0x24), "DABT_LOW");

	/* ((REC->ret) & ~(1U << 31)): the SError flag is masked off. */
	ret = tp_format_symtab(f, "ret");
	ck_assert_ptr_eq(ret, &f->tabs[0]);
	ck_assert_uint_eq(ret->mask & 0xffffffff, 0x7fffffff);
	ck_assert_str_eq(tp_symtab_name(ret, 0x80000001), "TRAP");
	ck_assert_str_eq(tp_symtab_name(ret, 0), "IRQ");
	tp_format_free(f);
}
END_TEST

START_TEST(test_kvm_exit_nosym)
{
	struct tp_format *f = load_fixture("kvm_exit_nosym");

	ck_assert_uint_eq(f->ntabs, 0);
	ck_assert_ptr_null(tp_format_symtab(f, "exit_reason"));
	ck_assert_ptr_null(tp_format_symtab_for(f, "exit_reason", 1));
	assert_field(f, "exit_reason", 8, 4, false, "unsigned int");
	tp_format_free(f);
}
END_TEST

START_TEST(test_malformed_fixtures)
{
	static const char *const bad[] = {
		"bad_empty",	   "bad_truncated",	"bad_unbalanced",
		"bad_huge_number", "bad_missing_quote", "bad_missing_comma",
		"bad_field",	   "bad_binary",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tp_format *f = (struct tp_format *)1;
		char path[4096];
		int rc;

		fixture_path(path, sizeof(path), bad[i]);
		ck_assert_int_eq(access(path, R_OK), 0);
		rc = tp_format_load(path, &f);
		ck_assert_msg(rc == -EINVAL, "%s: %d", bad[i], rc);
		ck_assert_ptr_null(f);
	}
}
END_TEST

START_TEST(test_load_errors)
{
	struct tp_format *f = (struct tp_format *)1;
	char path[4096];

	fixture_path(path, sizeof(path), "no_such_file");
	ck_assert_int_eq(tp_format_load(path, &f), -ENOENT);
	ck_assert_ptr_null(f);
	snprintf(path, sizeof(path), "%s/formats", data_dir());
	ck_assert_int_eq(tp_format_load(path, &f), -EISDIR);
	ck_assert_ptr_null(f);
	tp_format_free(NULL);
}
END_TEST

/* ---- inline snippets ---- */

START_TEST(test_header_fields)
{
	struct tp_format *f = parse_fmt_ok("\"%d\", REC->q\n");

	ck_assert_str_eq(f->name, "test_event");
	ck_assert_int_eq(f->id, 7);
	ck_assert_uint_eq(f->nfields, 11);
	assert_field(f, "comm", 32, 16, true, "char[16]");
	assert_field(f, "name", 48, 4, true, "__data_loc char[]");
	assert_field(f, "s16", 18, 2, true, "short");
	ck_assert_uint_eq(f->ntabs, 0);
	tp_format_free(f);

	/* No trailing newline, CRLF lines, unknown "key: value" lines, no signed:. */
	static const char crlf[] = "name: x\r\nID: 1\r\nflags: 0x0\r\nformat:\r\n"
				   "\tfield:int a;\toffset:8;\tsize:4;\r\n"
				   "print fmt: \"%d\", REC->a";
	int err;

	f = parse_exact(crlf, sizeof(crlf) - 1, &err);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->name, "x");
	assert_field(f, "a", 8, 4, false, "int");
	tp_format_free(f);
}
END_TEST

START_TEST(test_expressions)
{
	struct tp_format *f = parse_fmt_ok(
		"\"%s\", __print_symbolic(REC->q, { 1 << 3, \"shl\" }, { 0x10 | 0x1, \"or\" }, "
		"{ 0x040 + 13, \"sum\" }, { (0x40), \"paren\" }, { ((7)), \"paren2\" }, "
		"{ 010, \"octal\" }, { 0b11, \"bin\" }, { 100UL, \"suffix\" }, "
		"{ 0x10ull, \"suffix2\" }, { ~0 & 0xff, \"andnot\" }, { -(2), \"neg\" }, "
		"{ 7 * 6 - 2, \"prec\" }, { 1 + 2 * 3 << 1, \"prec2\" }, { 9 / 2 % 3, \"div\" }, "
		"{ 1 ? 2 : 3, \"tern\" }, { ENUM_X, \"enum\" }, { (int)5, \"cast\" }, "
		"{ 0xffffffffffffffff, \"max\" }, { 18446744073709551615, \"maxdec\" }, "
		"{ 2 == 2, \"eq\" }, { !0 + (3 > 2) + (1 && 0) + (0 || 4), \"logic\" }, "
		"{ 0xf0 ^ 0xff, \"xor\" }, { 256 >> 4, \"shr\" }, { +4, \"plus\" }, "
		"{ - - 5, \"negneg\" })\n");
	const struct tp_symtab *t = tp_format_symtab(f, "q");

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->field_size, 8);
	assert_sym(t, "shl", 8);
	assert_sym(t, "or", 0x11);
	assert_sym(t, "sum", 0x4d);
	assert_sym(t, "paren", 0x40);
	assert_sym(t, "paren2", 7);
	assert_sym(t, "octal", 8);
	assert_sym(t, "bin", 3);
	assert_sym(t, "suffix", 100);
	assert_sym(t, "suffix2", 16);
	assert_sym(t, "andnot", 0xff);
	assert_sym(t, "neg", 0xfffffffffffffffeULL);
	assert_sym(t, "prec", 40);
	assert_sym(t, "prec2", 14);
	assert_sym(t, "div", 1);
	assert_sym(t, "max", ~0ULL);
	assert_sym(t, "maxdec", ~0ULL);
	assert_sym(t, "eq", 1);
	assert_sym(t, "logic", 3);
	assert_sym(t, "xor", 0x0f);
	assert_sym(t, "shr", 16);
	assert_sym(t, "plus", 4);
	assert_sym(t, "negneg", 5);
	/* Not evaluated: left out, the rest kept. */
	ck_assert_ptr_null(tp_symtab_find(t, "tern"));
	ck_assert_ptr_null(tp_symtab_find(t, "enum"));
	ck_assert_ptr_null(tp_symtab_find(t, "cast"));
	ck_assert_uint_eq(t->nsyms, 22);
	tp_format_free(f);
}
END_TEST

START_TEST(test_negative_by_field_size)
{
	struct tp_format *f = parse_fmt_ok(
		"\"%s%s%s%s%s\", __print_symbolic(REC->b8, { -1, \"m1\" }, { 0x1ff, \"cut\" }), "
		"__print_symbolic(REC->s16, { -1, \"m1\" }), "
		"__print_symbolic(REC->exit_reason, { -1, \"m1\" }, { -2, \"m2\" }), "
		"__print_symbolic(REC->q, { -1, \"m1\" }), "
		"__print_symbolic(REC->ghost, { -1, \"m1\" })\n");

	ck_assert_uint_eq(f->ntabs, 5);
	assert_sym(tp_format_symtab(f, "b8"), "m1", 0xff);
	assert_sym(tp_format_symtab(f, "b8"), "cut", 0xff);
	assert_sym(tp_format_symtab(f, "s16"), "m1", 0xffff);
	assert_sym(tp_format_symtab(f, "exit_reason"), "m1", 0xffffffff);
	assert_sym(tp_format_symtab(f, "exit_reason"), "m2", 0xfffffffe);
	assert_sym(tp_format_symtab(f, "q"), "m1", ~0ULL);
	/* A field the format lacks: size 0, value kept as evaluated. */
	ck_assert_uint_eq(tp_format_symtab(f, "ghost")->field_size, 0);
	assert_sym(tp_format_symtab(f, "ghost"), "m1", ~0ULL);
	ck_assert_str_eq(tp_symtab_name(tp_format_symtab(f, "s16"),
					0xffffffffffffffffULL),
			 "m1");
	tp_format_free(f);
}
END_TEST

START_TEST(test_names_and_prefix)
{
	struct tp_format *f = parse_fmt_ok(
		"\"%s %s %s %s %s\", "
		"__print_symbolic(REC->b8, { 1, \"a\\tb\" }, { 2, \"\\x41\\102\" }, "
		"{ 3, \"q\\\"uote\" }, { 4, \"back\\\\slash\" }, { 5, \"a,b)c}\" }, { 6, \"\" }), "
		"__print_symbolic(REC->s16, { 1, \"P_\" \"A\" }, { 2, \"P_\" \"B\" \"C\" }), "
		"__print_symbolic(REC->exit_reason, { 1, \"P_\" \"A\" }, { 2, \"P_B\" }), "
		"__print_symbolic(REC->isa, { 1, \"P_\" \"A\" }, { 2, \"Q_\" \"B\" }), "
		"__print_symbolic(REC->q, { 1, \"\" \"A\" }, { 2, \"\" \"B\" })\n");
	const struct tp_symtab *t = tp_format_symtab(f, "b8");

	assert_sym(t, "a\tb", 1);
	assert_sym(t, "AB", 2);
	assert_sym(t, "q\"uote", 3);
	assert_sym(t, "back\\slash", 4);
	assert_sym(t, "a,b)c}", 5);
	assert_sym(t, "", 6);
	ck_assert_ptr_null(t->prefix);

	t = tp_format_symtab(f, "s16");
	ck_assert_str_eq(t->prefix, "P_");
	assert_sym(t, "P_A", 1);
	assert_sym(t, "P_BC", 2);
	ck_assert_ptr_null(tp_format_symtab(f, "exit_reason")->prefix);
	ck_assert_ptr_null(tp_format_symtab(f, "isa")->prefix);
	ck_assert_str_eq(tp_format_symtab(f, "q")->prefix, "");
	tp_format_free(f);
}
END_TEST

static void assert_guard(const struct tp_symtab *t, const char *field,
			 int64_t value, bool negated)
{
	ck_assert_ptr_nonnull(t);
	if (!field) {
		ck_assert_ptr_null(t->guard_field);
		return;
	}
	ck_assert_ptr_nonnull(t->guard_field);
	ck_assert_str_eq(t->guard_field, field);
	ck_assert_int_eq(t->guard_value, value);
	ck_assert(t->guard_negated == negated);
}

#define SYM(f) "__print_symbolic(REC->" f ", { 1, \"x\" })"

START_TEST(test_guards)
{
	struct tp_format *f;

	/* An else-if chain. */
	f = parse_fmt_ok(
		"\"%s\", (REC->isa == 1) ? " SYM("exit_reason") " : (REC->isa == 2) ? " SYM(
			"exit_reason") " : " SYM("exit_reason") "\n");
	ck_assert_uint_eq(f->ntabs, 3);
	assert_guard(&f->tabs[0], "isa", 1, false);
	assert_guard(&f->tabs[1], "isa", 2, false);
	assert_guard(&f->tabs[2], "isa", 2, true);
	ck_assert_ptr_eq(tp_format_symtab_for(f, "exit_reason", 1), &f->tabs[0]);
	ck_assert_ptr_eq(tp_format_symtab_for(f, "exit_reason", 2), &f->tabs[1]);
	ck_assert_ptr_eq(tp_format_symtab_for(f, "exit_reason", 3), &f->tabs[2]);
	tp_format_free(f);

	/* "!=", a reversed comparison, a negative value, grouping parentheses. */
	f = parse_fmt_ok("\"%s%s%s\", REC->isa != 2 ? " SYM("q") " : " SYM(
		"q") ", "
		     "(-1 == (REC->isa)) ? (" SYM(
			     "b8") ") : \"\", "
				   "((REC->isa == 0x10)) ? ((\"\", " SYM(
					   "s16") ")) : \"\"\n");
	ck_assert_uint_eq(f->ntabs, 4);
	assert_guard(&f->tabs[0], "isa", 2, true);
	assert_guard(&f->tabs[1], "isa", 2, false);
	assert_guard(&f->tabs[2], "isa", -1, false);
	assert_guard(&f->tabs[3], "isa", 0x10, false);
	tp_format_free(f);

	/* Nested conditions: the innermost applies. */
	f = parse_fmt_ok(
		"\"%s\", REC->isa == 1 ? (REC->q == 3 ? " SYM("b8") " : " SYM("b8") ") : " SYM("b8") ", REC->isa == 1 ? REC->q == 2 ? " SYM(
			"s16") " : " SYM("s16") " : " SYM("s16") "\n");
	ck_assert_uint_eq(f->ntabs, 6);
	assert_guard(&f->tabs[0], "q", 3, false);
	assert_guard(&f->tabs[1], "q", 3, true);
	assert_guard(&f->tabs[2], "isa", 1, true);
	assert_guard(&f->tabs[3], "q", 2, false);
	assert_guard(&f->tabs[4], "q", 2, true);
	assert_guard(&f->tabs[5], "isa", 1, true);
	tp_format_free(f);

	/* Not guards: other conditions, calls, commas, conditions on tables. */
	f = parse_fmt_ok("\"%s\", REC->isa == 1 && REC->q ? " SYM(
		"b8") " : \"\", "
		      "REC->isa < 1 ? \"\" : " SYM(
			      "b8") ", "
				    "REC->isa == 1 ? f(" SYM(
					    "b8") ") : \"\", "
						  "REC->isa == 1 ? \"\" : \"\", " SYM(
							  "b8") ", "
								"(REC->isa == 1 ? \"\" : \"\") + " SYM(
									"b8") ", "
									      "REC->isa == REC->q ? " SYM(
										      "b8") " : \"\", "
											    "REC->isa == ENUM ? " SYM(
												    "b8") " : \"\", "
													  "REC->isa == 1 | 2 ? " SYM(
														  "b8") " : \"\", "
															"!REC->isa ? " SYM(
																"b8") " : \"\", "
																      "{ REC->isa == 1 ? 1 : 2 }, " SYM(
																	      "b8") "\n");
	ck_assert_uint_eq(f->ntabs, 10);
	for (size_t i = 0; i < f->ntabs; i++)
		assert_guard(&f->tabs[i], NULL, 0, false);
	tp_format_free(f);
}
END_TEST

START_TEST(test_first_args)
{
	struct tp_format *f = parse_fmt_ok(
		"\"%s\", __print_symbolic(REC->exit_reason & 0xff, { 1, \"a\" }), "
		"__print_symbolic(0xf0 & REC->isa, { 1, \"a\" }), "
		"__print_symbolic(((REC->b8) & (0xf)), { 1, \"a\" }), "
		"__print_symbolic((REC->s16), { 1, \"a\" }), "
		"__print_symbolic_u64(REC->q, { 0x100000000, \"big\" }), "
		"__print_symbolic(REC->q >> 4, { 1, \"skip\" }), "
		"__print_symbolic(REC->q & 0xff | 1, { 1, \"skip\" }), "
		"__print_symbolic(REC->q & 1 & 2, { 1, \"skip\" }), "
		"__print_symbolic(REC->q & ENUM, { 1, \"skip\" }), "
		"__print_symbolic((((REC->q) >> 13) & (8 - 1)), { 1, \"skip\" }), "
		"__print_symbolic(f(REC->q), { 1, \"skip\" }), "
		"__print_symbolic(REC->q[0], { 1, \"skip\" }), "
		"__print_symbolic(other->q, { 1, \"skip\" }), "
		"__print_symbolic(&REC->q, { 1, \"skip\" })\n");

	ck_assert_uint_eq(f->ntabs, 5);
	ck_assert_str_eq(f->tabs[0].field, "exit_reason");
	ck_assert_uint_eq(f->tabs[0].mask, 0xff);
	ck_assert_str_eq(f->tabs[1].field, "isa");
	ck_assert_uint_eq(f->tabs[1].mask, 0xf0);
	ck_assert_str_eq(f->tabs[2].field, "b8");
	ck_assert_uint_eq(f->tabs[2].mask, 0xf);
	ck_assert_str_eq(f->tabs[3].field, "s16");
	ck_assert_uint_eq(f->tabs[3].mask, ~0ULL);
	ck_assert_str_eq(f->tabs[4].field, "q");
	assert_sym(&f->tabs[4], "big", 0x100000000ULL);
	tp_format_free(f);
}
END_TEST

START_TEST(test_other_helpers)
{
	struct tp_format *f = parse_fmt_ok(
		"\"%s %s %s %s __print_symbolic(REC->q, { 1, \\\"fake\\\" })\", "
		"__print_flags(REC->exit_reason & ~0xffff, \" \", { 0x80000000, \"FAILED\" }, "
		"{ 1, \"A\" }), __print_hex(REC->q, 8), "
		"__print_hex_str(__get_dynamic_array(d), 4), "
		"__print_array(__get_dynamic_array(a), 2, 4), __get_str(name), "
		"(REC->isa == 1) ? __print_flags(REC->q, \"|\", { 1, \"B\" }) : \"\", "
		"__print_symbolic(REC->b8, { 1, \"real\" }), __print_symbolic, "
		"REC->__print_symbolic\n");

	ck_assert_uint_eq(f->ntabs, 1);
	ck_assert_str_eq(f->tabs[0].field, "b8");
	assert_sym(&f->tabs[0], "real", 1);
	ck_assert_uint_eq(f->tabs[0].nsyms, 1);
	tp_format_free(f);
}
END_TEST

START_TEST(test_skipped_entries)
{
	struct tp_format *f = parse_fmt_ok(
		"\"%s\", __print_symbolic(REC->error_code, { }), "
		"__print_symbolic(REC->b8, { 0, \"PAGE_SHARED\" }, { -1, 0 }), "
		"__print_symbolic(REC->q, {VDSO_CLOCKMODE_NONE, \"none\"}, "
		"{VDSO_CLOCKMODE_TSC, \"tsc\"}), "
		"__print_symbolic(REC->s16)\n");

	/* Tables with no symbol left are dropped. */
	ck_assert_uint_eq(f->ntabs, 1);
	ck_assert_str_eq(f->tabs[0].field, "b8");
	ck_assert_uint_eq(f->tabs[0].nsyms, 1);
	assert_sym(&f->tabs[0], "PAGE_SHARED", 0);
	tp_format_free(f);
}
END_TEST

START_TEST(test_malformed_inline)
{
	static const char *const bad_args[] = {
		"",
		"   ",
		"REC->q",
		"\"%d\", (REC->q))",
		"\"%d\", ((REC->q)",
		"\"%d\", (REC->q]",
		"\"%d\", {REC->q)}",
		"\"%d",
		"\"%d\", 'a",
		"\"%d\\",
		"\"%d\", \x01",
		"\"%d\", \xc3\xa9",
		"\"%s\", __print_symbolic(REC->q, { 0x1ffffffffffffffff, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 18446744073709551616, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 0x, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 12abc, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 08, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1.5, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1ulll, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1 / 0, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1 % 0, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1 << 64, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1 +, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1 2, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { (), \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { \"1\", \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1 \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, })",
		"\"%s\", __print_symbolic(REC->q, { , \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, \"x\" }, )",
		"\"%s\", __print_symbolic(REC->q, 1, \"x\")",
		"\"%s\", __print_symbolic(REC->q, { 1, \"x\" } { 2, \"y\" })",
		"\"%s\", __print_symbolic(, { 1, \"x\" })",
		"\"%s\", __print_symbolic(REC->q & 0x1ffffffffffffffff, { 1, \"x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, \"\\0\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, \"a\\x\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, \"a\\x100\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, \"a\\400\" })",
		"\"%s\", __print_symbolic(REC->q, { 1, \"x\" }",
	};
	static const char *const bad_texts[] = {
		"",
		"\n\n\n",
		"name: x\n",
		"name: x\nID: 1\nformat:\n",
		"ID: 1\nformat:\nprint fmt: \"\"",
		"name: x\nformat:\nprint fmt: \"\"",
		"name: x\nID: 1\nprint fmt: \"\"",
		"name: x\nID: abc\nformat:\nprint fmt: \"\"",
		"name: x\nID: -1\nformat:\nprint fmt: \"\"",
		"name: x\nID: 99999999999\nformat:\nprint fmt: \"\"",
		"name: x\nname: y\nID: 1\nformat:\nprint fmt: \"\"",
		"name:\nID: 1\nformat:\nprint fmt: \"\"",
		"name: x\nID: 1\nID: 2\nformat:\nprint fmt: \"\"",
		"name: x\nID: 1\n\tfield:int a;\toffset:8;\tsize:4;\nformat:\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\tsize:4;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a\toffset:8;\tsize:4;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:4294967296;\tsize:4;\n"
		"print fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:-8;\tsize:4;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:2;\n"
		"print fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:x;\n"
		"print fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:;\toffset:8;\tsize:4;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int 9a;\toffset:8;\tsize:4;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a];\toffset:8;\tsize:4;\nprint fmt: \"\"",
		"name: x\nID: 1\nformat:\n\tfield:int a[4];\toffset:8;\tsize:4;\n\x01\x02\n"
		"print fmt: \"\"",
		"name: x\nID: 1\nformat:\ngarbage\nprint fmt: \"\"",
	};
	char deep[512], unary[512];
	int err;

	for (size_t i = 0; i < sizeof(bad_args) / sizeof(bad_args[0]); i++) {
		struct tp_format *f = parse_fmt(bad_args[i], &err);

		ck_assert_msg(f == NULL, "accepted: %s", bad_args[i]);
		ck_assert_msg(err == -EINVAL, "%d for: %s", err, bad_args[i]);
	}
	for (size_t i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
		struct tp_format *f = parse_exact(bad_texts[i],
						  strlen(bad_texts[i]), &err);

		ck_assert_msg(f == NULL, "accepted: %s", bad_texts[i]);
		ck_assert_msg(err == -EINVAL, "%d for: %s", err, bad_texts[i]);
	}

	/* Nesting beyond the limit, and a long chain of unary minus. */
	strcpy(deep, "\"%d\", ");
	for (int k = 0; k < 100; k++)
		strcat(deep, "(");
	strcat(deep, "1");
	for (int k = 0; k < 100; k++)
		strcat(deep, ")");
	ck_assert_ptr_null(parse_fmt(deep, &err));
	ck_assert_int_eq(err, -EINVAL);
	strcpy(unary, "\"%s\", __print_symbolic(REC->q, { ");
	for (int k = 0; k < 200; k++)
		strcat(unary, "-");
	strcat(unary, "1, \"x\" })");
	ck_assert_ptr_null(parse_fmt(unary, &err));
	ck_assert_int_eq(err, -EINVAL);

	/* A NUL byte, and a NULL err pointer. */
	ck_assert_ptr_null(tp_format_parse("name: x\0\nID: 1\n", 15, &err));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_ptr_null(tp_format_parse("", 0, NULL));
	ck_assert_ptr_null(tp_format_parse(NULL, 0, &err));
}
END_TEST

START_TEST(test_nesting_ok)
{
	char buf[512];
	struct tp_format *f;

	/* 40 grouping levels: inside the limit, the guard is still seen. */
	strcpy(buf, "\"%s\", REC->isa == 1 ? ");
	for (int k = 0; k < 40; k++)
		strcat(buf, "(");
	strcat(buf, SYM("q"));
	for (int k = 0; k < 40; k++)
		strcat(buf, ")");
	strcat(buf, " : \"\"");
	f = parse_fmt_ok(buf);
	ck_assert_uint_eq(f->ntabs, 1);
	assert_guard(&f->tabs[0], "isa", 1, false);
	tp_format_free(f);
}
END_TEST

/* ---- fuzz-style robustness ---- */

static const char *const real_fixtures[] = {
	"kvm_exit",  "kvm_userspace_exit", "kvm_pio",	     "kvm_mmio",
	"kvm_entry", "kvm_exit_old",	   "arm64_kvm_exit",
};

/* Checks that a parse either failed with an error or gave a sane result. */
static void check_outcome(struct tp_format *f, int err)
{
	if (!f) {
		ck_assert_int_eq(err, -EINVAL);
		return;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_ptr_nonnull(f->name);
	for (size_t i = 0; i < f->nfields; i++)
		ck_assert_ptr_nonnull(f->fields[i].name);
	for (size_t i = 0; i < f->ntabs; i++) {
		const struct tp_symtab *t = &f->tabs[i];

		ck_assert_ptr_nonnull(t->field);
		ck_assert_uint_gt(t->nsyms, 0);
		for (size_t j = 0; j < t->nsyms; j++)
			ck_assert_ptr_nonnull(t->syms[j].name);
		(void)tp_symtab_name(t, t->syms[0].value);
	}
	tp_format_free(f);
}

START_TEST(test_fuzz_truncations)
{
	for (size_t k = 0; k < sizeof(real_fixtures) / sizeof(real_fixtures[0]);
	     k++) {
		size_t len, fmt_at;
		char *text = read_fixture(real_fixtures[k], &len);
		const char *pf = strstr(text, "print fmt:");
		int err;

		ck_assert_ptr_nonnull(pf);
		fmt_at = (size_t)(pf - text);
		for (size_t n = 0; n <= len; n++) {
			struct tp_format *f = parse_exact(text, n, &err);

			/* Cut before the print fmt: always an error. */
			if (n < fmt_at + strlen("print fmt:"))
				ck_assert_msg(f == NULL,
					      "%s accepted cut at %zu",
					      real_fixtures[k], n);
			if (n == len)
				ck_assert_ptr_nonnull(f);
			check_outcome(f, err);
		}
		free(text);
	}
}
END_TEST

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

START_TEST(test_fuzz_corruptions)
{
	static const char interesting[] = "(){}[]?:,\"'\\&|-~0x9 \n\t;=!<>";
	uint64_t seed = 0x6b766d73746174ULL;

	for (size_t k = 0; k < sizeof(real_fixtures) / sizeof(real_fixtures[0]);
	     k++) {
		size_t len;
		char *text = read_fixture(real_fixtures[k], &len);
		char *copy = malloc(len);

		ck_assert_ptr_nonnull(copy);
		for (int iter = 0; iter < 1500; iter++) {
			int flips = 1 + (int)(rng_next(&seed) % 4), err;
			struct tp_format *f;
			size_t n = len;

			memcpy(copy, text, len);
			for (int j = 0; j < flips; j++) {
				uint64_t r = rng_next(&seed);
				size_t at = (size_t)(r % len);

				if (r & (1ULL << 40))
					copy[at] = interesting
						[(r >> 20) %
						 (sizeof(interesting) - 1)];
				else
					copy[at] = (char)(r >> 32);
			}
			if (iter & 1)
				n = (size_t)(rng_next(&seed) % (len + 1));
			f = parse_exact(copy, n, &err);
			check_outcome(f, err);
		}
		free(copy);
		free(text);
	}
}
END_TEST

START_TEST(test_fuzz_token_soup)
{
	static const char *const toks[] = {
		"(",
		")",
		"{",
		"}",
		"[",
		"]",
		"?",
		":",
		",",
		"REC",
		"->",
		"isa",
		"q",
		"==",
		"!=",
		"&",
		"|",
		"&&",
		"-",
		"~",
		"1",
		"0x10",
		"\"s\"",
		"'c'",
		"__print_symbolic",
		"__print_flags",
		"__print_symbolic(REC->q, ",
		"{ 1, \"a\" }",
		" ",
		"<<",
		"ENUM",
		"/",
		"0",
	};
	uint64_t seed = 0x1234567887654321ULL;
	size_t hl = strlen(fmt_head);
	char *buf = malloc(hl + 4096);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, fmt_head, hl);
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = hl, count = rng_next(&seed) % 48;
		struct tp_format *f;
		int err;

		memcpy(buf + n, "\"\", ", 4);
		n += 4;
		for (size_t j = 0; j < count; j++) {
			const char *t = toks[rng_next(&seed) %
					     (sizeof(toks) / sizeof(toks[0]))];
			size_t tl = strlen(t);

			memcpy(buf + n, t, tl);
			n += tl;
		}
		f = parse_exact(buf, n, &err);
		check_outcome(f, err);
	}
	free(buf);
}
END_TEST

/*
 * Format files on which libtraceevent 1.7.1 (Debian 12), tried as this
 * parser's replacement, kills the process inside tep_parse_format(): a
 * print fmt argument "1 / 0" (SIGFPE: it folds constants without a zero
 * check) and a real kvm_exit format with a few bytes flipped in its print
 * fmt (SIGSEGV, a NULL dereference; found by fuzz_tpformat). kvmstat must
 * survive any format file, so this parser stays: here the first parses
 * (its table is still read), the second parses or is -EINVAL.
 */
START_TEST(test_libtraceevent_crashers)
{
	struct tp_format *f = load_fixture("div_zero");
	size_t len;
	char *text;
	int err;

	assert_sym(tp_format_symtab(f, "q"), "one", 1);
	tp_format_free(f);
	text = read_fixture("corrupt_kvm_exit", &len);
	f = parse_exact(text, len, &err);
	check_outcome(f, err);
	free(text);
}
END_TEST

/* Every kvm format of the running kernel parses, when tracefs is there. */
START_TEST(test_live_kvm_formats)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events/kvm",
		"/sys/kernel/debug/tracing/events/kvm",
	};
	static const char *const events[] = {
		"kvm_exit",	     "kvm_entry", "kvm_userspace_exit",
		"kvm_pio",	     "kvm_mmio",  "kvm_inj_exception",
		"kvm_nested_vmexit", "kvm_apic",  "kvm_msr",
	};
	const char *root = NULL;
	char path[512];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !root; i++) {
		snprintf(path, sizeof(path), "%s/kvm_exit/format", roots[i]);
		if (!access(path, R_OK))
			root = roots[i];
	}
	if (!root) {
		test_skip("test_live_kvm_formats",
			  "no readable kvm tracepoints (mount tracefs, modprobe kvm, run as root)");
		return;
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		struct tp_format *f = NULL;
		int rc;

		snprintf(path, sizeof(path), "%s/%s/format", root, events[i]);
		if (access(path, R_OK))
			continue;
		rc = tp_format_load(path, &f);
		ck_assert_msg(rc == 0, "%s: %d", path, rc);
		ck_assert_str_eq(f->name, events[i]);
		if (!strcmp(events[i], "kvm_userspace_exit"))
			ck_assert_ptr_nonnull(tp_format_symtab(f, "reason"));
		tp_format_free(f);
	}
}
END_TEST

Suite *tpformat_suite(void)
{
	Suite *s = suite_create("tpformat");
	TCase *tc = tcase_create("fixtures");
	TCase *tci = tcase_create("inline");
	TCase *tcf = tcase_create("fuzz");

	tcase_add_test(tc, test_kvm_exit_fields);
	tcase_add_test(tc, test_kvm_exit_vmx);
	tcase_add_test(tc, test_kvm_exit_svm);
	tcase_add_test(tc, test_kvm_userspace_exit);
	tcase_add_test(tc, test_kvm_mmio_pio_entry);
	tcase_add_test(tc, test_kvm_exit_old);
	tcase_add_test(tc, test_arm64_kvm_exit);
	tcase_add_test(tc, test_kvm_exit_nosym);
	tcase_add_test(tc, test_malformed_fixtures);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_live_kvm_formats);
	suite_add_tcase(s, tc);

	tcase_add_test(tci, test_header_fields);
	tcase_add_test(tci, test_expressions);
	tcase_add_test(tci, test_negative_by_field_size);
	tcase_add_test(tci, test_names_and_prefix);
	tcase_add_test(tci, test_guards);
	tcase_add_test(tci, test_first_args);
	tcase_add_test(tci, test_other_helpers);
	tcase_add_test(tci, test_skipped_entries);
	tcase_add_test(tci, test_malformed_inline);
	tcase_add_test(tci, test_nesting_ok);
	suite_add_tcase(s, tci);

	/* Generous: thousands of parses, under ASan/UBSan in CI. */
	tcase_set_timeout(tcf, 120);
	tcase_add_test(tcf, test_fuzz_truncations);
	tcase_add_test(tcf, test_fuzz_corruptions);
	tcase_add_test(tcf, test_fuzz_token_soup);
	tcase_add_test(tcf, test_libtraceevent_crashers);
	suite_add_tcase(s, tcf);
	return s;
}
