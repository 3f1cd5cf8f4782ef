// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where each vCPU's time goes, for the loop: the collector (vtscan.h)
 * started by --vcpu-time or the monitor's 't', updated before each render
 * from the same refresh's stats (KVM's halt statistics) and exit latency,
 * and recorded with the refresh; a replay's is the recording's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop_int.h"
#include "replay.h"
#include "util.h"
#include "vtscan.h"

/* CLOCK_BOOTTIME in ns: the clock of a thread's start time. */
static uint64_t loop_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int loop_vcputime_on(struct loop *l, bool on)
{
	int rc;

	if (l->vt) {
		vtscan_close(l->vt);
		free(l->vt);
		l->vt = NULL;
	}
	if (!on)
		return 0;
	l->vt = xcalloc(1, sizeof(*l->vt));
	rc = vtscan_open(l->vt, l->opts->proc_root, l->opts->debugfs_root);
	if (rc) {
		vtscan_close(l->vt);
		free(l->vt);
		l->vt = NULL;
		return loop_fail(l, rc, false,
				 "--vcpu-time cannot read /proc: %s",
				 strerror(-rc));
	}
	return 0;
}

void loop_vcputime(struct loop *l, const struct hist_set *hs,
		   const struct snap_latency *lat)
{
	struct vtscan_req r = {
		.watched = l->run.pid,
		.stats = &l->stats,
		.lat = hs,
		.latinfo = lat,
		.per_vcpu = l->opts->per_vcpu,
		.now_ns = loop_boottime_ns(),
		.vms = &l->vms,
		.run_root = l->opts->run_root,
	};

	/* once per sample: renders from the same sample (a scrape, the
	 * monitor's drill-down) share it */
	if (!l->vt || (l->vt->stamp && l->vt->stamp == l->stats.refreshes))
		return;
	l->vt->stamp = l->stats.refreshes;
	vtscan_update(l->vt, &r);
	loop_record_vcputime(l, vtscan_result(l->vt));
}

const struct vcputime *loop_vcputime_result(const struct loop *l)
{
	/* a replay's is the one recorded, at the refresh it holds */
	if (l->replay)
		return replay_vcputime(l->replay, l->opts->per_vcpu);
	return l->vt ? vtscan_result(l->vt) : NULL;
}
