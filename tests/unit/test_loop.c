// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop's pieces, with fake front-ends: the wait (a timeout, SIGTERM and
 * SIGINT stop, SIGHUP asks every open front-end to reopen and says a
 * failure, input asks for a request, a hung-up input stops), the snapshots
 * each view gets (child events only where asked, the whole selection or
 * the --vcpu scope) and the front-ends' needs folded into the options.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/signals.h"
#include "errmsg.h"
#include "loop.h"
#include "options_parse.h"
#include "suites.h"
#include "util.h"

/* What the fake front-ends saw. */
static struct {
	int reopens;
	int reopen_rc;
	int inputs;
	enum ui_action input_act;
	int input_fd;
	char rows[4][512]; /* row names of each fake's last render */
	char said[512];	   /* the last line for the user */
	int says;
} lt;

static const struct frontend_view lt_text_view = {
	.pace = FRONTEND_EVERY,
};

static const struct frontend_view lt_metrics_view = {
	.pace = FRONTEND_EVERY,
	.at_once = true,
	.vms = true,
	.children = true,
	.past = true,
	.whole = true,
};

static int lt_open(struct frontend *fe, const struct options *opts)
{
	(void)fe;
	(void)opts;
	return 0;
}

/* Notes the rows, by the fake's slot (fe->priv). */
static int lt_render(struct frontend *fe, const struct snapshot *snap)
{
	char *out = lt.rows[(size_t)fe->priv];

	out[0] = '\0';
	for (size_t i = 0; i < snap->nrows; i++)
		snprintf(out + strlen(out), 512 - strlen(out), "%s%s",
			 i ? " " : "", snap->rows[i].name);
	return 0;
}

static int lt_reopen(struct frontend *fe)
{
	lt.reopens++;
	if (lt.reopen_rc)
		errmsg_set(&fe->msg, lt.reopen_rc, "cannot reopen %d",
			   lt.reopens);
	return lt.reopen_rc;
}

static int lt_input_fd(struct frontend *fe)
{
	(void)fe;
	return lt.input_fd;
}

/* Drains the pipe and asks for what the test set. */
static enum ui_action lt_input(struct frontend *fe)
{
	char buf[16];

	if (read(lt.input_fd, buf, sizeof(buf)) < 0)
		ck_abort_msg("read: %s", strerror(errno));
	lt.inputs++;
	memset(&fe->req, 0, sizeof(fe->req));
	fe->req.action = lt.input_act;
	fe->req.delay = 2.5;
	return lt.input_act;
}

static void lt_close(struct frontend *fe)
{
	(void)fe;
}

static const struct frontend_ops lt_ops = {
	.name = "fake",
	.open = lt_open,
	.render = lt_render,
	.reopen = lt_reopen,
	.input_fd = lt_input_fd,
	.input = lt_input,
	.close = lt_close,
};

static void lt_say(const char *msg)
{
	snprintf(lt.said, sizeof(lt.said), "%s", msg);
	lt.says++;
}

/* A loop with signals and n open fakes (the first without input). */
static void lt_loop(struct loop *l, struct options *o, size_t n)
{
	memset(&lt, 0, sizeof(lt));
	lt.input_fd = -1;
	memset(l, 0, sizeof(*l));
	memset(o, 0, sizeof(*o));
	o->vcpu = -1;
	o->proc_root = "/nonexistent-proc";
	l->opts = o;
	vmdir_init(&l->vms);
	l->say = lt_say;
	l->sigfd = signals_open();
	ck_assert_int_ge(l->sigfd, 0);
	for (size_t i = 0; i < n; i++) {
		l->fes[i].ops = &lt_ops;
		l->fes[i].view = &lt_text_view;
		l->fes[i].priv = (void *)i;
		l->fe_open[i] = true;
	}
	l->nfes = n;
}

static uint64_t lt_ms(uint64_t since)
{
	return (util_now_ns() - since) / 1000000;
}

START_TEST(test_wait_timeout)
{
	struct loop l;
	struct options o;
	struct frontend *from = NULL;
	enum loop_wake wake = LOOP_STOP;
	uint64_t t0;

	lt_loop(&l, &o, 1);
	t0 = util_now_ns();
	ck_assert_int_eq(loop_wait(&l, t0 + 120000000ull, &wake, &from), 0);
	ck_assert_int_eq(wake, LOOP_TIMEOUT);
	ck_assert_uint_ge(lt_ms(t0), 119);
	ck_assert_uint_lt(lt_ms(t0), 2000);
	/* a deadline already past returns at once */
	ck_assert_int_eq(loop_wait(&l, t0, &wake, &from), 0);
	ck_assert_int_eq(wake, LOOP_TIMEOUT);
	ck_assert_int_eq(lt.reopens, 0);
	close(l.sigfd);
}
END_TEST

