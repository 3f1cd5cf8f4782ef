// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmstat: options, then open the providers, then one loop: sample,
 * aggregate, render a const snapshot, poll() on a timer and on signals.
 * Only this file and the front-ends print or exit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exporter.h"
#include "frontend.h"
#include "fs.h"
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
	struct field_filter pfilter[8];	/* each provider's view of -f */
	size_t nprovs;
	struct frontend fe;
	bool fe_open;
	int sigfd;
	bool want_vms;			/* the per-guest view is shown */
	struct ui_name *names;		/* guest names of the VMs seen */
	size_t nnames;
	char providers[128];		/* names of the open providers */
	char *fields;			/* -f set in the monitor, owned */
	struct exporter *exp;		/* --listen, or NULL */
	struct served_set served;	/* (field, VM) read so far this refresh */
	bool reopening;			/* the monitor changed a setting */
	char guest[128];		/* a guest chosen in the monitor */
	char skipped[1024];		/* providers it had to leave out */
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
	if (fs_read_at(AT_FDCWD, "/proc/sys/fs/nr_open", buf, sizeof(buf)) > 0 &&
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

/* Whether the options name this provider (-t, -d, -S, --qmp). */
static bool provider_asked(const struct options *o, const char *name)
{
	return (o->use_tracepoints && !strcmp(name, "tracepoint")) ||
	       (o->use_debugfs && !strcmp(name, "debugfs")) ||
	       (o->use_statsfd && !strcmp(name, "statsfd")) ||
	       (o->nqmp && !strcmp(name, "qmp"));
}

/*
 * Opens the providers asked for (-t/-d/-S/--qmp) or every one the host
 * supports. One asked for that cannot serve the VM chosen (by the monitor,
 * or by -p/-g with other providers asked too: "-d -S -p PID" for a VM
 * without stats fds) is left out and said, rather than fatal, as long as
 * another one opens.
 */
static void open_providers(struct run *r, bool all_fields)
{
	const struct options *o = &r->opts;
	bool explicit = o->use_tracepoints || o->use_debugfs ||
			o->use_statsfd || o->nqmp;
	int nasked = o->use_tracepoints + o->use_debugfs + o->use_statsfd +
		     (o->nqmp > 0);
	bool lenient = explicit && (r->reopening || (o->pid && nasked > 1));
	char why[2048] = "";

	for (size_t i = 0; provider_registry[i]; i++) {
		const struct provider_ops *ops = provider_registry[i];
		struct provider *p;
		int rc;

		if (explicit && !provider_asked(o, ops->name))
			continue;
		if (!explicit && ops->probe && !ops->probe(o))
			continue;
		if (r->nprovs == ARRAY_SIZE(r->provs))
			break;
		p = &r->provs[r->nprovs];
		memset(p, 0, sizeof(*p));
		p->ops = ops;
		p->fields = &r->stats.fields;
		/* -f, minus the names an earlier provider counts already */
		r->pfilter[r->nprovs] = o->filter;
		r->pfilter[r->nprovs].claimed = &r->stats.fields;
		r->pfilter[r->nprovs].owner = ops->name;
		if (all_fields)
			r->pfilter[r->nprovs].compiled = false;
		p->filter = &r->pfilter[r->nprovs];
		p->want_vms = o->pid != 0 || r->want_vms;
		rc = ops->open(p, o);
		if (rc && lenient) {
			size_t len = strlen(r->skipped);

			snprintf(r->skipped + len, sizeof(r->skipped) - len,
				 "%s%s provider left out: %s", len ? "; " : "",
				 ops->name,
				 p->msg[0] ? p->msg : strerror(-rc));
		}
		if (rc) {
			if (explicit && !lenient)
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
	r->providers[0] = '\0';
	for (size_t i = 0; i < r->nprovs; i++)
		snprintf(r->providers + strlen(r->providers),
			 sizeof(r->providers) - strlen(r->providers), "%s%s",
			 i ? " " : "", r->provs[i].ops->name);
	r->fe.providers = r->providers;
}

/* Says which providers were left out, once. */
static void say_skipped(struct run *r)
{
	if (r->skipped[0])
		fprintf(stderr, "kvmstat: %s\n", r->skipped);
	r->skipped[0] = '\0';
}

static void close_providers(struct run *r)
{
	for (size_t i = 0; i < r->nprovs; i++)
		r->provs[i].ops->close(&r->provs[i]);
	r->nprovs = 0;
}

/* In the closing grandchild: drop every descriptor but perf events, BPF
 * objects and the pipe, so no socket, log file or terminal outlives us. */
static void keep_only_perf_fds(int pipe_fd)
{
	char link[64], path[64];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int dfd = d ? dirfd(d) : -1;

	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);
		ssize_t n;

		if (de->d_name[0] == '.' || fd == pipe_fd || fd == dfd)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:[perf_event]") &&
		    strncmp(link, "anon_inode:bpf", 14))
			close(fd);
	}
	if (d)
		closedir(d);
}

