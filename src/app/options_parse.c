// SPDX-License-Identifier: GPL-2.0-only
/*
 * Command-line parsing: kvm_stat's options and meanings, plus kvmstat's
 * own. Every problem becomes one line naming the option and the fix.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown.h"
#include "errmsg.h"
#include "exporter.h"
#include "options_parse.h"
#include "util.h"

enum long_only {
	OPT_VERSION = 256,
	OPT_NO_BPF,
	OPT_QMP,
	OPT_VCPU,
	OPT_PER_VCPU,
	OPT_JSON,
	OPT_LISTEN,
	OPT_UNITS,
	OPT_WEB_CONFIG,
	OPT_LATENCY,
	OPT_RECORD,
	OPT_RECORD_KEEP,
	OPT_REPLAY,
	OPT_FROM,
	OPT_TO,
	OPT_EXPORT,
	OPT_BREAKDOWN,
	OPT_VCPU_TIME,
};

static const struct option long_options[] = {
	{ "once", no_argument, NULL, '1' },
	{ "batch", no_argument, NULL, '1' },
	{ "csv", no_argument, NULL, 'c' },
	{ "debugfs", no_argument, NULL, 'd' },
	{ "fields", required_argument, NULL, 'f' },
	{ "guest", required_argument, NULL, 'g' },
	{ "help", no_argument, NULL, 'h' },
	{ "debugfs-include-past", no_argument, NULL, 'i' },
	{ "log", no_argument, NULL, 'l' },
	{ "log-to-file", required_argument, NULL, 'L' },
	{ "pid", required_argument, NULL, 'p' },
	{ "set-delay", required_argument, NULL, 's' },
	{ "tracepoints", no_argument, NULL, 't' },
	{ "skip-zero-records", no_argument, NULL, 'z' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "no-bpf", no_argument, NULL, OPT_NO_BPF },
	{ "statsfd", no_argument, NULL, 'S' },
	{ "qmp", required_argument, NULL, OPT_QMP },
	{ "vcpu", required_argument, NULL, OPT_VCPU },
	{ "per-vcpu", no_argument, NULL, OPT_PER_VCPU },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "units", no_argument, NULL, OPT_UNITS },
	{ "web-config", required_argument, NULL, OPT_WEB_CONFIG },
	{ "latency", no_argument, NULL, OPT_LATENCY },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "record-keep", required_argument, NULL, OPT_RECORD_KEEP },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "export", required_argument, NULL, OPT_EXPORT },
	{ "breakdown", required_argument, NULL, OPT_BREAKDOWN },
	{ "vcpu-time", no_argument, NULL, OPT_VCPU_TIME },
	{ NULL, 0, NULL, 0 },
};

/*
 * kvm_stat 6.12's long options: an abbreviation that names one of these
 * alone ("--p" for --pid, "--tr" for --tracepoints) means it here too,
 * even where an option kvm_stat lacks starts the same way (--per-vcpu).
 * Where one candidate starts every other ("--deb": debugfs and
 * debugfs-include-past; "--l": log and log-to-file) it is the one meant,
 * which kvm_stat's argparse refuses as ambiguous; "--s" stays ambiguous.
 */
static const char *const kvm_stat_long[] = {
	"once",	       "batch",
	"csv",	       "debugfs",
	"fields",      "guest",
	"help",	       "debugfs-include-past",
	"log",	       "log-to-file",
	"pid",	       "set-delay",
	"tracepoints", "skip-zero-records",
	NULL,
};

