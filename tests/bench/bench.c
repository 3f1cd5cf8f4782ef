// SPDX-License-Identifier: GPL-2.0-only
/*
 * Provider benchmark: opens one provider as kvmstat would and measures the
 * CPU time (user + system) of each refresh (read + aggregate + snapshot)
 * and the file descriptors held. Prints figures; it is not a pass/fail test.
 *
 *   bench tracepoint [REGEX] [want_vms|no_bpf]   the kvm tracepoints
 *   bench debugfs ROOT [want_vms]      a debugfs tree (e.g. a fixture)
 *   bench hit                          added CPU per tracepoint hit
 *   bench mincount                     the minimal counter on every kvm
 *                                      tracepoint, until SIGTERM
 *
 * For tracepoint it also prints the time from open to the end of the
 * first read (startup) and the CPU per refresh split into its stages
 * (provider read, stats update, snapshot build).
 *
 * hit: the CPU cost a tracepoint hit gains when counted, measured as the
 * issue describes: a loop of prctl(PR_SET_NAME) (each fires
 * task:task_rename) in blocks, counted and not counted alternating in one
 * thread, thread CPU time, median over pairs. KVMSTAT_TRACEFS_ROOT names
 * a fake tracefs (run.sh builds it) whose kvm_pio and kvm_userspace_exit
 * are task_rename. Compared: the minimal raw-tracepoint counter built
 * here (mincount.bpf.c), kvmstat on a plain event, kvmstat with per-VM
 * rows, kvmstat's record program (what kvm_exit's children use), and
 * the perf fallback; then, in a block of its own, the breakdown's keyed
 * program (--breakdown, issue 23) on task_rename's raw arguments as on
 * kvm_pio's (one key per thread, a hash lookup and an add per hit), and
 * the same timing each hit (--latency: the per-thread start kept too).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "brk_engine.h"
#include "errmsg.h"
#include "options.h"
#include "provider.h"
#include "snapshot.h"
#include "stats.h"
#include "util.h"

#include "mincount.skel.h"

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define HIT_BLOCK 20000
#define HIT_PAIRS 40

/* Thread CPU ns of one block of renames. */
static double hit_block(void)
{
	double t0 = thread_ns();

	for (int i = 0; i < HIT_BLOCK; i++)
		prctl(PR_SET_NAME, i & 1 ? "bench-a" : "bench-b", 0, 0, 0);
	return thread_ns() - t0;
}

/* One way of counting task_rename: attach, detach. */
struct hit_way {
	const char *name;
	const char *regex; /* kvmstat's -f; NULL: the minimal counter */
	bool want_vms, no_bpf;
};

struct hit_state {
	struct mincount_bpf *mc;
	struct bpf_link *link;
	struct options o;
	struct provider_cfg cfg;
	struct provider p;
	struct stats s;
};

static int hit_attach(const struct hit_way *w, struct hit_state *h)
{
	char *args[8] = { "kvmstat", "-l", "-t", "-f", (char *)w->regex };
	struct errmsg err;
	int n = 5;

	if (!w->regex) {
		h->mc = mincount_bpf__open_and_load();
		if (!h->mc)
			return -1;
		h->link = bpf_program__attach_raw_tracepoint(h->mc->progs
								     .mincount,
							     "task_rename");
		return libbpf_get_error(h->link) ? -1 : 0;
	}
	if (w->no_bpf)
		args[n++] = "--no-bpf";
	if (options_parse(n, args, &h->o, &err))
		return -1;
	stats_init(&h->s, false);
	memset(&h->p, 0, sizeof(h->p));
	h->p.ops = provider_find("tracepoint");
	h->p.fields = &h->s.fields;
	h->p.filter = &h->o.filter;
	h->p.want_vms = w->want_vms;
	provider_cfg_init(&h->cfg, &h->o);
	if (h->p.ops->open(&h->p, &h->cfg)) {
		fprintf(stderr, "bench: %s: %s\n", w->name, h->p.msg.text);
		return -1;
	}
	if (errmsg_isset(&h->p.msg))
		fprintf(stderr, "bench: %s: %s\n", w->name, h->p.msg.text);
	return 0;
}

