/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The arbiter: the one place that says which provider's reading of a
 * field counts. Several providers may offer the same field name (debugfs
 * and statsfd both have "halt_exits"); each field has one owner, and the
 * others only fill in the VMs the owner cannot see.
 *
 * The contract:
 *
 * - Owner. A field's owner is the provider that declared it first: the
 *   name field_table_intern() recorded in field_info.provider. Providers
 *   open in registry order, so the earlier provider in the registry wins.
 *   A reading whose sample.src is its field's owner, or that names no
 *   source (src NULL), or of a field without a declared owner, counts as
 *   it is.
 *
 * - Claimed. A name is claimed for a provider when another provider owns
 *   it. That provider must not report a total of it; it may read it per
 *   VM to fill in.
 *
 * - Served. Within one refresh the arbiter records, after each provider's
 *   read (arbiter_note()), which (field, VM) pairs its readings served: a
 *   VM-wide reading (pid != 0, all vCPUs) serves its pair. A provider read
 *   later may ask whether an earlier one served a pair (arbiter_served())
 *   and then need not read it.
 *
 * - Verdict. Once every provider read, each reading gets a verdict
 *   (arbiter_verdict()). The owner's count. Another provider's reading is
 *   dropped when it is of the whole selection (pid 0: the owner's total
 *   stands), when the owner reported a total of the field but no VM of it
 *   (such a total sees every VM), or when the owner served that VM; else it
 *   fills in: it counts for its VM and vCPU, and its VM-wide value is added
 *   to the field's total. The stats layer does that arithmetic
 *   (stats_update()); the decision is made here alone.
 *
 * - A refresh ends with arbiter_end(), which forgets what was served.
 *   Ownership lasts as long as the field table.
 */
#ifndef KVMSTAT_ARBITER_H
#define KVMSTAT_ARBITER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sample.h"

/* A (field, VM) pair some reading of this refresh served. */
struct arbiter_key {
	int field;
	pid_t pid;
	bool by_owner; /* the field's owner served it */
};

struct arbiter {
	const struct field_table *fields; /* owners: who declared each */
	struct arbiter_key *served; /* sorted by (pid, field), no repeats */
	size_t nserved, capserved;
	/* per field id: what its owner reported this refresh (a total of
	 * the whole selection, VM-wide readings) */
	unsigned char *reported;
	size_t nreported;
	size_t noted; /* readings of the sample set noted so far */
	bool mixed;   /* a noted reading is not its owner's */
};

/* What becomes of one reading. */
enum arbiter_verdict {
	ARBITER_COUNT = 0, /* the owner's: counts as it is */
	ARBITER_FILL_IN,   /* fills in a VM the owner did not serve */
	ARBITER_DROP,	   /* the owner's reading stands */
};

/* The arbiter of the fields in fields (not copied: it must outlive a). */
void arbiter_init(struct arbiter *a, const struct field_table *fields);
void arbiter_free(struct arbiter *a);

/* The name of the provider that owns field, or NULL when it has none. */
const char *arbiter_owner(const struct arbiter *a, int field);
/* Whether a provider other than me owns the field called name. A NULL
 * arbiter knows no other provider: nothing is claimed. */
bool arbiter_claimed(const struct arbiter *a, const char *name, const char *me);

/* Notes the readings pushed into set since the last call: the (field, VM)
 * pairs they served and what the owners reported. Call it after each
 * provider's read, with the same set all through the refresh. */
void arbiter_note(struct arbiter *a, const struct sample_set *set);
/* Whether a reading noted in this refresh served (field, pid): for a
 * provider during its read, whether an earlier provider did. */
bool arbiter_served(const struct arbiter *a, int field, pid_t pid);

/* Notes what set holds beyond the last arbiter_note(); true when some
 * reading of this refresh is not its field owner's, and false when every
 * reading counts (then arbiter_verdict() is ARBITER_COUNT for all). */
bool arbiter_judge(struct arbiter *a, const struct sample_set *set);
/* The verdict on x, a reading of this refresh, once all of it is noted. */
enum arbiter_verdict arbiter_verdict(const struct arbiter *a,
				     const struct sample *x);
/* Ends the refresh: forgets what was served and reported. */
void arbiter_end(struct arbiter *a);

#endif
