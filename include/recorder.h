/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flight recorder (--record FILE): after every refresh, what the
 * snapshots are built from (the stats' cells: every field in every scope,
 * host, VM and vCPU; the directory of VMs: names, vCPU threads, alive)
 * into the recording (recdb.h), one transaction per refresh, only the
 * values that changed since the refresh before. replay.h reads it back.
 */
#ifndef KVMSTAT_RECORDER_H
#define KVMSTAT_RECORDER_H

#include <stdint.h>

#include "errmsg.h"
#include "hist.h"
#include "snapshot.h"
#include "stats.h"
#include "vcputime.h"
#include "vmdir.h"

struct recorder;

/* The words the file gives field_info's enums (field.kind, unit, hist),
 * by value; NULL: none (SQL NULL). */
extern const char *const recorder_kinds[3];
extern const char *const recorder_units[5];
extern const char *const recorder_hists[3];

/* vm.flags: what the directory of VMs said of a VM (vmdir.h). */
enum recorder_vm_flags {
	RECORDER_VM_NAMED = 1u << 0,
	RECORDER_VM_CHECKED = 1u << 1,
	RECORDER_VM_ALIVE = 1u << 2,
	RECORDER_VM_RUNNING = 1u << 3,
	RECORDER_VM_VCPUS_READ = 1u << 4,
	RECORDER_VM_GONE = 1u << 5, /* left the directory */
};

/* What the run records with. */
struct recorder_cfg {
	const char *path;
	uint64_t keep_ns;    /* --record-keep DURATION, or 0 */
	uint64_t keep_bytes; /* --record-keep SIZE, or 0 */
	const char *sources; /* the open sources, as the header says, or
			      * NULL: said by the first write */
	double delay;	     /* -s */
};

/* Opens (or continues) the recording: a new session in it. 0, or -errno
 * with a line (a file of another program, no permission). */
int recorder_open(struct recorder **out, const struct recorder_cfg *cfg,
		  struct errmsg *msg);
/* Records the refresh s has just folded in, with the VMs of vms and the
 * open sources. 0, or
 * -errno with a line (-ENOSPC: the disk is full); the file keeps every
 * refresh before. */
int recorder_write(struct recorder *r, const struct stats *s,
		   const struct vmdir *vms, const char *sources,
		   struct errmsg *msg);
/* The breakdowns a render read (NULL: off), into the refresh written
 * last (nothing before the first): the rows that changed since the read
 * recorded before. 0, or -errno with a line, as recorder_write. */
int recorder_breakdown(struct recorder *r, const struct snap_breakdown *brk,
		       struct errmsg *msg);
/* Exit latency a render read (info NULL: off), into the refresh written
 * last, with the fields it interned: the histograms that changed. 0, or
 * -errno with a line, as recorder_write. */
int recorder_latency(struct recorder *r, const struct field_table *fields,
		     const struct hist_set *hs, const struct snap_latency *info,
		     struct errmsg *msg);
/* Where vCPU time went as a render showed it (vt NULL: off, nothing
 * written), into the refresh written last: every row. 0, or -errno with
 * a line, as recorder_write. */
int recorder_vcputime(struct recorder *r, const struct vcputime *vt,
		      struct errmsg *msg);
/* The run's stats started afresh (the monitor reopened its sources): the
 * next write begins a new session. */
void recorder_restart(struct recorder *r);
void recorder_close(struct recorder *r);

#endif