static void lt_stops_on(int sig)
{
	struct loop l;
	struct options o;
	struct frontend *from = NULL;
	enum loop_wake wake = LOOP_TIMEOUT;
	uint64_t t0;

	lt_loop(&l, &o, 1);
	/* blocked: it waits in the signalfd, and the process lives on */
	ck_assert_int_eq(raise(sig), 0);
	t0 = util_now_ns();
	ck_assert_int_eq(loop_wait(&l, t0 + 5000000000ull, &wake, &from), 0);
	ck_assert_int_eq(wake, LOOP_STOP);
	ck_assert_uint_lt(lt_ms(t0), 1000);
	ck_assert_int_eq(lt.reopens, 0);
	close(l.sigfd);
}

START_TEST(test_wait_sigterm_stops)
{
	lt_stops_on(SIGTERM);
}
END_TEST

START_TEST(test_wait_sigint_stops)
{
	lt_stops_on(SIGINT);
}
END_TEST

/* SIGHUP: every open front-end reopens, the wait goes on to its end. */
START_TEST(test_wait_sighup_reopens)
{
	struct loop l;
	struct options o;
	struct frontend *from = NULL;
	enum loop_wake wake = LOOP_STOP;
	uint64_t t0;

	lt_loop(&l, &o, 3);
	l.fe_open[1] = false; /* not opened: not asked */
	ck_assert_int_eq(raise(SIGHUP), 0);
	t0 = util_now_ns();
	ck_assert_int_eq(loop_wait(&l, t0 + 150000000ull, &wake, &from), 0);
	ck_assert_int_eq(wake, LOOP_TIMEOUT);
	ck_assert_int_eq(lt.reopens, 2);
	ck_assert_int_eq(lt.says, 0);
	ck_assert_uint_ge(lt_ms(t0), 149);

	/* a failed reopen is said, and the run goes on; then SIGTERM */
	lt.reopen_rc = -EACCES;
	l.fe_open[2] = false;
	ck_assert_int_eq(raise(SIGHUP), 0);
	ck_assert_int_eq(raise(SIGTERM), 0);
	ck_assert_int_eq(loop_wait(&l, util_now_ns() + 5000000000ull, &wake,
				   &from),
			 0);
	ck_assert_int_eq(wake, LOOP_STOP);
	ck_assert_int_eq(lt.reopens, 3);
	ck_assert_int_eq(lt.says, 1);
	ck_assert_str_eq(lt.said, "cannot reopen 3");
	close(l.sigfd);
}
END_TEST

/* Input: a request wakes the loop with its front-end; UI_NONE does not;
 * the input hanging up stops the run. */
START_TEST(test_wait_input)
{
	struct frontend_ops no_input = lt_ops;
	struct loop l;
	struct options o;
	struct frontend *from = NULL;
	enum loop_wake wake = LOOP_STOP;
	int pfd[2];

	no_input.input_fd = NULL;
	no_input.input = NULL;
	lt_loop(&l, &o, 2);
	l.fes[0].ops = &no_input;
	ck_assert_int_eq(pipe(pfd), 0);
	lt.input_fd = pfd[0];

	lt.input_act = UI_SET_DELAY;
	ck_assert_int_eq(write(pfd[1], "s", 1), 1);
	ck_assert_int_eq(loop_wait(&l, util_now_ns() + 5000000000ull, &wake,
				   &from),
			 0);
	ck_assert_int_eq(wake, LOOP_INPUT);
	ck_assert_ptr_eq(from, &l.fes[1]);
	ck_assert_int_eq(from->req.action, UI_SET_DELAY);
	ck_assert(from->req.delay == 2.5);

	/* a key the front-end handled itself: the wait goes on */
	lt.input_act = UI_NONE;
	lt.inputs = 0;
	ck_assert_int_eq(write(pfd[1], "j", 1), 1);
	ck_assert_int_eq(loop_wait(&l, util_now_ns() + 100000000ull, &wake,
				   &from),
			 0);
	ck_assert_int_eq(wake, LOOP_TIMEOUT);
	ck_assert_int_eq(lt.inputs, 1);

	/* the terminal went away */
	close(pfd[1]);
	ck_assert_int_eq(loop_wait(&l, util_now_ns() + 5000000000ull, &wake,
				   &from),
			 0);
	ck_assert_int_eq(wake, LOOP_STOP);
	close(pfd[0]);
	close(l.sigfd);
}
END_TEST

