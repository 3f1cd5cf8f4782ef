// SPDX-License-Identifier: GPL-2.0-only
/*
 * The field filter: Python's re.match over field names (anchored at the
 * start only), with PCRE2; the expected selections are what Python 3's re
 * selects from the same names.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "filter.h"
#include "suites.h"

static const char *const names[] = {
	"kvm_exit",	"kvm_exit(HLT)", "kvm_exit(IOIO)",
	"kvm_entry",	"kvm_pio",	 "kvm_userspace_exit(MMIO)",
	"exits",	"halt_exits",	 "halt_wait_hist(3)",
	"kvm_apic_ipi", "kvm_exit2",	 NULL,
};

/* pattern, then the names re.match(pattern, name) keeps, space separated */
static const struct {
	const char *pattern, *kept;
} cases[] = {
	{ "",
	  "kvm_exit kvm_exit(HLT) kvm_exit(IOIO) kvm_entry kvm_pio kvm_userspace_exit(MMIO) exits halt_exits halt_wait_hist(3) kvm_apic_ipi kvm_exit2" },
	{ "kvm_exit", "kvm_exit kvm_exit(HLT) kvm_exit(IOIO) kvm_exit2" },
	{ "exit", "exits" },
	{ "(?i)KVM_PIO", "kvm_pio" },
	{ "kvm_\\w+\\(\\w+\\)$",
	  "kvm_exit(HLT) kvm_exit(IOIO) kvm_userspace_exit(MMIO)" },
	{ "kvm_exit\\d", "kvm_exit2" },
	{ "kvm_(?!exit|entry)",
	  "kvm_pio kvm_userspace_exit(MMIO) kvm_apic_ipi" },
	{ "^[^(]*$",
	  "kvm_exit kvm_entry kvm_pio exits halt_exits kvm_apic_ipi kvm_exit2" },
	{ "kvm_exit$", "kvm_exit" },
	{ ".*HLT", "kvm_exit(HLT)" },
	{ "(?i).*io\\)", "kvm_exit(IOIO) kvm_userspace_exit(MMIO)" },
	{ "halt_wait_hist\\(\\d+\\)", "halt_wait_hist(3)" },
	{ "kvm_apic_ipi|halt", "halt_exits halt_wait_hist(3) kvm_apic_ipi" },
};

START_TEST(test_python_match)
{
	struct field_filter f = { 0 };
	struct errmsg err;
	char got[512] = "";

	ck_assert_int_eq(filter_set(&f, cases[_i].pattern, &err), 0);
	for (size_t i = 0; names[i]; i++)
		if (filter_match(&f, names[i]))
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", got[0] ? " " : "", names[i]);
	ck_assert_msg(!strcmp(got, cases[_i].kept), "-f '%s': got \"%s\"",
		      cases[_i].pattern, got);
	filter_free(&f);
}
END_TEST

START_TEST(test_bad_pattern)
{
	static const char *const bad[] = { "(",	   "kvm_exit(", "[a-",
					   "(?<x", "*",		NULL };
	struct field_filter f = { 0 };
	struct errmsg err;

	ck_assert_int_eq(filter_set(&f, "kvm_pio", &err), 0);
	for (size_t i = 0; bad[i]; i++) {
		errmsg_clear(&err);
		ck_assert_int_eq(filter_set(&f, bad[i], &err), -EINVAL);
		ck_assert_msg(strstr(err.text, "invalid regular expression"),
			      "%s", err.text);
		ck_assert_ptr_null(strchr(err.text, '\n'));
	}
	/* a bad pattern leaves the filter as it was */
	ck_assert_str_eq(f.pattern, "kvm_pio");
	ck_assert(filter_match(&f, "kvm_pio"));
	ck_assert(!filter_match(&f, "kvm_exit"));
	filter_free(&f);
	/* never set: keeps everything */
	ck_assert(filter_match(&f, "anything"));
	ck_assert(filter_match(NULL, "anything"));
}
END_TEST

