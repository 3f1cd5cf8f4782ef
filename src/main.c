// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmstat: options, then open the providers, then one loop: sample,
 * aggregate, render a const snapshot, poll() on a timer and on signals.
 * Only this file and the front-ends print or exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "frontend.h"
#include "options.h"
#include "provider.h"
#include "stats.h"
#include "util.h"
#include "vm.h"

#ifndef KVMSTAT_VERSION
#define KVMSTAT_VERSION "0.1"
#endif

struct run {
	struct options opts;
	struct stats stats;
	struct provider provs[8];
	size_t nprovs;
	struct frontend fe;
	bool fe_open;
	int sigfd;
};

static void usage_error(const char *msg)
{
	fprintf(stderr, "kvmstat: %s\n", msg);
	exit(EXIT_USAGE);
}

/* Lifts the soft open-file limit to the hard one (and the hard one to the
 * kernel's maximum when privileged): one perf event is one fd. */
static void raise_nofile(void)
{
	struct rlimit rl;
	char buf[32];
	uint64_t max;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (util_read_file("/proc/sys/fs/nr_open", buf, sizeof(buf)) > 0 &&
	    !util_parse_u64(buf, &max) && max > rl.rlim_max) {
		struct rlimit want = { max, max };

		if (!setrlimit(RLIMIT_NOFILE, &want))
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void report_notices(struct run *r)
{
	for (size_t i = 0; i < r->nprovs; i++) {
		struct provider *p = &r->provs[i];

		if (p->notice && p->msg[0]) {
			fprintf(stderr, "kvmstat: %s\n", p->msg);
			p->notice = false;
			p->msg[0] = '\0';
		}
	}
}

/* Opens the providers asked for (-t/-d) or every one the host supports. */
static void open_providers(struct run *r, bool all_fields)
{
	const struct options *o = &r->opts;
	bool explicit = o->use_tracepoints || o->use_debugfs;
	char why[2048] = "";

	for (size_t i = 0; provider_registry[i]; i++) {
		const struct provider_ops *ops = provider_registry[i];
		struct provider *p;
		int rc;

		if (explicit &&
		    !((o->use_tracepoints && !strcmp(ops->name, "tracepoint")) ||
		      (o->use_debugfs && !strcmp(ops->name, "debugfs"))))
			continue;
		if (!explicit && ops->probe && !ops->probe(o))
			continue;
		if (r->nprovs == ARRAY_SIZE(r->provs))
			break;
		p = &r->provs[r->nprovs];
		memset(p, 0, sizeof(*p));
		p->ops = ops;
		p->fields = &r->stats.fields;
		p->filter = all_fields ? NULL : &o->filter;
		p->want_vms = o->pid != 0;
		rc = ops->open(p, o);
		if (rc) {
			if (explicit)
				util_die("%s provider: %s", ops->name,
					 p->msg[0] ? p->msg : strerror(-rc));
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 "%s%s: %s", why[0] ? "; " : "", ops->name,
				 p->msg[0] ? p->msg : strerror(-rc));
			continue;
		}
		r->nprovs++;
	}
	if (!r->nprovs)
		util_die("no statistics source could be opened (%s)",
			 why[0] ? why : "no provider supports this host");
}

static void close_providers(struct run *r)
{
	for (size_t i = 0; i < r->nprovs; i++)
		r->provs[i].ops->close(&r->provs[i]);
	r->nprovs = 0;
}

/*
 * Releasing the last perf event of a tracepoint waits for an RCU grace
 * period, under a kernel mutex: closing a hundred tracepoints takes
 * seconds. So the last references go to a child that lets its parent end
 * at once: the child holds a copy of every descriptor until the parent has
 * exited (its end of a pipe closes), then exits itself, detached, with
 * nothing of the terminal or of the output pipe open.
 */
static void close_providers_fast(struct run *r)
{
	int pfd[2], null;
	pid_t pid;
	char c;

	if (!r->nprovs || pipe2(pfd, 0)) {
		close_providers(r);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		setsid();
		while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pfd[0]);
	/* the child's copies keep these alive, so this is quick; the pipe's
	 * write end closes when this process exits */
	close_providers(r);
	if (pid < 0)
		close(pfd[1]);
}

/* One refresh: every provider reads, then the stats layer folds it in. */
static void sample_all(struct run *r)
{
	for (size_t i = 0; i < r->nprovs; i++) {
		struct provider *p = &r->provs[i];

		if (p->ops->read(p, &r->stats.set) && p->msg[0])
			p->notice = true;
	}
	stats_update(&r->stats, util_now_ns());
	if (r->opts.mode != MODE_TUI)
		report_notices(r);
}

static int render(struct run *r)
{
	struct snapshot snap;
	int rc;

	stats_snapshot(&r->stats, &r->opts.filter, &snap);
	rc = r->fe.ops->render(&r->fe, &snap);
	snapshot_free(&snap);
	return rc;
}

static void list_fields(struct run *r)
{
	struct snapshot snap;

	sample_all(r);
	stats_snapshot(&r->stats, NULL, &snap);
	for (size_t i = 0; i < snap.nrows; i++)
		printf("  %s\n", snap.rows[i].name);
	snapshot_free(&snap);
}

static int setup_signals(void)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		util_die("signalfd: %s", strerror(errno));
	return fd;
}

enum wait_result {
	WAIT_TIMEOUT,	/* the deadline passed */
	WAIT_STOP,	/* SIGINT or SIGTERM */
	WAIT_INPUT,	/* the front-end asks for something */
};

