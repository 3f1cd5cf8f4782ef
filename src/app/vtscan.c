// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where each vCPU's time goes, collected from /proc (vtscan.h). Each VM's
 * task directory is listed at each update (threads come and go: vCPU
 * hot-plug, iothreads); a thread's files are opened when it is first seen
 * and read with pread from then on. vhost workers that are kernel threads
 * (before Linux 6.4; later ones are threads of the VMM) are found by
 * their name, "vhost-PID", in a listing of every process every 10 s.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "taskstat.h"
#include "util.h"
#include "vm.h"
#include "vmscan.h"
#include "vtscan.h"

/* How often a VM's threads are listed (between, those known are read;
 * their names are read again then too), ns. */
#define VTSCAN_TASKS_NS 1000000000ull
/* How often every VM and the kernel vhost workers are looked for, ns
 * (between, the VMs the providers read are, and known ones until they
 * go). */
#define VTSCAN_LIST_NS 10000000000ull

struct vtscan_thread {
	pid_t pid, tid; /* pid: the process whose task it is */
	struct taskstat_fds fds;
	int vcpu;    /* index, or -1: another thread of the VMM */
	bool vhost;  /* a kernel vhost worker of the VM */
	bool seen;   /* listed this update */
	bool opened; /* fds open */
	uint64_t start_ns;
	struct vcputime_acc acc;   /* a vCPU's arithmetic */
	struct vcputime_row row;   /* a vCPU's states */
	struct vcputime_thread th; /* another thread's CPU */
	uint64_t prev_run, prev_ns;
	bool have_prev;
};

struct vtscan_vm {
	pid_t pid;
	char *name;	    /* its guest name, or NULL */
	uint64_t listed_ns; /* when its task directory was listed */
	bool relisted;	    /* ... in this update */
	bool named;	    /* name looked up */
	bool unnamed;	    /* its vCPU threads are what the kernel says */
	int nheld;	    /* of this many vCPUs (KVM's debugfs), or -1:
			     * not known; one not seen running yet is
			     * looked for at each listing */
	bool seen;
	struct vtscan_thread *t;
	size_t n, cap;
	struct vcputime_row *rows;   /* the result's vCPUs */
	struct vcputime_thread *ths; /* the result's other threads */
};

int vtscan_open(struct vtscan *v, const char *proc_root,
		const char *debugfs_root)
{
	memset(v, 0, sizeof(*v));
	v->proc_root = proc_root;
	v->debugfs_root = debugfs_root;
	v->rootfd = fs_open_dir(AT_FDCWD, proc_root ? proc_root : "/proc");
	v->hz = taskstat_hz();
	return v->rootfd < 0 ? v->rootfd : 0;
}

static void vtscan_thread_close(struct vtscan_thread *t)
{
	if (t->opened)
		taskstat_close(&t->fds);
	t->opened = false;
}

static void vtscan_vm_free(struct vtscan_vm *vm)
{
	for (size_t i = 0; i < vm->n; i++)
		vtscan_thread_close(&vm->t[i]);
	free(vm->t);
	free(vm->name);
	free(vm->rows);
	free(vm->ths);
}

void vtscan_close(struct vtscan *v)
{
	for (size_t i = 0; i < v->nvms; i++)
		vtscan_vm_free(&v->vms[i]);
	free(v->vms);
	free(v->out);
	if (v->rootfd >= 0)
		close(v->rootfd);
	memset(v, 0, sizeof(*v));
	v->rootfd = -1;
}

const struct vcputime *vtscan_result(const struct vtscan *v)
{
	return &v->result;
}

/* The VM pid, added when new. */
static struct vtscan_vm *vtscan_vm_get(struct vtscan *v, pid_t pid)
{
	for (size_t i = 0; i < v->nvms; i++)
		if (v->vms[i].pid == pid)
			return &v->vms[i];
	if (v->nvms == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->vms = xrealloc(v->vms, v->cap * sizeof(*v->vms));
	}
	v->vms[v->nvms] = (struct vtscan_vm){ .pid = pid };
	return &v->vms[v->nvms++];
}

/* The thread tid of vm, added (files not open yet) when new. */
static struct vtscan_thread *vtscan_thread_get(struct vtscan_vm *vm, pid_t pid,
					       pid_t tid, bool *added)
{
	for (size_t i = 0; i < vm->n; i++)
		if (vm->t[i].tid == tid)
			return &vm->t[i];
	if (vm->n == vm->cap) {
		vm->cap = vm->cap ? vm->cap * 2 : 8;
		vm->t = xrealloc(vm->t, vm->cap * sizeof(*vm->t));
	}
	vm->t[vm->n] = (struct vtscan_thread){
		.pid = pid, .tid = tid, .vcpu = -1, .fds = { -1, -1 }
	};
	*added = true;
	return &vm->t[vm->n++];
}