static void hit_detach(const struct hit_way *w, struct hit_state *h)
{
	if (!w->regex) {
		bpf_link__destroy(h->link);
		mincount_bpf__destroy(h->mc);
		return;
	}
	h->p.ops->close(&h->p);
	stats_free(&h->s);
	options_free(&h->o);
}

static int bench_hit_breakdown(void);

static int bench_hit(void)
{
	static const struct hit_way ways[] = {
		{ "minimal raw-tracepoint counter", NULL, false, false },
		{ "kvmstat, plain event", "^kvm_pio$", false, false },
		{ "kvmstat, plain event, per-VM rows", "^kvm_pio$", true,
		  false },
		{ "kvmstat, record program (children)",
		  "^kvm_userspace_exit\\(", false, false },
		{ "kvmstat --no-bpf, plain event (perf)", "^kvm_pio$", false,
		  true },
	};
	double added[ARRAY_SIZE(ways)], v[HIT_PAIRS];

	printf("== added CPU per tracepoint hit (prctl loop, %d renames per block, median of %d pairs)\n",
	       HIT_BLOCK, HIT_PAIRS);
	for (size_t w = 0; w < ARRAY_SIZE(ways); w++) {
		for (int i = 0; i < HIT_PAIRS; i++) {
			struct hit_state h;
			double off = hit_block(), on;

			if (hit_attach(&ways[w], &h))
				return 1;
			on = hit_block();
			hit_detach(&ways[w], &h);
			off = (off + hit_block()) / 2;
			v[i] = (on - off) / HIT_BLOCK;
		}
		added[w] = median(v, HIT_PAIRS);
		printf("%-42s %7.1f ns/hit  %5.2fx the minimal counter\n",
		       ways[w].name, added[w], added[w] / added[0]);
	}
	return bench_hit_breakdown();
}

/*
 * The breakdown's keyed program per hit (issue 23: at most 1.3x the
 * minimal counter): its engine attached by itself to task_rename, raw, as
 * it attaches to kvm_pio, untimed and timed, against the minimal counter
 * in the same pairs.
 */
static int bench_hit_breakdown(void)
{
	static const char *const names[] = {
		"minimal raw-tracepoint counter",
		"breakdown keyed program (--breakdown)",
		"breakdown keyed program, timed (+--latency)",
	};
	double added[ARRAY_SIZE(names)], v[HIT_PAIRS];

	printf("== breakdown: added CPU per hit of its keyed program (prctl loop, median of %d pairs)\n",
	       HIT_PAIRS);
	for (size_t w = 0; w < ARRAY_SIZE(names); w++) {
		for (int i = 0; i < HIT_PAIRS; i++) {
			struct brk_engine_cfg cfg = { .timed = w == 2 };
			struct hit_state h = { 0 };
			struct brk_engine *e = NULL;
			double off = hit_block(), on;
			const char *what;
			int err;

			for (int k = 0; k < BRK_NKINDS; k++)
				cfg.src[k] = (struct brk_source){ .id = -1 };
			cfg.src[BRK_IOPORT].raw = "task_rename";
			if (!w && hit_attach(&(struct hit_way){ 0 }, &h))
				return 1;
			if (w) {
				e = brk_engine_open(&cfg, &err, &what);
				if (!e) {
					fprintf(stderr,
						"bench: breakdown: %s: %s\n",
						what, strerror(-err));
					return 1;
				}
			}
			on = hit_block();
			if (w)
				brk_engine_free(e);
			else
				hit_detach(&(struct hit_way){ 0 }, &h);
			off = (off + hit_block()) / 2;
			v[i] = (on - off) / HIT_BLOCK;
		}
		added[w] = median(v, HIT_PAIRS);
		printf("%-46s %7.1f ns/hit  %5.2fx the minimal counter\n",
		       names[w], added[w], added[w] / added[0]);
	}
	return 0;
}

static volatile sig_atomic_t stop_now;

static void on_term(int sig)
{
	(void)sig;
	stop_now = 1;
}

