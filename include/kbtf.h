/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The layout of the kernel's own structs, read from its BTF
 * (/sys/kernel/btf: vmlinux, and a module's split on it): where a member
 * sits, how big it is, what a pointer points at. The files are world
 * readable, so unlike libbpf's CO-RE against module types (which lists
 * the kernel's BTF objects, a CAP_SYS_ADMIN operation) this needs no
 * privilege. The directory is injectable, for tests' own BTF files.
 */
#ifndef KVMSTAT_KBTF_H
#define KVMSTAT_KBTF_H

#include <stdbool.h>
#include <stdint.h>

struct kbtf;

/* One member of a struct, as kbtf_member() finds it. */
struct kbtf_member {
	uint32_t offset;     /* bytes from the start of the struct */
	uint32_t size;	     /* bytes */
	bool integer;	     /* an integer or enum of 1, 2, 4 or 8 bytes */
	const char *type;    /* its type's name, typedefs and qualifiers
			      * looked through ("kvm_vcpu", "unsigned int"),
			      * "" when anonymous (kbtf's, as pointee) */
	const char *pointee; /* a pointer to a named struct or union: its
			      * name (kbtf's, valid until kbtf_close), else
			      * NULL */
};

/*
 * The BTF of dir ("/sys/kernel/btf", NULL for it): vmlinux, with module's
 * split on it when dir/module exists (else vmlinux's alone: the module
 * built in, or none given). NULL with *err -errno (-ENOENT: no vmlinux
 * BTF, a kernel without CONFIG_DEBUG_INFO_BTF). Close with kbtf_close().
 */
struct kbtf *kbtf_open(const char *dir, const char *module, int *err);
void kbtf_close(struct kbtf *k);

/*
 * Member path (dotted: "control.exit_code"; anonymous structs and unions
 * on the way are looked through) of struct sname, the module's own struct
 * first, into *out. 0; -ENOENT without such a struct or member; -EINVAL
 * for a bitfield or a path through a member that is not a struct or
 * union.
 */
int kbtf_member(const struct kbtf *k, const char *sname, const char *path,
		struct kbtf_member *out);

#endif
