/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The run: the front-ends the options select, the providers, and one
 * loop that samples, aggregates, renders a snapshot to every open
 * front-end and waits on a timer, the signals and the monitor's input.
 * It names no provider and no front-end: their registries and views say
 * what opens and what each snapshot holds. It prints nothing and never
 * exits: failures come back as -errno with a line in loop.msg (errmsg.h),
 * and what the user should read along the way goes to loop.say.
 */
#ifndef KVMSTAT_LOOP_H
#define KVMSTAT_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"
#include "filter.h"
#include "frontend.h"
#include "options.h"
#include "provider.h"
#include "snapshot.h"
#include "stats.h"

struct vtscan;
#include "vmdir.h"

struct recorder;
struct replay;

#define LOOP_MAX_PROVIDERS 8
#define LOOP_MAX_FRONTENDS 4
#define LOOP_MAX_NOTES 16

/* A line about a source (a snap_note), kept by the loop: said once on
 * stderr where no front-end owns the terminal, else shown on screen and
 * said after the monitor ends. */
struct loop_note {
	const char *source;		/* whose: a provider's name, or
					 * "latency" */
	const struct provider_ops *ops; /* the provider's, or NULL */
	bool failed;  /* could not start: kept until it does (the monitor
		      * tries again) */
	bool quiet;   /* shown on screen, never said (a notice of a
		      * provider not asked for) */
	bool said;    /* said on stderr already */
	bool reading; /* a failure of an open provider's read: kept until
		       * a read goes well */
	bool stale;   /* a failure not seen again yet by a reopening */
	struct errmsg text;
};

/* What the monitor changes as the run goes on; the options stay as
 * parsed. The loop owns it and tells the providers (provider_cfg) and the
 * front-ends (the snapshot's header facts) what they need of it. */
struct loop_run {
	pid_t pid;		    /* the VM watched (-p, -g, p, g); 0: all */
	const char *guest;	    /* its guest name when chosen by name */
	const char *fields;	    /* -f or the monitor's f, or NULL */
	struct field_filter filter; /* fields, compiled */
	bool children;		    /* the providers count child events */
	double delay;		    /* seconds between refreshes */
	bool include_past;	    /* totals since each VM started */
};

struct loop {
	const struct options *opts;   /* the caller's, as parsed */
	struct loop_run run;	      /* what the monitor changes */
	struct provider_cfg pcfg;     /* what the providers are told */
	void (*say)(const char *msg); /* a line for the user, or NULL */
	struct stats stats;
	struct provider provs[LOOP_MAX_PROVIDERS];
	size_t nprovs;
	struct frontend fes[LOOP_MAX_FRONTENDS]; /* the selected ones */
	bool fe_open[LOOP_MAX_FRONTENDS];
	/* each front-end's snapshot, rebuilt into the same arrays every
	 * refresh (snapshot_rebuild) */
	struct snapshot fe_snap[LOOP_MAX_FRONTENDS];
	size_t nfes;
	struct frontend_view need; /* what they need together */
	bool children;		   /* child events where no front-end
					 * asks for them (the monitor's 'x') */
	int sigfd;
	bool want_vms;	     /* the per-guest view is shown */
	struct vmdir vms;    /* the VMs of this refresh (vmdir.h) */
	bool list_vms;	     /* every running VM too (a monitor's
			       * prompt asks for a pid or a guest) */
	char providers[128]; /* names of the open providers */
	char *fields;	     /* -f set in the monitor, owned */
	bool reopening;	     /* the monitor changed a setting */
	char guest[128];     /* a guest chosen in the monitor */
	struct loop_note notes[LOOP_MAX_NOTES]; /* about the sources */
	size_t nnotes;
	unsigned notes_gen; /* changes when a note is added */
	struct snap_note snap_notes[LOOP_MAX_NOTES]; /* what snapshots
						       * show of them */
	uint64_t retry_ns;     /* the monitor tries failed sources then */
	bool no_match;	       /* a provider -f left without a field */
	struct errmsg msg;     /* why the last action failed */
	bool usage;	       /* ... and it is a usage error */
	struct latency *lat;   /* exit latency, when asked for */
	bool lat_on;	       /* asked for (--latency, the monitor) */
	struct errmsg lat_msg; /* why it could not start */
	struct recorder *rec;  /* --record, until it stops; or NULL */
	size_t rec_keys;       /* the stats' keys whose VMs it named */
	bool vms_scanned;      /* vms is this refresh's already (the
				* recorder looked them up) */
	struct replay *replay; /* --replay: the recording, in place of the
				* providers; or NULL */
	bool replay_paused;    /* the monitor's Space */
	char replay_at[128];   /* the header's line about the replay */
	struct breakdown *brk; /* breakdowns, when asked for */
	unsigned brk_kinds;    /* the kinds asked (--breakdown, 'k') */
	struct errmsg brk_msg; /* why they could not start */
	struct snap_breakdown brk_off; /* what snapshots show then */
	struct vtscan *vt; /* where vCPU time goes, when asked for */
};

/*
 * Builds the run: checks -p/-g against the system, blocks the signals,
 * picks the front-ends and folds their needs into opts, then opens the
 * front-ends and providers in the order that keeps usage errors first
 * and the terminal free until the providers are up (none with -f help:
 * see loop_list_fields). opts must outlive the loop. 0, or -errno with
 * l->msg and l->usage set; after a failure only exiting is left.
 */
int loop_open(struct loop *l, const struct options *opts,
	      void (*say)(const char *msg));
/* Runs until the end the front-ends' pace sets, a stop signal or the
 * monitor's quit. 0 (also when the reader went away), or -errno with
 * l->msg and l->usage set. */
int loop_run(struct loop *l);
/* -f help: opens the providers for every field, samples once and fills
 * snap with every field seen (caller frees it before loop_close). 0, or
 * -errno with l->msg. */
int loop_list_fields(struct loop *l, struct snapshot *snap);
/* Closes the front-ends (then says what waited for the terminal) and the
 * providers, quickly, and frees the run. opts stay the caller's. */
void loop_close(struct loop *l);

/*
 * Renders the stats to every open front-end, each snapshot as its view
 * asks (with at_once_only, only to those that get the first sample at
 * once). 0, or the first failure with its line in l->msg; the others
 * still render.
 */
int loop_render(struct loop *l, bool at_once_only);

/* What ended a wait. */
enum loop_wake {
	LOOP_TIMEOUT, /* the deadline passed */
	LOOP_STOP,    /* SIGINT or SIGTERM, or the terminal went away */
	LOOP_INPUT,   /* a front-end asks for something: see *from */
};

/*
 * Waits until deadline (monotonic ns), a stop signal or a request from an
 * interactive front-end (*from, with the request in (*from)->req). SIGHUP
 * asks every open front-end to reopen its output. 0 with *wake set, or
 * -errno with l->msg when polling fails.
 */
int loop_wait(struct loop *l, uint64_t deadline, enum loop_wake *wake,
	      struct frontend **from);

#endif
