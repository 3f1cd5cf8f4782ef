// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoint provider on the BPF engine (include/bpf_engine.h): one
 * counting slot per kvm event and per wanted exit reason, one program per
 * tracepoint. kvm_userspace_exit takes its reason from its raw arguments.
 * kvm_exit's raw arguments are the vCPU and the ISA; its reason is what
 * the vendor module saved from the VMCS or VMCB, which a raw program
 * reads from the vendor's vCPU struct (vcpu_svm, vcpu_vmx) at offsets
 * found in the kernel's BTF files (tp_vcpu_reason); arm64's kvm_exit(ret,
 * esr_ec, vcpu_pc) holds the reason in its raw arguments, which a raw
 * program reads as the arch descriptor says (tp_arg_reason); where neither
 * serves (no vendor module, as this machine's kvm_pvm, or a kernel
 * without module BTF), a program on the trace record reads the reason the
 * kernel's format names. With the per-VM rows wanted, counts are also
 * kept per thread; with -p only that process's hits count, so threads
 * that start later are in from their first hit.
 *
 * Why the vCPU first: a program on a trace record needs a perf event to
 * attach to, and Debian's and Ubuntu's kernel.perf_event_paranoid 3 keeps
 * perf events from all but CAP_SYS_ADMIN, so the hardened units (CAP_BPF
 * and CAP_PERFMON) could not count exit reasons there; raw tracepoints
 * take no perf event. It also costs less: the record program measured
 * (make bench, bench hit) about 2x the cost per hit of a minimal raw
 * counter, the kernel filling the record first (for kvm_exit on Intel
 * several VMCS reads). The offsets are not CO-RE relocations: libbpf
 * finds module BTF by listing the kernel's BTF objects, which needs
 * CAP_SYS_ADMIN; /sys/kernel/btf's files are world-readable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf_engine.h"
#include "fs.h"
#include "kbtf.h"
#include "provider.h"
#include "tpformat.h"
#include "tracepoint_int.h"
#include "util.h"

#define TP_THREAD_KEYS 16384

/* The id in events/<system>/<event>/id under dir, or -1. */
static long tp_id_at(int dirfd, const char *path)
{
	char buf[32];
	long id;

	if (fs_read_at(dirfd, path, buf, sizeof(buf)) <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	if (util_parse_int(buf, 0, INT_MAX, &id))
		return -1;
	return id;
}

/* The kernel's tracepoint whose id is id, searched in every system of the
 * real tracefs; caller frees; NULL when none. */
char *tp_name_by_id(const char *events, int id)
{
	const struct fs_entry *sys, *ev;
	struct fs_dir sd, ed;
	char *found = NULL;

	if (fs_dir_open(&sd, AT_FDCWD, events))
		return NULL;
	while (!found && (sys = fs_dir_next(&sd))) {
		if (sys->name[0] == '.' ||
		    fs_dir_open(&ed, sys->dirfd, sys->name))
			continue;
		while (!found && (ev = fs_dir_next(&ed))) {
			char path[NAME_MAX + 8];

			snprintf(path, sizeof(path), "%s/id", ev->name);
			if (ev->name[0] != '.' &&
			    tp_id_at(ev->dirfd, path) == id)
				found = xstrdup(ev->name);
		}
		fs_dir_close(&ed);
	}
	fs_dir_close(&sd);
	return found;
}

/*
 * The name event i's tracepoint is attached by as a raw tracepoint.
 * Under the kernel's tracefs, its own. Under another tree (tests), the
 * real tracepoint with the same id: *native is then false unless it is
 * the kvm event itself, and its raw arguments are not kvm's. Caller
 * frees; NULL when no tracepoint has that id.
 */
static char *tp_raw_name(const struct tp_priv *tp, size_t i, bool *native)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"
	};
	char full[PATH_MAX];
	char *name;

	*native = true;
	if (!tp->tracefs_root)
		return xstrdup(tp->ev[i].name);
	for (size_t r = 0; r < ARRAY_SIZE(roots); r++) {
		if (access(roots[r], R_OK))
			continue;
		snprintf(full, sizeof(full), "%s/kvm/%s/id", roots[r],
			 tp->ev[i].name);
		if (tp_id_at(AT_FDCWD, full) == tp->ev[i].id)
			return xstrdup(tp->ev[i].name);
		*native = false;
		name = tp_name_by_id(roots[r], tp->ev[i].id);
		if (name)
			return name;
	}
	return NULL;
}

/* The guard value of a source's guarded tables (the first one's). */
static int64_t tp_src_guard(const struct tp_source *s)
{
	for (size_t i = 0; i < s->ntabs; i++)
		if (s->tabs[i].guarded)
			return s->tabs[i].guard;
	return 0;
}

