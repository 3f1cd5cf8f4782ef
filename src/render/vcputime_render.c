// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where each vCPU's time goes, rendered (vcputime_render.h). Rates are
 * seconds per second of the last interval (a VM's sum over its vCPUs, so
 * up to its vCPU count); totals are seconds since each thread started.
 * A state the host does not measure apart is never shown as a number of
 * its own: its merged state stands in its place.
 */
#include <stdio.h>
#include <string.h>

#include "openmetrics.h"
#include "vcputime_render.h"

#define VT_COLW 8

/* A cell: the rate of s, "+" where s is merged into the cell before it,
 * "-" where it was not measured. */
static void vcputime_cell(char *buf, size_t len, const struct vcputime_row *r,
			  enum vcputime_state s)
{
	enum vcputime_state m = s == VT_GUEST || s == VT_KERNEL ?
					VT_GUEST_KERNEL :
					VT_HALTED_VMM;
	/* the pair's left column in the table: guest, vmm */
	bool first = s == VT_GUEST || s == VT_VMM;
	double v, mv = 0;
	bool merged = s != VT_WAITING && (r->merged & (1u << m));

	if (merged && !first && !r->delta_ns[s]) {
		snprintf(buf, len, "%*s", VT_COLW, "+");
		return;
	}
	if (!vcputime_rate(r, s, &v) && !merged) {
		snprintf(buf, len, "%*s", VT_COLW, "-");
		return;
	}
	if (merged && first)
		vcputime_rate(r, m, &mv);
	if (!vcputime_rate(r, s, &v))
		v = 0;
	snprintf(buf, len, "%*.3f", VT_COLW, v + mv);
}

void vcputime_render_cells(char *buf, size_t len, const struct vcputime_row *r)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int s = 0; s < VT_NBASIC && o + 1 < len; s++) {
		vcputime_cell(buf + o, len - o, r, (enum vcputime_state)s);
		o += strlen(buf + o);
		if (s < VT_NBASIC - 1 && o + 1 < len) {
			buf[o++] = ' ';
			buf[o] = '\0';
		}
	}
}

static void vcputime_line(struct strbuf *b, const struct vcputime_vm *vm,
			  const struct vcputime_row *r)
{
	char cells[128], vcpu[16], tid[16];

	vcputime_render_cells(cells, sizeof(cells), r);
	snprintf(vcpu, sizeof(vcpu), "%d", r->vcpu);
	snprintf(tid, sizeof(tid), "%d", (int)r->tid);
	strbuf_addf(b, " %8d %-16.16s %5s %8s %s\n", (int)vm->pid,
		    vm->guest ? vm->guest : "-", r->vcpu < 0 ? "all" : vcpu,
		    r->vcpu < 0 ? "-" : tid, cells);
}

void vcputime_render_text(struct strbuf *b, const struct vcputime *vt, pid_t pid)
{
	bool merged = false, threads = false;

	strbuf_add(b, "Where vCPU time goes (seconds per second; guest+kernel+"
		      "vmm+halted+waiting = wall time per vCPU)\n");
	strbuf_addf(b, " %8s %-16s %5s %8s %*s %*s %*s %*s %*s\n", "PID",
		    "Guest", "vCPU", "TID", VT_COLW, "guest", VT_COLW, "kernel",
		    VT_COLW, "vmm", VT_COLW, "halted", VT_COLW, "waiting");
	for (size_t i = 0; i < vt->nvms; i++) {
		const struct vcputime_vm *vm = &vt->vms[i];

		if (pid && vm->pid != pid)
			continue;
		vcputime_line(b, vm, &vm->sum);
		merged |= vm->sum.merged != 0;
		threads |= vm->nthreads != 0;
		for (size_t k = 0; (vt->per_vcpu || pid) && k < vm->nvcpus; k++)
			vcputime_line(b, vm, &vm->vcpus[k]);
	}
	if (merged)
		strbuf_add(b, " +: merged into the column on its left\n");
	if (vt->source)
		strbuf_addf(b, " (%s)\n", vt->source);
	if (!threads)
		return;
	strbuf_add(b, "\nThe VMM's other threads (CPU seconds per second)\n");
	strbuf_addf(b, " %8s %-16s %8s %-16s %*s\n", "PID", "Guest", "TID",
		    "Thread", VT_COLW, "CPU");
	for (size_t i = 0; i < vt->nvms; i++) {
		const struct vcputime_vm *vm = &vt->vms[i];

		if (pid && vm->pid != pid)
			continue;
		for (size_t k = 0; k < vm->nthreads; k++) {
			const struct vcputime_thread *t = &vm->threads[k];

			strbuf_addf(b, " %8d %-16.16s %8d %-16.16s %*.3f\n",
				    (int)vm->pid, vm->guest ? vm->guest : "-",
				    (int)t->tid, t->name, VT_COLW,
				    t->interval_ns ?
					    (double)t->delta_ns /
						    (double)t->interval_ns :
					    0.0);
		}
	}
}

