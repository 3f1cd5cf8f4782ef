// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP provider's monitors (qmp_int.h): connecting each VM's socket
 * (greeting, capabilities, -p and -g checks, schema, vCPUs), what a
 * failure says (the provider's notices, each VM's problem once) and when
 * it is tried again, and this refresh's query-stats commands, sent
 * pipelined.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "provider.h"
#include "qmp_client.h"
#include "qmp_int.h"
#include "reading.h"
#include "util.h"

/* Adds a notice, after any not yet shown. */
void qp_note(struct provider *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->notice)
		errmsg_clear(&p->msg);
	else if (errmsg_isset(&p->msg))
		errmsg_add(&p->msg, "; ");
	va_start(ap, fmt);
	errmsg_vadd(&p->msg, fmt, ap);
	va_end(ap);
	p->notice = true;
}

/* Reports a VM's problem once: again only when it changes. */
void qp_vm_note(struct provider *p, struct qp_vm *vm, const char *text)
{
	if (vm->problem && !strcmp(vm->problem, text))
		return;
	free(vm->problem);
	vm->problem = xstrdup(text);
	qp_note(p, "%s", text);
}

void qp_vcpus_free(struct qp_vm *vm)
{
	for (size_t i = 0; i < vm->nvcpus; i++) {
		free(vm->vcpus[i].qom);
		free(vm->vcpus[i].val);
	}
	free(vm->vcpus);
	vm->vcpus = NULL;
	vm->nvcpus = 0;
}

/* The vCPU with QOM path qom, added when new. */
struct qp_vcpu *qp_vcpu_get(struct qp_priv *d, struct qp_vm *vm, const char *qom)
{
	struct qp_vcpu *c;

	for (size_t i = 0; i < vm->nvcpus; i++)
		if (!strcmp(vm->vcpus[i].qom, qom))
			return &vm->vcpus[i];
	vm->vcpus = xrealloc(vm->vcpus, (vm->nvcpus + 1) * sizeof(*vm->vcpus));
	c = &vm->vcpus[vm->nvcpus++];
	*c = (struct qp_vcpu){ .qom = xstrdup(qom), .index = -1 };
	c->val = xcalloc(d->nslots ? d->nslots : 1, sizeof(*c->val));
	return c;
}

/* Learns the vCPUs' indices and threads from query-cpus-fast. */
int qp_vm_cpus(struct provider *p, struct qp_vm *vm, uint64_t deadline)
{
	struct qp_priv *d = p->priv;
	json_t *r, *e;
	size_t i;
	int rc;

	vm->cpus_ns = util_now_ns();
	rc = qmp_command(&vm->q, "query-cpus-fast", NULL, deadline, &r);
	if (rc)
		return rc;
	json_array_foreach (r, i, e) {
		const char *qom = json_string_value(
			json_object_get(e, "qom-path"));
		json_t *idx = json_object_get(e, "cpu-index");
		json_t *tid = json_object_get(e, "thread-id");
		struct qp_vcpu *c;

		if (!qom || !json_is_integer(idx) ||
		    json_integer_value(idx) < 0 ||
		    json_integer_value(idx) > INT32_MAX)
			continue;
		c = qp_vcpu_get(d, vm, qom);
		c->index = (int)json_integer_value(idx);
		c->tid = json_is_integer(tid) ? (pid_t)json_integer_value(tid) :
						0;
	}
	json_decref(r);
	return 0;
}

/*
 * Closes a VM's connection after a failure and says so once: what failed,
 * why (vm->q.err) and, when known, what to do.
 */
void qp_vm_fail(struct provider *p, struct qp_vm *vm, const char *what,
		const char *fix)
{
	struct qp_priv *d = p->priv;
	struct errmsg text;
	char vmid[32] = "";

	if (vm->pid)
		snprintf(vmid, sizeof(vmid), " (VM %d)", (int)vm->pid);
	errmsg_set(&text, 0, "QMP socket %s%s: %s: %s%s%s", vm->path, vmid,
		   what, vm->q.err.text, fix ? ": " : "", fix ? fix : "");
	if (!d->opening)
		errmsg_add(&text, "; %s, retrying every %u s",
			   vm->ever_read ? "VM unavailable" : "not read",
			   (d->retry_ms + 999) / 1000);
	qmp_close(&vm->q);
	vm->state = QP_DOWN;
	vm->retry_ns = util_now_ns() + d->retry_ms * 1000000ull;
	qp_vm_note(p, vm, text.text);
}

/*
 * Asks the VMM its guest name (query-name: -name guest=NAME): 0 when it
 * is want, -ESRCH when it is another (or none), or the command's -errno;
 * why in vm->q.err. No /proc read, so -g works without root.
 */