/*
 * The arch descriptor names the vendor's struct and members (for the ISA
 * of the loaded vendor module, not the CPU's: a paravirtual KVM's vCPUs
 * are no vendor's), the kernel's BTF gives their offsets, each checked to
 * be what the program reads: the vCPU a struct kvm_vcpu, the pointer one
 * to a struct, the reason an integer.
 */
/* KVMSTAT_EXIT_REASON=record: the record program even where the raw
 * arguments or the vCPU's layout hold the reason (make bench compares). */
static bool tp_record_forced(void)
{
	const char *in = getenv("KVMSTAT_EXIT_REASON");

	return in && !strcmp(in, "record");
}

int tp_vcpu_reason(const char *event, const char *guard_field,
		   int64_t isa_guard, unsigned int reason_size,
		   struct ks_vcpu_cfg *vc)
{
	const struct arch_vcpu_reason *r;
	struct kbtf_member m;
	const char *in;
	struct kbtf *k;
	int rc;

	if (tp_record_forced())
		return -ENOENT;
	/* an event no layout names needs no ISA looked up in /sys (every
	 * plain event is asked, tp_bpf_plain) */
	if (!arch_vcpu_reason_any(arch_host, event))
		return -ENOENT;
	r = arch_vcpu_reason_for(arch_host, event,
				 arch_detect_isa(arch_host, "/sys"));
	if (!r || !reason_size)
		return -ENOENT;
	memset(vc, 0, sizeof(*vc));
	vc->guarded = guard_field != NULL;
	vc->isa_guard = isa_guard;
	vc->layout_isa = arch_guard_value(arch_host, guard_field, r->isa);
	if (vc->guarded && vc->layout_isa < 0)
		return -ENOENT;
	k = kbtf_open(NULL, r->module, &rc);
	if (!k)
		return rc;
	rc = kbtf_member(k, r->container, r->vcpu, &m);
	if (!rc && strcmp(m.type, "kvm_vcpu"))
		rc = -EINVAL;
	if (rc)
		goto out_close;
	vc->vcpu_off = m.offset;
	vc->ptr_off = -1;
	in = r->container;
	if (r->pointer) {
		rc = kbtf_member(k, r->container, r->pointer, &m);
		if (!rc && (!m.pointee || m.offset > INT32_MAX))
			rc = -EINVAL;
		if (rc)
			goto out_close;
		vc->ptr_off = (int32_t)m.offset;
		in = m.pointee;
	}
	rc = -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(r->paths) && r->paths[i] && rc; i++) {
		rc = kbtf_member(k, in, r->paths[i], &m);
		if (!rc && !m.integer)
			rc = -EINVAL;
	}
	if (rc)
		goto out_close;
	vc->reason_off = m.offset;
	vc->reason_size = m.size < reason_size ? m.size : reason_size;
	/* the vCPU's id: which vCPU a thread runs (ks_tvcpus) */
	vc->id_off = -1;
	if (!kbtf_member(k, "kvm_vcpu", "vcpu_id", &m) && m.integer &&
	    m.size == 4 && m.offset <= INT32_MAX)
		vc->id_off = (int32_t)m.offset;
out_close:
	kbtf_close(k);
	return rc;
}

/* Declares plain event i on raw tracepoint name: with per-VM rows wanted,
 * kvm_exit (whose first argument is the vCPU, where its layout is known)
 * on the program that also notes which vCPU each thread runs. */
static int tp_bpf_plain(struct tp_priv *tp, uint32_t i, const char *name,
			bool native)
{
	struct ks_vcpu_cfg vc;
	int rc;

	if (tp->want_vms && native &&
	    !tp_vcpu_reason(tp->ev[i].name, NULL, 0, 4, &vc) &&
	    vc.id_off >= 0) {
		rc = bpf_engine_plain_vcpu(tp->be, i, name, vc.id_off);
		if (rc != -EBUSY)
			return rc;
	}
	return bpf_engine_plain(tp->be, i, name);
}

/* The place of field among f's own fields (the common_* ones aside), or
 * -1 when f has no such field. */
static int tp_field_place(const struct tp_format *f, const char *field)
{
	int n = 0;

	for (size_t i = 0; i < f->nfields; i++) {
		if (!strncmp(f->fields[i].name, "common_", 7))
			continue;
		if (!strcmp(f->fields[i].name, field))
			return n;
		n++;
	}
	return -1;
}