/* Seconds, exactly, from ns. */
static json_t *vcputime_secs(uint64_t ns)
{
	return json_real((double)ns / 1e9);
}

static json_t *vcputime_row_json(const struct vcputime_row *r)
{
	json_t *o = json_object(), *rate = json_object(), *tot = json_object();
	json_t *merged = json_array();

	if (r->vcpu >= 0) {
		json_object_set_new(o, "vcpu", json_integer(r->vcpu));
		json_object_set_new(o, "tid", json_integer(r->tid));
	}
	json_object_set_new(o, "interval_s", vcputime_secs(r->interval_ns));
	for (int s = 0; s < VT_NSTATES; s++) {
		const char *n = vcputime_state_name((enum vcputime_state)s);
		double v;

		if (vcputime_rate(r, (enum vcputime_state)s, &v))
			json_object_set_new(rate, n, json_real(v));
		else if (s < VT_NBASIC)
			json_object_set_new(rate, n, json_null());
		if (r->measured & (1u << s))
			json_object_set_new(tot, n,
					    vcputime_secs(r->total_ns[s]));
		if (r->merged & (1u << s))
			json_array_append_new(merged, json_string(n));
	}
	json_object_set_new(o, "seconds_per_second", rate);
	json_object_set_new(o, "seconds", tot);
	json_object_set_new(o, "merged", merged);
	return o;
}

json_t *vcputime_render_json(const struct vcputime *vt)
{
	json_t *root = json_object(), *vms = json_array();

	json_object_set_new(root, "source",
			    json_string(vt->source ? vt->source : ""));
	for (size_t i = 0; i < vt->nvms; i++) {
		const struct vcputime_vm *vm = &vt->vms[i];
		json_t *o = vcputime_row_json(&vm->sum);
		json_t *vcpus = json_array(), *threads = json_array();

		json_object_set_new(o, "pid", json_integer(vm->pid));
		json_object_set_new(o, "guest",
				    vm->guest ? json_string(vm->guest) :
						json_null());
		for (size_t k = 0; k < vm->nvcpus; k++)
			json_array_append_new(vcpus,
					      vcputime_row_json(&vm->vcpus[k]));
		for (size_t k = 0; k < vm->nthreads; k++) {
			const struct vcputime_thread *t = &vm->threads[k];
			json_t *th = json_object();

			json_object_set_new(th, "tid", json_integer(t->tid));
			json_object_set_new(th, "name", json_string(t->name));
			json_object_set_new(th, "vhost", json_boolean(t->vhost));
			json_object_set_new(
				th, "cpu",
				json_real(
					t->interval_ns ?
						(double)t->delta_ns /
							(double)t->interval_ns :
						0.0));
			json_object_set_new(th, "seconds",
					    vcputime_secs(t->total_ns));
			json_array_append_new(threads, th);
		}
		json_object_set_new(o, "vcpus", vcpus);
		json_object_set_new(o, "threads", threads);
		json_array_append_new(vms, o);
	}
	json_object_set_new(root, "vms", vms);
	return root;
}

