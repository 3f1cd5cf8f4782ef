/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Levels of detail of the exporter and the JSON (--listen, --json): the
 * whole selection and each VM by default, each vCPU too with --per-vcpu.
 * Here is what both writers share about a VM's series:
 *  - a VM's value of a field is its own row, or, where its source gave
 *    the VM none, the sum of its vCPUs' rows (a histogram bucket-wise, a
 *    peak their largest);
 *  - which values are 0: a counter that has not counted, a histogram
 *    without samples (sticky fields: once non-zero, they stay so);
 *  - the exporter's memory of the per-VM and per-vCPU series of sticky
 *    fields it has written: a series is left out while its value is 0 and
 *    written from when it is not, then for as long as its VM lives (a
 *    series that vanishes while its VM runs breaks rate()).
 */
#ifndef KVMSTAT_LEVELS_H
#define KVMSTAT_LEVELS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "hashtab.h"
#include "snapshot.h"

/* Room for the histograms summed in one render, reused between renders:
 * blocks that never move, so that what they hold stays put until reset. */
struct levels_scratch {
	struct levels_block *head; /* the blocks, the one in use first */
	struct levels_block *cur;
};

void levels_scratch_init(struct levels_scratch *s);
/* Makes every block free again (what was summed is gone). */
void levels_scratch_reset(struct levels_scratch *s);
void levels_scratch_free(struct levels_scratch *s);

/*
 * The value of field in VM scope vm: its row (*row, *hist its histogram
 * or NULL) when it has one, else its vCPUs' read in the last refresh
 * summed into *sum (a histogram's in s, valid until the next reset). False
 * when neither the VM nor a vCPU of it has the field.
 */
bool levels_vm_value(const struct snapshot *snap, const struct snap_scope *vm,
		     int field, struct snap_row *sum,
		     const struct snap_row **row, struct levels_scratch *s);

/* Whether VM scope vm, or a vCPU of it, was read in the last refresh. */
bool levels_vm_fresh(const struct snap_scope *vm);

/* Whether f is a counter or a histogram: 0 until it counts, then not. */
bool levels_sticky(const struct field_info *f);
/* Whether a row (and its histogram, or NULL) holds 0: a total of 0, a
 * histogram without a sample. */
bool levels_zero(const struct snap_row *r, const struct snap_hist *h);

/* One series written: a field in a VM or one of its vCPUs. */
struct levels_key {
	pid_t pid;
	int vcpu; /* SAMPLE_ALL_VCPUS: the VM's own */
	int field;
};

/* The series of sticky fields written so far, by VM, vCPU and field. */
struct levels_seen {
	struct levels_key *v;
	size_t n, cap;
	struct hashtab index;
};

void levels_seen_init(struct levels_seen *s);
void levels_seen_free(struct levels_seen *s);
/* Whether the series of field in (pid, vcpu) is written: its value is not
 * 0 now (it is remembered from now on), or it was written before. */
bool levels_seen_keep(struct levels_seen *s, pid_t pid, int vcpu, int field,
		      bool zero);
/* Forgets the series of every VM that is no longer in snap. */
void levels_seen_prune(struct levels_seen *s, const struct snapshot *snap);

#endif
