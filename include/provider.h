/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Providers: pluggable sources of KVM counters behind one const ops table.
 * Providers never print and never exit: they return -errno and leave a
 * line a user can act on in provider.msg (errmsg.h).
 */
#ifndef KVMSTAT_PROVIDER_H
#define KVMSTAT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"
#include "filter.h"
#include "sample.h"

struct arbiter;
struct options;
struct provider;

/* What a provider is told of the run: the options it needs and the VM
 * the run watches now (the monitor's p and g change it). A value, read
 * only; a provider keeps no pointer to it (the strings it points to live
 * as long as the run). */
struct provider_cfg {
	pid_t pid;		      /* only this VM; 0: every VM */
	const char *guest;	      /* -g NAME as given, or NULL */
	bool include_past;	      /* totals since each VM started */
	bool no_bpf;		      /* --no-bpf: perf events */
	const char *tracefs_root;     /* NULL: the kernel's */
	const char *debugfs_root;     /* KVM's debugfs directory */
	const char *proc_root;	      /* "/proc", or a fake tree */
	const char *const *qmp_paths; /* --qmp sockets */
	size_t nqmp;
	unsigned int qmp_reply_timeout_ms; /* 0: the defaults */
	unsigned int qmp_retry_ms;
	/* -1, -l, -L or CSV without --units: kvm_stat's NAME TOTAL DELTA
	 * columns, whose debugfs field list leaves out KVM's time counters
	 * (debugfs_kvm_stat_exempt) */
	bool kvm_stat_columns;
};

struct provider_ops {
	const char *name;
	/* Do the options name this provider (-t, -d, -S, --qmp)? When any
	 * provider is named, only the named ones open. */
	bool (*asked)(const struct options *opts);
	/* Usable on this host with this config? (cheap, no side effects) */
	bool (*probe)(const struct provider_cfg *cfg);
	/* Opens the events it wants (provider_wants()), interning names. */
	int (*open)(struct provider *p, const struct provider_cfg *cfg);
	/* Pushes one raw reading per field (pid 0) and breakdowns. */
	int (*read)(struct provider *p, struct sample_set *out);
	void (*close)(struct provider *p);
	/* Optional: an fd the loop polls between refreshes (-1: none), and
	 * what to do when it is readable (statsfd: a VM was created or its
	 * process exited). wake() must not block and pushes no samples. */
	int (*wake_fd)(struct provider *p);
	void (*wake)(struct provider *p);
	/* Optional: the name the VMM gives guest physical address gpa of VM
	 * pid (QMP: the region of its memory map there), or NULL when none
	 * is known, which may make it learn the map again (bounded). Only
	 * while want_gpa_names; valid until the provider's next read. */
	const char *(*gpa_name)(struct provider *p, pid_t pid, uint64_t gpa);
	/* Holds perf events or BPF objects, whose last close is slow: the
	 * loop hands their last references to a detached process. */
	bool holds_kernel_fds;
	/* Checks -p itself (QMP: by a socket's peer), so it may serve a pid
	 * /proc does not show as a KVM VM (its fds may be unreadable). */
	bool own_pid_check;
	/* Reads want_vms and want_vcpus at every read: the loop changes
	 * them on an open provider (the monitor's guests view) instead of
	 * opening it again, and its counts go on. A breakdown it starts
	 * reporting then comes as SAMPLE_BASELINE readings. */
	bool vms_live;
};

struct provider {
	const struct provider_ops *ops;
	void *priv;		    /* the provider's own state */
	struct field_table *fields; /* where open() interns names */
	/* -f, shared with the other providers (NULL: every field) */
	const struct field_filter *filter;
	bool children; /* also NAME(...) of the events -f keeps */
	/* who owns which field and what was served so far in this refresh
	 * (NULL: this provider alone, owning what it declares) */
	const struct arbiter *arbiter;
	bool want_vms; /* also report per-VM/vCPU */
	/* with want_vms: per-vCPU readings too (false: per VM only, a
	 * level of detail no front-end of the run asked for) */
	bool want_vcpus;
	/* learn the VMs' memory maps for gpa_name() (--breakdown mmio); the
	 * loop changes it on an open provider, read at every read */
	bool want_gpa_names;
	struct errmsg msg; /* error or notice line */
	bool notice;	   /* msg holds a notice to show once */
	/* what open() did on the host that the user hears of once (it
	 * mounted tracefs), beside msg */
	struct errmsg did;
};

/* NULL-terminated, in the order they are tried. */
extern const struct provider_ops *const provider_registry[];

const struct provider_ops *provider_find(const char *name);
/* Whether the options name this provider (ops->asked says so). */
bool provider_asked(const struct provider_ops *ops, const struct options *opts);
/* The config the options give (pid, guest and include_past as parsed:
 * the run sets its own). */
void provider_cfg_init(struct provider_cfg *c, const struct options *o);
/* Whether -f (and p->children) keep name, whoever owns it, or may keep a
 * child of it (filter_may_keep_children). */
bool provider_keeps(const struct provider *p, const char *name);
/* Whether p is to count name: the filter keeps it and no other provider
 * owns it. */
bool provider_wants(const struct provider *p, const char *name);
/* Whether another provider owns name: p may read it only to fill in the
 * VMs that one does not serve (arbiter.h). */
bool provider_claimed(const struct provider *p, const char *name);
/* Whether a provider read before p in this refresh served (field, pid). */
bool provider_served(const struct provider *p, int field, pid_t pid);
/* Sets p->msg (errmsg_set) and marks it a notice to show once when notice
 * is true, a failure's line when false. */
void provider_msg(struct provider *p, bool notice, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
