/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The directory of VMs (vmdir.h) filled from /proc once per refresh, with
 * what the run's views need: guest names and vCPU threads of the VMs the
 * providers read, whether the VM watched still runs, and, while the
 * monitor asks for a pid or a guest, every running VM.
 */
#ifndef KVMSTAT_VMSCAN_H
#define KVMSTAT_VMSCAN_H

#include <stdbool.h>
#include <sys/types.h>

#include "stats.h"
#include "vmdir.h"

/* What to look up this refresh. */
struct vmscan_req {
	const char *proc_root;
	const char *run_root;	   /* libvirt's and machined's state, or
				    * NULL: none */
	const char *debugfs_root;  /* KVM's: vCPU threads of VMMs that do
				   * not name them; NULL: /proc alone */
	const struct stats *stats; /* the VMs read */
	pid_t watched;		   /* -p, the monitor's pid, or 0 */
	bool vms;		   /* names of the VMs read */
	bool vcpus;		   /* with vms: their vCPU threads too */
	bool all;		   /* every running VM, named */
};

void vmscan_update(struct vmdir *d, const struct vmscan_req *r);
/* Who VM vm is (its name, VMM, UUID, unit, pod; vm_ident.h), looked up
 * once: nothing when it was (vm->named). */
void vmscan_ident(struct vmdir_vm *vm, const char *proc_root,
		  const char *run_root);

#endif