/* kvm_exit with a child, for VM 100 on vCPUs 0 and 1. */
static void lt_stats(struct stats *s)
{
	int exit, hlt;

	stats_init(s, false);
	exit = field_table_intern(&s->fields, "kvm_exit", -1, FIELD_CUMULATIVE,
				  "test");
	hlt = field_table_intern(&s->fields, "kvm_exit(HLT)", exit,
				 FIELD_CUMULATIVE, "test");
	for (uint64_t k = 1; k <= 2; k++) {
		sample_set_push(&s->set, exit, 0, -1, 0, 30 * k, 0);
		sample_set_push(&s->set, hlt, 0, -1, 0, 10 * k, 0);
		sample_set_push(&s->set, exit, 100, -1, 0, 30 * k, 0);
		sample_set_push(&s->set, exit, 100, 0, 0, 10 * k, 0);
		sample_set_push(&s->set, exit, 100, 1, 0, 20 * k, 0);
		sample_set_push(&s->set, hlt, 100, -1, 0, 10 * k, 0);
		stats_update(s, k * 1000000000ull);
	}
}

/* With an exporter-like view beside a text one: the providers count child
 * events, the text output still does not show them; the metrics get
 * them and the whole selection, the text the --vcpu scope. */
START_TEST(test_render_views)
{
	struct loop l;
	struct options o;
	struct errmsg err;

	lt_loop(&l, &o, 2);
	ck_assert_int_eq(filter_set(&l.run.filter, FILTER_DEFAULT, &err), 0);
	l.fes[1].view = &lt_metrics_view;
	frontend_needs(l.fes, 2, &l.need);
	/* what loop_open does with these needs */
	l.children = false;
	l.run.children = true;
	l.want_vms = true;
	lt_stats(&l.stats);

	ck_assert_int_eq(loop_render(&l, false), 0);
	ck_assert_str_eq(lt.rows[0], "kvm_exit");
	ck_assert_str_eq(lt.rows[1], "kvm_exit kvm_exit(HLT)");
	/* guest names were looked up for the views that show VMs */
	ck_assert_uint_eq(l.vms.n, 1);
	ck_assert_int_eq(l.vms.v[0].pid, 100);
	ck_assert(l.vms.v[0].named);

	/* the first sample at once: only the views that want it */
	lt.rows[0][0] = lt.rows[1][0] = '\0';
	ck_assert_int_eq(loop_render(&l, true), 0);
	ck_assert_str_eq(lt.rows[0], "");
	ck_assert_str_eq(lt.rows[1], "kvm_exit kvm_exit(HLT)");

	/* --vcpu 1 of VM 100: the text gets that vCPU's rows (kvm_exit
	 * counted 20 there), the metrics still everything */
	l.run.pid = 100; /* the monitor's p, or -p */
	o.vcpu = 1;
	ck_assert_int_eq(loop_render(&l, false), 0);
	ck_assert_str_eq(lt.rows[0], "kvm_exit");
	ck_assert_str_eq(lt.rows[1], "kvm_exit kvm_exit(HLT)");
	o.vcpu = -1;
	o.per_vcpu = true;
	ck_assert_int_eq(loop_render(&l, false), 0);
	ck_assert_str_eq(lt.rows[0], "kvm_exit kvm_exit/vcpu0 kvm_exit/vcpu1");
	ck_assert_str_eq(lt.rows[1], "kvm_exit kvm_exit(HLT)");

	/* alone, the monitor's 'x' shows them in the text view */
	l.nfes = 1;
	o.per_vcpu = false;
	l.children = true;
	ck_assert_int_eq(loop_render(&l, false), 0);
	ck_assert_str_eq(lt.rows[0], "kvm_exit kvm_exit(HLT)");

	vmdir_free(&l.vms);
	for (size_t i = 0; i < LOOP_MAX_FRONTENDS; i++)
		snapshot_free(&l.fe_snap[i]); /* as loop_close does */
	stats_free(&l.stats);
	filter_free(&l.run.filter);
	close(l.sigfd);
}
END_TEST

