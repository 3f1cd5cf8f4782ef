/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the OpenMetrics writer's files share (render/ only): the writer's
 * state kept between renders, the series gathered in one render, and the
 * helpers one file makes and another uses. openmetrics.c writes the
 * families, om_gather.c gathers the series of every scope, om_text.c
 * spells numbers, names and label values.
 */
#ifndef KVMSTAT_OPENMETRICS_INT_H
#define KVMSTAT_OPENMETRICS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "levels.h"
#include "numfmt.h"
#include "openmetrics.h"
#include "snapshot.h"
#include "strbuf.h"

typedef unsigned __int128 u128;

/* A scope series are read in. */
struct om_scope {
	pid_t pid;	   /* 0: the whole selection */
	int vcpu;	   /* SAMPLE_ALL_VCPUS or an index */
	const char *guest; /* guest name of pid, or NULL */
	size_t lab, nlab;  /* its labels (pid, guest, vcpu) in the writer's
			    * labs, written once per render */
};

/* One series to write: a field of some scope. */
struct om_series {
	int family;		      /* field id of the family's root */
	int field;		      /* the root itself, or a reason child */
	size_t scope;		      /* index in scopes; 0 is the whole */
	uint64_t total;		      /* its value (raw) */
	const struct snap_hist *hist; /* a histogram's buckets, or NULL */
};

/* The "le" of a histogram's bucket, made once: its upper end and text. */
struct om_le {
	uint64_t hi;
	char s[NUMFMT_DOUBLE_SIZE];
	size_t n; /* strlen(s); 0: not made yet */
};

/* A family name made from a field, kept while the field stays the same. */
struct om_name {
	char *fam;   /* the family's name, or NULL */
	size_t nfam; /* strlen(fam) */
	char *vfam;  /* its vCPUs' family: kvm_vcpu_..., or NULL */
	size_t nvfam;
	char *from;	      /* the field name it was made from */
	enum field_unit unit; /* and the field's unit, type, histogram, */
	enum field_type type;
	enum field_hist hist;
	int exponent; /* scale */
	unsigned int base;
	/* a histogram's "le" texts by bucket position, made from the
	 * field's scale (kept while it stays) */
	struct om_le *les;
	size_t nles;
	/* a histogram's buckets (by index) that have counted in the whole
	 * selection: the ones its VMs' and vCPUs' series write */
	bool *used;
	size_t nused;
};

/* What the writer keeps from one render to the next (openmetrics.h). */
struct openmetrics_writer {
	bool per_vcpu;		    /* also each vCPU's series */
	struct levels_seen seen;    /* per-VM series of sticky fields
				     * written so far */
	struct levels_scratch sums; /* VMs' values summed from vCPUs */
	struct om_scope *scopes;
	size_t nscopes, scap;
	struct om_series *series;
	size_t nseries, cap;
	struct om_name *names; /* by field id */
	size_t nnames;
	bool *kept;	   /* by field id: in the snapshot's view */
	bool *has_reasons; /* by field id, while gathering a scope */
	bool *done;	   /* by field id, while gathering a VM */
	bool *in_vm;	   /* by family id: some VM has it (the whole
			    * selection's series are then left out) */
	size_t nflags;
	char **reserved; /* metric and sample names written so far */
	size_t nreserved, rcap;
	struct strbuf labs; /* the scopes' labels (om_scope.lab) */
};

struct om_ctx {
	struct strbuf *out;
	const struct snapshot *snap;
	const struct field_info *fields; /* the snapshot's */
	enum openmetrics_format fmt;
	struct openmetrics_writer *w;
};

/* om_text.c */
/* Appends v in decimal. */
void openmetrics_add_u64(struct strbuf *b, uint64_t v);
/* base^e as a long double (no libm: the binary links none). */
long double openmetrics_pow(unsigned int base, int e);
/* Appends mant x 10^exp10 x (f's base^exponent): a value in f's base
 * unit. */
void openmetrics_scaled(struct strbuf *b, u128 mant, int exp10,
			const struct field_info *f);

/* om_gather.c */
/* Drops the names kept for fields that are not what they were made from. */
void openmetrics_names(struct om_ctx *c);
/* The per-field flags sized for the snapshot; the view's fields kept. */
void openmetrics_kept(struct om_ctx *c);
/* The series of every scope, into the writer's series. */
void openmetrics_gather(struct om_ctx *c);
/* The family name of field, made once and kept; a vCPU's family
 * (vcpu): kvm_vcpu_... */
const char *openmetrics_family(struct om_ctx *c, int field, bool vcpu);
/* The family series x belongs to: its field's name, at its scope's level. */
const char *openmetrics_series_family(struct om_ctx *c,
				      const struct om_series *x);
/* The families' order (qsort_r, arg the om_ctx). */
int openmetrics_series_cmp(const void *a, const void *b, void *arg);

#endif