/* The descriptor's raw arguments (not with KVMSTAT_EXIT_REASON=record). */
bool tp_arg_reason(const struct tp_format *f, const char *field, bool guarded,
		   struct ks_arg_cfg *c)
{
	const struct arch_source *a = f ? arch_source_find(arch_host, f->name,
							   field) :
					  NULL;

	if (!a || !a->raw.known || guarded || tp_record_forced() ||
	    tp_field_place(f, field) != (int)a->raw.arg)
		return false;
	*c = (struct ks_arg_cfg){ .arg = a->raw.arg,
				  .gate_arg = a->raw.gate_arg,
				  .mask = a->raw.mask,
				  .gate_mask = a->raw.gate_mask,
				  .gate_value = a->raw.gate_value };
	return true;
}

/* Declares the program of child source si: its raw argument for a
 * native kvm_userspace_exit, the raw arguments where the architecture
 * says they hold the reason (tp_arg_reason), the vCPU's structs where
 * they hold it (tp_vcpu_reason), else its trace record. */
static int tp_bpf_source(struct tp_priv *tp, uint32_t si, bool *uexit)
{
	struct tp_source *s = &tp->src[si];
	const struct tp_event *ev = &tp->ev[s->ev];
	uint32_t parent = ev->field >= 0 ? (uint32_t)s->ev : KS_NONE;
	struct ks_rec_cfg rc = { 0 };
	const struct tp_field *id;
	struct ks_vcpu_cfg vc;
	struct ks_arg_cfg ac;
	bool native;
	char *name = tp_raw_name(tp, (size_t)s->ev, &native);
	int err;

	if (name && native && !*uexit &&
	    !strcmp(ev->name, "kvm_userspace_exit") &&
	    !strcmp(s->reason_name, "reason")) {
		err = bpf_engine_uexit(tp->be, name, parent, si);
		*uexit = true;
		free(name);
		return err;
	}
	if (name && native &&
	    tp_arg_reason(s->fmt, s->reason_name, s->isa.size != 0, &ac)) {
		ac.parent_slot = parent;
		ac.src = si;
		err = bpf_engine_arg(tp->be, name, &ac);
		if (err != -EBUSY) {
			free(name);
			return err;
		}
	}
	if (name && native &&
	    !tp_vcpu_reason(ev->name, s->isa.size ? s->isa_name : NULL,
			    tp_src_guard(s), s->reason.size, &vc)) {
		vc.parent_slot = parent;
		vc.src = si;
		err = bpf_engine_vcpu(tp->be, name, &vc);
		if (err != -EBUSY) {
			free(name);
			return err;
		}
	}
	free(name);
	rc.parent_slot = parent;
	rc.src = si;
	rc.reason_off = s->reason.offset;
	rc.reason_size = s->reason.size;
	rc.isa_off = s->isa.offset;
	rc.isa_size = s->isa.size;
	rc.isa_guard = tp_src_guard(s);
	id = tp_format_field(s->fmt, "vcpu_id");
	if (id && id->size == 4) {
		rc.id_off = id->offset;
		rc.id_size = 4;
	}
	return bpf_engine_record(tp->be, ev->id, &rc);
}

/* Slot of every wanted reason, after the event slots; fills the BPF
 * reason table once loaded (fill) or just counts them. */
static int tp_bpf_reasons(struct tp_priv *tp, bool fill, uint32_t *nslots)
{
	uint32_t slot = (uint32_t)tp->nev;

	for (uint32_t si = 0; si < tp->nsrc; si++) {
		const struct tp_source *s = &tp->src[si];

		if (!tp->children)
			break;
		for (size_t t = 0; t < s->ntabs; t++) {
			const struct tp_table *tab = &s->tabs[t];

			for (size_t j = 0; j < tab->n; j++) {
				uint64_t v = tab->r[j].value;

				if (tab->r[j].field < 0)
					continue;
				if (fill)
					tp->slot_field[slot] = tab->r[j].field;
				for (uint32_t cls = 0; fill && cls < 2; cls++) {
					int rc;

					if (tab->guarded &&
					    (cls == 1) == tab->negated)
						continue;
					if (v >= KS_MAXR)
						continue; /* counted as others */
					rc = bpf_engine_set_reason(tp->be, si,
								   cls,
								   (uint32_t)v,
								   slot);
					if (rc)
						return rc;
				}
				slot++;
			}
		}
	}
	*nslots = slot;
	return 0;
}