/* A failed render: the first failure and its line, the others render. */
static int lt_render_fails(struct frontend *fe, const struct snapshot *snap)
{
	lt_render(fe, snap);
	return errmsg_set(&fe->msg, -ENOSPC, "disk full");
}

START_TEST(test_render_failure)
{
	struct frontend_ops failing = lt_ops;
	struct loop l;
	struct options o;

	failing.render = lt_render_fails;
	lt_loop(&l, &o, 2);
	l.fes[0].ops = &failing;
	lt_stats(&l.stats);
	ck_assert_int_eq(loop_render(&l, false), -ENOSPC);
	ck_assert_str_eq(l.msg.text, "disk full");
	ck_assert(!l.usage);
	/* no filter set: every field */
	ck_assert_str_eq(lt.rows[1], "kvm_exit kvm_exit(HLT)");
	for (size_t i = 0; i < LOOP_MAX_FRONTENDS; i++)
		snapshot_free(&l.fe_snap[i]); /* as loop_close does */
	stats_free(&l.stats);
	close(l.sigfd);
}
END_TEST

/* Parses argv (NULL-terminated, without the program name). */
static void lt_parse(struct options *o, const char *const *args)
{
	char *argv[16] = { "kvmstat" };
	struct errmsg err;
	int argc = 1;

	while (args[argc - 1])
		argv[argc] = (char *)args[argc - 1], argc++;
	ck_assert_msg(!options_parse(argc, argv, o, &err), "%s", err.text);
}

/* loop_open folds the selected front-ends' needs into the run before any
 * provider opens (-f help stops right there). */
START_TEST(test_open_folds_needs)
{
	static const char *const metrics[] = { "-f",	   "help", "-l",
					       "--listen", "9712", NULL };
	static const char *const text[] = { "-f", "help", "-l", NULL };
	static const char *const json[] = { "-f", "help", "-1", "--json", NULL };
	struct options o;
	struct loop l;

	lt_parse(&o, metrics);
	ck_assert_int_eq(loop_open(&l, &o, lt_say), 0);
	ck_assert_uint_eq(l.nfes, 2);
	ck_assert(!l.fe_open[0] && !l.fe_open[1]);
	/* the run's state takes the needs; the options stay as parsed */
	ck_assert(l.run.include_past && l.stats.include_past);
	ck_assert(!o.include_past);
	ck_assert(l.run.children && !l.children);
	ck_assert(l.want_vms);
	ck_assert_str_eq(l.providers, "");
	loop_close(&l);
	options_free(&o);

	lt_parse(&o, text);
	ck_assert_int_eq(loop_open(&l, &o, lt_say), 0);
	ck_assert(!o.include_past && !o.children && !l.want_vms);
	loop_close(&l);
	options_free(&o);

	lt_parse(&o, json);
	ck_assert_int_eq(loop_open(&l, &o, lt_say), 0);
	ck_assert(!o.include_past && !o.children && l.want_vms);
	ck_assert_int_eq(l.need.pace, FRONTEND_ONCE);
	loop_close(&l);
	options_free(&o);
}
END_TEST

/* -p that names no VM: a usage error before anything opens. */
START_TEST(test_open_bad_pid)
{
	static const char *const args[] = { "-1", "-p", "2147483647", NULL };
	struct options o;
	struct loop l;

	lt_parse(&o, args);
	ck_assert_int_lt(loop_open(&l, &o, lt_say), 0);
	ck_assert(l.usage);
	ck_assert_ptr_nonnull(strstr(l.msg.text, "2147483647"));
	ck_assert(!l.fe_open[0]);
	options_free(&o);
}
END_TEST

Suite *loop_suite(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_wait_timeout);
	tcase_add_test(tc, test_wait_sigterm_stops);
	tcase_add_test(tc, test_wait_sigint_stops);
	tcase_add_test(tc, test_wait_sighup_reopens);
	tcase_add_test(tc, test_wait_input);
	tcase_add_test(tc, test_render_views);
	tcase_add_test(tc, test_render_failure);
	tcase_add_test(tc, test_open_folds_needs);
	tcase_add_test(tc, test_open_bad_pid);
	suite_add_tcase(s, tc);
	return s;
}