/* Waits until deadline (monotonic ns), a stop signal or a request from an
 * interactive front-end (returned in *act). SIGHUP reopens the log. */
static enum wait_result wait_until(struct run *r, uint64_t deadline,
				   enum ui_action *act)
{
	int in_fd = r->fe.ops->input_fd ? r->fe.ops->input_fd(&r->fe) : -1;

	for (;;) {
		uint64_t now = util_now_ns();
		struct pollfd pfd[2] = { { .fd = r->sigfd, .events = POLLIN },
					 { .fd = in_fd, .events = POLLIN } };
		struct signalfd_siginfo si;
		int timeout, n;

		if (now >= deadline)
			return WAIT_TIMEOUT;
		timeout = (int)((deadline - now + 999999) / 1000000);
		n = poll(pfd, in_fd >= 0 ? 2 : 1, timeout);
		if (n < 0 && errno != EINTR)
			util_die("poll: %s", strerror(errno));
		if (n <= 0)
			continue;
		while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				if (r->fe.ops->reopen &&
				    r->fe.ops->reopen(&r->fe) < 0)
					fprintf(stderr, "kvmstat: %s\n",
						r->fe.msg);
				continue;
			}
			return WAIT_STOP;
		}
		if (in_fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP))) {
			*act = r->fe.ops->input(&r->fe);
			if (*act != UI_NONE)
				return WAIT_INPUT;
		}
	}
}

static uint64_t delay_ns(const struct run *r)
{
	return (uint64_t)(r->opts.delay * 1e9 + 0.5);
}

static void run_batch(struct run *r)
{
	enum ui_action act;

	sample_all(r);
	if (wait_until(r, util_now_ns() + delay_ns(r), &act) == WAIT_STOP)
		return;
	sample_all(r);
	render(r);
}

static void run_log(struct run *r)
{
	uint64_t deadline;

	enum ui_action act;
	bool more = true;
	int rc;

	sample_all(r);
	deadline = util_now_ns() + delay_ns(r);
	while (more) {
		uint64_t now;

		/* a stop request still logs the partial interval: no count
		 * is lost between the last line and the end of the run */
		more = wait_until(r, deadline, &act) != WAIT_STOP;
		sample_all(r);
		rc = render(r);
		if (rc == -EPIPE)
			return;
		if (rc < 0)
			util_die("cannot write the log: %s", strerror(-rc));
		now = util_now_ns();
		deadline += delay_ns(r);
		if (deadline <= now)
			deadline = now + delay_ns(r);
	}
}

/* The monitor: the first screen at once, the next after 0.25 s, then
 * every delay; keys may ask for a refresh, a reset or the end. */
static void run_tui(struct run *r)
{
	uint64_t deadline;
	enum ui_action act;

	sample_all(r);
	render(r);
	deadline = util_now_ns() + 250000000ull;
	for (;;) {
		switch (wait_until(r, deadline, &act)) {
		case WAIT_STOP:
			return;
		case WAIT_INPUT:
			if (act == UI_QUIT)
				return;
			if (act == UI_RESET) {
				stats_reset(&r->stats);
				render(r);
				continue;
			}
			break;
		case WAIT_TIMEOUT:
			break;
		}
		sample_all(r);
		render(r);
		deadline = util_now_ns() + delay_ns(r);
	}
}

static void resolve_vm(struct run *r)
{
	char err[512];
	pid_t pid;

	if (r->opts.guest) {
		if (vm_resolve_guest(r->opts.proc_root, r->opts.guest, &pid,
				     err, sizeof(err)))
			usage_error(err);
		r->opts.pid = pid;
	} else if (r->opts.pid) {
		if (vm_resolve_pid(r->opts.proc_root, r->opts.pid, err,
				   sizeof(err)))
			usage_error(err);
	}
}

int main(int argc, char **argv)
{
	static struct run r;
	char err[512];

	if (options_parse(argc, argv, &r.opts, err, sizeof(err)))
		usage_error(err);
	if (r.opts.help) {
		options_usage(stdout);
		return 0;
	}
	if (r.opts.version) {
		printf("kvmstat %s\n", KVMSTAT_VERSION);
		return 0;
	}
	resolve_vm(&r);
	r.sigfd = setup_signals();
	raise_nofile();
	stats_init(&r.stats, r.opts.include_past);

	if (r.opts.fields_help) {
		open_providers(&r, true);
		list_fields(&r);
		close_providers_fast(&r);
		stats_free(&r.stats);
		return 0;
	}

	switch (r.opts.mode) {
	case MODE_BATCH:
		r.fe.ops = &batch_frontend_ops;
		break;
	case MODE_LOG:
		r.fe.ops = &log_frontend_ops;
		break;
	case MODE_TUI:
		r.fe.ops = &tui_frontend_ops;
		break;
	}
	/* a bad -L file is a usage error before anything opens; the monitor
	 * takes the terminal only once the providers are up */
	if (r.opts.mode == MODE_TUI)
		open_providers(&r, false);
	if (r.fe.ops->open(&r.fe, &r.opts))
		usage_error(r.fe.msg);
	r.fe_open = true;
	if (r.opts.mode != MODE_TUI)
		open_providers(&r, false);

	if (r.opts.mode == MODE_BATCH)
		run_batch(&r);
	else if (r.opts.mode == MODE_LOG)
		run_log(&r);
	else
		run_tui(&r);

	r.fe.ops->close(&r.fe);
	report_notices(&r);
	close_providers_fast(&r);
	stats_free(&r.stats);
	options_free(&r.opts);
	return 0;
}