/* clang-format off: the help text is laid out as it prints */
void options_usage(FILE *out)
{
	fputs("Usage: kvmstat [OPTION]...\n"
	      "Show what KVM guests make the kernel do: VM exits by reason, halts, MMU\n"
	      "activity, interrupts. A compatible successor to the kernel's kvm_stat.\n"
	      "\n"
	      "Modes (default: the interactive monitor):\n"
	      "  -1, --once, --batch        sample once over one second (or -s) and print\n"
	      "                             NAME TOTAL DELTA lines sorted by name, as\n"
	      "                             kvm_stat: the name in 42 columns, then two\n"
	      "                             integers in 10 columns each\n"
	      "      --units                with -1: after those columns, values with a\n"
	      "                             unit in it (1.23 s +300 ms 30.0%), histogram\n"
	      "                             percentiles, yes/no for booleans\n"
	      "  -l, --log                  print one line of deltas per interval (also\n"
	      "                             with -1, as kvm_stat)\n"
	      "  -L, --log-to-file FILE     like -l, appending to FILE; SIGHUP reopens it.\n"
	      "                             FILE must be a regular file (no symbolic link,\n"
	      "                             no FIFO), created with mode 0640; CSV with\n"
	      "                             another header than FILE's is refused. On a\n"
	      "                             full disk no partial line is left: the next line\n"
	      "                             that fits carries the missed deltas\n"
	      "  -c, --csv                  with -l or -L: comma-separated values\n"
	      "  -z, --skip-zero-records    with -l or -L: omit lines whose deltas are all 0\n"
	      "      --json                 with -1: one JSON document; with -l or -L: one\n"
	      "                             JSON object per interval per line (JSON Lines):\n"
	      "                             total, delta, rate, unit and type of each field,\n"
	      "                             histograms, per-VM breakdowns (a VM's field\n"
	      "                             that is 0 is left out), per vCPU with --per-vcpu\n"
	      "      --listen [ADDR:]PORT   serve the last sample at http://ADDR:PORT/metrics\n"
	      "                             in the Prometheus text format (OpenMetrics when\n"
	      "                             the scraper asks for it); ADDR defaults to\n"
	      "                             127.0.0.1. Alone, kvmstat prints nothing else\n"
	      "                             (a headless exporter); with -l/-L it also logs.\n"
	      "                             Counters are totals since each VM started where\n"
	      "                             the source knows them (as with -i), and child\n"
	      "                             events are exported as reason labels. Series of\n"
	      "                             the host and of each VM (a VM's counter or\n"
	      "                             histogram from when it first counts, then while\n"
	      "                             the VM lives); per vCPU with --per-vcpu\n"
	      "      --web-config FILE      TLS and basic auth for --listen, in the format of\n"
	      "                             Prometheus exporters: tls_server_config\n"
	      "                             (cert_file, key_file), basic_auth_users (user:\n"
	      "                             bcrypt hash)\n"
	      "\n"
	      "Recording (a flight recorder; see README, Recordings):\n"
	      "      --record FILE          also keep every refresh in FILE, an SQLite\n"
	      "                             database (WAL, one transaction per refresh,\n"
	      "                             only the values that changed; --breakdown and\n"
	      "                             --latency too, not --vcpu-time), beside any mode;\n"
	      "                             an existing recording is continued\n"
	      "      --record-keep LIMIT    with --record: drop the oldest refreshes beyond\n"
	      "                             a duration (30s, 90m, 12h, 7d) or a size (500M,\n"
	      "                             2G)\n"
	      "      --replay FILE          show the recording FILE instead of the host, in\n"
	      "                             any mode (-1, -l, -c, --json, the monitor with\n"
	      "                             Space pause, [ ] step, j jump to a time), as\n"
	      "                             the live run showed it\n"
	      "      --from TIME, --to TIME with --replay: only the refreshes in this window\n"
	      "                             (YYYY-MM-DD HH:MM[:SS], HH:MM[:SS] on the day\n"
	      "                             the recording starts, or @UNIX-SECONDS); -1\n"
	      "                             shows the deltas from the first to the last\n"
	      "      --export openmetrics   with --replay: every refresh as OpenMetrics text\n"
	      "                             with timestamps on stdout, for promtool tsdb\n"
	      "                             create-blocks-from openmetrics\n"
	      "\n"
	      "Selection:\n"
	      "  -f, --fields REGEX         fields to show: a regex as Python's (PCRE2:\n"
	      "                             (?i), \\d, (?!...)) matched at the start of the\n"
	      "                             name, as kvm_stat; a child event it keeps, such\n"
	      "                             as kvm_exit(HLT), brings in its parent. Default:\n"
	      "                             every field with -1/-l/-L, no child events in\n"
	      "                             the monitor ('x' shows them), --json and\n"
	      "                             --listen. '-f help' lists the events\n"
	      "  -p, --pid PID              only the VM of process PID\n"
	      "  -g, --guest NAME           only the VM NAME names: its name (QEMU's -name,\n"
	      "                             libvirt's, machined's, Firecracker's --id),\n"
	      "                             UUID or systemd unit (with --qmp: its QEMU\n"
	      "                             name, asked over QMP, no root needed)\n"
	      "  -s, --set-delay SECONDS    refresh interval, 0.1 to 25.5 (default 3)\n"
	      "      --vcpu N               with -p/-g: only vCPU N of that VM\n"
	      "      --per-vcpu             per-vCPU detail: with -p/-g, also one row (batch)\n"
	      "                             or column (log, CSV) per vCPU and field, named\n"
	      "                             FIELD/vcpuN, e.g. kvm_userspace_exit(HLT)/vcpu1;\n"
	      "                             with --json and --listen (any VM), also each\n"
	      "                             vCPU's values, series and histograms\n"
	      "\n"
	      "Sources (default: the tracepoints with -1/-l/-L, as kvm_stat; every one\n"
	      "this host supports in the monitor, with --json and with --listen):\n"
	      "  -t, --tracepoints          kvm:* tracepoints, counted by BPF programs (or\n"
	      "                             perf events); run as root, kvmstat mounts\n"
	      "                             tracefs where it is not mounted, and says so\n"
	      "  -S, --statsfd              KVM binary statistics (KVM_GET_STATS_FD) from the\n"
	      "                             stats fds VMMs keep open (QEMU 8.1+): exact per\n"
	      "                             VM and vCPU, with units and histograms; needs\n"
	      "                             root (CAP_SYS_PTRACE); new VMs are found within\n"
	      "                             2 s\n"
	      "  -d, --debugfs              KVM counters in debugfs (mounted by kvmstat,\n"
	      "                             as root, where it is not)\n"
	      "  -i, --debugfs-include-past totals include everything since each VM\n"
	      "                             started (debugfs, statsfd, QMP), not only since\n"
	      "                             kvmstat started\n"
	      "      --qmp PATH             read KVM statistics from QEMU's QMP unix socket\n"
	      "                             PATH (repeatable; QEMU 7.1 or later with -qmp\n"
	      "                             unix:PATH,server=on,wait=off); needs only read\n"
	      "                             and write access to the socket, not root\n"
	      "      --no-bpf               count tracepoints with perf events (one per\n"
	      "                             event and CPU, exit reasons as filtered events,\n"
	      "                             kvm_stat's way) instead of BPF programs\n"
	      "      --latency              also time exits per reason in the kernel (BPF):\n"
	      "                             kvm_exit to kvm_entry, and time in the VMM\n"
	      "                             from kvm_userspace_exit to re-entry; count,\n"
	      "                             share, min/avg/max, p50/p90/p99 after -1's\n"
	      "                             rows, in --json, and as histograms in\n"
	      "                             --listen's metrics (the monitor: key l)\n"
	      "      --breakdown LIST       also count exits per key in the kernel (BPF):\n"
	      "                             LIST of ioport (port, in/out), mmio (guest\n"
	      "                             address, read/write), msr (index, read/write),\n"
	      "                             hypercall (number; arm64: SMCCC function id),\n"
	      "                             or all (the architecture's kinds; arm64 has\n"
	      "                             mmio and hypercall); per VM and vCPU\n"
	      "                             (the exporter's vCPU series with --per-vcpu),\n"
	      "                             ports and MSRs named, MMIO addresses after\n"
	      "                             the QEMU device holding them where --qmp\n"
	      "                             reaches the VM (its memory tree); the top 16\n"
	      "                             keys of each and the rest as other, with\n"
	      "                             --latency the time to re-entry per key;\n"
	      "                             tables after -1's rows, in --json and\n"
	      "                             --listen (the monitor: key k)\n"
	      "      --vcpu-time            where each vCPU's time goes, per VM (per vCPU\n"
	      "                             too with --per-vcpu or -p): guest, kernel,\n"
	      "                             vmm, halted, waiting (for a host CPU), and the\n"
	      "                             VMM's other threads' CPU; after -1's and -l's\n"
	      "                             rows, in --json, in --listen's metrics as\n"
	      "                             kvm_vcpu_seconds_total and\n"
	      "                             kvm_vmm_thread_seconds_total (the monitor: key t)\n"
	      "\n"
	      "Other:\n"
	      "  -h, --help                 show this help\n"
	      "      --version              show the version\n"
	      "\n"
	      "Long options may be abbreviated where unambiguous; the ones kvm_stat has\n"
	      "resolve as in kvm_stat (--p is --pid, --tr is --tracepoints), and the\n"
	      "shorter of two where one starts the other (--deb is --debugfs, --l --log).\n"
	      "\n"
	      "Environment, for tests: KVMSTAT_DEBUGFS_ROOT (default /sys/kernel/debug/kvm),\n"
	      "KVMSTAT_TRACEFS_ROOT (default /sys/kernel/tracing or /sys/kernel/debug/tracing)\n"
	      "KVMSTAT_PROC_ROOT (default /proc) and KVMSTAT_RUN_ROOT (default /run: libvirt's\n"
	      "and systemd-machined's VM names) move the system directories.\n"
	      "\n"
	      "Exit status: 0 on success (also when stopped by SIGINT or SIGTERM, or when\n"
	      "the reader of its output goes away), 1 on a runtime failure, 2 on a usage\n"
	      "error.\n",
	      out);
}
/* clang-format on */

