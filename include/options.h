/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command-line options, kvm_stat compatible: the plain types every layer
 * may read (the run's mode, struct options, the limits). The parser that
 * fills them is above, in the program (options_parse.h).
 */
#ifndef KVMSTAT_OPTIONS_H
#define KVMSTAT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "filter.h"

enum run_mode {
	MODE_TUI,     /* default: interactive monitor */
	MODE_BATCH,   /* -1: one sample, then exit */
	MODE_LOG,     /* -l or -L: one line per interval */
	MODE_EXPORT,  /* --listen alone: serve metrics, print nothing */
	MODE_HISTORY, /* --replay --export: the recording as metrics with
		       * timestamps on stdout */
};

struct options {
	enum run_mode mode;
	bool csv;		  /* -c: log lines as CSV */
	bool json;		  /* --json: a JSON document (-1) or
					 * JSON Lines (-l/-L) */
	const char *listen;	  /* --listen [ADDR:]PORT, or NULL */
	const char *web_config;	  /* --web-config FILE (TLS, basic auth) */
	bool use_debugfs;	  /* -d given */
	bool use_tracepoints;	  /* -t given, or implied (below) */
	bool tracepoints_implied; /* -1/-l/-L without a source: the
				   * tracepoints alone, as kvm_stat */
	bool scripted;		  /* -1, -l or -L without --json or --listen:
				 * kvm_stat's sources, fields and columns */
	bool units;		  /* --units: batch lines also show units,
				 * percentiles and yes/no */
	bool use_statsfd;	  /* -S/--statsfd given */
	const char **qmp_paths;	  /* --qmp PATH, repeatable */
	size_t nqmp;
	const char *fields;	    /* -f pattern, NULL for the default
				     * (FILTER_ALL when scripted, else
				     * FILTER_DEFAULT) */
	bool fields_help;	    /* -f help */
	struct field_filter filter; /* compiled -f or FILTER_DEFAULT */
	bool children;		    /* the providers also count NAME(...)
					 * of the events -f keeps (the
					 * monitor's 'x', or a front-end that
					 * shows reasons) */
	pid_t pid;		    /* -p, or resolved from -g; 0 = all */
	int vcpu;		    /* --vcpu N, or -1 */
	bool per_vcpu;		    /* --per-vcpu */
	const char *guest;	    /* -g */
	bool include_past;	    /* -i */
	const char *log_file;	    /* -L */
	double delay;		    /* -s, seconds */
	bool delay_given;
	bool skip_zero;		/* -z */
	bool no_bpf;		/* --no-bpf */
	bool latency;		/* --latency: exit latency per reason */
	const char *record;	/* --record FILE: every refresh into FILE */
	uint64_t keep_ns;	/* --record-keep DURATION, or 0 */
	uint64_t keep_bytes;	/* --record-keep SIZE, or 0 */
	const char *replay;	/* --replay FILE: a recording, not the host */
	const char *from, *to;	/* --from/--to TIME: the replay's window */
	const char *export_fmt; /* --export FORMAT (openmetrics) */
	unsigned breakdown;	/* --breakdown: 1 << kind (brk_shared.h) */
	bool vcpu_time;		/* --vcpu-time: where each vCPU's time goes */
	bool help, version;
	char **argv_own; /* argv with kvm_stat's abbreviations spelled out */
	char **spelled;	 /* the strings spelled out, owned */
	size_t nspelled;
	/* Roots, injectable for tests (KVMSTAT_* environment only). */
	const char *debugfs_root; /* the kvm directory of debugfs */
	const char *tracefs_root; /* NULL: look in the usual places */
	const char *proc_root;
	const char *run_root; /* /run: libvirt's and machined's state */
	/* QMP timing in ms, shortened by tests; 0 takes the defaults in
	 * qmp_client.h (a reply 1000, a retry of a failed socket 3000). */
	unsigned int qmp_reply_timeout_ms;
	unsigned int qmp_retry_ms;
};

#define DELAY_MIN 0.1
#define DELAY_MAX 25.5
#define DELAY_DEFAULT 3.0
#define DEBUGFS_KVM_DEFAULT "/sys/kernel/debug/kvm"

/* Exit status for every usage error, as the issue and kvm_stat scripts expect. */
#define EXIT_USAGE 2

#endif
