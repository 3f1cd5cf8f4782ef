/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The check of --vcpu N against the vCPUs the VM has: the ones the
 * providers counted, or before anything was counted the VM's named vCPU
 * threads in /proc, or KVM's debugfs tree.
 */
#ifndef KVMSTAT_VCPU_CHECK_H
#define KVMSTAT_VCPU_CHECK_H

#include <stddef.h>

#include "options.h"
#include "stats.h"

struct errmsg;

/*
 * 0 when o->vcpu is unset or names a vCPU of VM pid (the run's); else -EINVAL with
 * one line in msg: "VM PID has no vCPU N (its vCPUs: 0 1 2)", or what to
 * do when no vCPU is known at all. Run it after the first sample.
 */
int vcpu_check(const struct stats *s, const struct options *o, pid_t pid,
	       struct errmsg *msg);

#endif
