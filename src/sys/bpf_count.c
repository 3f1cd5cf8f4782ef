// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counting exit reasons in the kernel with BPF, written against the raw
 * bpf(2) and perf_event_open(2) interfaces (no libbpf): one hash map keyed
 * by (tgid, tid, reason, event, isa) and, per tracepoint, a dozen-instruction
 * program that bumps the key's count and returns 1 so that perf counting of
 * the same tracepoint carries on.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_count.h"
#include "util.h"

#define BPF_COUNT_BATCH 1024
#define BPF_COUNT_MAX_PROGS 512

struct bpf_count {
	int map_fd;
	int prog_fd[BPF_COUNT_MAX_PROGS];
	int perf_fd[BPF_COUNT_MAX_PROGS];
	size_t nprogs;
	bool no_batch; /* kernel lacks BPF_MAP_LOOKUP_BATCH */
	struct bpf_count_key keys[BPF_COUNT_BATCH]; /* read buffers */
	uint64_t values[BPF_COUNT_BATCH];
};

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Instruction builders: data only, no control flow hidden in them. */
static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off,
			    int32_t imm)
{
	struct bpf_insn i = { .code = code,
			      .dst_reg = dst,
			      .src_reg = src,
			      .off = off,
			      .imm = imm };
	return i;
}

static uint8_t bpf_size(unsigned int bytes)
{
	switch (bytes) {
	case 1:
		return BPF_B;
	case 2:
		return BPF_H;
	case 8:
		return BPF_DW;
	default:
		return BPF_W;
	}
}

/*
 * The program, with r10 the frame pointer and the key at fp-16:
 *   r6 = ctx; r0 = pid_tgid; key.tid = r0; key.tgid = r0 >> 32;
 *   key.reason = ctx[reason]; key.event = EVENT; key.isa = ctx[isa] or 0;
 *   r0 = lookup(map, key); if r0: *r0 += 1 (atomic), goto out;
 *   value = 1; if update(map, key, value, NOEXIST) != 0:
 *       r0 = lookup(map, key); if r0: *r0 += 1 (atomic)
 *   out: return 1
 */
static size_t build_prog(struct bpf_insn *p, int map_fd, uint16_t event,
			 struct bpf_count_field reason,
			 struct bpf_count_field isa)
{
	size_t n = 0, jmp_found, jmp_done, jmp_retry_miss;

	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
	p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0,
		      BPF_FUNC_get_current_pid_tgid);
	p[n++] = insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -12, 0);
	p[n++] = insn(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	p[n++] = insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -16, 0);
	if (reason.size) {
		p[n++] = insn(BPF_LDX | BPF_MEM | bpf_size(reason.size),
			      BPF_REG_1, BPF_REG_6, (int16_t)reason.offset, 0);
		p[n++] = insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_1,
			      -8, 0);
	} else {
		p[n++] = insn(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -8, 0);
	}
	p[n++] = insn(BPF_ST | BPF_MEM | BPF_H, BPF_REG_10, 0, -4, event);
	if (isa.size) {
		p[n++] = insn(BPF_LDX | BPF_MEM | bpf_size(isa.size), BPF_REG_1,
			      BPF_REG_6, (int16_t)isa.offset, 0);
		p[n++] = insn(BPF_STX | BPF_MEM | BPF_H, BPF_REG_10, BPF_REG_1,
			      -2, 0);
	} else {
		p[n++] = insn(BPF_ST | BPF_MEM | BPF_H, BPF_REG_10, 0, -2, 0);
	}
	/* r0 = lookup(map, fp - 16) */
	p[n++] = insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD,
		      0, map_fd);
	p[n++] = insn(0, 0, 0, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16);
	p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	jmp_found = n;
	p[n++] = insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 0, 0);
	/* value at fp-24 = 1; update(map, key, value, BPF_NOEXIST) */
	p[n++] = insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -24, 1);
	p[n++] = insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD,
		      0, map_fd);
	p[n++] = insn(0, 0, 0, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -24);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_NOEXIST);
	p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_update_elem);
	jmp_done = n;
	p[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0);
	/* another CPU inserted the key first: look it up again */
	p[n++] = insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD,
		      0, map_fd);
	p[n++] = insn(0, 0, 0, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16);
	p[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	jmp_retry_miss = n;
	p[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0);
	/* found: atomic add 1 */
	p[jmp_found].off = (int16_t)(n - jmp_found - 1);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
	p[n++] = insn(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0,
		      BPF_ADD);
	/* out: return 1 */
	p[jmp_done].off = (int16_t)(n - jmp_done - 1);
	p[jmp_retry_miss].off = (int16_t)(n - jmp_retry_miss - 1);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

struct bpf_count *bpf_count_new(unsigned int max_entries, int *err)
{
	union bpf_attr attr;
	struct bpf_count *bc;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_HASH;
	attr.key_size = sizeof(struct bpf_count_key);
	attr.value_size = sizeof(uint64_t);
	attr.max_entries = max_entries;
	memcpy(attr.map_name, "kvmstat_reason", sizeof("kvmstat_reason"));
	fd = (int)sys_bpf(BPF_MAP_CREATE, &attr);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	bc = xcalloc(1, sizeof(*bc));
	bc->map_fd = fd;
	return bc;
}

static int perf_open_tp_cpu0(int tp_id)
{
	struct perf_event_attr pa;

	/* Only a carrier: the tracepoint runs attached programs on every CPU
	 * whether or not the event counts, so it stays disabled and costs
	 * nothing per hit. */
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)tp_id;
	pa.disabled = 1;
	return (int)syscall(__NR_perf_event_open, &pa, -1, 0, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int bpf_count_attach(struct bpf_count *bc, int tp_id, uint16_t event,
		     struct bpf_count_field reason, struct bpf_count_field isa)
{
	struct bpf_insn prog[64];
	union bpf_attr attr;
	int prog_fd, perf_fd, rc;
	size_t n;

	if (bc->nprogs == BPF_COUNT_MAX_PROGS)
		return -ENOSPC;
	if (reason.offset > 0x7fff || isa.offset > 0x7fff)
		return -EINVAL;
	n = build_prog(prog, bc->map_fd, event, reason, isa);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t) "GPL";
	memcpy(attr.prog_name, "kvmstat_count", sizeof("kvmstat_count"));
	prog_fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog_fd < 0)
		return -errno;
	perf_fd = perf_open_tp_cpu0(tp_id);
	if (perf_fd < 0) {
		rc = -errno;
		goto out_close_prog;
	}
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		rc = -errno;
		goto out_close_perf;
	}
	bc->prog_fd[bc->nprogs] = prog_fd;
	bc->perf_fd[bc->nprogs] = perf_fd;
	bc->nprogs++;
	return 0;

