// SPDX-License-Identifier: GPL-2.0-only
/*
 * --vcpu N is checked once the providers have read: a usage error lists
 * the vCPUs that exist, so the user can pick one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "util.h"
#include "vcpu_check.h"
#include "vm.h"

/* The vCPU indices of VM pid from its threads, else from debugfs; caller
 * frees *out (never NULL). */
static size_t vcpu_check_threads(const struct options *o, pid_t pid, int **out)
{
	struct vm_info vi = { .pid = pid };
	size_t n = 0;
	int *v;

	vm_load_vcpu_threads(o->proc_root, o->debugfs_root, &vi);
	v = xcalloc(vi.nvcpus + 1, sizeof(*v));
	for (size_t i = 0; i < vi.nvcpus; i++)
		v[n++] = vi.vcpus[i].index;
	vm_info_clear(&vi);
	*out = v;
	return n;
}

int vcpu_check(const struct stats *s, const struct options *o, pid_t pid,
	       struct errmsg *msg)
{
	char list[256] = "";
	int *v, *f, nf;
	size_t n;

	if (o->vcpu < 0)
		return 0;
	n = stats_vcpus_of(s, pid, &v);
	if (!n) {
		/* nothing counted yet: the VM's named threads tell */
		free(v);
		n = vcpu_check_threads(o, pid, &v);
	}
	for (size_t i = 0; i < n; i++)
		if (v[i] == o->vcpu) {
			free(v);
			return 0;
		}
	/* the vCPUs the VM holds (its kvm-vcpu fds), their threads known or
	 * not: one whose thread is not known yet is said so, never guessed */
	nf = vm_vcpu_fds(o->proc_root, pid, &f);
	for (int i = 0; i < nf; i++)
		if (f[i] == o->vcpu) {
			free(f);
			free(v);
			return errmsg_set(
				msg, -EINVAL,
				"VM %d: the thread of vCPU %d is not known yet "
				"(not named as a VMM names vCPU threads, and "
				"the kernel has not shown it running: not in "
				"KVM_RUN, not in KVM's debugfs); try again "
				"once it has run, as root",
				pid, o->vcpu);
		}
	if (nf > 0) {
		free(v);
		v = f;
		n = (size_t)nf;
	} else {
		free(f);
	}
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%d", i ? " " : "", v[i]);
	free(v);
	return errmsg_set(msg, -EINVAL, "VM %d has no vCPU %d (%s%s)", pid,
			  o->vcpu, n ? "its vCPUs: " : "no vCPU is known: ",
			  n ? list : "name its threads or use debugfs");
}