/*
 * Releasing the last perf event of a tracepoint waits for an RCU grace
 * period, under a kernel mutex: closing a hundred tracepoints takes
 * seconds. So the last references go to a detached grandchild: it holds a
 * copy of every descriptor until this process has closed its own (fast,
 * as they are not the last), then exits, with nothing of the terminal or
 * of the output pipe open, and pays the wait out of everyone's way.
 */
static void close_providers_fast(struct run *r)
{
	int pfd[2], null;
	pid_t pid;
	char c;

	bool perf = false;

	/* only the tracepoint provider holds perf events (and BPF objects) */
	for (size_t i = 0; i < r->nprovs; i++)
		perf |= !strcmp(r->provs[i].ops->name, "tracepoint");
	if (!perf || pipe2(pfd, O_CLOEXEC)) {
		close_providers(r);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		keep_only_perf_fds(pfd[0]);
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
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close_providers(r);
	close(pfd[1]);
}

/* Adds the (field, VM) pairs of set->v[from..] to what was served. */
static void note_served(struct run *r, size_t from)
{
	const struct sample_set *set = &r->stats.set;

	for (size_t i = from; i < set->n; i++) {
		const struct sample *x = &set->v[i];

		if (x->pid && x->vcpu == SAMPLE_ALL_VCPUS)
			served_add(&r->served, x->field, x->pid);
	}
	served_sort(&r->served);
}

/* One refresh: every provider reads, each told which VMs' fields the ones
 * before it served, then the stats layer folds it all in. */
static void sample_all(struct run *r)
{
	r->served.n = 0;
	for (size_t i = 0; i < r->nprovs; i++) {
		struct provider *p = &r->provs[i];
		size_t from = r->stats.set.n;

		p->served = r->served.v;
		p->nserved = r->served.n;
		r->stats.set.src = p->ops->name;
		if (p->ops->read(p, &r->stats.set) && p->msg[0])
			p->notice = true;
		note_served(r, from);
	}
	r->stats.set.src = NULL;
	stats_update(&r->stats, util_now_ns());
	if (r->opts.mode != MODE_TUI)
		report_notices(r);
}

/* The rows the options ask for: everything, one vCPU, or per vCPU. */
static void take_snapshot(struct run *r, struct snapshot *snap)
{
	struct snap_scope scope = { .pid = 0, .vcpu = SAMPLE_ALL_VCPUS };
	/* the exporter has the providers count child events for its reason
	 * labels; the text and JSON output show what -f alone keeps */
	struct field_filter shown = r->opts.filter;

	if (r->exp)
		shown.children = false;
	if (r->opts.vcpu >= 0) {
		scope.pid = r->opts.pid;
		scope.vcpu = r->opts.vcpu;
	} else if (r->opts.per_vcpu) {
		scope.pid = r->opts.pid;
		scope.per_vcpu = true;
	}
	stats_snapshot_scope(&r->stats, &shown, &scope, snap);
}

/* --vcpu N must name a vCPU the providers know for the VM (after the
 * first sample); otherwise a usage error listing the ones that exist. */
static void check_vcpu(struct run *r)
{
	char list[256] = "";
	int *v;
	size_t n;

	if (r->opts.vcpu < 0)
		return;
	n = stats_vcpus_of(&r->stats, r->opts.pid, &v);
	if (!n) {
		/* nothing counted yet: the VM's named threads tell */
		struct vm_info vi = { .pid = r->opts.pid };

		vm_load_vcpus(r->opts.proc_root, &vi);
		if (!vi.nvcpus)
			vm_load_vcpus_debugfs(r->opts.debugfs_root, &vi);
		v = xcalloc(vi.nvcpus + 1, sizeof(*v));
		for (size_t i = 0; i < vi.nvcpus; i++)
			v[n++] = vi.vcpus[i].index;
		vm_info_clear(&vi);
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i] == r->opts.vcpu) {
			free(v);
			return;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%d", i ? " " : "", v[i]);
	}
	free(v);
	util_run_fatal_hook();
	fprintf(stderr, "kvmstat: VM %d has no vCPU %d (%s%s)\n", r->opts.pid,
		r->opts.vcpu, n ? "its vCPUs: " : "no vCPU is known: ",
		n ? list : "name its threads or use debugfs");
	exit(EXIT_USAGE);
}