out_close_perf:
	close(perf_fd);
out_close_prog:
	close(prog_fd);
	return rc;
}

/* Walks the map key by key: for kernels without batch lookups. */
static int read_by_key(struct bpf_count *bc,
		       void (*fn)(void *, const struct bpf_count_key *,
				  uint64_t),
		       void *ctx)
{
	struct bpf_count_key key, next;
	union bpf_attr attr;
	uint64_t value;
	bool first = true;

	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)bc->map_fd;
		attr.key = first ? 0 : (uint64_t)(uintptr_t)&key;
		attr.next_key = (uint64_t)(uintptr_t)&next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &attr))
			return errno == ENOENT ? 0 : -errno;
		first = false;
		key = next;
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)bc->map_fd;
		attr.key = (uint64_t)(uintptr_t)&key;
		attr.value = (uint64_t)(uintptr_t)&value;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr) == 0)
			fn(ctx, &key, value);
	}
}

int bpf_count_read(struct bpf_count *bc,
		   void (*fn)(void *ctx, const struct bpf_count_key *key,
			      uint64_t count),
		   void *ctx)
{
	struct bpf_count_key *keys = bc->keys;
	uint64_t *values = bc->values;
	uint64_t in_batch = 0, out_batch = 0;
	union bpf_attr attr;
	bool first = true;

	if (bc->no_batch)
		return read_by_key(bc, fn, ctx);
	for (;;) {
		long rc;

		memset(&attr, 0, sizeof(attr));
		attr.batch.map_fd = (uint32_t)bc->map_fd;
		attr.batch.in_batch = first ? 0 :
					      (uint64_t)(uintptr_t)&in_batch;
		attr.batch.out_batch = (uint64_t)(uintptr_t)&out_batch;
		attr.batch.keys = (uint64_t)(uintptr_t)keys;
		attr.batch.values = (uint64_t)(uintptr_t)values;
		attr.batch.count = BPF_COUNT_BATCH;
		rc = sys_bpf(BPF_MAP_LOOKUP_BATCH, &attr);
		if (rc && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP ||
				      errno == EOPNOTSUPP)) {
				bc->no_batch = true;
				return read_by_key(bc, fn, ctx);
			}
			return -errno;
		}
		for (uint32_t i = 0; i < attr.batch.count; i++)
			fn(ctx, &keys[i], values[i]);
		if (rc) /* ENOENT: that was the last batch */
			return 0;
		in_batch = out_batch;
		first = false;
	}
}

int bpf_count_delete(struct bpf_count *bc, const struct bpf_count_key *keys,
		     size_t n)
{
	union bpf_attr attr;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)bc->map_fd;
		attr.key = (uint64_t)(uintptr_t)&keys[i];
		if (sys_bpf(BPF_MAP_DELETE_ELEM, &attr) && errno != ENOENT &&
		    !rc)
			rc = -errno;
	}
	return rc;
}

size_t bpf_count_fds(const struct bpf_count *bc)
{
	return 1 + 2 * bc->nprogs;
}

void bpf_count_free(struct bpf_count *bc)
{
	if (!bc)
		return;
	for (size_t i = 0; i < bc->nprogs; i++) {
		close(bc->perf_fd[i]);
		close(bc->prog_fd[i]);
	}
	close(bc->map_fd);
	free(bc);
}
