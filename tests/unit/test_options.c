// SPDX-License-Identifier: GPL-2.0-only
/* Option parsing: kvm_stat's options, their defaults and every usage error. */
#include <check.h>
#include <stdarg.h>
#include <string.h>

#include "errmsg.h"
#include "options.h"
#include "options_parse.h"
#include "suites.h"

static int parse(struct options *o, struct errmsg *err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "kvmstat";
	va_start(ap, err);
	while ((a = va_arg(ap, char *)))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	errmsg_clear(err);
	return options_parse(argc, argv, o, err);
}

START_TEST(test_defaults)
{
	struct options o;
	struct errmsg err;

	ck_assert_int_eq(parse(&o, &err, NULL), 0);
	ck_assert_int_eq(o.mode, MODE_TUI);
	ck_assert(o.delay == DELAY_DEFAULT);
	ck_assert_int_eq(o.pid, 0);
	ck_assert(!o.include_past && !o.csv && !o.skip_zero);
	/* the default filter hides child events, as kvm_stat's does */
	ck_assert(filter_match(&o.filter, "kvm_exit"));
	ck_assert(!filter_match(&o.filter, "kvm_exit(HLT)"));
	options_free(&o);
}
END_TEST

START_TEST(test_modes)
{
	struct options o;
	struct errmsg err;

	ck_assert_int_eq(parse(&o, &err, "-1", NULL), 0);
	ck_assert_int_eq(o.mode, MODE_BATCH);
	ck_assert(o.delay == 1.0); /* batch samples one second */
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "--batch", "-s", "2.5", NULL), 0);
	ck_assert_int_eq(o.mode, MODE_BATCH);
	ck_assert(o.delay == 2.5);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-l", "-c", "-z", NULL), 0);
	ck_assert_int_eq(o.mode, MODE_LOG);
	ck_assert(o.csv && o.skip_zero);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-L", "/tmp/x.log", NULL), 0);
	ck_assert_int_eq(o.mode, MODE_LOG);
	ck_assert_str_eq(o.log_file, "/tmp/x.log");
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "--once", "-t", "-d", "-i", "-p", "42",
			       "-f", "^kvm_exit", NULL),
			 0);
	ck_assert(o.use_tracepoints && o.use_debugfs && o.include_past);
	ck_assert_int_eq(o.pid, 42);
	ck_assert(filter_match(&o.filter, "kvm_exit(HLT)"));
	ck_assert(filter_match(&o.filter, "kvm_exit"));
	ck_assert(!filter_match(&o.filter, "kvm_entry"));
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-f", "help", NULL), 0);
	ck_assert(o.fields_help);
	options_free(&o);
}
END_TEST

/* kvm_stat's modes: -l with -1 logs; batch and log show every field,
 * children too; the monitor hides children. */
START_TEST(test_scripted)
{
	struct options o;
	struct errmsg err;

	ck_assert_int_eq(parse(&o, &err, "-1", "-l", NULL), 0);
	ck_assert_int_eq(o.mode, MODE_LOG);
	ck_assert(o.scripted && o.use_tracepoints && o.tracepoints_implied);
	ck_assert(filter_match(&o.filter, "kvm_exit(HLT)"));
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-1", "-d", NULL), 0);
	ck_assert(o.scripted && o.use_debugfs && !o.use_tracepoints);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-1", "--json", NULL), 0);
	ck_assert(!o.scripted && !o.use_tracepoints);
	ck_assert(!filter_match(&o.filter, "kvm_exit(HLT)"));
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-l", "--listen", "9999", NULL), 0);
	ck_assert(!o.scripted && !o.use_tracepoints);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-1", "--units", NULL), 0);
	ck_assert(o.units);
	options_free(&o);
}
END_TEST

/* Abbreviations resolve as kvm_stat resolves them, values untouched. */
START_TEST(test_abbreviations)
{
	struct options o;
	struct errmsg err;

	ck_assert_int_eq(parse(&o, &err, "--p", "42", "--o", NULL), 0);
	ck_assert_int_eq(o.pid, 42);
	ck_assert_int_eq(o.mode, MODE_BATCH);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "--p=43", "--tr", "--b", NULL), 0);
	ck_assert_int_eq(o.pid, 43);
	ck_assert(o.use_tracepoints && !o.tracepoints_implied);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "--trace", "--debugfs-i", "--se", "2",
			       "--sk", "--log", "--c", NULL),
			 0);
	ck_assert(o.use_tracepoints && o.include_past && o.skip_zero && o.csv);
	ck_assert(o.delay == 2.0);
	options_free(&o);
	/* the shorter of two where one starts the other (kvm_stat's
	 * argparse calls these ambiguous) */
	ck_assert_int_eq(parse(&o, &err, "--deb", "--l", NULL), 0);
	ck_assert(o.use_debugfs && !o.include_past);
	ck_assert_int_eq(o.mode, MODE_LOG);
	ck_assert_ptr_null(o.log_file);
	options_free(&o);
	/* a value that looks like an option is a value */
	ck_assert_int_eq(parse(&o, &err, "-1", "--fi", "--p", NULL), 0);
	ck_assert_str_eq(o.fields, "--p");
	ck_assert_int_eq(o.pid, 0);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-1f", "--g", "--g=x", NULL), 0);
	ck_assert_str_eq(o.fields, "--g");
	ck_assert_str_eq(o.guest, "x");
	options_free(&o);
	/* our own long options still abbreviate where kvm_stat has none */
	ck_assert_int_eq(parse(&o, &err, "--pe", "-p", "1", "--vc", "0", NULL),
			 0);
	ck_assert(o.per_vcpu);
	ck_assert_int_eq(o.vcpu, 0);
	options_free(&o);
}
END_TEST

