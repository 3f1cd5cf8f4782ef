/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The breakdown engine: loads src/bpf/breakdown.bpf.c (its own bpftool
 * skeleton, so a run without --breakdown loads nothing of it) with
 * libbpf, attaches a program to each kind's tracepoint (raw where it is
 * KVM's own, else on its record) and the re-entry marks when timed, and
 * walks the per-thread counts and histograms.
 */
#ifndef KVMSTAT_BRK_ENGINE_H
#define KVMSTAT_BRK_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "brk_shared.h"
#include "lat_engine.h"
#include "lat_shared.h"

/* One kind's tracepoint: a raw one by name, its key and direction the
 * arguments key_arg and dir_arg (BRK_NO_ARG: none); or a record by id
 * with the key's and direction's places in it; or neither (id -1, raw
 * NULL). */
struct brk_source {
	const char *event; /* the kvm tracepoint, for messages */
	const char *raw;
	unsigned int key_arg, dir_arg;
	int id;
	struct lat_rec_field key, dir;
};

struct brk_engine_cfg {
	uint32_t tgid; /* only this process; 0: all */
	struct brk_source src[BRK_NKINDS];
	bool timed;	       /* a histogram of the time to re-entry */
	const char *entry_raw; /* kvm_entry's raw tracepoint, or NULL */
	const char *fpu_raw;   /* kvm_fpu's, or NULL */
	/* when timed: the exit-latency engine running beside, whose state
	 * of the threads (task storage or hash) the programs read at
	 * re-entry, taking the time it measured of the hit's exit, so that
	 * a hit reads no clock; NULL: each hit timed from itself */
	const struct lat_engine *lat;
	/* entries of the threads' array (their last slots, pending hits)
	 * used, a power of two up to BRK_NPEND (0: all): fewer make threads
	 * share them, for tests of the hash threads take then
	 * (KVMSTAT_BREAKDOWN_PENDS) */
	uint32_t pend_entries;
};

struct brk_engine;

/* Opens, loads and attaches; NULL with *err = -errno and *what naming
 * the step that failed. */
struct brk_engine *brk_engine_open(const struct brk_engine_cfg *cfg, int *err,
				   const char **what);
/* Calls fn for every count, with its histogram (NULL when untimed or
 * none yet); 0 or -errno. */
int brk_engine_walk(struct brk_engine *e,
		    void (*fn)(void *ctx, const struct brk_key *k,
			       uint64_t count, const struct lat_val *h),
		    void *ctx);
/* Empties counts and histograms (a reset). */
void brk_engine_clear(struct brk_engine *e);
void brk_engine_free(struct brk_engine *e);

#endif
