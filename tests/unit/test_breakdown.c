// SPDX-License-Identifier: GPL-2.0-only
/*
 * The breakdowns' kinds per architecture: --breakdown's list parsed
 * against each descriptor (x86 has every kind; arm64 refuses I/O ports
 * and MSRs in one line that names its own kinds, and "all" is what it
 * has), and the render's side: arm64's events and child events open the
 * kind they break down, and the metrics name the tracepoint a table
 * came from (arm64's kvm_hvc_arm64, with SMCCC names).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "arch.h"
#include "breakdown.h"
#include "breakdown_render.h"
#include "brk_shared.h"
#include "suites.h"

#define ALL ((1u << BRK_NKINDS) - 1)

/* The kinds list on d, which must parse. */
static unsigned parsed(const struct arch_desc *d, const char *list)
{
	struct errmsg m;
	unsigned k = 0;

	errmsg_clear(&m);
	ck_assert_msg(breakdown_parse_on(d, list, &k, &m) == 0, "%s: %s", list,
		      m.text);
	return k;
}

/* The one line list is refused with on d. */
static void refused(const struct arch_desc *d, const char *list,
		    const char *line)
{
	struct errmsg m;
	unsigned k = 0;

	errmsg_clear(&m);
	ck_assert_int_eq(breakdown_parse_on(d, list, &k, &m), -EINVAL);
	ck_assert_str_eq(m.text, line);
	ck_assert_ptr_null(strchr(m.text, '\n'));
}

START_TEST(test_parse_x86)
{
	ck_assert_uint_eq(breakdown_kinds_on(&arch_x86_desc), ALL);
	ck_assert_uint_eq(parsed(&arch_x86_desc, "all"), ALL);
	ck_assert_uint_eq(parsed(&arch_x86_desc, "ioport,msr"),
			  1u << BRK_IOPORT | 1u << BRK_MSR);
	ck_assert_uint_eq(parsed(&arch_x86_desc, "hypercall"),
			  1u << BRK_HYPERCALL);
	refused(&arch_x86_desc, "mmio,bogus",
		"--breakdown: no kind 'bogus' (one or more of ioport, mmio, "
		"msr, hypercall, or all)");
	refused(&arch_x86_desc, ",",
		"--breakdown: an empty list (one or more of ioport, mmio, "
		"msr, hypercall, or all)");
}
END_TEST

/* arm64: mmio and hypercall; I/O ports and MSRs said to be x86's, with
 * what to ask for instead. */
START_TEST(test_parse_arm64)
{
	const unsigned arm64 = 1u << BRK_MMIO | 1u << BRK_HYPERCALL;

	ck_assert_uint_eq(breakdown_kinds_on(&arch_arm64_desc), arm64);
	ck_assert_uint_eq(parsed(&arch_arm64_desc, "all"), arm64);
	ck_assert_uint_eq(parsed(&arch_arm64_desc, "mmio,hypercall"), arm64);
	ck_assert_uint_eq(parsed(&arch_arm64_desc, "hypercall"),
			  1u << BRK_HYPERCALL);
	refused(&arch_arm64_desc, "ioport",
		"--breakdown ioport: I/O ports are x86 only; on arm64: mmio, "
		"hypercall");
	refused(&arch_arm64_desc, "mmio,msr",
		"--breakdown msr: MSRs are x86 only; on arm64: mmio, "
		"hypercall");
	refused(&arch_arm64_desc, "all,ioport",
		"--breakdown ioport: I/O ports are x86 only; on arm64: mmio, "
		"hypercall");
	refused(&arch_arm64_desc, "port",
		"--breakdown: no kind 'port' (one or more of mmio, hypercall, "
		"or all)");
}
END_TEST

/* The others: MMIO alone; the build's own descriptor is the default. */
START_TEST(test_parse_others)
{
	struct errmsg m;
	unsigned a = 0, b = 0;

	ck_assert_uint_eq(parsed(&arch_s390_desc, "all"), 1u << BRK_MMIO);
	ck_assert_uint_eq(breakdown_kinds_on(&arch_generic_desc),
			  1u << BRK_MMIO);
	refused(&arch_s390_desc, "hypercall",
		"--breakdown hypercall: hypercalls are broken down on x86 and "
		"arm64 only; on s390: mmio");
	refused(&arch_powerpc_desc, "msr",
		"--breakdown msr: MSRs are x86 only; on powerpc: mmio");
	ck_assert_int_eq(breakdown_parse("all", &a, &m), 0);
	ck_assert_int_eq(breakdown_parse_on(arch_host, "all", &b, &m), 0);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_eq(a, breakdown_kinds_on(arch_host));
}
END_TEST

/* Enter on arm64's events opens the kind they break down. */
START_TEST(test_kind_of_arm64)
{
	unsigned bit = 0;

	ck_assert_str_eq(breakdown_render_kind_of("kvm_hvc_arm64", &bit),
			 "hypercall");
	ck_assert_uint_eq(bit, 1u << BRK_HYPERCALL);
	ck_assert_str_eq(breakdown_render_kind_of("kvm_exit(HVC64)", &bit),
			 "hypercall");
	ck_assert_str_eq(breakdown_render_kind_of("kvm_exit(DABT_LOW)", &bit),
			 "mmio");
	ck_assert_uint_eq(bit, 1u << BRK_MMIO);
	ck_assert_ptr_null(breakdown_render_kind_of("kvm_exit(WFx)", &bit));
	ck_assert_str_eq(breakdown_render_kind_of("kvm_pio", &bit), "ioport");
}
END_TEST

/* arm64's hypercall table: its metrics say it counts kvm_hvc_arm64, its
 * keys named as SMCCC names them. */
START_TEST(test_metrics_event)
{
	static const struct snap_brk_row rows[] = {
		{ .key = 0x84000000, .name = "PSCI_VERSION", .count = 4000 },
	};
	static const struct snap_brk_table tabs[] = {
		{ "hypercall", "kvm_hvc_arm64", 77, SAMPLE_ALL_VCPUS, 0, 4000,
		  0, rows, 1 },
	};
	const struct snap_breakdown bd = { .kinds = 1u << BRK_HYPERCALL,
					   .top = 16,
					   .tables = tabs,
					   .ntables = 1 };
	struct snapshot snap = { .breakdown = &bd };
	struct strbuf b;

	strbuf_init(&b);
	breakdown_render_metrics(&b, &snap, true);
	ck_assert_msg(strstr(b.s, "counted from kvm_hvc_arm64 "), "%s", b.s);
	ck_assert_ptr_null(strstr(b.s, "kvm_hypercall "));
	ck_assert_msg(strstr(b.s, "kvm_hypercall_exits_total{pid=\"77\","
				  "nr=\"0x84000000\",name=\"PSCI_VERSION\"} "
				  "4000\n"),
		      "%s", b.s);
	strbuf_free(&b);
}
END_TEST

Suite *breakdown_suite(void)
{
	Suite *s = suite_create("breakdown");
	TCase *tc = tcase_create("kinds");

	tcase_add_test(tc, test_parse_x86);
	tcase_add_test(tc, test_parse_arm64);
	tcase_add_test(tc, test_parse_others);
	tcase_add_test(tc, test_kind_of_arm64);
	tcase_add_test(tc, test_metrics_event);
	suite_add_tcase(s, tc);
	return s;
}
