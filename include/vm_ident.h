/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who a KVM VM process is, as its manager names it: which VMM runs it, the
 * VM's name and UUID, the systemd unit holding it and the Kubernetes pod it
 * runs in. Read from the process's command line, comm and cgroup under a
 * proc root, and from what libvirt and systemd-machined keep under a run
 * root ("/proc" and "/run", or fake trees in the tests). Meant to be read
 * once per VM, when it is first seen; callers keep it per pid.
 */
#ifndef KVMSTAT_VM_IDENT_H
#define KVMSTAT_VM_IDENT_H

#include <stdbool.h>
#include <sys/types.h>

/* The program running a VM, from its argv[0] or comm. */
enum vm_vmm {
	VM_VMM_OTHER = 0,
	VM_VMM_QEMU,		 /* qemu-system-*, qemu-kvm, kvm */
	VM_VMM_FIRECRACKER,	 /* firecracker (also under its jailer) */
	VM_VMM_CLOUD_HYPERVISOR, /* cloud-hypervisor */
	VM_VMM_CROSVM,		 /* crosvm */
	VM_VMM_KVMTOOL,		 /* lkvm, lkvm-static, kvmtool */
};

/* "qemu", "firecracker", "cloud-hypervisor", "crosvm", "kvmtool", or
 * "other" (also for a value out of range). */
const char *vm_vmm_name(enum vm_vmm v);

/* A VM's identity. The strings belong to the struct (vm_ident_clear). */
struct vm_ident {
	enum vm_vmm vmm;
	char *name; /* the VM's name as its manager gives it, or NULL */
	char *uuid; /* lower-case canonical 8-4-4-4-12, or NULL */
	char *unit; /* the systemd unit or scope holding it, escaped as
		     * systemd writes it ("machine-qemu\x2d1\x2dweb1.scope",
		     * "kvm-fc7.service"), or NULL */
	char *pod;  /* the Kubernetes pod's UID (lower case, with dashes)
		     * when its cgroup path holds one, or NULL */
};

/*
 * The identity of process pid, into *out (overwritten: clear an old one
 * first). proc_root is "/proc" or a fake tree; run_root is "/run" or a
 * fake tree, or NULL to look at none.
 *
 * The VMM comes from argv[0]'s base name, else comm. The name is the
 * first of: QEMU's -name (as vm_name_from_cmdline reads it; under
 * libvirt it is the domain's name), libvirt's pid file
 * RUN/libvirt/{qemu,ch}/NAME.pid holding pid, systemd-machined's state
 * file RUN/systemd/machines/NAME whose LEADER is pid, Firecracker's --id,
 * kvmtool's --name (-n), and the NAME of libvirt's scope
 * "machine-qemu\x2dN\x2dNAME.scope". The UUID is QEMU's -uuid, else
 * machined's ID. The unit is the deepest .scope or .service of the
 * cgroup path (the v2 line, else v1's name=systemd), else machined's
 * SCOPE; the pod is a kubepods pod's UID on that path (systemd or
 * cgroupfs driver).
 *
 * Returns 0, with the fields it cannot tell NULL (VM_VMM_OTHER); -ENOENT
 * or -ESRCH when the process is gone, -EINVAL for a pid below 1, or
 * another -errno when proc_root cannot be opened; *out is then empty.
 */
int vm_ident_read(const char *proc_root, const char *run_root, pid_t pid,
		  struct vm_ident *out);
/* The same on roots the caller opened (fs_open_dir); runfd -1: none. */
int vm_ident_read_at(int rootfd, int runfd, pid_t pid, struct vm_ident *out);
/* Frees what id owns and empties it. */
void vm_ident_clear(struct vm_ident *id);

/*
 * Whether text names the VM: equal to its name or its unit, or the same
 * UUID as its own (any case, with or without the dashes). Never by a
 * prefix; an empty text names none.
 */
bool vm_ident_matches(const struct vm_ident *id, const char *text);

#endif