/* The vCPU indices of vm's threads, as every part of kvmstat finds them
 * (named threads, else KVM's debugfs; again when threads come, or, from
 * debugfs, at each listing while a thread is not a vCPU). A thread taken
 * for another of the VMM's until its vCPU first ran starts again as that
 * vCPU. */
static void vtscan_vcpus(struct vtscan *v, struct vtscan_vm *vm)
{
	struct vm_info info = { .pid = vm->pid };

	vm_load_vcpu_threads(v->proc_root, v->debugfs_root, &info);
	vm->unnamed = !info.named;
	vm->nheld = info.nheld;
	for (size_t i = 0; i < vm->n; i++) {
		struct vtscan_thread *t = &vm->t[i];

		if (t->vhost || (t->opened && t->vcpu >= 0))
			continue;
		for (size_t k = 0; k < info.nvcpus; k++) {
			if (info.vcpus[k].tid != t->tid)
				continue;
			vtscan_thread_close(t);
			*t = (struct vtscan_thread){ .pid = t->pid,
						     .tid = t->tid,
						     .vcpu = info.vcpus[k].index,
						     .seen = t->seen,
						     .fds = { -1, -1 } };
		}
	}
	vm_info_clear(&info);
}

/* Whether vm may have a vCPU whose thread is not known yet: its vCPUs
 * are the kernel's, and KVM's debugfs has more of them than its threads
 * known as one (without debugfs: a thread of it is not one). */
static bool vtscan_pending(const struct vtscan_vm *vm)
{
	int known = 0, other = 0;

	if (!vm->unnamed)
		return false;
	for (size_t i = 0; i < vm->n; i++) {
		known += vm->t[i].vcpu >= 0;
		other += vm->t[i].vcpu < 0 && !vm->t[i].vhost;
	}
	return vm->nheld >= 0 ? known < vm->nheld : other > 0;
}

/* Lists vm's threads: false when its task directory is gone. */
static bool vtscan_list(struct vtscan *v, struct vtscan_vm *vm, uint64_t now)
{
	char path[32];
	const struct fs_entry *e;
	struct fs_dir dir;
	bool added = false;

	vm->relisted = !vm->listed_ns || now - vm->listed_ns >= VTSCAN_TASKS_NS;
	if (!vm->relisted) {
		/* the threads known; one gone fails its read */
		for (size_t i = 0; i < vm->n; i++)
			vm->t[i].seen = true;
		return true;
	}
	vm->listed_ns = now ? now : 1;
	snprintf(path, sizeof(path), "%d/task", (int)vm->pid);
	if (fs_dir_open(&dir, v->rootfd, path))
		return false;
	while ((e = fs_dir_next(&dir))) {
		char *end;
		long tid = strtol(e->name, &end, 10);

		if (*end || tid <= 0)
			continue;
		vtscan_thread_get(vm, vm->pid, (pid_t)tid, &added)->seen = true;
	}
	fs_dir_close(&dir);
	if (added || vtscan_pending(vm))
		vtscan_vcpus(v, vm);
	return true;
}

/* Every running VM (kvmstat's one /proc scan, which uses KVM's debugfs
 * names where it can); names are looked up once per VM, below. */
static void vtscan_all(struct vtscan *v)
{
	pid_t *pids = NULL;
	int n = vm_list_pids(v->proc_root, &pids);

	for (int i = 0; i < n; i++)
		vtscan_vm_get(v, pids[i]);
	free(pids);
}

/* Kernel vhost workers ("vhost-PID" processes) of the VMs known. */
static void vtscan_vhost(struct vtscan *v)
{
	const struct fs_entry *e;
	struct fs_dir dir;

	if (fs_dir_start(&dir, v->rootfd))
		return;
	while ((e = fs_dir_next(&dir))) {
		char comm[32], *end;
		long pid = strtol(e->name, &end, 10);
		int owner;
		bool added = false;

		if (*end || pid <= 0 ||
		    taskstat_comm(v->rootfd, (pid_t)pid, (pid_t)pid, comm,
				  sizeof(comm)) ||
		    sscanf(comm, "vhost-%d", &owner) != 1 || owner == pid)
			continue;
		for (size_t i = 0; i < v->nvms; i++) {
			struct vtscan_thread *t;

			if (v->vms[i].pid != owner)
				continue;
			t = vtscan_thread_get(&v->vms[i], (pid_t)pid,
					      (pid_t)pid, &added);
			t->vhost = true;
		}
	}
	fs_dir_close(&dir);
}