static void tp_bpf_fail(struct tp_priv *tp, int rc, const char *what)
{
	const char *log = rc == -EINVAL ? bpf_engine_last_log() : "";

	if (rc == -EPERM || rc == -EACCES)
		provider_msg(tp->p, true,
			     "BPF unavailable (no permission: it needs CAP_BPF and CAP_PERFMON, or a kernel without lockdown): counting with perf events instead, which costs busy guests more");
	else
		provider_msg(tp->p, true,
			     "BPF unavailable (%s%s%s%s%s): counting with perf events instead, which costs busy guests more",
			     what ? what : "", what ? ": " : "", strerror(-rc),
			     *log ? ": " : "", log);
}

int tp_bpf_open(struct tp_priv *tp)
{
	struct bpf_engine_cfg cfg = { 0 };
	const char *what = NULL;
	bool *handled, uexit = false;
	int rc;

	if (tp->nev > KS_NPLAIN || tp->nsrc > KS_NSRC) {
		tp_bpf_fail(tp, -ENOSPC, "too many kvm tracepoints");
		return -ENOSPC;
	}
	tp_bpf_reasons(tp, false, &tp->nslots);
	tp->slot_field = xmalloc(tp->nslots * sizeof(*tp->slot_field));
	for (uint32_t i = 0; i < tp->nslots; i++)
		tp->slot_field[i] = i < tp->nev ? tp->ev[i].field : -1;
	tp->slot_count = xcalloc(tp->nslots, sizeof(*tp->slot_count));
	cfg.nslots = tp->nslots;
	cfg.tgid = (uint32_t)tp->pid;
	cfg.per_thread = tp->want_vms;
	cfg.thread_entries = TP_THREAD_KEYS;
	tp->be = bpf_engine_new(&cfg, &rc);
	if (!tp->be) {
		tp_bpf_fail(tp, rc, NULL);
		return rc;
	}
	handled = xcalloc(tp->nev, sizeof(*handled));
	rc = 0;
	for (uint32_t si = 0; tp->children && si < tp->nsrc && !rc; si++) {
		if (!tp_source_wanted(&tp->src[si]))
			continue;
		what = tp->ev[tp->src[si].ev].name;
		rc = tp_bpf_source(tp, si, &uexit);
		handled[tp->src[si].ev] = true;
	}
	for (size_t i = 0; i < tp->nev && !rc; i++) {
		bool native;
		char *name;

		if (handled[i] || tp->ev[i].field < 0)
			continue;
		what = tp->ev[i].name;
		name = tp_raw_name(tp, i, &native);
		rc = name ? tp_bpf_plain(tp, (uint32_t)i, name, native) :
			    -ENOENT;
		free(name);
	}
	free(handled);
	if (!rc) {
		what = NULL;
		rc = bpf_engine_load(tp->be);
	}
	if (!rc)
		rc = tp_bpf_reasons(tp, true, &tp->nslots);
	if (!rc)
		rc = bpf_engine_attach(tp->be, &what);
	if (rc) {
		tp_bpf_fail(tp, rc, what);
		return rc;
	}
	/* the -p VM's vCPU threads now: a thread's counts still go to its
	 * vCPU when it has exited by the first read */
	if (tp->pid && tp->want_vms)
		tp_vcpu_of(tp, tp->pid, -1, true);
	return 0;
}

/* Room for one more in a list of keys to forget (n of *cap, each size
 * bytes): v, grown when full. */
static void *tp_bpf_room(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 64;
	return xrealloc(v, *cap * size);
}

/* Whether process tgid's keys are to be forgotten: it exited (never the
 * -p process, whose last counts stay shown). */
static bool tp_bpf_gone(struct tp_priv *tp, uint32_t tgid)
{
	return (pid_t)tgid != tp->pid &&
	       !tp_proc_alive(tp, tp_vm_get(tp, (pid_t)tgid));
}

static void tp_bpf_dead_other(struct tp_priv *tp, const struct ks_other_key *k)
{
	tp->dead_o = tp_bpf_room(tp->dead_o, tp->ndead_o, &tp->capdead_o,
				 sizeof(*tp->dead_o));
	tp->dead_o[tp->ndead_o++] = *k;
}

/* A reason without a slot: unknown to the tables, or past KS_MAXR. */
static void tp_bpf_other(void *ctx, const struct ks_other_key *k, uint64_t v)
{
	struct tp_priv *tp = ctx;
	struct tp_source *s;
	int64_t guard;
	int field;

	if (k->src >= tp->nsrc)
		return;
	s = &tp->src[k->src];
	guard = tp_src_guard(s);
	field = tp_reason_field(tp, s, k->reason, k->cls ? guard : guard + 1);
	if (k->tgid && tp_bpf_gone(tp, k->tgid)) {
		/* the last reading of a process that exited: its counts
		 * stay in the totals, its key leaves the map */
		if (field >= 0)
			tp->retired[field] += v;
		tp_bpf_dead_other(tp, k);
		return;
	}
	if (field < 0)
		return;
	tp->acc[field] += v;
	if (tp->want_vms && k->tgid)
		tp_bd_thread(tp, (pid_t)k->tgid, (pid_t)k->tid, field, v);
}