/* The option of ours spelled exactly as the n bytes of name, if any. */
static bool options_long_exact(const char *name, size_t n)
{
	for (const struct option *l = long_options; l->name; l++)
		if (strlen(l->name) == n && !strncmp(l->name, name, n))
			return true;
	return false;
}

/* Of our long options that name (n bytes) abbreviates, the one every
 * other starts with ("--vc": --vcpu, not --vcpu-time), or NULL. */
static const char *options_own_shortest(const char *name, size_t n)
{
	const char *hit = NULL;

	for (const struct option *l = long_options; l->name; l++)
		if (!strncmp(l->name, name, n) &&
		    (!hit || strlen(l->name) < strlen(hit)))
			hit = l->name;
	for (const struct option *l = long_options; hit && l->name; l++)
		if (!strncmp(l->name, name, n) &&
		    strncmp(l->name, hit, strlen(hit)))
			return NULL;
	return hit;
}

/*
 * arg ("--NAME" or "--NAME=VALUE") with NAME spelled out when it is no
 * option of ours but abbreviates exactly one of kvm_stat's (caller
 * frees); NULL when it stays as it is.
 */
static char *options_kvm_stat_spelling(const char *arg)
{
	const char *name = arg + 2, *eq = strchr(name, '='), *hit = NULL;
	size_t n = eq ? (size_t)(eq - name) : strlen(name);

	if (!n || options_long_exact(name, n))
		return NULL;
	for (size_t i = 0; kvm_stat_long[i]; i++) {
		const char *l = kvm_stat_long[i];

		if (strncmp(l, name, n))
			continue;
		/* of two that both match, one the start of the other
		 * ("debugfs", "debugfs-include-past"), the shorter is
		 * meant: --deb is --debugfs, --l --log */
		if (!hit || !strncmp(hit, l, strlen(l)))
			hit = l;
		else if (strncmp(l, hit, strlen(hit)))
			return NULL; /* ambiguous for kvm_stat too */
	}
	if (!hit)
		hit = options_own_shortest(name, n);
	return hit ? xasprintf("--%s%s", hit, eq ? eq : "") : NULL;
}

