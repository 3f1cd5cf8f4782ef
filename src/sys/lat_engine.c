// SPDX-License-Identifier: GPL-2.0-only
/*
 * The user side of the exit-latency engine (see include/lat_engine.h):
 * opens the skeleton of src/bpf/latency.bpf.c, turns on only the programs
 * the caller's marks need (in task storage or, where the kernel lacks it
 * or refuses them, the LRU-hash set), fixes their read-only
 * configuration, loads, attaches, and walks the histograms. libbpf's
 * messages go where the counting engine keeps them (bpf_engine_last_log).
 *
 * What each re-entry mark costs, measured on this host (kernel 6.18,
 * nested KVM, a vCPU making port I/O exits of ~7.5 us; per-program time
 * from the kernel's bpf_stats, which adds ~45 ns of its own to each run
 * (an empty program reads 46); exit rate per CPU second of the vCPU
 * thread against unmonitored blocks on both sides, median of 9 rounds;
 * the rate's spread, +-5 to 8 %, hides differences under ~1 %):
 *  - kvm_entry: never fires on this host (so nothing measured); where it
 *    fires it is the mark, loaded always, and once it has fired the next
 *    read detaches the KVM_RUN mark below.
 *  - fentry on kvm_arch_vcpu_ioctl_run: the kernel refuses to load
 *    fentry programs here (EPERM at BPF_PROG_LOAD, empty verifier log;
 *    tp_btf programs of the same type load): it refuses all function
 *    tracing (available_filter_functions and set_ftrace_filter give
 *    EPERM, "function" cannot be set as current_tracer). Not lockdown:
 *    it is in "integrity" mode, which leaves tracing alone, and logs
 *    nothing for these. libbpf's tracing-type probe fails the same way,
 *    so fentry is not even tried here. Where it loads it is the first choice: one hit
 *    per KVM_RUN, at its start.
 *  - a kprobe on kvm_arch_vcpu_ioctl_run: not attachable here (no
 *    kprobe PMU, CONFIG_KPROBE_EVENTS off: no kprobe_events file).
 *  - kvm_fpu(load), what this host uses: two hits per exit (load and
 *    put; put leaves at once): 82-95 ns a run on average, ~180 ns an
 *    exit, the guest keeping 90-93 % of its rate (97 % with no mark).
 *    It fires after KVM_RUN's own setup, ~7 us later than the ioctl's
 *    entry on this nested host (tracefs shows sys_enter, then kvm_fpu
 *    load 7 us on): the VMM time includes that, as it would up to
 *    kvm_entry.
 *  - raw_syscalls:sys_enter filtered to ioctl KVM_RUN
 *    (KVMSTAT_LATENCY_MARK=syscall): one hit per exit, 124-157 ns a run
 *    with the guest's, the guest's rate 89-91 % (no better than
 *    kvm_fpu), and every system call of every process pays: a getppid()
 *    loop went from 130 to 173 ns a call (+43 ns, +33 %). Never picked
 *    by itself; the VMM time it gives is QEMU's alone (~0.4 us here).
 * The state (before -> after, same run): LRU hash per thread and a hash
 * lookup per closed exit 127 ns (kvm_userspace_exit) + 2 x 115 ns
 * (kvm_fpu) per exit -> task storage and the histogram slot cached in
 * it 103 + 2 x 93 ns: ~70 ns less per exit, ~30 % of the programs' own
 * work (what bpf_stats adds aside); two clock reads (~50 ns each here)
 * are most of what is left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kvm.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_engine.h"
#include "lat_engine.h"
#include "latency.skel.h"
#include "util.h"

#define LAT_MAX_LINKS 6

/* The program of that name in the set e uses. */
#define LAT_PROG(name) (e->task ? e->skel->progs.name : e->skel->progs.name##_h)

struct lat_engine {
	bool task;     /* the exits in flight in task storage */
	int mark_link; /* the KVM_RUN mark's link in links, or -1 */
	struct latency_bpf *skel;
	struct bpf_link *links[LAT_MAX_LINKS];
	size_t nlinks;
};