/* The minimal counter on every kvm tracepoint, until SIGTERM. */
static int bench_mincount(void)
{
	struct mincount_bpf *mc = mincount_bpf__open_and_load();
	struct dirent *de;
	DIR *d = opendir("/sys/kernel/tracing/events/kvm");
	int n = 0;

	if (!mc || !d) {
		fprintf(stderr, "bench: mincount: cannot load or no tracefs\n");
		return 1;
	}
	while ((de = readdir(d))) {
		struct bpf_link *l;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		l = bpf_program__attach_raw_tracepoint(mc->progs.mincount,
						       de->d_name);
		n += !libbpf_get_error(l);
	}
	closedir(d);
	signal(SIGTERM, on_term);
	fprintf(stderr, "mincount: %d tracepoints\n", n);
	while (!stop_now)
		pause();
	mincount_bpf__destroy(mc);
	return 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n - 1; /* the directory itself */
}

int main(int argc, char **argv)
{
	char *args[8] = { "kvmstat", "-l" };
	struct errmsg err;
	struct options o;
	struct provider_cfg cfg;
	struct provider p = { 0 };
	struct stats s;
	struct snapshot snap;
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS };
	int nargs = 2, iters = 2000, fds0, rc;
	double t0, t1, w0, startup, ph[3] = { 0 };
	bool tp;

	if (argc < 2) {
		fprintf(stderr,
			"usage: bench tracepoint [REGEX] [want_vms|no_bpf] | debugfs ROOT [want_vms] | hit | mincount\n");
		return 2;
	}
	if (!strcmp(argv[1], "hit"))
		return bench_hit();
	if (!strcmp(argv[1], "mincount"))
		return bench_mincount();
	tp = !strcmp(argv[1], "tracepoint");
	if (tp && argc > 2) {
		args[nargs++] = "-f";
		args[nargs++] = argv[2];
	}
	/* without a REGEX the monitor's field set, children left out (-l
	 * alone would count every child event, as kvm_stat's log does) */
	if (nargs == 2) {
		args[nargs++] = "-f";
		args[nargs++] = FILTER_DEFAULT;
	}
	if (tp && argc > 3 && !strcmp(argv[3], "no_bpf"))
		args[nargs++] = "--no-bpf";
	/* the root is an environment setting only, as for kvmstat */
	if (!strcmp(argv[1], "debugfs") && argc > 2)
		setenv("KVMSTAT_DEBUGFS_ROOT", argv[2], 1);
	if (options_parse(nargs, args, &o, &err)) {
		fprintf(stderr, "bench: %s\n", err.text);
		return 2;
	}
	p.ops = provider_find(argv[1]);
	if (!p.ops) {
		fprintf(stderr, "bench: no provider %s\n", argv[1]);
		return 2;
	}
	{
		struct rlimit rl;

		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	stats_init(&s, false);
	req.filter = &o.filter;
	p.fields = &s.fields;
	p.filter = &o.filter;
	p.want_vms = argc > 3 && !strcmp(argv[3], "want_vms");
	fds0 = count_fds();
	w0 = wall_ns();
	provider_cfg_init(&cfg, &o);
	rc = p.ops->open(&p, &cfg);
	if (rc) {
		fprintf(stderr, "bench: open %s: %s\n", argv[1], p.msg.text);
		return 1;
	}
	p.ops->read(&p, &s.set);
	startup = (wall_ns() - w0) / 1e6;
	t0 = cpu_seconds();
	for (int i = 0; i < iters; i++) {
		double a = thread_ns(), b, c;

		p.ops->read(&p, &s.set);
		b = thread_ns();
		stats_update(&s, util_now_ns());
		c = thread_ns();
		snapshot_build(&s, &req, &snap);
		snapshot_free(&snap);
		ph[0] += b - a;
		ph[1] += c - b;
		ph[2] += thread_ns() - c;
	}
	t1 = cpu_seconds();
	printf("%-10s %-30s fields %4zu  fds %5d  cpu/refresh %7.1f us",
	       argv[1],
	       !strcmp(argv[1], "debugfs") ?
		       (p.want_vms ? "tree, per-VM breakdowns" :
				     "tree, totals") :
	       argc > 3 ? argv[3] :
	       argc > 2 ? argv[2] :
			  "(default fields)",
	       s.fields.n, count_fds() - fds0, (t1 - t0) / iters * 1e6);
	if (tp)
		printf(" (read %.1f, stats %.1f, snapshot %.1f)  startup %.1f ms",
		       ph[0] / iters / 1e3, ph[1] / iters / 1e3,
		       ph[2] / iters / 1e3, startup);
	printf("\n");
	p.ops->close(&p);
	stats_free(&s);
	options_free(&o);
	return 0;
}