/* The halt statistics and exit latency of a vCPU, into in. */
static void vtscan_kvm_in(const struct vtscan_req *r, pid_t pid,
			  const struct vtscan_thread *t, struct vcputime_in *in)
{
	const struct stats *s = r->stats;

	if (s) {
		int hw = field_table_find(&s->fields, "halt_wait_ns");
		int ps = field_table_find(&s->fields, "halt_poll_success_ns");
		int pf = field_table_find(&s->fields, "halt_poll_fail_ns");
		int bl = field_table_find(&s->fields, "blocking");
		const struct stat_cell *c;

		c = hw >= 0 ? stats_cell(s, hw, pid, t->vcpu) : NULL;
		if (c && c->seen && c->fresh) {
			in->halt_known = true;
			in->halt_wait_ns = c->raw;
			c = ps >= 0 ? stats_cell(s, ps, pid, t->vcpu) : NULL;
			in->halt_poll_ns = c && c->seen ? c->raw : 0;
			c = pf >= 0 ? stats_cell(s, pf, pid, t->vcpu) : NULL;
			in->halt_poll_ns += c && c->seen ? c->raw : 0;
		}
		c = bl >= 0 ? stats_cell(s, bl, pid, t->vcpu) : NULL;
		if (c && c->seen && c->fresh) {
			in->blocking_known = true;
			in->blocking = c->raw != 0;
		}
	}
	if (!r->lat || !r->latinfo || r->latinfo->error)
		return;
	in->vmm_known = r->latinfo->vmm_field >= 0;
	in->exit_known = r->latinfo->exits_timed && r->latinfo->exit_field >= 0;
	for (size_t i = 0; s && i < r->lat->n; i++) {
		const struct hist_reading *h = &r->lat->v[i];
		int parent = s->fields.v[h->field].parent;

		if (h->pid != pid ||
		    (h->tid ? h->tid != t->tid : h->vcpu != t->vcpu))
			continue;
		if (parent >= 0 && parent == r->latinfo->vmm_field)
			in->vmm_ns += h->sum;
		else if (parent >= 0 && parent == r->latinfo->exit_field)
			in->exit_ns += h->sum;
	}
}

/* Reads one thread; false when it is gone. */
static bool vtscan_read(struct vtscan *v, const struct vtscan_req *r,
			struct vtscan_vm *vm, struct vtscan_thread *t)
{
	struct taskstat ts = { 0 };
	uint64_t base;

	if (!t->opened) {
		/* stat for every thread: a vCPU's ticks, another's name */
		int rc = taskstat_open(v->rootfd, t->pid, t->tid, true, &t->fds);

		if (rc == -EMFILE || rc == -ENFILE)
			v->nofile++;
		if (rc)
			return false;
		t->opened = true;
	}
	/* another thread's stat only for its name, when listed */
	if (taskstat_read(&t->fds,
			  t->vcpu >= 0 || vm->relisted || !t->th.name[0], &ts))
		return false;
	if (!t->start_ns)
		t->start_ns = ts.start_ticks * (1000000000ull / v->hz);
	if (t->vcpu >= 0) {
		struct vcputime_in in = {
			.now_ns = r->now_ns,
			.run_ns = ts.run_ns,
			.delay_ns = ts.delay_ns,
			.utime = ts.utime,
			.stime = ts.stime,
			.gtime = ts.gtime,
			.state = ts.state,
		};

		vtscan_kvm_in(r, vm->pid, t, &in);
		t->row.vcpu = t->vcpu;
		t->row.tid = t->tid;
		vcputime_step(&t->acc, &in, t->start_ns, &t->row);
		return true;
	}
	t->th.tid = t->tid;
	t->th.vhost = t->vhost;
	if (ts.comm[0])
		snprintf(t->th.name, sizeof(t->th.name), "%s", ts.comm);
	t->th.total_ns = ts.run_ns;
	base = t->have_prev ? t->prev_ns : t->start_ns;
	t->th.interval_ns = r->now_ns > base ? r->now_ns - base : 0;
	t->th.delta_ns = ts.run_ns >= t->prev_run ? ts.run_ns - t->prev_run : 0;
	t->prev_run = ts.run_ns;
	t->prev_ns = r->now_ns;
	t->have_prev = true;
	return true;
}

static int vtscan_row_cmp(const void *a, const void *b)
{
	const struct vcputime_row *x = a, *y = b;

	return x->vcpu - y->vcpu;
}