/* One thread's count of one slot: the per-VM and per-vCPU rows. */
static void tp_bpf_thread(void *ctx, const struct ks_thread_key *k, uint64_t v)
{
	struct tp_priv *tp = ctx;
	int field = k->slot < tp->nslots ? tp->slot_field[k->slot] : -1;

	if (tp_bpf_gone(tp, k->tgid)) {
		tp->dead_t = tp_bpf_room(tp->dead_t, tp->ndead_t,
					 &tp->capdead_t, sizeof(*tp->dead_t));
		tp->dead_t[tp->ndead_t++] = *k;
		return;
	}
	if (field >= 0)
		tp_bd_thread(tp, (pid_t)k->tgid, (pid_t)k->tid, field, v);
}

/* A thread noted by kvm_exit as running a vCPU: known as that vCPU, or
 * forgotten with its process. */
static void tp_bpf_tvcpu(void *ctx, uint32_t tid, const struct ks_tvcpu *t)
{
	struct tp_priv *tp = ctx;

	if (tp_bpf_gone(tp, t->tgid)) {
		tp->dead_v = tp_bpf_room(tp->dead_v, tp->ndead_v,
					 &tp->capdead_v, sizeof(*tp->dead_v));
		tp->dead_v[tp->ndead_v++] = tid;
		return;
	}
	tp_vm_kernel_vcpu(tp, (pid_t)t->tgid, (pid_t)tid, t->vcpu);
}

/* With -p, every vCPU thread seen has a row of each field, 0 until it
 * counts, as the perf fallback's per-thread counters give. */
static void tp_bpf_vcpu_rows(struct tp_priv *tp)
{
	struct tp_vm *vm = tp_vm_get(tp, tp->pid);

	for (size_t i = 0; i < vm->nknown; i++)
		for (size_t j = 0; j < tp->nrep; j++)
			tp_bd_add(tp, tp->pid, vm->known[i].index, tp->rep[j], 0)
				->tid = vm->known[i].tid;
}

/*
 * Per-thread counts (the per-VM and per-vCPU rows) are read before the
 * per-CPU slots (the host's totals): both only grow, so a VM's reading is
 * never above the host's of the same refresh.
 */
int tp_bpf_read(struct tp_priv *tp)
{
	int rc = 0, err;

	tp->ndead_t = tp->ndead_o = tp->ndead_v = 0;
	/* the vCPU threads kvm_exit showed, before the counts they place */
	if (tp->want_vms)
		rc = bpf_engine_vcpu_threads(tp->be, tp_bpf_tvcpu, tp);
	if (tp->pid && tp->want_vms)
		tp_bpf_vcpu_rows(tp);
	if (tp->want_vms) {
		err = bpf_engine_threads(tp->be, tp_bpf_thread, tp);
		rc = rc ? rc : err;
	}
	err = bpf_engine_read(tp->be, tp->slot_count);
	if (err)
		return err;
	for (uint32_t i = 0; i < tp->nslots; i++)
		if (tp->slot_field[i] >= 0)
			tp->acc[tp->slot_field[i]] += tp->slot_count[i];
	err = bpf_engine_others(tp->be, tp_bpf_other, tp);
	rc = rc ? rc : err;

	if (tp->ndead_t || tp->ndead_o || tp->ndead_v) {
		/* a key that stayed would count into retired again */
		if (bpf_engine_forget_threads(tp->be, tp->dead_t, tp->ndead_t) ||
		    bpf_engine_forget_others(tp->be, tp->dead_o, tp->ndead_o) ||
		    bpf_engine_forget_vcpu_threads(tp->be, tp->dead_v,
						   tp->ndead_v))
			rc = rc ? rc : -EIO;
		tp_vms_prune(tp);
	}
	return rc;
}

void tp_bpf_close(struct tp_priv *tp)
{
	bpf_engine_free(tp->be);
	tp->be = NULL;
	free(tp->slot_field);
	tp->slot_field = NULL;
	free(tp->slot_count);
	tp->slot_count = NULL;
	free(tp->dead_t);
	free(tp->dead_o);
	free(tp->dead_v);
	tp->dead_v = NULL;
	tp->dead_t = NULL;
	tp->dead_o = NULL;
	tp->nslots = 0;
}
