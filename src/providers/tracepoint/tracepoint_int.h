/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inside of the tracepoint provider (src/providers/tracepoint/), shared
 * by its parts: tracepoint.c (the provider: events, open, read, close),
 * reasons.c (child events: exit-reason tables from the kernel's formats
 * or the arch/ descriptor), bpf.c (counting on the BPF engine), perf.c
 * (the perf-event fallback) and threads.c (VMs, their vCPU threads and
 * the per-VM and per-vCPU breakdowns). Nothing outside that folder
 * includes it.
 */
#ifndef KVMSTAT_TRACEPOINT_INT_H
#define KVMSTAT_TRACEPOINT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "bpf_shared.h"
#include "hashtab.h"
#include "vm.h"

struct options;
struct provider;
struct field_table;
struct sample_set;
struct tp_format;
struct bpf_engine;

/* Where a value sits in a raw trace record. */
struct tp_rec_field {
	unsigned int offset;
	unsigned int size; /* 1, 2, 4 or 8; 0 = absent */
};

/* One reason of one table: raw value → field id. */
struct tp_reason {
	uint64_t value;
	int field; /* -1: not wanted */
};

/* One reason table of a child source, with the guard that selects it. */
struct tp_table {
	uint64_t mask;
	bool guarded, negated; /* applies when isa ==/!= guard */
	int64_t guard;
	struct tp_reason *r; /* sorted by value */
	size_t n;
};

/* A tracepoint with children: decoding tables and how to count them. */
struct tp_source {
	int ev;		 /* index into events */
	int parent;	 /* field id of the parent */
	char prefix[64]; /* "kvm_exit(" … */
	struct tp_format *fmt;
	struct tp_rec_field reason, isa;
	char reason_name[64], isa_name[64];
	struct tp_table tabs[4];
	size_t ntabs;
};

struct tp_event {
	char *name;
	int id;	   /* tracepoint id */
	int field; /* field id when counted itself, else -1 */
};

/* One event in every perf group: a tracepoint, maybe filtered. */
struct tp_member {
	int id;
	char *filter; /* NULL: unfiltered */
	int field;
};

/* The perf events of one CPU or thread (fallback only). */
struct tp_group {
	int cpu;   /* CPU, or -1 for a thread group */
	pid_t tid; /* thread, or -1 for a CPU group */
	int vcpu;  /* vCPU index of the thread, or -1 */
	int *fds;  /* one per member, leader first */
	size_t nfds;
	uint64_t *final;  /* counts of an exited thread, per member */
	uint64_t enabled; /* time enabled at the last read: a CPU group's
			   * stops when its CPU goes offline */
};

/* vCPU indices of the threads of one VM, from their names. */
struct tp_vm {
	pid_t pid;
	struct vm_info info;
	bool loaded;
	unsigned long loaded_at; /* refresh of the last load */
	bool is_vm;		 /* holds a KVM VM (kernel threads and
					 * helpers fire kvm events too) */
	struct vm_vcpu *known;	 /* every vCPU thread seen */
	size_t nknown;
	bool alive; /* the process exists (checked once
					 * per refresh, at alive_at) */
	unsigned long alive_at;
};

/* A per-VM or per-vCPU count collected during one read. */
struct tp_bd {
	pid_t pid;
	int vcpu;
	int field;
	uint64_t v;
	pid_t tid;
};

struct tp_priv {
	char events_dir[PATH_MAX]; /* tracefs events/kvm */
	const char *tracefs_root;  /* as given, or NULL: the kernel's */
	const char *proc_root;
	const char *debugfs_root; /* vcpuN/pid where threads are unnamed */
	pid_t pid;		  /* -p, or 0 */
	struct tp_event *ev;
	size_t nev;
	struct tp_source *src; /* one per child source of the arch
					 * descriptor at most */
	size_t nsrc;
	bool children; /* some child event is wanted */

	/* the BPF engine */
	struct bpf_engine *be;
	uint32_t nslots;
	int *slot_field;	      /* field id of each slot, -1 unused */
	uint64_t *slot_count;	      /* read buffer */
	struct ks_thread_key *dead_t; /* keys of exited processes */
	size_t ndead_t, capdead_t;
	struct ks_other_key *dead_o;
	size_t ndead_o, capdead_o;
	uint32_t *dead_v; /* ks_tvcpus's threads of exited processes */
	size_t ndead_v, capdead_v;

	/* the perf fallback */
	struct tp_member *mem;
	size_t nmem;
	struct tp_group *groups;
	size_t ngroups;
	size_t fds;    /* perf fds held by groups */
	uint64_t *buf; /* group read buffer */
	char *online;  /* system-wide: the online CPU list at the last look,
			* NULL to look for CPUs without a group next time */
	int uevent_fd; /* system-wide: the kernel's uevents, to follow CPU
			* hotplug as it happens, or -1 */

	uint64_t *acc;	   /* per field id, this refresh */
	uint64_t *retired; /* per field id, of what left the counters */
	size_t nacc;
	bool want_vms;
	struct tp_vm *vms;
	size_t nvms;
	struct tp_bd *bd; /* breakdowns of this refresh */
	size_t nbd, capbd;
	struct hashtab bd_index; /* (pid, vcpu, field) -> bd */
	unsigned long refresh;	 /* reads so far */
	int *rep;		 /* field ids reported each refresh */
	size_t nrep;
	struct field_table *fields;
	struct provider *p;
};

/* reasons.c */
int tp_setup_source(struct tp_priv *tp, const struct arch_desc *arch,
		    const struct arch_source *src, const char *isa);
