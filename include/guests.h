/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guest names by VM pid, for the snapshots: each VM's name is looked up
 * once, from its command line (vm_guest_name()), and kept for the run, so
 * a refresh reads /proc only for VMs it has not seen before.
 */
#ifndef KVMSTAT_GUESTS_H
#define KVMSTAT_GUESTS_H

#include <stddef.h>
#include <sys/types.h>

/* A VM's name, or none. */
struct guest_name {
	pid_t pid;
	char *name; /* owned; NULL when the VM has none */
};

struct guests {
	const char *proc_root; /* where VMs are looked up; not owned */
	struct guest_name *v;  /* sorted by pid */
	size_t n, cap;
};

/* An empty cache looking VMs up under proc_root ("/proc"; NULL: none are
 * looked up, only names given to guests_set are known). */
void guests_init(struct guests *g, const char *proc_root);
void guests_free(struct guests *g);
/* The guest name of VM pid, or NULL when it has none: looked up on the
 * first call for pid, then remembered. Valid until guests_free. */
const char *guests_name(struct guests *g, pid_t pid);
/* Sets the name of pid (NULL: it has none) without a lookup. */
void guests_set(struct guests *g, pid_t pid, const char *name);

#endif