static int qp_vm_named(struct qp_vm *vm, const char *want, uint64_t deadline)
{
	json_t *r = NULL;
	const char *name;
	int rc;

	rc = qmp_command(&vm->q, "query-name", NULL, deadline, &r);
	if (rc)
		return rc;
	name = json_string_value(json_object_get(r, "name"));
	if (name && !strcmp(name, want))
		rc = 0;
	else if (name)
		rc = errmsg_set(&vm->q.err, -ESRCH,
				"its guest is \"%.64s\", not -g \"%.64s\"",
				name, want);
	else
		rc = errmsg_set(&vm->q.err, -ESRCH,
				"its guest has no name, not -g \"%.64s\"",
				want);
	json_decref(r);
	return rc;
}

static bool qp_pid_taken(const struct qp_priv *d, const struct qp_vm *vm,
			 pid_t pid)
{
	for (size_t i = 0; i < d->nvms; i++)
		if (&d->vms[i] != vm && d->vms[i].state != QP_DOWN &&
		    d->vms[i].pid == pid)
			return true;
	return false;
}

/*
 * Connects a VM's socket: greeting, capabilities, schema, vCPUs. A
 * different process at the path is a new VM: the old one's counters stay
 * in the totals. 0, or -errno with the problem noted and the VM DOWN.
 */
int qp_vm_connect(struct provider *p, struct qp_vm *vm, uint64_t deadline)
{
	struct qp_priv *d = p->priv;
	json_t *r = NULL, *args;
	int rc;

	rc = qmp_connect(&vm->q, vm->path, deadline);
	if (rc) {
		char fix[ERRMSG_MAX / 2];

		if (rc == -ENOENT || rc == -ECONNREFUSED)
			snprintf(fix, sizeof(fix),
				 "is QEMU running with -qmp unix:%s,server=on,wait=off?",
				 vm->path);
		else if (rc == -EACCES || rc == -EPERM)
			snprintf(fix, sizeof(fix),
				 "give this user read and write access to it");
		else
			fix[0] = '\0';
		qp_vm_fail(p, vm, "cannot connect", fix[0] ? fix : NULL);
		return rc;
	}
	if (d->pid && vm->q.pid && vm->q.pid != d->pid) {
		errmsg_set(&vm->q.err, -ESRCH, "its QEMU is pid %d, not -p %d",
			   (int)vm->q.pid, (int)d->pid);
		qp_vm_fail(p, vm, "ignored", NULL);
		return -ESRCH;
	}
	if (!d->pid && d->guest) {
		rc = qp_vm_named(vm, d->guest, deadline);
		if (rc) {
			qp_vm_fail(p, vm,
				   rc == -ESRCH ? "ignored" : "query-name",
				   NULL);
			return rc;
		}
	}
	if (vm->q.pid && qp_pid_taken(d, vm, vm->q.pid)) {
		errmsg_set(&vm->q.err, -EEXIST,
			   "another --qmp socket reaches the same VM (pid %d)",
			   (int)vm->q.pid);
		qp_vm_fail(p, vm, "ignored", NULL);
		return -EEXIST;
	}
	args = json_pack("{s:s}", "provider", "kvm");
	rc = qmp_command(&vm->q, "query-stats-schemas", args, deadline, &r);
	json_decref(args);
	if (!rc)
		rc = qp_vm_schema(p, vm, r);
	json_decref(r);
	if (rc) {
		qp_vm_fail(p, vm, "query-stats-schemas", NULL);
		return rc;
	}
	if (vm->pid != vm->q.pid) {
		/* another process: keep what the old one counted */
		for (size_t s = 0; s < vm->nslots; s++)
			if (reading_ok(&vm->last[s]) &&
			    d->slots[s].type == FIELD_CUMULATIVE)
				d->gone[s] += vm->last[s].value;
		readings_clear(vm->last, vm->nslots);
		vm->replaced = vm->pid;
		vm->pid = vm->q.pid;
	}
	qp_vcpus_free(vm);
	qp_vm_regions_forget(vm);
	rc = qp_vm_cpus(p, vm, deadline);
	if (rc) {
		qp_vm_fail(p, vm, "query-cpus-fast", NULL);
		return rc;
	}
	vm->state = QP_UP;
	return 0;
}

/* Sends this refresh's query-stats commands. */
int qp_vm_send(struct provider *p, struct qp_vm *vm, uint64_t deadline)
{
	int rc;

	for (int t = 0; t < QP_TARGETS; t++) {
		vm->sent[t] = 0;
		if (!vm->args[t])
			continue;
		rc = qmp_send(&vm->q, "query-stats", vm->args[t], deadline,
			      &vm->sent[t]);
		if (rc) {
			qp_vm_fail(p, vm, "query-stats", NULL);
			return rc;
		}
		vm->owed_id = vm->sent[t];
	}
	return 0;
}
