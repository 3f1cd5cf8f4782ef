// SPDX-License-Identifier: GPL-2.0-only
/*
 * The provider registry: which providers each command line asks for
 * (none: every one the host supports), and that every entry is complete.
 */
#include <check.h>
#include <string.h>

#include "errmsg.h"
#include "options.h"
#include "options_parse.h"
#include "provider.h"
#include "suites.h"

/* The names of the providers the options ask for, space-separated. */
static const char *pv_asked(const char *const *args)
{
	static char buf[128];
	char *argv[16] = { "kvmstat" };
	struct options o;
	struct errmsg err;
	int argc = 1;

	while (args[argc - 1])
		argv[argc] = (char *)args[argc - 1], argc++;
	ck_assert_msg(!options_parse(argc, argv, &o, &err), "%s", err.text);
	buf[0] = '\0';
	for (size_t i = 0; provider_registry[i]; i++)
		if (provider_asked(provider_registry[i], &o))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 "%s%s", buf[0] ? " " : "",
				 provider_registry[i]->name);
	options_free(&o);
	return buf;
}

START_TEST(test_asked)
{
	static const char *const none[] = { NULL };
	static const char *const json[] = { "--json", "-1", NULL };
	static const char *const batch[] = { "-1", NULL };
	static const char *const log_d[] = { "-l", "-d", NULL };
	static const char *const t[] = { "-t", NULL };
	static const char *const d_s[] = { "-d", "-S", NULL };
	static const char *const qmp[] = { "--qmp", "/run/q.sock", "--qmp",
					   "/run/r.sock", NULL };
	static const char *const all[] = { "-tdS", "--qmp", "/q", NULL };

	ck_assert_str_eq(pv_asked(none), "");
	ck_assert_str_eq(pv_asked(json), "");
	/* kvm_stat's modes: the tracepoints unless a source is named */
	ck_assert_str_eq(pv_asked(batch), "tracepoint");
	ck_assert_str_eq(pv_asked(log_d), "debugfs");
	ck_assert_str_eq(pv_asked(t), "tracepoint");
	ck_assert_str_eq(pv_asked(d_s), "statsfd debugfs");
	ck_assert_str_eq(pv_asked(qmp), "qmp");
	ck_assert_str_eq(pv_asked(all), "tracepoint statsfd debugfs qmp");
}
END_TEST

START_TEST(test_registry_complete)
{
	for (size_t i = 0; provider_registry[i]; i++) {
		const struct provider_ops *ops = provider_registry[i];

		ck_assert_ptr_nonnull(ops->name);
		ck_assert_ptr_nonnull(ops->asked);
		ck_assert_ptr_nonnull(ops->open);
		ck_assert_ptr_nonnull(ops->read);
		ck_assert_ptr_nonnull(ops->close);
		ck_assert_ptr_eq(provider_find(ops->name), ops);
	}
	ck_assert_ptr_null(provider_find("nonexistent"));
	/* QMP alone may serve a -p that /proc does not show as a VM */
	ck_assert(provider_find("qmp")->own_pid_check);
	ck_assert(!provider_find("debugfs")->own_pid_check);
	/* perf events and BPF objects: the tracepoint provider's */
	ck_assert(provider_find("tracepoint")->holds_kernel_fds);
	ck_assert(!provider_find("statsfd")->holds_kernel_fds);
}
END_TEST

Suite *provider_suite(void)
{
	Suite *s = suite_create("provider");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_asked);
	tcase_add_test(tc, test_registry_complete);
	suite_add_tcase(s, tc);
	return s;
}