/* --per-vcpu is the per-vCPU level of --json and --listen, any VM. */
START_TEST(test_per_vcpu_levels)
{
	struct options o;
	struct errmsg err;

	ck_assert_int_eq(parse(&o, &err, "--json", "-1", "--per-vcpu", NULL), 0);
	ck_assert(o.per_vcpu && o.json);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "--listen", "9100", "--per-vcpu", NULL),
			 0);
	ck_assert(o.per_vcpu);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "--json", "-l", "-p", "7",
			       "--per-vcpu", NULL),
			 0);
	ck_assert(o.per_vcpu && o.pid == 7);
	options_free(&o);
}
END_TEST

START_TEST(test_filter_anchored)
{
	struct options o;
	struct errmsg err;

	/* matched at the start of the name, like Python's re.match */
	ck_assert_int_eq(parse(&o, &err, "-f", "exit", NULL), 0);
	ck_assert(filter_match(&o.filter, "exits"));
	ck_assert(!filter_match(&o.filter, "kvm_exit"));
	options_free(&o);
	/* Python's dialect */
	ck_assert_int_eq(parse(&o, &err, "-f", "(?i)KVM_\\w+(?<!exit)$", NULL),
			 0);
	ck_assert(filter_match(&o.filter, "kvm_pio"));
	ck_assert(!filter_match(&o.filter, "kvm_exit"));
	options_free(&o);
}
END_TEST

static const struct {
	const char *args[6];
	const char *needle;
} bad[] = {
	{ { "--bogus" }, "unknown option --bogus" },
	{ { "-Q" }, "unknown option -Q" },
	{ { "-f", "(" }, "invalid regular expression" },
	{ { "-p", "abc" }, "-p/--pid needs a process id" },
	{ { "-p", "0" }, "-p/--pid needs a process id" },
	{ { "-p", "-5" }, "-p/--pid needs a process id" },
	{ { "-s", "0.05" }, "-s/--set-delay needs seconds from 0.1 to 25.5" },
	{ { "-s", "25.6" }, "-s/--set-delay needs seconds" },
	{ { "-s", "1x" }, "-s/--set-delay needs seconds" },
	{ { "-c" }, "-c/--csv needs a log mode" },
	{ { "-1", "-c" }, "-c/--csv needs a log mode" },
	{ { "-z" }, "-z/--skip-zero-records needs a log mode" },
	{ { "--units" }, "--units works with -1" },
	{ { "-l", "--units" }, "--units works with -1" },
	{ { "-1", "--json", "--units" }, "--units works with -1" },
	{ { "--debugfs-root", "/tmp" }, "unknown option --debugfs-root" },
	{ { "--tracefs-root", "/tmp" }, "unknown option --tracefs-root" },
	{ { "--proc-root", "/tmp" }, "unknown option --proc-root" },
	{ { "--s", "1" }, "option --s is ambiguous" },
	{ { "-p", "1", "-g", "x" }, "cannot be combined" },
	{ { "extra" }, "unexpected argument \"extra\"" },
	{ { "-p" }, "needs a value" },
	{ { "-1", "--per-vcpu" }, "--per-vcpu works on one VM in this mode" },
	{ { "--vcpu", "0", "--json", "-1" }, "--vcpu works on one VM" },
	{ { "-p", "1", "--vcpu", "0", "--json", "-1" },
	  "--json has no one-vCPU view" },
};

START_TEST(test_errors)
{
	struct options o;
	struct errmsg err;
	char *argv[8] = { "kvmstat" };
	int argc = 1;

	for (int i = 0; i < 6 && bad[_i].args[i]; i++)
		argv[argc++] = (char *)bad[_i].args[i];
	argv[argc] = NULL;
	errmsg_clear(&err);
	ck_assert_int_lt(options_parse(argc, argv, &o, &err), 0);
	ck_assert_msg(strstr(err.text, bad[_i].needle),
		      "got \"%s\", want \"%s\"", err.text, bad[_i].needle);
	ck_assert_ptr_null(strchr(err.text, '\n'));
	options_free(&o);
}
END_TEST

START_TEST(test_delay_bounds)
{
	struct options o;
	struct errmsg err;

	ck_assert_int_eq(parse(&o, &err, "-s", "0.1", NULL), 0);
	options_free(&o);
	ck_assert_int_eq(parse(&o, &err, "-s", "25.5", NULL), 0);
	options_free(&o);
}
END_TEST

Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_filter_anchored);
	tcase_add_test(tc, test_per_vcpu_levels);
	tcase_add_test(tc, test_scripted);
	tcase_add_test(tc, test_abbreviations);
	tcase_add_loop_test(tc, test_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_delay_bounds);
	suite_add_tcase(s, tc);
	return s;
}
