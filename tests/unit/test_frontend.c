// SPDX-License-Identifier: GPL-2.0-only
/*
 * The front-end registry: which front-ends each command line selects, in
 * which order, and what they need together (pace, breakdowns, child
 * events, totals since VM start, the terminal); every entry complete; the
 * write-failure message of the log front-ends.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "errmsg.h"
#include "frontend.h"
#include "options.h"
#include "options_parse.h"
#include "suites.h"

/* Parses argv (NULL-terminated, without the program name) and selects. */
static size_t fe_pick(struct options *o, struct frontend *fes,
		      const char *const *args)
{
	char *argv[16] = { "kvmstat" };
	struct errmsg err;
	int argc = 1;

	while (args[argc - 1])
		argv[argc] = (char *)args[argc - 1], argc++;
	ck_assert_msg(!options_parse(argc, argv, o, &err), "%s", err.text);
	return frontend_select(o, fes, 4);
}

/* The names of the selected front-ends, space-separated. */
static const char *fe_names(const struct frontend *fes, size_t n)
{
	static char buf[128];

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(fes[i].view);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
			 i ? " " : "", fes[i].ops->name);
	}
	return buf;
}

START_TEST(test_select_by_mode)
{
	static const struct {
		const char *args[8];
		const char *names;
		enum frontend_pace pace;
	} cases[] = {
		{ { NULL }, "tui", FRONTEND_INTERACTIVE },
		{ { "-1", NULL }, "batch", FRONTEND_ONCE },
		{ { "-1", "--json", NULL }, "json", FRONTEND_ONCE },
		{ { "-l", NULL }, "log", FRONTEND_EVERY },
		{ { "-l", "-c", NULL }, "log", FRONTEND_EVERY },
		{ { "-L", "/tmp/k.log", NULL }, "log", FRONTEND_EVERY },
		{ { "-l", "--json", NULL }, "json", FRONTEND_EVERY },
		{ { "--listen", "9712", NULL }, "exporter", FRONTEND_EVERY },
		{ { "-l", "--listen", "[::1]:9712", NULL },
		  "log exporter",
		  FRONTEND_EVERY },
		{ { "-L", "/tmp/k.csv", "-c", "--listen", "1", NULL },
		  "log exporter",
		  FRONTEND_EVERY },
		{ { "--json", "-L", "/tmp/k.json", "--listen", "9712", NULL },
		  "json exporter",
		  FRONTEND_EVERY },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct options o;
		struct frontend fes[4];
		struct frontend_view need;
		size_t n = fe_pick(&o, fes, cases[i].args);

		ck_assert_str_eq(fe_names(fes, n), cases[i].names);
		frontend_needs(fes, n, &need);
		ck_assert_int_eq(need.pace, cases[i].pace);
		/* only the monitor takes the terminal */
		ck_assert(need.owns_terminal ==
			  (cases[i].pace == FRONTEND_INTERACTIVE));
		options_free(&o);
	}
}
END_TEST

/* What the exporter needs and the text outputs do not: totals since VM
 * start, child events as reasons, every VM and vCPU. The log gets the
 * first sample at once too: its columns and header come from it. */
START_TEST(test_needs)
{
	static const char *const text_only[] = { "-l", NULL };
	static const char *const json[] = { "-1", "--json", NULL };
	static const char *const both[] = { "-l", "--listen", "9712", NULL };
	struct options o;
	struct frontend fes[4];
	struct frontend_view need;
	size_t n;

	n = fe_pick(&o, fes, text_only);
	frontend_needs(fes, n, &need);
	ck_assert(!need.past && !need.children && !need.vms && !need.whole);
	ck_assert(need.at_once);
	options_free(&o);

	n = fe_pick(&o, fes, json);
	frontend_needs(fes, n, &need);
	ck_assert(need.vms && !need.children && !need.past);
	options_free(&o);

	n = fe_pick(&o, fes, both);
	ck_assert_uint_eq(n, 2);
	/* the log keeps its own view: no children, the options' scope */
	ck_assert(!fes[0].view->children && !fes[0].view->whole);
	ck_assert(fes[0].view->at_once);
	ck_assert(fes[1].view->children && fes[1].view->whole);
	ck_assert(fes[1].view->past && fes[1].view->vms);
	ck_assert(fes[1].view->at_once);
	frontend_needs(fes, n, &need);
	ck_assert(need.past && need.children && need.vms && need.at_once);
	ck_assert_int_eq(need.pace, FRONTEND_EVERY);
	options_free(&o);
}
END_TEST

/* Every entry can open, render and close, and says when it is wanted;
 * names are unique. */
START_TEST(test_registry_complete)
{
	size_t n = 0;

	for (size_t i = 0; frontend_registry[i]; i++, n++) {
		const struct frontend_ops *ops = frontend_registry[i];

		ck_assert_ptr_nonnull(ops->name);
		ck_assert_ptr_nonnull(ops->select);
		ck_assert_ptr_nonnull(ops->open);
		ck_assert_ptr_nonnull(ops->render);
		ck_assert_ptr_nonnull(ops->close);
		ck_assert(!ops->input == !ops->input_fd);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(frontend_registry[j]->name, ops->name);
	}
	ck_assert_uint_ge(n, 5);
}
END_TEST

/* At most max are selected. */
START_TEST(test_select_max)
{
	static const char *const both[] = { "-l", "--listen", "9712", NULL };
	struct options o;
	struct frontend fes[4];

	fe_pick(&o, fes, both);
	ck_assert_uint_eq(frontend_select(&o, fes, 1), 1);
	ck_assert_str_eq(fes[0].ops->name, "log");
	ck_assert_uint_eq(frontend_select(&o, fes, 0), 0);
	options_free(&o);
}
END_TEST

START_TEST(test_write_result)
{
	struct frontend fe = { .ops = &log_frontend_ops };

	ck_assert_int_eq(frontend_write_result(&fe, 0), 0);
	ck_assert_str_eq(fe.msg.text, "");
	/* the reader went away: a quiet end, nothing to say */
	ck_assert_int_eq(frontend_write_result(&fe, -EPIPE), -EPIPE);
	ck_assert_str_eq(fe.msg.text, "");
	ck_assert_int_eq(frontend_write_result(&fe, -ENOSPC), -ENOSPC);
	ck_assert_str_eq(fe.msg.text,
			 "cannot write the output: No space left on device");
}
END_TEST

Suite *frontend_suite(void)
{
	Suite *s = suite_create("frontend");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_select_by_mode);
	tcase_add_test(tc, test_needs);
	tcase_add_test(tc, test_registry_complete);
	tcase_add_test(tc, test_select_max);
	tcase_add_test(tc, test_write_result);
	suite_add_tcase(s, tc);
	return s;
}
