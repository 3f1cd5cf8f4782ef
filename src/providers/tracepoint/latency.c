// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exit-latency collector (include/latency.h): finds kvm_exit,
 * kvm_entry, kvm_userspace_exit and the re-entry mark under the run's
 * tracefs (in a test tree, the real tracepoints their ids name), takes the
 * reasons' offsets and names from their format files, loads the latency
 * engine, and turns its per-thread histograms into histograms of the
 * snapshot's scopes (the whole selection, each VM, each vCPU), their
 * fields declared here like any source's.
 *
 * Re-entry after a userspace exit: kvm_entry where it fires (always
 * attached; once it has fired, the KVM_RUN mark is dropped). Beside it,
 * for kernels where it never fires (this host's nested KVM), the start of
 * KVM_RUN: fentry on kvm_arch_vcpu_ioctl_run where the kernel's BTF has
 * it and fentry programs load, else kvm_fpu(load), once per KVM_RUN too.
 * They cost only when latency is on (src/sys/lat_engine.c says what each
 * costs the guest). KVMSTAT_LATENCY_MARK=fpu|syscall|none forces one
 * (syscall: raw_syscalls:sys_enter filtered to ioctl KVM_RUN, every
 * system call of the host pays), KVMSTAT_LATENCY_STATE=hash the LRU-hash
 * state (make bench and the tests compare).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "bpf_engine.h"
#include "fs.h"
#include "lat_engine.h"
#include "latency.h"
#include "tpformat.h"
#include "tracepoint_int.h"
#include "util.h"
#include "vm.h"

/* One histogram while reading: a reason of one kind in one scope. */
struct lat_row {
	enum lat_kind kind;
	char reason[64]; /* "HLT", or the raw number */
	pid_t pid;	 /* 0: the whole selection */
	pid_t tid;	 /* a thread of pid, or 0 for the VM's row */
	int vcpu;	 /* the thread's vCPU index, or -1 */
	uint64_t count, total, min, max; /* ns */
	uint64_t b[LAT_NBUCKETS];	 /* see lat_shared.h */
	uint64_t key;			 /* (cls, reason), for merging */
};

/* The rows of one read. */
struct lat_snap {
	struct lat_row *rows;
	size_t n;
};

struct latency {
	struct lat_engine *eng;
	struct latency_cfg cfg;
	struct tp_format *exit_fmt, *uexit_fmt;
	const char *exit_field; /* the reason's field in exit_fmt */
	int64_t guard;		/* the guard value of its tables */
	const char *uexit_strip;
	const char *mark;
	bool exits;
	struct tp_vcpumap vcpus; /* vCPU indices of the threads seen */
};

/* kvm_exit: its reason field and the guard that picks a table; its raw
 * tracepoint (ec->exit_raw, the caller frees it) where the reason can be
 * read from the raw arguments (tp_arg_reason) or the vCPU
 * (tp_vcpu_reason), so that no perf event is needed. */
static void lat_setup_exit(struct latency *l, struct lat_engine_cfg *ec)
{
	static const char *const fields[] = { "exit_reason", "esr_ec",
					      "exit_code" };
	struct tp_format *f = tp_kvm_format(l->cfg.tracefs_root, "kvm_exit");
	const char *guard_field = NULL;
	bool native;
	char *name;

	if (!f)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (tp_rec_field(f, fields[i], &ec->exit_reason)) {
			l->exit_field = fields[i];
			break;
		}
	if (!l->exit_field) {
		tp_format_free(f);
		return;
	}
	for (size_t i = 0; i < f->ntabs; i++) {
		const struct tp_symtab *t = &f->tabs[i];

		if (!strcmp(t->field, l->exit_field) && t->guard_field &&
		    tp_rec_field(f, t->guard_field, &ec->exit_isa)) {
			ec->exit_guard = t->guard_value;
			l->guard = t->guard_value;
			guard_field = t->guard_field;
			break;
		}
	}
	l->exit_fmt = f;
	ec->exit_id = f->id;
	name = tp_kvm_raw_name(l->cfg.tracefs_root, f, "kvm_exit", &native);
	if (name && native &&
	    tp_arg_reason(f, l->exit_field, guard_field != NULL,
			  &ec->exit_arg)) {
		ec->exit_by_arg = true;
		ec->exit_raw = name;
	} else if (name && native &&
		   !tp_vcpu_reason("kvm_exit", guard_field, ec->exit_guard,
				   ec->exit_reason.size, &ec->exit_vcpu)) {
		ec->exit_raw = name;
	} else {
		free(name);
	}
}

static const char *lat_pick_mark(enum lat_mark *m)
{
	const char *env = getenv("KVMSTAT_LATENCY_MARK");

	if (env && !strcmp(env, "none")) {
		*m = LAT_MARK_NONE;
		return "kvm_entry";
	}
	/* where the descriptor says where the ioctl's command is */
	if (env && !strcmp(env, "syscall") && arch_host->syscall_arg1_off) {
		*m = LAT_MARK_SYSCALL;
		return "ioctl KVM_RUN (raw_syscalls:sys_enter)";
	}
	if (env && !strcmp(env, "fpu")) {
		*m = LAT_MARK_FPU;
		return "kvm_fpu(load)";
	}
	if (lat_engine_has_fentry()) {
		*m = LAT_MARK_FENTRY;
		return "KVM_RUN (fentry kvm_arch_vcpu_ioctl_run)";
	}
	*m = LAT_MARK_FPU;
	return "kvm_fpu(load)";
}

int latency_open(struct latency **out, const struct latency_cfg *cfg,
		 struct errmsg *msg)
{
	struct latency *l = xcalloc(1, sizeof(*l));
	struct lat_engine_cfg ec = { .tgid = (uint32_t)cfg->pid,
				     .exit_id = -1,
				     .uexit_id = -1 };
	char *uexit = NULL, *entry = NULL, *fpu = NULL;
	struct tp_format *ef, *ff;
	const char *what = NULL;
	bool native;
	int err;

	*out = NULL;
	l->cfg = *cfg;
	l->vcpus.proc_root = cfg->proc_root;
	l->vcpus.debugfs_root = cfg->debugfs_root;
	lat_setup_exit(l, &ec);
	l->uexit_fmt = tp_kvm_format(cfg->tracefs_root, "kvm_userspace_exit");
	if (l->uexit_fmt) {
		uexit = tp_kvm_raw_name(cfg->tracefs_root, l->uexit_fmt,
					"kvm_userspace_exit", &native);
		if (uexit && !native) {
			if (tp_rec_field(l->uexit_fmt, "reason",
					 &ec.uexit_reason))
				ec.uexit_id = l->uexit_fmt->id;
			free(uexit);
			uexit = NULL;
		}
		ec.uexit_raw = uexit;
		l->uexit_strip = "KVM_EXIT_";
	}
	ef = tp_kvm_format(cfg->tracefs_root, "kvm_entry");
	entry = ef ? tp_kvm_raw_name(cfg->tracefs_root, ef, "kvm_entry",
				     &native) :
		     NULL;
	tp_format_free(ef);
	ec.entry_raw = entry;
	l->exits = ec.exit_id >= 0 && entry;
	if (!l->exits)
		ec.exit_id = -1;
	l->mark = lat_pick_mark(&ec.mark);
	ec.sys_arg1_off = arch_host->syscall_arg1_off;
	/* KVMSTAT_LATENCY_STATE=hash: the threads' state in the LRU hash
	 * even where task storage would serve (a timed breakdown reads it
	 * where it is kept) */
	ec.hash_state = getenv("KVMSTAT_LATENCY_STATE") &&
			!strcmp(getenv("KVMSTAT_LATENCY_STATE"), "hash");
	if (!ec.uexit_raw && ec.uexit_id < 0) {
		ec.mark = LAT_MARK_NONE; /* no userspace exits to end */
		l->mark = "kvm_entry";
	}
	ff = tp_kvm_format(cfg->tracefs_root, "kvm_fpu");
	fpu = ff ? tp_kvm_raw_name(cfg->tracefs_root, ff, "kvm_fpu", &native) :
		   NULL;
	tp_format_free(ff);
	ec.fpu_raw = fpu;
	if (!l->exits && !ec.uexit_raw && ec.uexit_id < 0) {
		err = errmsg_set(msg, -ENOENT,
				 "--latency: no kvm_exit/kvm_entry or "
				 "kvm_userspace_exit tracepoint under %s; "
				 "load the kvm module and mount tracefs",
				 cfg->tracefs_root ? cfg->tracefs_root :
						     "/sys/kernel/tracing");
		goto out_fail;
	}
	l->eng = lat_engine_open(&ec, &err, &what);
	if (!l->eng && ec.mark == LAT_MARK_FENTRY) {
		/* fentry refused (lockdown forbids it here): kvm_fpu */
		ec.mark = fpu ? LAT_MARK_FPU : LAT_MARK_NONE;
		l->mark = fpu ? "kvm_fpu(load)" : "kvm_entry";
		l->eng = lat_engine_open(&ec, &err, &what);
	}
	if (!l->eng) {
		const char *log = bpf_engine_last_log();
		/* kvm_exit's record program, refused its perf event */
		bool perf = !ec.exit_raw && what && !strcmp(what, "kvm_exit") &&
			    (err == -EACCES || err == -EPERM);

		errmsg_set(msg, err,
			   "--latency: cannot load its BPF programs (%s: %s%s%s); "
			   "it needs root (CAP_BPF and CAP_PERFMON%s)",
			   what ? what : "load", strerror(-err),
			   *log ? "; " : "", log,
			   perf ? "; kvm_exit's trace record, read where the "
				  "kernel has no module BTF, needs a perf "
				  "event: CAP_SYS_ADMIN where "
				  "kernel.perf_event_paranoid is above 2, or "
				  "sysctl kernel.perf_event_paranoid=2" :
				  "");
		goto out_fail;
	}
	free(uexit);
	free(entry);
	free(fpu);
	free((char *)ec.exit_raw);
	if (cfg->pid) /* its threads now, should it end before a read */
		tp_vcpumap_index(&l->vcpus, cfg->pid, 0);
	*out = l;
	return 0;

out_fail:
	free(uexit);
	free(entry);
	free(fpu);
	free((char *)ec.exit_raw);
	latency_close(l);
	return err;
}

int latency_field(struct field_table *t, enum lat_kind k, const char *reason)
{
	static const char *const names[LAT_NKINDS] = {
		[LAT_EXIT] = "kvm_exit_latency",
		[LAT_VMM] = "kvm_vmm_time",
	};
	static const char *const help[LAT_NKINDS] = {
		[LAT_EXIT] = "Time from kvm_exit to the next kvm_entry of the "
			     "vCPU thread, by exit reason.",
		[LAT_VMM] = "Time from kvm_userspace_exit until the vCPU "
			    "thread enters the guest again, by reason.",
	};
	int parent = -1, id;
	char name[128];

	for (int pass = 0; pass < 2; pass++) {
		struct field_info *f;

		if (pass && !reason)
			break;
		if (pass)
			snprintf(name, sizeof(name), "%s(%s)", names[k], reason);
		id = field_table_intern(t, pass ? name : names[k], parent,
					FIELD_CUMULATIVE, "latency");
		f = field_table_info(t, id);
		f->unit = UNIT_SECONDS;
		f->exponent = -9;
		f->base = 10;
		f->hist = HIST_LOG2;
		f->flags |= FIELD_OWN_SWITCH;
		if (!pass)
			f->help = help[k];
		parent = id;
	}
	return id;
}

/* The reason's name: the kernel's table for it, else its number. */
static void lat_reason_name(const struct latency *l, const struct lat_key *k,
			    char *buf, size_t len)
{
	const struct tp_symtab *t = NULL;
	const char *name = NULL, *strip = NULL;

	if (k->kind == LAT_EXIT && l->exit_fmt)
		t = tp_format_symtab_for(l->exit_fmt, l->exit_field,
					 k->cls ? l->guard : l->guard + 1);
	else if (k->kind == LAT_VMM && l->uexit_fmt) {
		t = tp_format_symtab(l->uexit_fmt, "reason");
		strip = l->uexit_strip;
	}
	if (t)
		name = tp_symtab_name(t, k->reason);
	if (!name) {
		snprintf(buf, len, "%u", k->reason);
		return;
	}
	if (strip && !strncmp(name, strip, strlen(strip)))
		name += strlen(strip);
	snprintf(buf, len, "%s", name);
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = '_';
}

struct lat_read {
	struct latency *l;
	struct lat_snap *s;
	size_t cap;
};

static void lat_merge(struct lat_read *rd, const struct lat_key *k,
		      const struct lat_val *v, pid_t pid, pid_t tid)
{
	uint64_t key = (uint64_t)k->cls << 32 | k->reason;
	struct lat_snap *s = rd->s;
	struct lat_row *r = NULL;

	for (size_t i = 0; i < s->n && !r; i++)
		if (s->rows[i].kind == (enum lat_kind)k->kind &&
		    s->rows[i].key == key && s->rows[i].pid == pid &&
		    s->rows[i].tid == tid)
			r = &s->rows[i];
	if (!r) {
		if (s->n == rd->cap) {
			rd->cap = rd->cap ? rd->cap * 2 : 32;
			s->rows = xrealloc(s->rows, rd->cap * sizeof(*s->rows));
		}
		r = &s->rows[s->n++];
		memset(r, 0, sizeof(*r));
		r->kind = (enum lat_kind)k->kind;
		r->key = key;
		r->pid = pid;
		r->tid = tid;
		r->vcpu = tid ? tp_vcpumap_index(&rd->l->vcpus, pid, tid) : -1;
		r->min = UINT64_MAX;
		lat_reason_name(rd->l, k, r->reason, sizeof(r->reason));
	}
	r->count += v->count;
	r->total += v->total;
	if (v->min < r->min)
		r->min = v->min;
	if (v->max > r->max)
		r->max = v->max;
	for (size_t i = 0; i < LAT_NBUCKETS; i++)
		r->b[i] += v->b[i];
}

static void lat_add(void *ctx, const struct lat_key *k, const struct lat_val *v)
{
	struct lat_read *rd = ctx;

	if (k->kind >= LAT_NKINDS)
		return;
	lat_merge(rd, k, v, 0, 0);
	lat_merge(rd, k, v, (pid_t)k->tgid, 0);
	lat_merge(rd, k, v, (pid_t)k->tgid, (pid_t)k->tid);
}

void latency_read(struct latency *l, struct field_table *t,
		  struct hist_set *out, struct snap_latency *info)
{
	struct lat_snap snap = { 0 };
	struct lat_read rd = { .l = l, .s = &snap };

	hist_set_clear(out);
	*info = (struct snap_latency){
		.exit_field = latency_field(t, LAT_EXIT, NULL),
		.vmm_field = latency_field(t, LAT_VMM, NULL),
		.exits_timed = l->exits,
		.reentry = l->mark,
	};
	tp_vcpumap_tick(&l->vcpus);
	lat_engine_walk(l->eng, lat_add, &rd);
	for (size_t i = 0; i < snap.n; i++) {
		const struct lat_row *r = &snap.rows[i];
		struct hist_reading *h;

		/* threads without a vCPU index stay in their VM's */
		if (r->tid && r->vcpu < 0)
			continue;
		h = hist_set_add(out, latency_field(t, r->kind, r->reason),
				 r->pid, r->tid ? r->vcpu : SAMPLE_ALL_VCPUS,
				 r->tid, LAT_NBUCKETS);
		h->count = r->count;
		h->sum = r->total;
		h->min = r->min;
		h->max = r->max;
		memcpy(h->b, r->b, sizeof(r->b));
	}
	free(snap.rows);
}

void latency_reset(struct latency *l)
{
	lat_engine_clear(l->eng);
}

const struct lat_engine *latency_engine(const struct latency *l)
{
	return l && l->exits ? l->eng : NULL;
}

void latency_close(struct latency *l)
{
	if (!l)
		return;
	lat_engine_free(l->eng);
	tp_format_free(l->exit_fmt);
	tp_format_free(l->uexit_fmt);
	tp_vcpumap_free(&l->vcpus);
	free(l);
}