/* How many of our long options name (up to a '=') abbreviates. */
static size_t options_long_matches(const char *name)
{
	size_t n = strcspn(name, "="), hits = 0;

	if (options_long_exact(name, n))
		return 1;
	for (const struct option *l = long_options; l->name; l++)
		hits += !strncmp(l->name, name, n);
	return hits;
}

/* Whether the long option arg (maybe abbreviated, without "=VALUE")
 * takes the next argument as its value. */
static bool options_long_takes_next(const char *arg)
{
	const char *name = arg + 2;
	size_t n = strlen(name), nhits = 0;
	const struct option *hit = NULL;

	if (strchr(name, '='))
		return false;
	for (const struct option *l = long_options; l->name; l++) {
		if (strncmp(l->name, name, n))
			continue;
		if (strlen(l->name) == n)
			return l->has_arg == required_argument;
		hit = l;
		nhits++;
	}
	/* an ambiguous one is getopt_long's error */
	return nhits == 1 && hit->has_arg == required_argument;
}

/*
 * A copy of argv for getopt_long where the long options kvm_stat users
 * abbreviate are spelled out (getopt_long alone would find "--p"
 * ambiguous between --pid and --per-vcpu). Values of options are left as
 * they are.
 */
static char **options_spell_out(int argc, char **argv, struct options *o)
{
	char **out = xcalloc((size_t)argc + 1, sizeof(*out));
	bool value = false;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char *full;

		out[i] = argv[i];
		if (!i || value) {
			value = false;
			continue;
		}
		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				out[i] = argv[i];
			break;
		}
		if (!strncmp(a, "--", 2)) {
			full = options_kvm_stat_spelling(a);
			if (full) {
				o->spelled = xrealloc(o->spelled,
						      (o->nspelled +
						       1) * sizeof(*o->spelled));
				o->spelled[o->nspelled++] = full;
				out[i] = full;
			}
			value = options_long_takes_next(out[i]);
		} else if (a[0] == '-' && a[1]) {
			/* a cluster such as -1f: the value of its last
			 * option may be the next argument (the short
			 * options with a value, as in the getopt string) */
			for (const char *c = a + 1; *c; c++) {
				if (!strchr("fgLps", *c))
					continue;
				value = !c[1];
				break;
			}
		}
	}
	return out;
}

