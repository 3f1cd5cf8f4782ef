// SPDX-License-Identifier: GPL-2.0-only
/*
 * Provider benchmark: opens one provider as kvmstat would and measures the
 * CPU time (user + system) of each refresh (read + aggregate + snapshot)
 * and the file descriptors held. Prints figures; it is not a pass/fail test.
 *
 *   bench tracepoint [REGEX]           system-wide tracepoint groups
 *   bench debugfs ROOT [want_vms]      a debugfs tree (e.g. a fixture)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "errmsg.h"
#include "options.h"
#include "provider.h"
#include "snapshot.h"
#include "stats.h"
#include "util.h"

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
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
	struct provider p = { 0 };
	struct stats s;
	struct snapshot snap;
	struct snap_request req = { .vcpu = SAMPLE_ALL_VCPUS };
	int nargs = 2, iters = 2000, fds0, rc;
	double t0, t1;

	if (argc < 2) {
		fprintf(stderr,
			"usage: bench tracepoint [REGEX] | debugfs ROOT [want_vms]\n");
		return 2;
	}
	if (!strcmp(argv[1], "tracepoint") && argc > 2) {
		args[nargs++] = "-f";
		args[nargs++] = argv[2];
	}
	/* without a REGEX the monitor's field set, children left out (-l
	 * alone would count every child event, as kvm_stat's log does) */
	if (nargs == 2) {
		args[nargs++] = "-f";
		args[nargs++] = FILTER_DEFAULT;
	}
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
	p.want_vms = !strcmp(argv[1], "debugfs") && argc > 3;
	fds0 = count_fds();
	rc = p.ops->open(&p, &o);
	if (rc) {
		fprintf(stderr, "bench: open %s: %s\n", argv[1], p.msg.text);
		return 1;
	}
	t0 = cpu_seconds();
	for (int i = 0; i < iters; i++) {
		p.ops->read(&p, &s.set);
		stats_update(&s, util_now_ns());
		snapshot_build(&s, &req, &snap);
		snapshot_free(&snap);
	}
	t1 = cpu_seconds();
	printf("%-10s %-26s fields %4zu  fds %5d  cpu/refresh %7.1f us\n",
	       argv[1],
	       !strcmp(argv[1], "debugfs") ?
		       (p.want_vms ? "tree, per-VM breakdowns" :
				     "tree, totals") :
	       argc > 2 ? argv[2] :
			  "(default fields)",
	       s.fields.n, count_fds() - fds0, (t1 - t0) / iters * 1e6);
	p.ops->close(&p);
	stats_free(&s);
	options_free(&o);
	return 0;
}
