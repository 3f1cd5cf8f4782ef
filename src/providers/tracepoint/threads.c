// SPDX-License-Identifier: GPL-2.0-only
/*
 * Thread tracking for the tracepoint provider: which processes are VMs,
 * which of their threads is which vCPU (from QEMU-style thread names, or
 * debugfs), whether they still run, and the per-VM and per-vCPU counts
 * of one refresh, whichever way (BPF or perf) they were counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "provider.h"
#include "tracepoint_int.h"
#include "util.h"
#include "vm.h"

struct tp_vm *tp_vm_get(struct tp_priv *tp, pid_t pid)
{
	for (size_t i = 0; i < tp->nvms; i++)
		if (tp->vms[i].pid == pid)
			return &tp->vms[i];
	tp->vms = xrealloc(tp->vms, (tp->nvms + 1) * sizeof(*tp->vms));
	memset(&tp->vms[tp->nvms], 0, sizeof(tp->vms[0]));
	tp->vms[tp->nvms].pid = pid;
	tp->vms[tp->nvms].info.pid = pid;
	tp->vms[tp->nvms].is_vm = pid == tp->pid ||
				  vm_pid_is_vm(tp->proc_root, pid);
	return &tp->vms[tp->nvms++];
}

/* Whether a process still exists (looked at once per refresh). */
bool tp_proc_alive(struct tp_priv *tp, struct tp_vm *vm)
{
	char path[PATH_MAX + 32];
	struct stat st;

	if (vm->alive_at != tp->refresh) {
		snprintf(path, sizeof(path), "%s/%d", tp->proc_root, vm->pid);
		vm->alive = stat(path, &st) == 0;
		vm->alive_at = tp->refresh;
	}
	return vm->alive;
}

/* Whether a VM's breakdowns are live: they go stale (shown as gone) when
 * its process exits, but with -p the VM's last counts stay shown. */
bool tp_vm_alive(struct tp_priv *tp, struct tp_vm *vm)
{
	return tp->pid || tp_proc_alive(tp, vm);
}

/* Forgets the processes that exited and hold no more map keys. */
void tp_vms_prune(struct tp_priv *tp)
{
	size_t n = 0;

	for (size_t i = 0; i < tp->nvms; i++) {
		struct tp_vm *vm = &tp->vms[i];

		if (vm->pid != tp->pid && vm->alive_at == tp->refresh &&
		    !vm->alive) {
			free(vm->info.vcpus);
			free(vm->known);
			continue;
		}
		tp->vms[n++] = *vm;
	}
	tp->nvms = n;
}

/* Adds the threads just loaded to those known, so that the counts of a
 * vCPU thread that has exited still go to its vCPU. */
static void tp_vm_remember(struct tp_vm *vm)
{
	for (size_t i = 0; i < vm->info.nvcpus; i++)
		vm_vcpus_learn(&vm->known, &vm->nknown, &vm->info.vcpus[i]);
}

void tp_vm_kernel_vcpu(struct tp_priv *tp, pid_t pid, pid_t tid, int vcpu)
{
	struct vm_vcpu c = { vcpu, tid, true };
	struct tp_vm *vm = tp_vm_get(tp, pid);
	size_t n = 0;

	if (vcpu < 0)
		return;
	/* the thread runs that vCPU now: what was said of it before goes */
	for (size_t i = 0; i < vm->nknown; i++)
		if (vm->known[i].tid != tid || vm->known[i].index == vcpu)
			vm->known[n++] = vm->known[i];
	vm->nknown = n;
	vm_vcpus_learn(&vm->known, &vm->nknown, &c);
}

/* vCPU index of a thread, as the kernel showed it (kvm_exit's vCPU,
 * KVM_RUN, debugfs) or its name says (vm_load_vcpu_threads); -1 when
 * unknown. The names are loaded again for an unknown thread at most once
 * per VM and refresh, or always when reload is true. */
int tp_vcpu_of(struct tp_priv *tp, pid_t pid, pid_t tid, bool reload)
{
	struct tp_vm *vm = tp_vm_get(tp, pid);

	for (int pass = 0; pass < 2; pass++) {
		if (!vm->loaded ||
		    (pass && (reload || vm->loaded_at != tp->refresh))) {
			vm_load_vcpu_threads(tp->proc_root, tp->debugfs_root,
					     &vm->info);
			tp_vm_remember(vm);
			vm->loaded = true;
			vm->loaded_at = tp->refresh;
		} else if (pass) {
			break;
		}
		for (size_t i = 0; i < vm->nknown; i++)
			if (vm->known[i].tid == tid)
				return vm->known[i].index;
	}
	return -1;
}

/* Adds v to the breakdown (pid, vcpu, field) of this refresh; a hash keeps
 * it linear in the number of BPF keys. Returns the entry. */
struct tp_bd *tp_bd_add(struct tp_priv *tp, pid_t pid, int vcpu, int field,
			uint64_t v)
{
	uint32_t h = hashtab_hash3((uint32_t)field, (uint32_t)pid,
				   (uint32_t)(vcpu + 1));
	struct hashtab_iter it = hashtab_iter(&tp->bd_index, h);
	long i;

	while ((i = hashtab_next(&tp->bd_index, &it)) >= 0) {
		struct tp_bd *b = &tp->bd[i];

		if (b->pid == pid && b->vcpu == vcpu && b->field == field) {
			b->v += v;
			return b;
		}
	}
	if (tp->nbd == tp->capbd) {
		tp->capbd = tp->capbd ? tp->capbd * 2 : 256;
		tp->bd = xrealloc(tp->bd, tp->capbd * sizeof(*tp->bd));
	}
	tp->bd[tp->nbd] = (struct tp_bd){ pid, vcpu, field, v, 0 };
	hashtab_add(&tp->bd_index, h, tp->nbd);
	return &tp->bd[tp->nbd++];
}

/* Empties the breakdowns for a new refresh. */
void tp_bd_clear(struct tp_priv *tp)
{
	hashtab_clear(&tp->bd_index);
	tp->nbd = 0;
}

void tp_bd_thread(struct tp_priv *tp, pid_t pid, pid_t tid, int field,
		  uint64_t v)
{
	struct tp_vm *vm = tp_vm_get(tp, pid);
	int vcpu;

	if (!vm->is_vm || !tp_vm_alive(tp, vm))
		return;
	if (!tp->pid)
		tp_bd_add(tp, pid, SAMPLE_ALL_VCPUS, field, v);
	vcpu = tp_vcpu_of(tp, pid, tid, false);
	if (vcpu >= 0)
		tp_bd_add(tp, pid, vcpu, field, v)->tid = tid;
}

void tp_threads_free(struct tp_priv *tp)
{
	for (size_t i = 0; i < tp->nvms; i++) {
		free(tp->vms[i].info.vcpus);
		free(tp->vms[i].known);
	}
	free(tp->vms);
	free(tp->bd);
	hashtab_free(&tp->bd_index);
}
