/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What providers hand to the stats layer: a table of field names, interned
 * once when a provider opens, and per refresh a flat array of raw readings
 * keyed by field, VM (pid) and vCPU.
 */
#ifndef KVMSTAT_SAMPLE_H
#define KVMSTAT_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashtab.h"

/* How a raw value behaves over time. */
enum field_type {
	FIELD_CUMULATIVE = 0, /* monotonic counter: deltas and rates */
	FIELD_INSTANT,	      /* gauge: current value, signed change */
	FIELD_PEAK,	      /* maximum so far */
};

/* What a value measures (KVM binary stats units). */
enum field_unit {
	UNIT_NONE = 0, /* a plain count */
	UNIT_BYTES,
	UNIT_SECONDS,
	UNIT_CYCLES,
	UNIT_BOOLEAN,
};

/* Histogram shape, for a histogram's parent field. */
enum field_hist {
	HIST_NONE = 0,
	HIST_LINEAR, /* bucket i holds [i*size, (i+1)*size) */
	HIST_LOG2,   /* bucket 0 holds 0, bucket i [2^(i-1), 2^i) */
};

/* What a provider knows about a field beyond its unit (field_info.flags). */
enum field_flags {
	/* Counts every exit of a vCPU: a guest's total in the per-guest
	 * views, where the sum of all its events would count some twice. */
	FIELD_EXITS = 1u << 0,
	/* Turned on by an option of its own (--latency): shown whatever -f
	 * keeps, and never a row of the view (kvm_stat's list). */
	FIELD_OWN_SWITCH = 1u << 1,
};

/* The name KVM gives that count (a debugfs file, a binary stat, a QMP
 * query-stats value): the providers reading KVM's own stats flag it. */
#define FIELD_KVM_EXITS "exits"

struct field_info {
	char *name; /* "kvm_exit", "kvm_exit(HLT)", "halt_exits" */
	int parent; /* field id of the parent event, or -1 */
	enum field_type type;
	const char *provider; /* the provider that declared it: its owner
				 * (see arbiter.h) */
	/* Units, from providers that know them (0 = plain count). */
	enum field_unit unit;
	int exponent;	   /* raw value x base^exponent is in unit */
	unsigned int base; /* 10 or 2 (0 means 10) */
	/* Histograms: the parent says the shape, each bucket is a child. */
	enum field_hist hist;
	int bucket;	    /* bucket index for a bucket child, else -1 */
	uint64_t bucket_lo; /* raw range of a bucket: [lo, hi) */
	uint64_t bucket_hi; /* UINT64_MAX for the open last bucket */
	unsigned int flags; /* enum field_flags */
	const char *help;   /* a sentence saying what it measures, static;
			     * NULL: the front-ends' generic words */
	/* place of the name among the table's in util_name_cmp() order,
	 * kept by field_table_intern(): views sort by it, not by name */
	int order;
};

/* Interned field names; ids are dense and stable for the whole run. */
struct field_table {
	struct field_info *v;
	size_t n, cap;
	struct hashtab index; /* name hash -> id */
	/* util_serial() of the last change: a field added, or its info
	 * handed out to be set (field_table_info) */
	uint64_t gen;
};

/* Scope of a sample: pid 0 is the whole selection (host, or the -p VM). */
#define SAMPLE_ALL_VCPUS (-1)

enum sample_flags {
	/* The source lost contributors (a VM went away): a drop is not a reset. */
	SAMPLE_REBASE = 1u << 0,
	/* A reading of a series the source kept all along but did not
	 * report for a while (a breakdown turned on again): what it counted
	 * since its last reading (all of its value, the first time) goes to
	 * its total, but not to its delta (it was not one interval's). */
	SAMPLE_BASELINE = 1u << 1,
};

struct sample {
	int field;	    /* id in the field table */
	pid_t pid;	    /* VM process, 0 = whole selection */
	int vcpu;	    /* vCPU index or SAMPLE_ALL_VCPUS */
	pid_t tid;	    /* vCPU thread if known, else 0 */
	uint64_t value;	    /* raw cumulative or instant reading */
	unsigned int flags; /* enum sample_flags */
	const char *src;    /* provider that read it (NULL: the owner) */
};

struct sample_set {
	struct field_table *fields; /* shared, owned by the stats layer */
	const char *src;	    /* stamped on every push: the reader */
	struct sample *v;
	size_t n, cap;
};

void field_table_init(struct field_table *t);
void field_table_free(struct field_table *t);
/* Returns the id of name, adding it when new; parent is an id or -1. */
int field_table_intern(struct field_table *t, const char *name, int parent,
		       enum field_type type, const char *provider);
/* Id of name, or -1. */
int field_table_find(const struct field_table *t, const char *name);
/* The info of an id, for providers to set units and histogram shape right
 * after interning (it changes the table's gen). */
struct field_info *field_table_info(struct field_table *t, int id);

void sample_set_init(struct sample_set *s, struct field_table *fields);
void sample_set_free(struct sample_set *s);
void sample_set_clear(struct sample_set *s);
void sample_set_push(struct sample_set *s, int field, pid_t pid, int vcpu,
		     pid_t tid, uint64_t value, unsigned int flags);

#endif