bool lat_engine_has_fentry(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	if (!btf)
		return false;
	ok = btf__find_by_name_kind(btf, "kvm_arch_vcpu_ioctl_run",
				    BTF_KIND_FUNC) > 0;
	btf__free(btf);
	/* a kernel that refuses fentry programs (this nested host: EPERM
	 * at load, as it refuses function tracing) fails libbpf's probe */
	return ok &&
	       libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING, NULL) > 0;
}

/* Whether the kernel has task storage and lets raw tracepoint programs
 * reach it (5.11 on): where the programs keep a thread's state (which a
 * timed breakdown then reads there too). */
static bool lat_engine_has_task_storage(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) > 0 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
				       BPF_FUNC_task_storage_get, NULL) > 0 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
				       BPF_FUNC_get_current_task_btf, NULL) > 0;
}

const char *lat_engine_state(const struct lat_engine *e)
{
	return e->task ? "task storage" : "hash";
}

int lat_engine_state_fd(const struct lat_engine *e, bool *task)
{
	*task = e->task;
	return bpf_map__fd(e->task ? e->skel->maps.lat_task :
				     e->skel->maps.lat_starts);
}

/* A program on a tracepoint's record, on the perf event the counting
 * engine opens for its own record programs. */
static struct bpf_link *lat_attach_record(struct bpf_program *prog, int id)
{
	struct bpf_link *l;
	int fd = bpf_engine_perf_open(id);

	if (fd < 0)
		return NULL;
	l = bpf_program__attach_perf_event(prog, fd);
	if (!l)
		close(fd);
	return l;
}

/* One set of programs: task (the exits in flight in task storage) or
 * the LRU hash fallback (the programs named *_h). */
static struct lat_engine *lat_open(const struct lat_engine_cfg *cfg, bool task,
				   int *err, const char **what)
{
	struct lat_engine *e = xcalloc(1, sizeof(*e));
	struct bpf_program *prog;
	struct {
		struct bpf_program *prog;
		const char *raw; /* raw tracepoint, or NULL */
		int id;		 /* record program's tracepoint */
		const char *what;
	} att[LAT_MAX_LINKS];
	size_t n = 0, nmark;

	*what = "the latency programs";
	e->task = task;
	e->mark_link = -1;
	e->skel = latency_bpf__open();
	if (!e->skel) {
		*err = errno ? -errno : -EINVAL;
		goto out_free;
	}
	bpf_object__for_each_program(prog, e->skel->obj)
		bpf_program__set_autoload(prog, false);
	bpf_map__set_autocreate(task ? e->skel->maps.lat_starts :
				       e->skel->maps.lat_task,
				false);
	e->skel->rodata->lat_tgid = cfg->tgid;
	if (cfg->exit_id >= 0 && cfg->exit_raw && cfg->exit_by_arg) {
		memcpy((void *)&e->skel->rodata->lat_earg, &cfg->exit_arg,
		       sizeof(cfg->exit_arg));
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_exit_arg),
					     cfg->exit_raw, -1, "kvm_exit" };
	} else if (cfg->exit_id >= 0 && cfg->exit_raw) {
		memcpy((void *)&e->skel->rodata->lat_vcpu, &cfg->exit_vcpu,
		       sizeof(cfg->exit_vcpu));
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_exit_vcpu),
					     cfg->exit_raw, -1, "kvm_exit" };
	} else if (cfg->exit_id >= 0) {
		e->skel->rodata->lat_exit_off = cfg->exit_reason.off;
		e->skel->rodata->lat_exit_size = cfg->exit_reason.size;
		e->skel->rodata->lat_isa_off = cfg->exit_isa.off;
		e->skel->rodata->lat_isa_size = cfg->exit_isa.size;
		e->skel->rodata->lat_isa_guard = cfg->exit_guard;
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_exit_rec), NULL,
					     cfg->exit_id, "kvm_exit" };
	}
	if (cfg->uexit_raw) {
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_uexit_raw),
					     cfg->uexit_raw, -1,
					     "kvm_userspace_exit" };
	} else if (cfg->uexit_id >= 0) {
		e->skel->rodata->lat_uexit_off = cfg->uexit_reason.off;
		e->skel->rodata->lat_uexit_size = cfg->uexit_reason.size;
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_uexit_rec), NULL,
					     cfg->uexit_id,
					     "kvm_userspace_exit" };
	}
	if (cfg->entry_raw)
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_entry_raw),
					     cfg->entry_raw, -1, "kvm_entry" };
	nmark = n; /* the mark, if any, comes next */
	if (cfg->mark == LAT_MARK_FENTRY)
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_run_fentry), NULL, -1,
					     "fentry kvm_arch_vcpu_ioctl_run" };
	else if (cfg->mark == LAT_MARK_FPU && cfg->fpu_raw)
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_fpu_raw),
					     cfg->fpu_raw, -1, "kvm_fpu" };
	else if (cfg->mark == LAT_MARK_SYSCALL && cfg->sys_arg1_off) {
		e->skel->rodata->lat_sys_ioctl = SYS_ioctl;
		e->skel->rodata->lat_sys_kvm_run = KVM_RUN;
		e->skel->rodata->lat_sys_arg1_off = cfg->sys_arg1_off;
		att[n++] = (typeof(att[0])){ LAT_PROG(lat_sys_raw), "sys_enter",
					     -1, "raw_syscalls:sys_enter" };
	}
	for (size_t i = 0; i < n; i++)
		bpf_program__set_autoload(att[i].prog, true);
	*err = latency_bpf__load(e->skel);
	if (*err)
		goto out_destroy;
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *l;

		*what = att[i].what;
		if (att[i].raw)
			l = bpf_program__attach_raw_tracepoint(att[i].prog,
							       att[i].raw);
		else if (att[i].id >= 0)
			l = lat_attach_record(att[i].prog, att[i].id);
		else
			l = bpf_program__attach(att[i].prog);
		if (!l) {
			*err = errno ? -errno : -EINVAL;
			goto out_destroy;
		}
		if (i == nmark)
			e->mark_link = (int)e->nlinks;
		e->links[e->nlinks++] = l;
	}
	*what = NULL;
	return e;

