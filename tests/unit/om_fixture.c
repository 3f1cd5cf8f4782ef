// SPDX-License-Identifier: GPL-2.0-only
/*
 * The OpenMetrics fixture (om_fixture.h): a host with two VMs and fields
 * of every kind the exporter tells apart, pushed by hand through the
 * stats aggregator as two refreshes.
 */
#include <stdint.h>
#include <stdio.h>

#include "om_fixture.h"

static int om_fid(struct stats *s, const char *name, int parent,
		  enum field_type type, const char *provider)
{
	return field_table_intern(&s->fields, name, parent, type, provider);
}

static void om_push(struct stats *s, int f, pid_t pid, int vcpu, uint64_t v)
{
	sample_set_push(&s->set, f, pid, vcpu, 0, v, 0);
}

void om_fixture_snapshot(const struct stats *s, const struct field_filter *f,
			 struct snapshot *snap)
{
	struct vmdir names;
	struct snap_request req = { .filter = f, .vms = &names };

	vmdir_init(&names);
	vmdir_set_name(vmdir_get(&names, 100), "alpha");
	vmdir_set_name(vmdir_get(&names, 200), "be\"ta\\x\ny");
	snapshot_build(s, &req, snap);
	vmdir_free(&names);
}

/*
 * The fixture: two refreshes of a host with VM 100 (vCPUs 0 and 1) and VM
 * 200, totals since the VMs started (-i), as the exporter runs.
 */
void om_fixture_build(struct stats *s)
{
	struct field_info *fi;
	int exit, hlt, io, uexit, uhlt, halt, wait_ns, hist, hb[4], peak, mem,
		odd, stale, poll;
	static const uint64_t lo[4] = { 0, 1, 2, 4 };
	static const uint64_t hi[4] = { 1, 2, 4, UINT64_MAX };

	stats_init(s, true);
	exit = om_fid(s, "kvm_exit", -1, FIELD_CUMULATIVE, "tracepoint");
	hlt = om_fid(s, "kvm_exit(HLT)", exit, FIELD_CUMULATIVE, "tracepoint");
	io = om_fid(s, "kvm_exit(IO_INSTRUCTION)", exit, FIELD_CUMULATIVE,
		    "tracepoint");
	uexit = om_fid(s, "kvm_userspace_exit", -1, FIELD_CUMULATIVE,
		       "tracepoint");
	uhlt = om_fid(s, "kvm_userspace_exit(HLT)", uexit, FIELD_CUMULATIVE,
		      "tracepoint");
	halt = om_fid(s, "halt_exits", -1, FIELD_CUMULATIVE, "debugfs");
	wait_ns = om_fid(s, "halt_wait_ns", -1, FIELD_CUMULATIVE, "statsfd");
	fi = field_table_info(&s->fields, wait_ns);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;
	hist = om_fid(s, "halt_wait_hist", -1, FIELD_CUMULATIVE, "statsfd");
	fi = field_table_info(&s->fields, hist);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;
	fi->hist = HIST_LOG2;
	for (int i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "halt_wait_hist(%d)", i);
		hb[i] = om_fid(s, name, hist, FIELD_CUMULATIVE, "statsfd");
		fi = field_table_info(&s->fields, hb[i]);
		fi->bucket = i;
		fi->bucket_lo = lo[i];
		fi->bucket_hi = hi[i];
	}
	peak = om_fid(s, "max_mmu_page_hash_collisions", -1, FIELD_PEAK,
		      "statsfd");
	mem = om_fid(s, "pages_mapped", -1, FIELD_INSTANT, "statsfd");
	fi = field_table_info(&s->fields, mem);
	fi->unit = UNIT_BYTES;
	fi->exponent = 12;
	fi->base = 2;
	odd = om_fid(s, "remote-tlb.flush", -1, FIELD_CUMULATIVE, "debugfs");
	stale = om_fid(s, "mmio_exits", -1, FIELD_CUMULATIVE, "debugfs");
	/* nanoseconds, as the debugfs provider declares its *_ns files */
	poll = om_fid(s, "halt_poll_success_ns", -1, FIELD_CUMULATIVE,
		      "debugfs");
	fi = field_table_info(&s->fields, poll);
	fi->unit = UNIT_SECONDS;
	fi->exponent = -9;
	fi->base = 10;

	for (int round = 0; round < 2; round++) {
		uint64_t k = round + 1;

		om_push(s, exit, 0, -1, 1000 * k);
		om_push(s, hlt, 0, -1, 600 * k);
		om_push(s, io, 0, -1, 400 * k);
		om_push(s, exit, 100, -1, 700 * k);
		om_push(s, hlt, 100, -1, 500 * k);
		om_push(s, io, 100, -1, 200 * k);
		om_push(s, uhlt, 0, -1, 40 * k);
		om_push(s, uhlt, 100, -1, 30 * k);
		om_push(s, uhlt, 200, -1, 10 * k);
		om_push(s, halt, 0, -1, 50 * k);
		om_push(s, halt, 100, -1, 35 * k);
		om_push(s, halt, 100, 0, 20 * k);
		om_push(s, halt, 100, 1, 15 * k);
		om_push(s, halt, 200, -1, 15 * k);
		om_push(s, wait_ns, 0, -1, 1500000001ull * k);
		om_push(s, wait_ns, 100, 0, 1000000000ull * k);
		for (int i = 0; i < 4; i++) {
			om_push(s, hb[i], 0, -1, (uint64_t)(i + 1) * k);
			om_push(s, hb[i], 100, 0, (uint64_t)i * k);
		}
		om_push(s, peak, 0, -1, 7);
		om_push(s, mem, 0, -1, 3 * k);
		om_push(s, odd, 0, -1, 9 * k);
		om_push(s, poll, 0, -1, 2500 * k);
		if (round == 0)
			om_push(s, stale, 0, -1, 5);
		stats_update(s, (round + 1) * 2000000000ull);
	}
}

void om_fixture_render(struct strbuf *b, enum openmetrics_format fmt,
		       bool per_vcpu)
{
	struct stats s;
	struct snapshot snap;

	om_fixture_build(&s);
	om_fixture_snapshot(&s, NULL, &snap);
	strbuf_init(b);
	openmetrics_render(b, &snap, fmt, per_vcpu);
	snapshot_free(&snap);
	stats_free(&s);
}
