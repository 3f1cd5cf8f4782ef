// SPDX-License-Identifier: GPL-2.0-only
/*
 * The directory of VMs filled from /proc (vmscan.h): the one place that
 * turns sys/vm.c's lookups into what the snapshots and front-ends show.
 * Names are looked up once per VM; vCPU threads, the watched VM's life and
 * the list of every VM again at each refresh that needs them.
 */
#include <stdlib.h>

#include "util.h"
#include "vm.h"
#include "vm_ident.h"
#include "vmscan.h"

void vmscan_ident(struct vmdir_vm *vm, const char *proc_root,
		  const char *run_root)
{
	struct vm_ident id = { 0 };

	if (vm->named)
		return;
	if (vm_ident_read(proc_root, run_root, vm->pid, &id) < 0) {
		vmdir_set_name(vm, NULL);
		return;
	}
	vmdir_set_name(vm, id.name);
	vmdir_set_ident(vm, vm_vmm_name(id.vmm), id.uuid, id.unit, id.pod);
	vm_ident_clear(&id);
}

/* How often the vCPU threads the kernel shows are read again, ns. */
#define VMSCAN_KERNEL_NS 1000000000ull

/* A VM's vCPU threads now: what the kernel shows, names a hint.
 * Listed again only when its process's thread count changed (vCPU threads
 * come at its start, or with a hot-plugged vCPU), not at every refresh:
 * one call per VM rather than a read per thread; those the kernel shows,
 * once a second too (a vCPU is seen only once it runs). */
static void vmscan_vcpus(struct vmdir_vm *vm, const struct vmscan_req *r,
			 uint64_t now)
{
	struct vm_info v = { .pid = vm->pid };
	struct vmdir_vcpu *c;
	unsigned long threads;

	if (vm->vcpus_read)
		return;
	threads = vm_thread_count(r->proc_root, vm->pid);
	if (threads && threads == vm->threads &&
	    (!vm->kernel_vcpus || now - vm->vcpus_ns < VMSCAN_KERNEL_NS)) {
		vm->vcpus_read = true;
		return;
	}
	vm_load_vcpu_threads(r->proc_root, r->debugfs_root, &v);
	/* read again each second while the kernel may tell more: threads
	 * not named, or named but not shown by debugfs yet (not run) */
	vm->kernel_vcpus = !v.named;
	for (size_t i = 0; v.nheld >= 0 && i < v.nvcpus; i++)
		vm->kernel_vcpus |= !v.vcpus[i].kernel;
	vm->vcpus_ns = now;
	c = xcalloc(v.nvcpus ? v.nvcpus : 1, sizeof(*c));
	for (size_t i = 0; i < v.nvcpus; i++)
		c[i] = (struct vmdir_vcpu){ v.vcpus[i].index, v.vcpus[i].tid };
	vmdir_set_vcpus(vm, c, v.nvcpus);
	vm->threads = threads;
	free(c);
	vm_info_clear(&v);
}

/* Every running VM, with its name, marked running: one /proc scan for
 * the pids, names looked up for new VMs only (no vCPU threads read: the
 * list shows pids and names; at 300 VMs that was 1,500 comm files). */
static void vmscan_all(struct vmdir *d, const char *proc_root,
		       const char *run_root)
{
	pid_t *pids = NULL;
	int n = vm_list_pids(proc_root, &pids);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		struct vmdir_vm *vm = vmdir_get(d, pids[i]);

		vm->running = true;
		vmscan_ident(vm, proc_root, run_root);
	}
	free(pids);
	d->listed = true;
}

void vmscan_update(struct vmdir *d, const struct vmscan_req *r)
{
	uint64_t now = r->vcpus ? util_now_ns() : 0;

	vmdir_begin(d);
	if (r->all)
		vmscan_all(d, r->proc_root, r->run_root);
	for (size_t i = 0; r->vms && r->stats && i < r->stats->nkeys; i++) {
		pid_t pid = r->stats->keys[i].pid;
		struct vmdir_vm *vm;

		/* a VM's series mostly come one after the other */
		if (!pid || (i && r->stats->keys[i - 1].pid == pid))
			continue;
		vm = vmdir_get(d, pid);
		vmscan_ident(vm, r->proc_root, r->run_root);
		if (r->vcpus)
			vmscan_vcpus(vm, r, now);
	}
	if (r->watched) {
		struct vmdir_vm *vm = vmdir_get(d, r->watched);

		vmscan_ident(vm, r->proc_root, r->run_root);
		vm->checked = true;
		vm->alive = vm_pid_is_vm(r->proc_root, r->watched);
	}
}