bool tp_source_wanted(const struct tp_source *s);
bool tp_table_applies(const struct tp_table *t, int64_t isa);
/* Field of reason raw of source s when its guard field held isa (-1:
 * unknown, every table); interns "event(123)" for a reason no table
 * names. -1 when the filter drops it. */
int tp_reason_field(struct tp_priv *tp, struct tp_source *s, uint64_t raw,
		    int64_t isa);
void tp_sources_free(struct tp_priv *tp);

/* tracepoint.c */
void tp_report(struct tp_priv *tp, int field);
void tp_grow_acc(struct tp_priv *tp);
int tp_event_index(const struct tp_priv *tp, const char *name);

/* bpf.c: 0, or -errno with the reason in the provider's message */
int tp_bpf_open(struct tp_priv *tp);
/*
 * Where event's reason sits in the vCPU's structs on this host, for a
 * program on its raw tracepoint (the counting engine's, latency's): from
 * the arch descriptor and the kernel's BTF, for a record whose reason
 * field has reason_size bytes and whose guard field guard_field (NULL:
 * none) holds isa_guard where its tables apply. Fills vc but for its
 * slots; 0, or -errno where that is unknown (the record is read then).
 */
int tp_vcpu_reason(const char *event, const char *guard_field,
		   int64_t isa_guard, unsigned int reason_size,
		   struct ks_vcpu_cfg *vc);
/*
 * Whether the arch descriptor says where event's raw arguments hold its
 * reason field (arm64's kvm_exit), for a program on its raw tracepoint
 * (the counting engine's, latency's), into c but for its slots: only
 * where the running kernel's format f (event's) has the field at that
 * argument's place, as the records keep TP_PROTO's order; never for a
 * guarded source (guarded), nor with KVMSTAT_EXIT_REASON=record.
 */
bool tp_arg_reason(const struct tp_format *f, const char *field, bool guarded,
		   struct ks_arg_cfg *c);
/* The real tracepoint whose id is id, under events (a tracefs events
 * directory); caller frees; NULL when none (latency.c uses it too). */
char *tp_name_by_id(const char *events, int id);
int tp_bpf_read(struct tp_priv *tp);
void tp_bpf_close(struct tp_priv *tp);

/* perf.c */
int tp_perf_open(struct tp_priv *tp);
int tp_perf_read(struct tp_priv *tp, struct sample_set *out);
void tp_perf_close(struct tp_priv *tp);
/* Between refreshes, when uevent_fd is readable: a CPU that went offline
 * has its group read a last time and closed, one that came online gets
 * one, at once rather than at the next refresh. */
void tp_perf_hotplug(struct tp_priv *tp);

/* threads.c */
struct tp_vm *tp_vm_get(struct tp_priv *tp, pid_t pid);
bool tp_proc_alive(struct tp_priv *tp, struct tp_vm *vm);
bool tp_vm_alive(struct tp_priv *tp, struct tp_vm *vm);
void tp_vms_prune(struct tp_priv *tp);
int tp_vcpu_of(struct tp_priv *tp, pid_t pid, pid_t tid, bool reload);
/* What the kernel showed (kvm_exit's vCPU): thread tid of VM pid runs
 * vCPU vcpu, whatever the thread's name said. */
void tp_vm_kernel_vcpu(struct tp_priv *tp, pid_t pid, pid_t tid, int vcpu);
struct tp_bd *tp_bd_add(struct tp_priv *tp, pid_t pid, int vcpu, int field,
			uint64_t v);
void tp_bd_clear(struct tp_priv *tp);
/* Counts v of field by thread tid of process pid into the per-VM (unless
 * -p, whose VM row is the totals) and per-vCPU breakdowns. */
void tp_bd_thread(struct tp_priv *tp, pid_t pid, pid_t tid, int field,
		  uint64_t v);
void tp_threads_free(struct tp_priv *tp);

/* kvm_events.c: what latency.c and breakdown.c share */
struct tp_format;
struct lat_rec_field;
/* The events directory of the kernel's tracefs, or NULL. */
const char *tp_real_events(void);
/* The format of kvm event name under tracefs_root (NULL: the kernel's),
 * or NULL. */
struct tp_format *tp_kvm_format(const char *tracefs_root, const char *name);
/* The name event name attaches by as a raw tracepoint (in a test tree,
 * the real one with its id; *native false unless it is kvm's own).
 * Caller frees; NULL when none. */
char *tp_kvm_raw_name(const char *tracefs_root, const struct tp_format *f,
		      const char *name, bool *native);
/* Where field name sits in f's records (1, 2, 4 or 8 bytes); false when
 * it has none such. */
bool tp_rec_field(const struct tp_format *f, const char *name,
		  struct lat_rec_field *out);
/* vCPU indices of the threads of the VMs seen, kept after they exit
 * (their last counts are read after that); zeroed but for the roots. */
struct tp_vcpumap {
	const char *proc_root, *debugfs_root;
	struct vm_info *vms;
	size_t nvms;
	unsigned long reads;	  /* tp_vcpumap_tick calls */
	unsigned long *loaded_at; /* per VM: the read of its last load */
};
/* The vCPU index of thread tid of process pid, or -1 (its threads loaded
 * again at most once per read for one it did not have). */
int tp_vcpumap_index(struct tp_vcpumap *m, pid_t pid, pid_t tid);
/* A new read begins. */
void tp_vcpumap_tick(struct tp_vcpumap *m);
void tp_vcpumap_free(struct tp_vcpumap *m);

#endif
