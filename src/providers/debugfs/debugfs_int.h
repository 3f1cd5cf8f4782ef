/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inside of the debugfs provider (src/providers/debugfs/), shared by
 * its parts: debugfs.c (the provider: open, read, close), counters.c (the
 * counter files and their names) and vm_dirs.c (the VM and vCPU
 * directories). Nothing outside that folder includes it but the unit
 * suite. Its names carry the prefix debugfs_.
 */
#ifndef KVMSTAT_DEBUGFS_INT_H
#define KVMSTAT_DEBUGFS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample.h"

struct provider;
struct reading;

/* A counter is at most 20 digits and a newline; anything longer is not. */
#define DEBUGFS_VALUE_MAX 32
/* Refreshes that carry SAMPLE_REBASE once a VM directory went: the one that
 * saw it go and the next, since the kernel removes the directory just
 * before it drops the VM from the totals. */
#define DEBUGFS_REBASE_REFRESHES 2

/* A counter name this provider reports, and its field. */
struct debugfs_name {
	char *name;
	int field;
	bool claimed; /* another provider owns it: fill-in only */
};

/* One counter file in one directory. */
struct debugfs_file {
	int fd;	  /* kept open for pread, or -1: reopened */
	int name; /* index in debugfs_priv.names */
};

struct debugfs_vcpu {
	int index; /* N of vcpuN */
	pid_t tid; /* vCPU thread, 0 until the vCPU first ran */
	int dirfd; /* kept while something must be reopened */
	int pidfd; /* pid file kept while tid is 0, if preadable */
	struct debugfs_file *f;
	size_t nf;
};

/* One <pid>-<fd> directory: tracked always, opened when its counters are
 * wanted (want_vms or -p). */
struct debugfs_vm {
	pid_t pid;
	int num;       /* the fd number of the name */
	ino_t ino;     /* tells a new VM from a gone one of that name */
	bool opened;   /* files and vCPUs open */
	bool failed;   /* could not be opened: tracked only */
	int dirfd;     /* -1 unless opened */
	nlink_t nlink; /* when vCPU directories were last listed */
	size_t hidden; /* files the kernel hid when it was opened */
	struct debugfs_file *f;
	size_t nf;
	struct debugfs_vcpu *vcpu;
	size_t nvcpu;
};

/* One vCPU counter read in this refresh. */
struct debugfs_vcval {
	int vcpu;
	int name;
	pid_t tid;
	uint64_t value;
};

/* A VM directory seen by one listing of the root. */
struct debugfs_ent {
	pid_t pid;
	int num;
	ino_t ino;
};

struct debugfs_priv {
	char *root; /* owned copy of opts->debugfs_root */
	int rootfd; /* listed each refresh; openat base */
	pid_t pid;  /* -p, or 0 */
	/* of the hidden files, those refused with EACCES (file permissions,
	 * not lockdown, which refuses with EPERM) */
	size_t denied;
	struct debugfs_name *names; /* every counter name reported */
	size_t nnames, capnames;
	struct reading *val;	  /* per name: sum in this refresh */
	struct debugfs_file *top; /* top-level totals (not with -p) */
	size_t ntop;
	struct reading *topval; /* per top file, this refresh */
	struct debugfs_vm *vms; /* sorted by (pid, num) */
	size_t nvms;
	struct debugfs_vm *vms_next; /* merge scratch, capvms too */
	size_t capvms;
	struct debugfs_ent *ents; /* one listing of the root */
	size_t nents, capents;
	struct debugfs_vcval *vc; /* one process's vCPU readings */
	size_t nvc, capvc;
	int rebase_left; /* refreshes still to flag REBASE */
	bool vanished;	 /* a VM went during this refresh */
	bool emfile_noted, gone_noted;
	/* names another provider owns: read per VM, for the VMs it did not
	 * serve (no top-level file for them) */
	bool fallback;
	/* kvm_stat's columns: its field list (debugfs_kvm_stat_exempt) */
	bool kvm_stat_columns;
};

/* counters.c */
/* A file kvm_stat -d leaves out of its fields (a time, not a count: its
 * nanoseconds would overflow the count columns), as kvmstat does in those
 * columns; --units, --json, the monitor and the exporter show it as a
 * time. */
bool debugfs_kvm_stat_exempt(const struct debugfs_priv *d, const char *name);
/*
 * Exposed for tests. Errors that mean the kernel hides the file from us
 * (lockdown refuses writable debugfs files with EPERM; EACCES for plain
 * permissions) rather than that it is broken or gone.
 */
bool debugfs_hidden_errno(int err);
/* Counts a file refused for its permissions (EACCES), as opposed to one
 * kernel lockdown hides (EPERM). */
void debugfs_note_denied(struct provider *p, int err);
/* Errors reading a VM's file that mean the VM is going away. */
bool debugfs_gone_errno(int err);
/* Closes *fd if open and sets it to -1. */
void debugfs_close_fd(int *fd);
/* Parses a decimal that ends at the first non-digit into *end. */
bool debugfs_parse_num(const char *s, const char **end, long *out);
/* One read of a small file from its start, through fd if it can be pread,
 * else by opening name in dirfd: bytes (NUL-terminated) or -errno. */
ssize_t debugfs_read_buf(int dirfd, const char *name, int fd, char *buf,
			 size_t len);
/* Reads one counter: 0, -errno, or -EINVAL when it is not one number. */
int debugfs_read_value(int dirfd, const char *name, int fd, uint64_t *v);
/*
 * Opens name in dirfd and checks that it holds one unsigned decimal. Returns
 * 0 with *fdp (an fd to pread, or -1 when the file must be reopened each
 * time) and *type, 1 when the file is not a counter, or -errno when it
 * cannot be opened or read (debugfs_hidden_errno() tells lockdown apart).
 */
int debugfs_open_counter(int dirfd, const char *name, int *fdp,
			 enum field_type *type);
/* Index of a reported name, or -1. */
int debugfs_name_find(const struct provider *p, const char *name);
/* Index of name, interning its field when it is new to this provider. */
int debugfs_name_add(struct provider *p, const char *name, enum field_type type);
/* Closes the n files of f that are kept open (f itself is the caller's). */
void debugfs_files_close(struct debugfs_file *f, size_t n);

/* vm_dirs.c */
/* Closes and frees what a VM holds open: its files, vCPUs and directory. */
void debugfs_vm_close(struct debugfs_vm *vm);
/* Reads a vCPU's thread id; keeps the pid file (or its directory) open
 * while the kernel still says 0, i.e. the vCPU has not run yet. */
void debugfs_vcpu_tid(struct debugfs_vcpu *c);
/*
 * Lists a VM directory: opens its counter files the first time (first is
 * true; files the kernel hides are counted in vm->hidden) and any vcpuN
 * directory not seen yet. 0 or -errno.
 */
int debugfs_vm_list(struct provider *p, struct debugfs_vm *vm, bool first);
/* Opens a VM's directory, counters and vCPUs. 0, or -errno (the VM stays
 * unopened). */
int debugfs_vm_open(struct provider *p, struct debugfs_vm *vm);
/* Whether this refresh wants the VMs' own counters. */
bool debugfs_want_vms(const struct provider *p);
/* Says once that the fd limit left VMs' counters out. */
void debugfs_note_emfile(struct provider *p);
/*
 * Lists the root and brings d->vms in line with it: a VM that went is
 * closed and forgotten (d->vanished), a new one is tracked, and opened when
 * VM counters are wanted. With -p only that process's VMs are tracked.
 * 0 or -errno when the root cannot be listed.
 */
int debugfs_scan(struct provider *p);

#endif
