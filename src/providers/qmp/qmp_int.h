/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inside of the QMP provider (src/providers/qmp/), shared by its
 * parts: qmp.c (the provider: open, read, close), monitors.c (the
 * sockets, over qmp_client.h, and the notices), schemas.c (statistics bound to
 * fields), replies.c (query-stats replies into samples) and regions.c
 * (the VMs' memory maps, which name MMIO addresses). Nothing
 * outside that folder includes it. Its names carry the prefix qp_.
 */
#ifndef KVMSTAT_QMP_INT_H
#define KVMSTAT_QMP_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mtree.h"
#include "qmp_client.h"
#include "sample.h"

struct provider;
struct reading;
struct sample_set;

#define QP_PROVIDER "qmp"
#define QP_NAME_MAX 256
/* Buckets a histogram is assumed to have when the filter is matched
 * against bucket names before the first reply says how many (KVM: 32). */
#define QP_BUCKETS_GUESS 64
/* More buckets than this is not a histogram to take. */
#define QP_BUCKETS_MAX 1024
/* How soon a VM's memory map is asked again after an address it did not
 * name (a BAR the guest has placed since, or one it never will). */
#define QP_MTREE_RETRY_NS (10 * 1000000000ull)

enum qp_target {
	QP_TARGET_VM = 0,
	QP_TARGET_VCPU,
	QP_TARGETS,
};

/* One statistic of a schema, for one target. */
struct qp_stat {
	char *name;
	enum qp_target target;
	enum field_type type;
	enum field_hist hist;
	uint32_t bucket_size; /* linear histograms */
	int field;	      /* the field (a histogram's parent), or -1:
				 * the filter leaves it out */
	int *slots;	      /* a scalar's one slot, or one per bucket */
	size_t nslots;
};

/* One value this provider reports: a scalar or a histogram bucket. */
struct qp_slot {
	int field;
	enum field_type type;
};

struct qp_vcpu {
	char *qom;	     /* QOM path, how query-stats names it */
	int index;	     /* cpu-index, -1 until query-cpus-fast tells */
	pid_t tid;	     /* thread-id, 0 if unknown */
	bool present;	     /* in this refresh's reply */
	struct reading *val; /* by slot: read in this refresh */
};

enum qp_state {
	QP_DOWN,    /* not connected: retry at retry_ns */
	QP_PENDING, /* timed out: replies up to owed_id owed */
	QP_UP,	    /* connected and answering */
};

/* One socket, one VM. */
struct qp_vm {
	char *path;
	struct qmp q;
	enum qp_state state;
	pid_t pid;	    /* the VM, from the last connection; 0 never */
	pid_t replaced;	    /* the VM before, when another took its path */
	bool available;	    /* read in this refresh */
	bool was_available; /* read in the previous refresh */
	bool ever_read;	    /* read in some refresh */
	uint64_t retry_ns;  /* DOWN: when to connect again */
	uint64_t owed_id;   /* PENDING: the last command sent */
	uint64_t sent[QP_TARGETS]; /* ids sent this refresh, 0 none */
	json_t *args[QP_TARGETS];  /* query-stats arguments, or NULL:
					 * nothing wanted of that target */
	struct qp_vcpu *vcpus;
	size_t nvcpus;
	uint64_t cpus_ns;     /* last query-cpus-fast */
	size_t nslots;	      /* what the arrays below hold */
	struct reading *val;  /* by slot: this refresh, VM and vCPUs */
	struct reading *last; /* by slot: last value read */
	char *problem;	      /* the last notice about it, or NULL */
	/* its memory map, for gpa_name() (regions.c) */
	struct mtree mtree;
	bool mtree_have;   /* mtree holds its last answer */
	bool mtree_miss;   /* an address it did not name was asked */
	bool mtree_said;   /* why it has none was noted */
	uint64_t mtree_ns; /* when it was last asked; 0: not since the
				* connection */
	uint64_t mtree_id; /* the command this refresh, or 0 */
};

struct qp_priv {
	struct qp_vm *vms;
	size_t nvms;
	pid_t pid;	   /* -p, or 0 */
	const char *guest; /* -g when no -p: the VM's own name (query-name)
			    * must be it; not owned */
	struct qp_stat *stats;
	size_t nstats;
	int *stat_of[QP_TARGETS]; /* by field id: stat index or -1 */
	size_t nstat_of;
	struct qp_slot *slots;
	size_t nslots;
	uint64_t *gone;	       /* by slot: counters of VMs replaced at
				 * their path by another process */
	bool opening;	       /* in open(): failures are not retried yet */
	unsigned int reply_ms; /* how long a refresh waits for replies */
	unsigned int retry_ms; /* how soon a failed socket is tried again */
};

/* schemas.c */
/* Grows a VM's and its vCPUs' per-slot arrays to every slot. */
void qp_vm_fit(struct qp_priv *d, struct qp_vm *vm);
/*
 * Interns the buckets of a histogram up to n, as NAME(i) children with the
 * parent's unit and their raw ranges; the last one is open-ended.
 */
void qp_hist_grow(struct provider *p, struct qp_stat *st, size_t n);
/*
 * Reads a VM's schema: adds its statistics and builds the arguments of its
 * query-stats for each target that has a statistic the filter keeps. The
 * filter is applied here, not with query-stats's "names": QEMU spends
 * about as long on each name it is given as on a whole unfiltered reply.
 * 0, or -EPROTO/-ENOENT with why in q->err.
 */
int qp_vm_schema(struct provider *p, struct qp_vm *vm, json_t *r);

/* monitors.c */
/* Adds a notice, after any not yet shown. */
void qp_note(struct provider *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Reports a VM's problem once: again only when it changes. */
void qp_vm_note(struct provider *p, struct qp_vm *vm, const char *text);
/* Forgets a VM's vCPUs (a new connection asks again). */
void qp_vcpus_free(struct qp_vm *vm);
/* The vCPU with QOM path qom, added when new. */
struct qp_vcpu *qp_vcpu_get(struct qp_priv *d, struct qp_vm *vm,
			    const char *qom);
/* Learns the vCPUs' indices and threads from query-cpus-fast. */
int qp_vm_cpus(struct provider *p, struct qp_vm *vm, uint64_t deadline);
/*
 * Closes a VM's connection after a failure and says so once: what failed,
 * why (vm->q.err) and, when known, what to do.
 */
void qp_vm_fail(struct provider *p, struct qp_vm *vm, const char *what,
		const char *fix);
/*
 * Connects a VM's socket: greeting, capabilities, schema, vCPUs. A
 * different process at the path is a new VM: the old one's counters stay
 * in the totals. 0, or -errno with the problem noted and the VM DOWN.
 */
int qp_vm_connect(struct provider *p, struct qp_vm *vm, uint64_t deadline);
/* Sends this refresh's query-stats commands. */
int qp_vm_send(struct provider *p, struct qp_vm *vm, uint64_t deadline);

/* regions.c */
/* Asks the VM's memory map along with this refresh's commands, when the
 * names are wanted and it has none or missed an address QP_MTREE_RETRY_NS
 * ago or more. */
void qp_vm_regions_send(struct provider *p, struct qp_vm *vm, uint64_t deadline);
/* Takes the map asked for, once the refresh's replies are in. */
void qp_vm_regions_take(struct provider *p, struct qp_vm *vm, uint64_t deadline);
/* Forgets the VM's map (a new connection: maybe another process). */
void qp_vm_regions_forget(struct qp_vm *vm);
/* The provider's gpa_name(). */
const char *qp_gpa_name(struct provider *p, pid_t pid, uint64_t gpa);

/* replies.c */
/*
 * Receives a VM's replies for this refresh and sums them into vm->val.
 * Returns true when the VM was read.
 */
bool qp_vm_collect(struct provider *p, struct qp_vm *vm, uint64_t deadline);
/* Pushes a VM's values and its vCPUs', and keeps them for the totals. */
void qp_vm_push(struct provider *p, struct qp_vm *vm, struct sample_set *out);
/* Pushes the totals: see the top of the file for what they sum. */
void qp_push_totals(struct provider *p, struct sample_set *out,
		    unsigned int flags);

#endif