/* --record, --replay and what goes with them. */
static int options_check_recording(const struct options *o, bool once, bool log,
				   struct errmsg *msg)
{
	if (o->record && !*o->record)
		return errmsg_set(msg, -EINVAL, "--record needs a file name");
	if ((o->keep_ns || o->keep_bytes) && !o->record)
		return errmsg_set(
			msg, -EINVAL,
			"--record-keep bounds a recording: add --record FILE");
	if ((o->from || o->to || o->export_fmt) && !o->replay)
		return errmsg_set(msg, -EINVAL,
				  "%s reads a recording: add --replay FILE",
				  o->from ? "--from" :
				  o->to	  ? "--to" :
					    "--export");
	if (!o->replay)
		return 0;
	if (o->record)
		return errmsg_set(
			msg, -EINVAL,
			"--record and --replay cannot be combined: copy the file instead");
	if (o->use_debugfs || o->use_tracepoints || o->use_statsfd || o->nqmp ||
	    o->latency || o->breakdown || o->listen || o->fields_help ||
	    o->include_past)
		return errmsg_set(
			msg, -EINVAL,
			"--replay shows a recording, not the host: drop %s",
			o->use_debugfs ?
				"-d" :
			o->use_tracepoints ?
				"-t" :
			o->use_statsfd ?
				"-S" :
			o->nqmp ?
				"--qmp" :
			o->latency ?
				"--latency (it shows as recorded)" :
			o->breakdown ?
				"--breakdown (its tables show as recorded)" :
			o->listen ?
				"--listen (--export openmetrics writes the metrics)" :
			o->include_past ? "-i" :
					  "-f help");
	if (o->export_fmt && strcmp(o->export_fmt, "openmetrics"))
		return errmsg_set(msg, -EINVAL,
				  "--export knows openmetrics, not \"%s\"",
				  o->export_fmt);
	if (o->export_fmt && (once || log))
		return errmsg_set(msg, -EINVAL,
				  "--export openmetrics writes every refresh: drop %s",
				  once ? "-1" : "-l/-L");
	return 0;
}

/* Strict seconds value for -s: a plain decimal number within the range. */
static int options_parse_delay(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end)
		return -EINVAL;
	if (!(v >= DELAY_MIN - 1e-9 && v <= DELAY_MAX + 1e-9))
		return -ERANGE;
	*out = v;
	return 0;
}

/* --record-keep: a duration (s, m, h, d) or a size (K, M, G, T; bytes
 * without a suffix is refused as too easy to mistype). */
