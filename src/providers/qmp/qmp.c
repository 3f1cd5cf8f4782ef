// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP provider: KVM's statistics as QEMU reports them over its monitor
 * (--qmp PATH, repeatable), which needs nothing but access to the socket.
 * Each socket is one VM: its pid comes from SO_PEERCRED (-p is matched
 * against it), its name from query-name (for -g, so neither needs /proc
 * or root), its schema from
 * query-stats-schemas once per connection (names, types, units,
 * histograms), its vCPUs' indices and threads from query-cpus-fast (the
 * QOM path is not the index), and every refresh asks query-stats for the
 * "vm" and "vcpu" targets, pipelined, and keeps what the field filter
 * keeps: names another provider owns too, since its VMs fill in the ones
 * that provider does not see (stats_update() chooses).
 *
 * A reply may take reply_ms (1 s unless the options say otherwise),
 * counted from the start of the refresh for all sockets together, so one
 * refresh never waits longer than that, even while a peer keeps sending;
 * each socket may send QMP_BUDGET_DEFAULT bytes per refresh, and one that
 * sends more (a flood of events) is closed like one that talks garbage.
 * A pending SIGINT or SIGTERM ends the waits at once. A socket that times out keeps its
 * connection: its VM is unavailable until the late replies have arrived,
 * and is read again in the refresh after. One that refuses, closes, talks
 * garbage or answers with an error is closed and tried again every
 * retry_ms (3 s). Each change is one notice naming the socket; the other
 * VMs carry on.
 *
 * Totals (pid 0) sum the VMs (or only -p's). A cumulative counter of a VM
 * that became unavailable keeps its last value in the sum, so the totals
 * neither drop when it goes nor count its past again when it comes back;
 * the refresh that lost it flags SAMPLE_REBASE all the same. Gauges and
 * peaks sum (peaks: the maximum) the VMs read in this refresh only.
 *
 * This file is the provider itself (open, read, close); the rest of
 * src/providers/qmp/ talks to the monitors and says what went wrong
 * (monitors.c, over the QMP client of qmp_client.h), binds what query-stats-schemas says to
 * fields (schemas.c) and takes the query-stats replies (replies.c), all
 * through qmp_int.h; while the loop wants MMIO addresses named, each VM's
 * memory map is asked too (regions.c). The provider's names carry the prefix qp_; qmp_ is
 * the client's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "options.h"
#include "provider.h"
#include "qmp_client.h"
#include "qmp_int.h"
#include "reading.h"
#include "util.h"

/*
 * One refresh: late replies first, then every ready VM's query-stats go
 * out together, sockets due for a retry connect, and the replies are read
 * against one deadline.
 */
static int qp_read(struct provider *p, struct sample_set *out)
{
	struct qp_priv *d = p->priv;
	uint64_t now = util_now_ns();
	uint64_t deadline = now + d->reply_ms * 1000000ull;
	unsigned int flags = 0;

	for (size_t i = 0; i < d->nvms; i++) {
		struct qp_vm *vm = &d->vms[i];

		vm->was_available = vm->available;
		vm->available = false;
		vm->sent[QP_TARGET_VM] = vm->sent[QP_TARGET_VCPU] = 0;
		qmp_budget(&vm->q, QMP_BUDGET_DEFAULT);
		if (vm->state == QP_PENDING) {
			int rc = qmp_recv(&vm->q, vm->owed_id, 0, NULL);

			if (rc == -ETIMEDOUT || rc == -EINTR)
				continue; /* still owed: no wait */
			if (rc && rc != -EREMOTEIO) {
				qp_vm_fail(p, vm, "late reply", NULL);
				continue;
			}
			vm->state = QP_UP;
		}
		if (vm->state == QP_UP && !qp_vm_send(p, vm, deadline))
			qp_vm_regions_send(p, vm, deadline);
	}
	for (size_t i = 0; i < d->nvms; i++) {
		struct qp_vm *vm = &d->vms[i];

		if (vm->state != QP_DOWN || now < vm->retry_ns ||
		    util_now_ns() >= deadline)
			continue;
		if (!qp_vm_connect(p, vm, deadline) &&
		    !qp_vm_send(p, vm, deadline))
			qp_vm_regions_send(p, vm, deadline);
	}
	for (size_t i = 0; i < d->nvms; i++) {
		struct qp_vm *vm = &d->vms[i];

		if (vm->state != QP_UP)
			continue;
		if (!(vm->sent[QP_TARGET_VM] || vm->sent[QP_TARGET_VCPU])) {
			qp_vm_regions_take(p, vm, deadline);
			continue;
		}
		vm->available = qp_vm_collect(p, vm, deadline);
		if (!vm->available)
			continue;
		qp_vm_regions_take(p, vm, deadline);
		if (vm->replaced)
			qp_note(p, "QMP socket %s: now VM %d (VM %d is gone)",
				vm->path, (int)vm->pid, (int)vm->replaced);
		else if (vm->problem)
			qp_note(p, "QMP socket %s (VM %d): %s", vm->path,
				(int)vm->pid,
				vm->ever_read ? "answers again" : "connected");
		free(vm->problem);
		vm->problem = NULL;
		vm->replaced = 0;
		vm->ever_read = true;
		if (!d->pid || vm->pid == d->pid)
			qp_vm_push(p, vm, out);
	}
	for (size_t i = 0; i < d->nvms; i++)
		if (d->vms[i].was_available && !d->vms[i].available &&
		    (!d->pid || d->vms[i].pid == d->pid))
			flags = SAMPLE_REBASE;
	qp_push_totals(p, out, flags);
	return 0;
}

static bool qp_probe(const struct provider_cfg *opts)
{
	return opts->nqmp > 0;
}

static void qp_close(struct provider *p)
{
	struct qp_priv *d = p->priv;

	if (!d)
		return;
	for (size_t i = 0; i < d->nvms; i++) {
		struct qp_vm *vm = &d->vms[i];

		qmp_close(&vm->q);
		qp_vcpus_free(vm);
		qp_vm_regions_forget(vm);
		for (int t = 0; t < QP_TARGETS; t++)
			json_decref(vm->args[t]);
		free(vm->path);
		free(vm->val);
		free(vm->last);
		free(vm->problem);
	}
	free(d->vms);
	for (size_t i = 0; i < d->nstats; i++) {
		free(d->stats[i].name);
		free(d->stats[i].slots);
	}
	free(d->stats);
	for (int t = 0; t < QP_TARGETS; t++)
		free(d->stat_of[t]);
	free(d->slots);
	free(d->gone);
	free(d);
	p->priv = NULL;
}

/*
 * Connects every socket (each with its own reply timeout). Succeeds when
 * at least one VM answers; the others are noted and retried from read().
 */
static int qp_open(struct provider *p, const struct provider_cfg *opts)
{
	struct qp_priv *d;
	size_t up = 0, wanted = 0;
	int rc = -ENOENT;

	errmsg_clear(&p->msg);
	p->notice = false;
	if (!opts->nqmp) {
		provider_msg(p, false,
			     "no QMP socket given: use --qmp PATH (QEMU: -qmp unix:PATH,server=on,wait=off)");
		return -EINVAL;
	}
	d = xcalloc(1, sizeof(*d));
	p->priv = d;
	d->pid = opts->pid;
	d->guest = opts->guest;
	d->reply_ms = opts->qmp_reply_timeout_ms ? opts->qmp_reply_timeout_ms :
						   QMP_REPLY_TIMEOUT_MS_DEFAULT;
	d->retry_ms = opts->qmp_retry_ms ? opts->qmp_retry_ms :
					   QMP_RETRY_MS_DEFAULT;
	d->vms = xcalloc(opts->nqmp, sizeof(*d->vms));
	d->nvms = opts->nqmp;
	d->opening = true;
	for (size_t i = 0; i < d->nvms; i++) {
		struct qp_vm *vm = &d->vms[i];

		qmp_init(&vm->q, d->reply_ms);
		vm->path = xstrdup(opts->qmp_paths[i]);
		vm->state = QP_DOWN;
		rc = qp_vm_connect(p, vm,
				   util_now_ns() + d->reply_ms * 1000000ull);
		if (rc)
			continue;
		up++;
		wanted += vm->args[QP_TARGET_VM] || vm->args[QP_TARGET_VCPU];
	}
	if (!up) {
		/* the notes become the reason, one line */
		p->notice = false;
		if (d->nvms > 1) {
			struct errmsg why = p->msg;

			provider_msg(p, false,
				     "no QMP socket could be used: %s",
				     why.text);
		}
		goto out_close;
	}
	if (!wanted) {
		provider_msg(p, false,
			     "no KVM statistic from QMP matches the field filter");
		rc = -ENOENT;
		goto out_close;
	}
	d->opening = false;
	if (up < d->nvms)
		qp_note(p, "sockets that failed are tried again every %u s",
			(d->retry_ms + 999) / 1000);
	return 0;

out_close:
	qp_close(p);
	return rc;
}

static bool qp_asked(const struct options *o)
{
	return o->nqmp > 0;
}

const struct provider_ops qmp_provider_ops = {
	.name = QP_PROVIDER,
	.asked = qp_asked,
	.probe = qp_probe,
	.open = qp_open,
	.read = qp_read,
	.close = qp_close,
	.gpa_name = qp_gpa_name,
	.own_pid_check = true,
};
