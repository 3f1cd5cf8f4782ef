// SPDX-License-Identifier: GPL-2.0-only
/*
 * The directory of VMs (vmdir.h): a pid-sorted array, looked up by binary
 * search. Names are kept for the run; what a refresh looks at again is
 * reset by vmdir_begin.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "vmdir.h"

void vmdir_init(struct vmdir *d)
{
	memset(d, 0, sizeof(*d));
}

void vmdir_free(struct vmdir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].vmm);
		free(d->v[i].uuid);
		free(d->v[i].unit);
		free(d->v[i].pod);
		free(d->v[i].vcpus);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* Index of pid, or where it would go (*found says which). */
static size_t vmdir_index(const struct vmdir *d, pid_t pid, bool *found)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < d->n && d->v[lo].pid == pid;
	return lo;
}

struct vmdir_vm *vmdir_get(struct vmdir *d, pid_t pid)
{
	bool found;
	size_t i = vmdir_index(d, pid, &found);

	if (found)
		return &d->v[i];
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	memmove(&d->v[i + 1], &d->v[i], (d->n - i) * sizeof(*d->v));
	d->v[i] = (struct vmdir_vm){ .pid = pid };
	d->n++;
	return &d->v[i];
}

const struct vmdir_vm *vmdir_find(const struct vmdir *d, pid_t pid)
{
	bool found;
	size_t i;

	if (!d)
		return NULL;
	i = vmdir_index(d, pid, &found);
	return found ? &d->v[i] : NULL;
}

void vmdir_set_name(struct vmdir_vm *vm, const char *name)
{
	free(vm->name);
	vm->name = name ? xstrdup(name) : NULL;
	vm->named = true;
}

void vmdir_set_ident(struct vmdir_vm *vm, const char *vmm, const char *uuid,
		     const char *unit, const char *pod)
{
	free(vm->vmm);
	free(vm->uuid);
	free(vm->unit);
	free(vm->pod);
	vm->vmm = vmm ? xstrdup(vmm) : NULL;
	vm->uuid = uuid ? xstrdup(uuid) : NULL;
	vm->unit = unit ? xstrdup(unit) : NULL;
	vm->pod = pod ? xstrdup(pod) : NULL;
}

void vmdir_set_vcpus(struct vmdir_vm *vm, const struct vmdir_vcpu *v, size_t n)
{
	free(vm->vcpus);
	vm->vcpus = n ? xmalloc(n * sizeof(*v)) : NULL;
	if (n)
		memcpy(vm->vcpus, v, n * sizeof(*v));
	vm->nvcpus = n;
	vm->vcpus_read = true;
}

void vmdir_begin(struct vmdir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		d->v[i].checked = false;
		d->v[i].alive = false;
		d->v[i].running = false;
		d->v[i].vcpus_read = false;
	}
	d->listed = false;
}
