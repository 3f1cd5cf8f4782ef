// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's key table, without a terminal: the help screen it draws
 * (the text, and that it fits 80x24), and that every key belongs to one
 * entry, so the key help names is the key that entry dispatches. The
 * monitor's keys file is compiled in here to reach its static table (the
 * library's copy of it is then not linked). The keys themselves are
 * driven under tmux by tests/system/t_tui*.sh.
 */
#include <check.h>
#include <string.h>

#include "../../src/frontends/tui/tui_keys.c"

#include "suites.h"

static const char *const want_help[] = {
	"Interactive commands",
	"",
	"   b     toggle the per-guest view (every VM, its exit rate and busiest events)",
	"   c     clear filters (fields, pid, guest)",
	"   f     filter fields by regular expression (empty: the default)",
	"   g     filter by guest name or pid",
	"   h     this help",
	"   k     exits by key (port, address, MSR, hypercall); BPF, on while shown",
	"   l     exit latency per reason, in the kernel and VMM; BPF, on while shown",
	"   n     dismiss the lines about sources (not started, tracefs mounted)",
	"   o     toggle sorting (CurAvg/s or Total)",
	"   p     filter by pid or guest name",
	"   q     quit",
	"   r     reset the counters shown to zero from now",
	"   s     set the update interval (0.1 to 25.5 seconds)",
	"   t     where vCPU time goes: guest, kernel, vmm, halted, waiting (per VM)",
	"   x     toggle child events, e.g. kvm_exit(HLT); no count restarts",
	"   1-9 < >         choose the sort column",
	"   Up Down PgUp PgDn Home End  move the selection, scroll",
	"   Enter or v      on a VM: vCPUs; histogram: buckets; kvm_pio...: exits by key",
	"   Space [ ] { } j  replay: pause/play; step back/on by 1 or 10; jump to a time",
	"   Escape          back to the previous view, or cancel a prompt",
	"",
	"Any other key refreshes at once; only q quits. Press any key to go back.",
};

/* The help screen, line by line; it fits an 80x24 terminal. */
START_TEST(test_help_screen)
{
	char line[256];
	size_t n;

	for (n = 0; tui_help_line(n, line, sizeof(line)); n++) {
		ck_assert_msg(n < ARRAY_SIZE(want_help), "extra line \"%s\"",
			      line);
		ck_assert_str_eq(line, want_help[n]);
		ck_assert_msg(strlen(line) <= 80, "wider than 80: \"%s\"", line);
	}
	ck_assert_uint_eq(n, ARRAY_SIZE(want_help));
	ck_assert_uint_le(n, 24);
}
END_TEST

/* No key is in two entries, so each dispatches from the entry whose help
 * line names it; every entry has a handler, every listed one its help. */
START_TEST(test_keys_unique)
{
	for (size_t i = 0; i < ARRAY_SIZE(tui_keys); i++) {
		const struct tui_key *e = &tui_keys[i];

		ck_assert_ptr_nonnull(e->run);
		ck_assert_int_ne(e->keys[0], 0);
		ck_assert_int_eq(e->keys[TUI_KEYS_MAX - 1], 0);
		ck_assert(!e->label == !e->help);
		for (const int *k = e->keys; *k; k++)
			ck_assert_msg(tui_key_find(*k) == e,
				      "key %d of \"%s\" is also in \"%s\"", *k,
				      e->label ? e->label : "(unlisted)",
				      tui_key_find(*k)->label);
	}
	/* keys kvm_stat users know, and the ones the help screen names */
	ck_assert_ptr_eq(tui_key_find('?'), tui_key_find('h'));
	ck_assert_ptr_eq(tui_key_find('v'), tui_key_find(KEY_ENTER));
	ck_assert_ptr_eq(tui_key_find('\n'), tui_key_find(KEY_ENTER));
	ck_assert_ptr_eq(tui_key_find('9'), tui_key_find('<'));
	ck_assert_ptr_eq(tui_key_find(KEY_END), tui_key_find(KEY_UP));
	ck_assert_ptr_nonnull(tui_key_find(KEY_RESIZE));
	ck_assert_ptr_null(tui_key_find('z'));
	ck_assert_ptr_null(tui_key_find('0'));
}
END_TEST

Suite *tui_keys_suite(void)
{
	Suite *s = suite_create("tui_keys");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_help_screen);
	tcase_add_test(tc, test_keys_unique);
	suite_add_tcase(s, tc);
	return s;
}