static int vtscan_th_cmp(const void *a, const void *b)
{
	const struct vcputime_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* One VM: its threads read, gone ones dropped, its result built. */
static void vtscan_vm_update(struct vtscan *v, const struct vtscan_req *r,
			     struct vtscan_vm *vm, struct vcputime_vm *out)
{
	size_t nv = 0, nt = 0, k = 0;

	for (size_t i = 0; i < vm->n; i++) {
		struct vtscan_thread *t = &vm->t[i];

		if ((!t->seen && !t->vhost) || !vtscan_read(v, r, vm, t)) {
			vtscan_thread_close(t);
			continue;
		}
		t->seen = false;
		vm->t[k++] = *t;
	}
	vm->n = k;
	free(vm->rows);
	free(vm->ths);
	vm->rows = xcalloc(k ? k : 1, sizeof(*vm->rows));
	vm->ths = xcalloc(k ? k : 1, sizeof(*vm->ths));
	*out = (struct vcputime_vm){ .pid = vm->pid, .sum.vcpu = -1 };
	for (size_t i = 0; i < vm->n; i++) {
		if (vm->t[i].vcpu >= 0) {
			vm->rows[nv++] = vm->t[i].row;
			vcputime_add(&out->sum, &vm->t[i].row);
		} else {
			vm->ths[nt++] = vm->t[i].th;
		}
	}
	qsort(vm->rows, nv, sizeof(*vm->rows), vtscan_row_cmp);
	qsort(vm->ths, nt, sizeof(*vm->ths), vtscan_th_cmp);
	out->vcpus = vm->rows;
	out->nvcpus = nv;
	out->threads = vm->ths;
	out->nthreads = nt;
	out->interval_ns = out->sum.interval_ns;
}

static int vtscan_vm_cmp(const void *a, const void *b)
{
	const struct vtscan_vm *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* What split which states in this update, for the outputs to say. */
static void vtscan_source(struct vtscan *v)
{
	unsigned merged = 0, split = 0;

	for (size_t i = 0; i < v->result.nvms; i++) {
		const struct vcputime_row *r = &v->result.vms[i].sum;

		merged |= r->merged;
		split |= r->fresh ? ~r->merged : 0;
	}
	snprintf(v->source, sizeof(v->source),
		 "from schedstat (ns) and stat (ticks)%s%s",
		 split & (1u << VT_HALTED_VMM) ? ", halt statistics" : "",
		 merged & (1u << VT_HALTED_VMM) ?
			 "; halted+vmm: no halt statistics (-S)" :
			 "");
	if (merged & (1u << VT_GUEST_KERNEL))
		snprintf(v->source + strlen(v->source),
			 sizeof(v->source) - strlen(v->source),
			 "; guest+kernel: guest time reported as system time");
	if (v->nofile)
		snprintf(v->source + strlen(v->source),
			 sizeof(v->source) - strlen(v->source),
			 "; %zu threads left out: too many open files (raise ulimit -n)",
			 v->nofile);
	v->result.source = v->source;
}

void vtscan_update(struct vtscan *v, const struct vtscan_req *r)
{
	size_t k = 0;
	bool list = !v->list_ns || r->now_ns - v->list_ns >= VTSCAN_LIST_NS;

	v->nofile = 0;
	if (list && !r->watched)
		vtscan_all(v);
	/* every VM known is listed again: those gone are dropped */
	for (size_t i = 0; i < v->nvms; i++)
		v->vms[i].seen = !r->watched || v->vms[i].pid == r->watched;
	/* and the VMs the providers read */
	for (size_t i = 0; !r->watched && r->stats && i < r->stats->nkeys; i++) {
		pid_t pid = r->stats->keys[i].pid;

		if (pid && (!i || pid != r->stats->keys[i - 1].pid))
			vtscan_vm_get(v, pid)->seen = true;
	}
	if (r->watched)
		vtscan_vm_get(v, r->watched)->seen = true;
	for (size_t i = 0; i < v->nvms; i++)
		if (v->vms[i].seen)
			v->vms[i].seen = vtscan_list(v, &v->vms[i], r->now_ns);
	if (list) {
		v->list_ns = r->now_ns ? r->now_ns : 1;
		vtscan_vhost(v);
	}
	for (size_t i = 0; i < v->nvms; i++) {
		if (!v->vms[i].seen) {
			vtscan_vm_free(&v->vms[i]);
			continue;
		}
		v->vms[k++] = v->vms[i];
	}
	v->nvms = k;
	if (v->nvms > 1) /* no VM: vms may be NULL, which qsort takes not */
		qsort(v->vms, v->nvms, sizeof(*v->vms), vtscan_vm_cmp);
	free(v->out);
	v->out = xcalloc(k ? k : 1, sizeof(*v->out));
	for (size_t i = 0; i < k; i++) {
		struct vtscan_vm *vm = &v->vms[i];

		if (!vm->named) {
			/* once per VM, the name every output gives it */
			struct vmdir_vm *d = vmdir_get(r->vms, vm->pid);

			vmscan_ident(d, v->proc_root, r->run_root);
			if (!vm->name && d->name)
				vm->name = xstrdup(d->name);
			vm->named = true;
		}
		vtscan_vm_update(v, r, vm, &v->out[i]);
		v->out[i].guest = vm->name;
	}
	v->result = (struct vcputime){ .vms = v->out,
				       .nvms = k,
				       .per_vcpu = r->per_vcpu };
	vtscan_source(v);
}