/* The monitor's 'x': a child of a kept event is kept. */
START_TEST(test_keeps_children)
{
	struct field_filter f = { 0 };
	struct errmsg err;

	ck_assert_int_eq(filter_set(&f, FILTER_DEFAULT, &err), 0);
	ck_assert(!filter_keeps(&f, "kvm_exit(HLT)", false));
	ck_assert(filter_keeps(&f, "kvm_exit(HLT)", true));
	ck_assert(filter_keeps(&f, "kvm_exit", false));
	ck_assert_int_eq(filter_set(&f, "kvm_pio$", &err), 0);
	ck_assert(!filter_keeps(&f, "kvm_exit(HLT)", true));
	filter_free(&f);
}
END_TEST

/* The verdicts kept per field id follow a new pattern, the children
 * switch and a different name under the same id. */
START_TEST(test_keeps_field_cached)
{
	struct field_filter f = { 0 };
	struct errmsg err;

	ck_assert(filter_keeps_field(NULL, 3, "anything", false));
	ck_assert(filter_keeps_field(&f, 3, "anything", false));
	ck_assert_int_eq(filter_set(&f, "kvm_exit$", &err), 0);
	ck_assert(filter_keeps_field(&f, 0, "kvm_exit", false));
	ck_assert(!filter_keeps_field(&f, 1, "kvm_exit(HLT)", false));
	ck_assert(filter_keeps_field(&f, 1, "kvm_exit(HLT)", true));
	ck_assert(!filter_keeps_field(&f, 1, "kvm_exit(HLT)", false));
	ck_assert(!filter_keeps_field(&f, 200, "kvm_pio", false));
	/* another table's field 0 */
	ck_assert(!filter_keeps_field(&f, 0, "kvm_entry", false));
	ck_assert(filter_keeps_field(&f, 0, "kvm_exit", false));
	ck_assert_int_eq(filter_set(&f, "kvm_pio", &err), 0);
	ck_assert(!filter_keeps_field(&f, 0, "kvm_exit", false));
	ck_assert(filter_keeps_field(&f, 200, "kvm_pio", false));
	ck_assert(!filter_keeps_field(&f, 1, "kvm_exit(HLT)", true));
	filter_free(&f);
	ck_assert(filter_keeps_field(&f, 0, "kvm_exit", false));
}
END_TEST

/* Which events a provider counts as parents of children -f may keep. */
START_TEST(test_may_keep_children)
{
	struct field_filter f = { 0 };
	struct errmsg err;

	ck_assert_int_eq(filter_set(&f, "kvm_exit\\(HLT", &err), 0);
	ck_assert(filter_may_keep_children(&f, "kvm_exit"));
	ck_assert(!filter_may_keep_children(&f, "kvm_userspace_exit"));
	ck_assert(!filter_may_keep_children(&f, "kvm_exit(HLT)"));
	ck_assert_int_eq(filter_set(&f, "(?i)KVM_USERSPACE_EXIT\\(MMIO\\)$",
				    &err),
			 0);
	ck_assert(filter_may_keep_children(&f, "kvm_userspace_exit"));
	ck_assert(!filter_may_keep_children(&f, "kvm_exit"));
	/* the monitor's default keeps no child */
	ck_assert_int_eq(filter_set(&f, FILTER_DEFAULT, &err), 0);
	ck_assert(!filter_may_keep_children(&f, "kvm_exit"));
	ck_assert_int_eq(filter_set(&f, "kvm_pio$", &err), 0);
	ck_assert(!filter_may_keep_children(&f, "kvm_exit"));
	filter_free(&f);
}
END_TEST

Suite *filter_suite(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("pcre2");

	tcase_add_loop_test(tc, test_python_match, 0,
			    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_bad_pattern);
	tcase_add_test(tc, test_keeps_children);
	tcase_add_test(tc, test_keeps_field_cached);
	tcase_add_test(tc, test_may_keep_children);
	suite_add_tcase(s, tc);
	return s;
}
