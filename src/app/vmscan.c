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
#include "vmscan.h"

/* A VM's guest name, looked up once. */
static void vmscan_name(struct vmdir_vm *vm, const char *proc_root)
{
	char *name;

	if (vm->named)
		return;
	name = vm_guest_name(proc_root, vm->pid);
	vmdir_set_name(vm, name);
	free(name);
}

/* A VM's vCPU threads now: named threads, else KVM's debugfs. Listed
 * again only when its process's thread count changed (vCPU threads come
 * at its start, or with a hot-plugged vCPU), not at every refresh: one
 * call per VM rather than a read per thread. */
static void vmscan_vcpus(struct vmdir_vm *vm, const struct vmscan_req *r)
{
	struct vm_info v = { .pid = vm->pid };
	struct vmdir_vcpu *c;
	unsigned long threads;

	if (vm->vcpus_read)
		return;
	threads = vm_thread_count(r->proc_root, vm->pid);
	if (threads && threads == vm->threads) {
		vm->vcpus_read = true;
		return;
	}
	vm_load_vcpu_threads(r->proc_root, r->debugfs_root, &v);
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
static void vmscan_all(struct vmdir *d, const char *proc_root)
{
	pid_t *pids = NULL;
	int n = vm_list_pids(proc_root, &pids);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		struct vmdir_vm *vm = vmdir_get(d, pids[i]);

		vm->running = true;
		vmscan_name(vm, proc_root);
	}
	free(pids);
	d->listed = true;
}

void vmscan_update(struct vmdir *d, const struct vmscan_req *r)
{
	vmdir_begin(d);
	if (r->all)
		vmscan_all(d, r->proc_root);
	for (size_t i = 0; r->vms && r->stats && i < r->stats->nkeys; i++) {
		pid_t pid = r->stats->keys[i].pid;
		struct vmdir_vm *vm;

		/* a VM's series mostly come one after the other */
		if (!pid || (i && r->stats->keys[i - 1].pid == pid))
			continue;
		vm = vmdir_get(d, pid);
		vmscan_name(vm, r->proc_root);
		if (r->vcpus)
			vmscan_vcpus(vm, r);
	}
	if (r->watched) {
		struct vmdir_vm *vm = vmdir_get(d, r->watched);

		vmscan_name(vm, r->proc_root);
		vm->checked = true;
		vm->alive = vm_pid_is_vm(r->proc_root, r->watched);
	}
}
