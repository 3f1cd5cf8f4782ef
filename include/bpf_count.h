/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-kernel counting of tracepoint hits by (process, thread, reason) with
 * one tiny BPF program per tracepoint, instead of one filtered perf event
 * per reason and CPU. Its cost per hit is one map update, whatever the
 * number of reasons, and it yields per-VM and per-vCPU counts for free.
 */
#ifndef KVMSTAT_BPF_COUNT_H
#define KVMSTAT_BPF_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The map key, as the BPF program writes it. */
struct bpf_count_key {
	uint32_t tgid;	 /* VM process */
	uint32_t tid;	 /* thread (vCPU) */
	uint32_t reason; /* raw value of the reason field */
	uint16_t event;	 /* caller's index of the tracepoint */
	uint16_t isa;	 /* value of the guard field (isa), or 0 */
};

/* Where the program finds its inputs in the raw trace record. */
struct bpf_count_field {
	unsigned int offset;
	unsigned int size; /* 1, 2, 4 or 8; 0 = absent (counts as 0) */
};

struct bpf_count;

/* Creates the map; NULL with *err = -errno (EPERM: no CAP_BPF/CAP_SYS_ADMIN). */
struct bpf_count *bpf_count_new(unsigned int max_entries, int *err);
/* Loads a program for tracepoint id tp_id and attaches it through a perf
 * event on CPU 0 (the program then runs on every CPU). 0 or -errno. */
int bpf_count_attach(struct bpf_count *bc, int tp_id, uint16_t event,
		     struct bpf_count_field reason, struct bpf_count_field isa);
/* Calls fn for every key and its count; 0 or -errno. */
int bpf_count_read(struct bpf_count *bc,
		   void (*fn)(void *ctx, const struct bpf_count_key *key,
			      uint64_t count),
		   void *ctx);
/* Removes keys from the map (those of processes that exited, so that it
 * never fills up); keys already gone are no error. 0 or the first -errno. */
int bpf_count_delete(struct bpf_count *bc, const struct bpf_count_key *keys,
		     size_t n);
/* File descriptors it holds (map, programs, perf events). */
size_t bpf_count_fds(const struct bpf_count *bc);
void bpf_count_free(struct bpf_count *bc);

#endif