/* A family's # TYPE and # HELP. */
static void vcputime_om_header(struct strbuf *b, const char *fam,
			       const char *help, bool om)
{
	if (om)
		strbuf_addf(b, "# TYPE %s counter\n# UNIT %s seconds\n", fam,
			    fam);
	strbuf_addf(b, "# HELP %s%s %s\n", fam, om ? "" : "_total", help);
	if (!om)
		strbuf_addf(b, "# TYPE %s_total counter\n", fam);
}

static void vcputime_om_vm(struct strbuf *b, const struct vcputime_vm *vm)
{
	strbuf_addf(b, "{pid=\"%d\"", (int)vm->pid);
	if (vm->guest) {
		strbuf_add(b, ",guest=\"");
		openmetrics_escape(b, vm->guest, true);
		strbuf_add(b, "\"");
	}
}

static void vcputime_om_row(struct strbuf *b, const struct vcputime_vm *vm,
			    const struct vcputime_row *r)
{
	for (int s = 0; s < VT_NSTATES; s++) {
		if (!(r->measured & (1u << s)))
			continue;
		strbuf_add(b, "kvm_vcpu_seconds_total");
		vcputime_om_vm(b, vm);
		if (r->vcpu >= 0)
			strbuf_addf(b, ",vcpu=\"%d\"", r->vcpu);
		strbuf_addf(b, ",state=\"%s\"} %llu.%09llu\n",
			    vcputime_state_name((enum vcputime_state)s),
			    (unsigned long long)(r->total_ns[s] / 1000000000),
			    (unsigned long long)(r->total_ns[s] % 1000000000));
	}
}

void vcputime_render_openmetrics(struct strbuf *b, const struct vcputime *vt,
				 bool om)
{
	vcputime_om_header(
		b, "kvm_vcpu_seconds",
		"Seconds each vCPU thread spent in each state since it started: guest, kernel (exits), vmm, halted, waiting (runnable, no CPU); guest+kernel or halted+vmm where the host does not measure the two apart",
		om);
	/* a VM's series, or (--per-vcpu) its vCPUs', whose sum it is:
	 * never both under the one name */
	for (size_t i = 0; i < vt->nvms; i++) {
		if (!vt->per_vcpu)
			vcputime_om_row(b, &vt->vms[i], &vt->vms[i].sum);
		for (size_t k = 0; vt->per_vcpu && k < vt->vms[i].nvcpus; k++)
			vcputime_om_row(b, &vt->vms[i], &vt->vms[i].vcpus[k]);
	}
	vcputime_om_header(
		b, "kvm_vmm_thread_seconds",
		"CPU seconds of the VMM's threads other than its vCPUs (vhost workers included), by thread name, since each started",
		om);
	for (size_t i = 0; i < vt->nvms; i++) {
		const struct vcputime_vm *vm = &vt->vms[i];

		/* threads of one name are one series: summed */
		for (size_t k = 0; k < vm->nthreads; k++) {
			uint64_t ns = 0;
			bool dup = false;

			for (size_t j = 0; j < k && !dup; j++)
				dup = !strcmp(vm->threads[j].name,
					      vm->threads[k].name);
			if (dup)
				continue;
			for (size_t j = k; j < vm->nthreads; j++)
				if (!strcmp(vm->threads[j].name,
					    vm->threads[k].name))
					ns += vm->threads[j].total_ns;
			strbuf_add(b, "kvm_vmm_thread_seconds_total");
			vcputime_om_vm(b, vm);
			strbuf_add(b, ",thread=\"");
			openmetrics_escape(b, vm->threads[k].name, true);
			strbuf_addf(b, "\"} %llu.%09llu\n",
				    (unsigned long long)(ns / 1000000000),
				    (unsigned long long)(ns % 1000000000));
		}
	}
}
