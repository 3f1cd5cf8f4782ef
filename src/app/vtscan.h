/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where each vCPU's time goes (vcputime.h), collected from /proc at each
 * refresh: the threads of every VM (all of them listed every 10 s, those
 * the providers read at once), vCPUs and the VMM's others (its vhost
 * workers included), their schedstat and stat files kept open and read
 * with pread; KVM's halt statistics from the run's stats, exit latency's
 * times where loaded. Asked for by --vcpu-time and the monitor's 't';
 * costs nothing otherwise.
 */
#ifndef KVMSTAT_VTSCAN_H
#define KVMSTAT_VTSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"
#include "snapshot.h"
#include "stats.h"
#include "vcputime.h"
#include "vmdir.h"

struct vtscan_vm;

struct vtscan {
	int rootfd; /* the proc root */
	const char *proc_root;
	/* KVM's debugfs directory, where a VM whose threads bear no VMM's
	 * vCPU names has its vCPUs' threads (NULL: not looked at) */
	const char *debugfs_root;
	struct vtscan_vm *vms; /* by pid */
	size_t nvms, cap;
	uint64_t hz;	  /* clock ticks per second */
	uint64_t list_ns; /* when every VM and vhost worker was looked for */
	struct vcputime_vm *out; /* the result's VMs */
	struct vcputime result;
	char source[192];    /* result.source */
	size_t nofile;	     /* threads not opened for want of fds */
	unsigned long stamp; /* the caller's: the refresh last read */
};

/* What one refresh reads. */
struct vtscan_req {
	pid_t watched;			    /* -p: this VM alone; 0: all */
	const struct stats *stats;	    /* halt statistics, or NULL */
	const struct hist_set *lat;	    /* exit latency, or NULL */
	const struct snap_latency *latinfo; /* its fields, or NULL */
	bool per_vcpu;			    /* --per-vcpu */
	uint64_t now_ns;		    /* CLOCK_BOOTTIME */
	/* the run's directory of VMs, whose names (who each VM is, looked
	 * up once: vmscan_ident) the VMs take */
	struct vmdir *vms;
	const char *run_root; /* for those it has not looked up yet */
};

/* Opens the proc root (NULL: /proc), KVM's debugfs directory for VMs
 * with unnamed vCPU threads (NULL: none): 0 or -errno. */
int vtscan_open(struct vtscan *v, const char *proc_root,
		const char *debugfs_root);
/* Reads every VM's threads and splits their time since the last update. */
void vtscan_update(struct vtscan *v, const struct vtscan_req *r);
/* The last update's result (valid until the next update or close). */
const struct vcputime *vtscan_result(const struct vtscan *v);
void vtscan_close(struct vtscan *v);

#endif