out_destroy:
	lat_engine_free(e);
	return NULL;
out_free:
	free(e);
	return NULL;
}

struct lat_engine *lat_engine_open(const struct lat_engine_cfg *cfg, int *err,
				   const char **what)
{
	struct lat_engine *e = NULL;

	if (!cfg->hash_state && lat_engine_has_task_storage())
		e = lat_open(cfg, true, err, what);
	/* refused (a verifier that does not take the helpers from these
	 * program types): the hash, as on kernels without task storage */
	if (!e)
		e = lat_open(cfg, false, err, what);
	return e;
}

int lat_engine_walk(struct lat_engine *e,
		    void (*fn)(void *ctx, const struct lat_key *k,
			       const struct lat_val *v),
		    void *ctx)
{
	int owner = bpf_map__fd(e->skel->maps.lat_owner);
	int vals = bpf_map__fd(e->skel->maps.lat_vals);
	uint32_t slot, next;
	struct lat_key k;
	struct lat_val v;
	void *prev = NULL;

	/* kvm_entry fires here: the KVM_RUN mark, which has left at once
	 * since, goes, so the guest stops paying for its hits */
	if (e->mark_link >= 0 && e->skel->bss && e->skel->bss->lat_entry_fired) {
		bpf_link__destroy(e->links[e->mark_link]);
		e->links[e->mark_link] = NULL;
		e->mark_link = -1;
	}
	while (!bpf_map_get_next_key(owner, prev, &next)) {
		slot = next;
		prev = &slot;
		if (!bpf_map_lookup_elem(owner, &slot, &k) &&
		    !bpf_map_lookup_elem(vals, &slot, &v) && v.count)
			fn(ctx, &k, &v);
	}
	return errno == ENOENT ? 0 : -errno;
}

void lat_engine_clear(struct lat_engine *e)
{
	int owner = bpf_map__fd(e->skel->maps.lat_owner);
	int vals = bpf_map__fd(e->skel->maps.lat_vals);
	static const struct lat_val zero;
	uint32_t slot, next;
	void *prev = NULL;

	/* in place: the threads keep their slots */
	while (!bpf_map_get_next_key(owner, prev, &next)) {
		slot = next;
		prev = &slot;
		bpf_map_update_elem(vals, &slot, &zero, BPF_ANY);
	}
}

void lat_engine_free(struct lat_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nlinks; i++)
		bpf_link__destroy(e->links[i]);
	latency_bpf__destroy(e->skel);
	free(e);
}