/* Guest names for every VM the stats know, looked up once per pid. */
static void update_names(struct run *r)
{
	const struct stats *s = &r->stats;

	for (size_t i = 0; i < s->nkeys; i++) {
		pid_t pid = s->keys[i].pid;
		bool known = false;

		if (!pid)
			continue;
		for (size_t j = 0; j < r->nnames && !known; j++)
			known = r->names[j].pid == pid;
		if (known)
			continue;
		r->names = xrealloc(r->names, (r->nnames + 1) *
				    sizeof(*r->names));
		r->names[r->nnames].pid = pid;
		r->names[r->nnames].name = vm_guest_name(r->opts.proc_root,
							 pid);
		r->nnames++;
	}
	r->fe.names = r->names;
	r->fe.nnames = r->nnames;
}

/* --listen: the whole selection, every field -f keeps with its child
 * events, rendered here and handed to the HTTP server. */
static void publish(struct run *r)
{
	struct snapshot snap;

	if (!r->exp)
		return;
	update_names(r);
	stats_snapshot(&r->stats, &r->opts.filter, &snap);
	exporter_publish(r->exp, &snap, r->names, r->nnames);
	snapshot_free(&snap);
}

static int render(struct run *r)
{
	struct snapshot snap;
	int rc;

	publish(r);
	if (!r->fe.ops)
		return 0;
	if (r->want_vms)
		update_names(r);
	take_snapshot(r, &snap);
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

	/* a shell starts background jobs with SIGINT ignored, and an ignored
	 * signal never reaches a signalfd: take the default action back
	 * (the signals are blocked right after, so they only queue) */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
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
	int in_fd = r->fe.ops && r->fe.ops->input_fd ?
		    r->fe.ops->input_fd(&r->fe) : -1;

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
				if (r->fe.ops && r->fe.ops->reopen &&
				    r->fe.ops->reopen(&r->fe) < 0)
					fprintf(stderr, "kvmstat: %s\n",
						r->fe.msg);
				continue;
			}
			return WAIT_STOP;
		}
		/* the terminal went away (its window closed): end, do not
		 * spin on a descriptor that is always ready */
		if (in_fd >= 0 && (pfd[1].revents & (POLLHUP | POLLERR | POLLNVAL)))
			return WAIT_STOP;
		if (in_fd >= 0 && (pfd[1].revents & POLLIN)) {
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
	check_vcpu(r);
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
	check_vcpu(r);
	/* scrapes get the first sample at once, not after a delay */
	publish(r);
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

/* Providers again after the monitor changed what they must count; the
 * counts restart from zero, as in kvm_stat. */
static void reopen_providers(struct run *r)
{
	close_providers_fast(r);
	stats_free(&r->stats);
	stats_init(&r->stats, r->opts.include_past);
	r->skipped[0] = '\0';
	r->reopening = true;
	open_providers(r, false);
	r->reopening = false;
	sample_all(r);
}

/* Carries out what a key asked for; false to quit. */
static bool handle_request(struct run *r, const struct ui_request *req)
{
	struct options *o = &r->opts;
	char err[256];

	switch (req->action) {
	case UI_QUIT:
		return false;
	case UI_RESET:
		stats_reset(&r->stats);
		break;
	case UI_SET_DELAY:
		o->delay = req->delay;
		break;
	case UI_CLEAR:
		o->pid = 0;
		o->guest = NULL;
		/* fall through */
	case UI_SET_FILTER:
		free(r->fields);
		r->fields = req->action == UI_SET_FILTER && req->filter[0] ?
			xstrdup(req->filter) : NULL;
		o->fields = r->fields;
		if (filter_set(&o->filter, o->fields ? o->fields :
			       FILTER_DEFAULT, err, sizeof(err)))
			break;
		reopen_providers(r);
		break;
	case UI_SET_PID:
		o->pid = req->pid;
		snprintf(r->guest, sizeof(r->guest), "%s", req->guest);
		o->guest = r->guest[0] ? r->guest : NULL;
		reopen_providers(r);
		break;
	case UI_SET_CHILDREN:
		o->filter.children = req->on;
		reopen_providers(r);
		break;
	case UI_SET_VMS:
		r->want_vms = req->on;
		reopen_providers(r);
		break;
	case UI_REFRESH:
	case UI_NONE:
		break;
	}
	return true;
}

/* The monitor: the first screen at once, the next after 0.25 s, then
 * every delay; keys may ask for a refresh, a reset, other settings or the
 * end. */
static void run_tui(struct run *r)
{
	uint64_t deadline;
	enum ui_action act;

	sample_all(r);
	check_vcpu(r);
	render(r);
	deadline = util_now_ns() + 250000000ull;
	for (;;) {
		switch (wait_until(r, deadline, &act)) {
		case WAIT_STOP:
			return;
		case WAIT_INPUT:
			if (!handle_request(r, &r->fe.req))
				return;
			if (act != UI_REFRESH && act != UI_RESET) {
				render(r);
				if (act != UI_SET_DELAY)
					deadline = util_now_ns() + 250000000ull;
				else
					deadline = util_now_ns() + delay_ns(r);
				continue;
			}
			if (act == UI_RESET) {
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
		/* QMP alone needs no root: its provider matches sockets to
		 * the pid by their peer, and /proc/PID/fd may be unreadable */
		bool qmp_only = r->opts.nqmp && !r->opts.use_tracepoints &&
				!r->opts.use_debugfs && !r->opts.use_statsfd;

		if (vm_resolve_pid(r->opts.proc_root, r->opts.pid, err,
				   sizeof(err)) && !qmp_only)
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
	if (r.opts.listen) {
		/* counters a scraper can rate(): totals since each VM started
		 * where the source knows them; child events as reasons */
		r.opts.include_past = true;
		r.opts.filter.children = true;
	}
	/* JSON and metrics carry the per-VM and per-vCPU breakdowns */
	if (r.opts.json || r.opts.listen)
		r.want_vms = true;
	stats_init(&r.stats, r.opts.include_past);

	if (r.opts.fields_help) {
		open_providers(&r, true);
		list_fields(&r);
		close_providers_fast(&r);
		stats_free(&r.stats);
		served_free(&r.served);
		return 0;
	}

	switch (r.opts.mode) {
	case MODE_BATCH:
		r.fe.ops = r.opts.json ? &json_frontend_ops :
					 &batch_frontend_ops;
		break;
	case MODE_LOG:
		r.fe.ops = r.opts.json ? &json_frontend_ops : &log_frontend_ops;
		break;
	case MODE_TUI:
		r.fe.ops = &tui_frontend_ops;
		break;
	case MODE_EXPORT:
		r.fe.ops = NULL;	/* headless: metrics only */
		break;
	}
	/* a bad -L file is a usage error before anything opens; the monitor
	 * takes the terminal only once the providers are up */
	if (r.opts.mode == MODE_TUI)
		open_providers(&r, false);
	if (r.fe.ops && r.fe.ops->open(&r.fe, &r.opts))
		usage_error(r.fe.msg);
	r.fe_open = r.fe.ops != NULL;
	if (r.opts.listen) {
		struct exporter_addr addr;

		if (exporter_parse_listen(r.opts.listen, &addr, err,
					  sizeof(err)))
			usage_error(err);
		/* after setup_signals: the server's thread inherits the
		 * blocked signals, so they all reach the signalfd */
		r.exp = exporter_start(&addr, err, sizeof(err));
		if (!r.exp)
			util_die("%s", err);
	}
	if (r.opts.mode != MODE_TUI) {
		open_providers(&r, false);
		say_skipped(&r);	/* before any output */
	}

	if (r.opts.mode == MODE_BATCH)
		run_batch(&r);
	else if (r.opts.mode == MODE_LOG || r.opts.mode == MODE_EXPORT)
		run_log(&r);
	else
		run_tui(&r);

	exporter_stop(r.exp);
	if (r.fe_open)
		r.fe.ops->close(&r.fe);
	report_notices(&r);
	say_skipped(&r);	/* the monitor's, after its screen */
	close_providers_fast(&r);
	for (size_t i = 0; i < r.nnames; i++)
		free(r.names[i].name);
	free(r.names);
	free(r.fields);
	stats_free(&r.stats);
	served_free(&r.served);
	options_free(&r.opts);
	return 0;
}
