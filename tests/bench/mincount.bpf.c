// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bench's yardstick: the least a raw-tracepoint counter can do, one
 * per-CPU array increment per hit, to compare kvmstat's cost per hit with.
 */
/* in this order: the helpers' declarations use the kernel's types */
#include <linux/types.h>

#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} mc_hits SEC(".maps");

SEC("raw_tp")
int mincount(void *ctx)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&mc_hits, &k);

	if (c)
		*c += 1;
	return 0;
}
