/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel file systems kvmstat reads, mounted where they are missing:
 * tracefs (the kvm tracepoints) and debugfs (the KVM counters of -d). A
 * fresh host mounts neither; run as root, kvmstat mounts what a source it
 * opens needs, as perf mounts tracefs, and leaves it mounted (others may
 * use it from then on). Without the privilege to mount, the line says
 * what is missing and the command that fixes it.
 */
#ifndef KVMSTAT_MOUNTS_H
#define KVMSTAT_MOUNTS_H

#include "errmsg.h"

enum mounts_fs {
	MOUNTS_TRACEFS,
	MOUNTS_DEBUGFS,
};

/* Where fs is mounted when mounts_ensure() mounts it ("/sys/kernel/...") */
const char *mounts_path(enum mounts_fs fs);

/*
 * Makes sure fs is mounted at its usual place (tracefs: also under a
 * mounted debugfs, where the kernel mounts it by itself). 0 when it was
 * there; 1 when this call mounted it, with a line in note saying so;
 * -errno with a line in err saying what is missing and how to mount it.
 * note and err may be NULL.
 */
int mounts_ensure(enum mounts_fs fs, struct errmsg *note, struct errmsg *err);

#endif