static int options_parse_keep(const char *s, struct options *o)
{
	static const struct {
		char suffix;
		uint64_t ns, bytes;
	} units[] = {
		{ 's', 1000000000ull, 0 },    { 'm', 60000000000ull, 0 },
		{ 'h', 3600000000000ull, 0 }, { 'd', 86400000000000ull, 0 },
		{ 'K', 0, 1ull << 10 },	      { 'M', 0, 1ull << 20 },
		{ 'G', 0, 1ull << 30 },	      { 'T', 0, 1ull << 40 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0) || !end[0] ||
	    (end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (units[i].suffix != end[0])
			continue;
		if (units[i].ns && end[1])
			return -EINVAL;
		if (v * (units[i].ns + units[i].bytes) > 1.8e19)
			return -ERANGE;
		o->keep_ns = (uint64_t)(v * units[i].ns);
		o->keep_bytes = (uint64_t)(v * units[i].bytes);
		return 0;
	}
	return -EINVAL;
}

static const char *options_env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

int options_parse(int argc, char **argv, struct options *o, struct errmsg *msg)
{
	bool once = false, log = false;
	long v;
	int c, rc;

	memset(o, 0, sizeof(*o));
	argv = o->argv_own = options_spell_out(argc, argv, o);
	o->delay = DELAY_DEFAULT;
	o->vcpu = -1;
	o->debugfs_root = options_env_or("KVMSTAT_DEBUGFS_ROOT",
					 DEBUGFS_KVM_DEFAULT);
	o->tracefs_root = options_env_or("KVMSTAT_TRACEFS_ROOT", NULL);
	o->proc_root = options_env_or("KVMSTAT_PROC_ROOT", "/proc");
	o->run_root = options_env_or("KVMSTAT_RUN_ROOT", "/run");

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":1cdf:g:hilL:p:s:tzS",
				long_options, NULL)) != -1) {
		switch (c) {
		case '1':
			once = true;
			break;
		case 'c':
			o->csv = true;
			break;
		case 'd':
			o->use_debugfs = true;
			break;
		case 'f':
			if (!strcmp(optarg, "help"))
				o->fields_help = true;
			else
				o->fields = optarg;
			break;
		case 'g':
			o->guest = optarg;
			break;
		case 'h':
			o->help = true;
			return 0;
		case 'i':
			o->include_past = true;
			break;
		case 'l':
			log = true;
			break;
		case 'L':
			log = true;
			o->log_file = optarg;
			break;
		case 'p':
			if (util_parse_int(optarg, 1, 0x7fffffff, &v))
				return errmsg_set(msg, -EINVAL,
						  "-p/--pid needs a process id (a positive number), not \"%s\"",
						  optarg);
			o->pid = (pid_t)v;
			break;
		case 's':
			if (options_parse_delay(optarg, &o->delay))
				return errmsg_set(msg, -EINVAL,
						  "-s/--set-delay needs seconds from %.1f to %.1f, not \"%s\"",
						  DELAY_MIN, DELAY_MAX, optarg);
			o->delay_given = true;
			break;
		case 't':
			o->use_tracepoints = true;
			break;
		case 'z':
			o->skip_zero = true;
			break;
		case 'S':
			o->use_statsfd = true;
			break;
		case OPT_VCPU:
			if (util_parse_int(optarg, 0, 0x7fffffff, &v))
				return errmsg_set(msg, -EINVAL,
						  "--vcpu needs a vCPU index (0, 1, ...), not \"%s\"",
						  optarg);
			o->vcpu = (int)v;
			break;
		case OPT_PER_VCPU:
			o->per_vcpu = true;
			break;
		case OPT_QMP:
			o->qmp_paths = xrealloc(o->qmp_paths,
						(o->nqmp + 1) *
							sizeof(*o->qmp_paths));
			o->qmp_paths[o->nqmp++] = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_WEB_CONFIG:
			o->web_config = optarg;
			break;
		case OPT_LISTEN:
			o->listen = optarg;
			break;
		case OPT_VERSION:
			o->version = true;
			return 0;
		case OPT_NO_BPF:
			o->no_bpf = true;
			break;
		case OPT_UNITS:
			o->units = true;
			break;
		case OPT_LATENCY:
			o->latency = true;
			break;
		case OPT_RECORD:
			o->record = optarg;
			break;
		case OPT_RECORD_KEEP:
			if (options_parse_keep(optarg, o))
				return errmsg_set(msg, -EINVAL,
						  "--record-keep needs a duration (30s, 90m, 12h, 7d) or a size (500M, 2G), not \"%s\"",
						  optarg);
			break;
		case OPT_REPLAY:
			o->replay = optarg;
			break;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_TO:
			o->to = optarg;
			break;
		case OPT_EXPORT:
			o->export_fmt = optarg;
			break;
		case OPT_BREAKDOWN:
			rc = breakdown_parse(optarg, &o->breakdown, msg);
			if (rc)
				return rc;
			break;
		case OPT_VCPU_TIME:
			o->vcpu_time = true;
			break;
		case ':':
			return errmsg_set(msg, -EINVAL,
					  "option %s needs a value: see kvmstat --help",
					  argv[optind - 1]);
		default:
			if (optopt && optopt < 256)
				return errmsg_set(msg, -EINVAL,
						  "unknown option -%c: see kvmstat --help",
						  optopt);
			if (!strncmp(argv[optind - 1], "--", 2) &&
			    options_long_matches(argv[optind - 1] + 2) > 1)
				return errmsg_set(msg, -EINVAL,
						  "option %s is ambiguous: spell it out (see kvmstat --help)",
						  argv[optind - 1]);
			return errmsg_set(msg, -EINVAL,
					  "unknown option %s: see kvmstat --help",
					  argv[optind - 1]);
		}
	}
	if (optind < argc)
		return errmsg_set(msg, -EINVAL,
				  "unexpected argument \"%s\": see kvmstat --help",
				  argv[optind]);
	if (o->csv && !log)
		return errmsg_set(msg, -EINVAL,
				  "-c/--csv needs a log mode: add -l or -L FILE");
	if (o->skip_zero && !log)
		return errmsg_set(
			msg, -EINVAL,
			"-z/--skip-zero-records needs a log mode: add -l or -L FILE");
	if (o->pid && o->guest)
		return errmsg_set(
			msg, -EINVAL,
			"-p/--pid and -g/--guest cannot be combined: give one");
	if (o->vcpu >= 0 && !o->pid && !o->guest)
		return errmsg_set(msg, -EINVAL,
				  "--vcpu works on one VM: add -p PID or -g NAME");
	if (o->per_vcpu && !o->pid && !o->guest && !o->json && !o->listen &&
	    !o->export_fmt)
		return errmsg_set(
			msg, -EINVAL,
			"--per-vcpu works on one VM in this mode: add -p PID or -g NAME (or use it with --json, --listen or --export)");
	if (o->json && !once && !log)
		return errmsg_set(
			msg, -EINVAL,
			"--json needs a mode: add -1 (one document) or -l/-L FILE (JSON Lines)");
	if (o->vcpu_time && o->csv)
		return errmsg_set(
			msg, -EINVAL,
			"--vcpu-time is not written as CSV: drop -c, or use --json");
	if (o->json && o->csv)
		return errmsg_set(
			msg, -EINVAL,
			"--json and -c/--csv cannot be combined: pick one format");
	if (o->json && o->vcpu >= 0)
		return errmsg_set(
			msg, -EINVAL,
			"--json has no one-vCPU view: drop --vcpu (--per-vcpu adds every vCPU)");
	if (o->listen) {
		struct exporter_addr addr;

		if (once && !log)
			return errmsg_set(
				msg, -EINVAL,
				"--listen serves metrics until stopped: it cannot be combined with -1/--once");
		if (exporter_parse_listen(o->listen, &addr, msg))
			return -EINVAL;
	}
	if (o->web_config && !o->listen)
		return errmsg_set(
			msg, -EINVAL,
			"--web-config configures the exporter: add --listen [ADDR:]PORT");
	if (o->log_file && !*o->log_file)
		return errmsg_set(msg, -EINVAL,
				  "-L/--log-to-file needs a file name");
	if (options_check_recording(o, once, log, msg))
		return -EINVAL;
	/* -l with -1 logs, as in kvm_stat */
	o->mode = o->export_fmt ? MODE_HISTORY :
		  log		? MODE_LOG :
		  once		? MODE_BATCH :
		  o->listen	? MODE_EXPORT :
				  MODE_TUI;
	if (o->units && (o->mode != MODE_BATCH || o->json))
		return errmsg_set(
			msg, -EINVAL,
			"--units works with -1 alone: the monitor and --json always show units");
	if (o->mode == MODE_BATCH && !o->delay_given)
		o->delay = 1.0;
	/* kvm_stat's habits where scripts parse the output */
	o->scripted = (o->mode == MODE_BATCH || o->mode == MODE_LOG) &&
		      !o->json && !o->listen;
	if ((o->scripted || o->fields_help) && !o->replay && !o->use_debugfs &&
	    !o->use_tracepoints && !o->use_statsfd && !o->nqmp) {
		o->use_tracepoints = true;
		o->tracepoints_implied = true;
	}
	return filter_set(&o->filter, options_fields_pattern(o), msg);
}

const char *options_fields_pattern(const struct options *o)
{
	return o->fields		     ? o->fields :
	       o->scripted || o->fields_help ? FILTER_ALL :
					       FILTER_DEFAULT;
}

void options_free(struct options *o)
{
	for (size_t i = 0; i < o->nspelled; i++)
		free(o->spelled[i]);
	free(o->spelled);
	o->spelled = NULL;
	o->nspelled = 0;
	free(o->argv_own);
	o->argv_own = NULL;
	filter_free(&o->filter);
	free(o->qmp_paths);
	o->qmp_paths = NULL;
	o->nqmp = 0;
}
