/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The directory of VMs: what the run knows of each VM this refresh (its
 * guest name, its vCPU threads, whether it still runs), by pid. The layer
 * that may read /proc fills it once per refresh (app/vmscan.c); the
 * snapshot and the front-ends only read it, so no /proc path and no sys/
 * call is needed below the app layer.
 */
#ifndef KVMSTAT_VMDIR_H
#define KVMSTAT_VMDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A vCPU thread: N of "CPU N/KVM" (or of KVM's debugfs), its thread id. */
struct vmdir_vcpu {
	int index;
	pid_t tid;
};

/* One VM. */
struct vmdir_vm {
	pid_t pid;
	char *name; /* guest name (owned), or NULL: none */
	bool named; /* the name was looked up (or set) */
	/* who the VM is, as its manager says (vmdir_set_ident; owned,
	 * NULL where the host does not tell) */
	char *vmm;	 /* "qemu", "firecracker"... or NULL: not looked up */
	char *uuid;	 /* "3f2504e0-4f89-11d3-9a0c-0305e82c3301" */
	char *unit;	 /* its systemd unit or scope */
	char *pod;	 /* a Kubernetes pod's UID */
	bool checked;	 /* alive was looked at this refresh */
	bool alive;	 /* (where checked) still a KVM VM */
	bool running;	 /* in the last list of every running VM */
	bool vcpus_read; /* vcpus hold for this refresh */
	unsigned long threads;	  /* the process's threads when vcpus
				   * were read (0: unknown) */
	bool kernel_vcpus;	  /* vcpus are what the kernel showed (no
				   * thread named as a vCPU): read again
				   * each second, as a vCPU is seen only
				   * once it runs */
	uint64_t vcpus_ns;	  /* when vcpus were read */
	struct vmdir_vcpu *vcpus; /* owned, by index */
	size_t nvcpus;
};

struct vmdir {
	struct vmdir_vm *v; /* by pid */
	size_t n, cap;
	bool listed; /* every running VM is in it, marked running */
};

void vmdir_init(struct vmdir *d);
void vmdir_free(struct vmdir *d);
/* The VM pid, added (unnamed, nothing read) when it is not there yet;
 * valid until the next vmdir_get or vmdir_free. */
struct vmdir_vm *vmdir_get(struct vmdir *d, pid_t pid);
/* The VM pid, or NULL. */
const struct vmdir_vm *vmdir_find(const struct vmdir *d, pid_t pid);
/* Sets a VM's name (copied; NULL: it has none). */
void vmdir_set_name(struct vmdir_vm *vm, const char *name);
/* Sets who a VM is (strings copied, NULL: not told). */
void vmdir_set_ident(struct vmdir_vm *vm, const char *vmm, const char *uuid,
		     const char *unit, const char *pod);
/* Replaces a VM's vCPU threads (copied). */
void vmdir_set_vcpus(struct vmdir_vm *vm, const struct vmdir_vcpu *v, size_t n);
/* Forgets what each refresh looks at again: alive, running, the vCPU
 * threads read (names stay: a pid is not reused while watched). */
void vmdir_begin(struct vmdir *d);

#endif
