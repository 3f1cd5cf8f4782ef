// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QMP provider's memory maps (qmp_int.h), which name the MMIO
 * addresses of --breakdown mmio after the QEMU device that answers them:
 * while the loop wants those names (provider.want_gpa_names), each VM's
 * map is asked once per connection with human-monitor-command "info mtree
 * -f" (QEMU has no QMP command for it), sent with the refresh's
 * query-stats and taken once their replies are in, within the same
 * deadline, and read by mtree.h. It is asked again only when an address
 * it did not name was asked about, at most every QP_MTREE_RETRY_NS: a
 * guest places its PCI BARs while it boots, so a map taken before can
 * lack them. A map that cannot be had (an old or odd VMM, a reply too
 * slow) leaves the addresses unnamed, said once per connection; it fails
 * nothing. Only a broken connection fails the VM, as any reply would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtree.h"
#include "provider.h"
#include "qmp_client.h"
#include "qmp_int.h"
#include "util.h"

void qp_vm_regions_forget(struct qp_vm *vm)
{
	mtree_free(&vm->mtree);
	vm->mtree_have = false;
	vm->mtree_miss = false;
	vm->mtree_said = false;
	vm->mtree_ns = 0;
	vm->mtree_id = 0;
}

void qp_vm_regions_send(struct provider *p, struct qp_vm *vm, uint64_t deadline)
{
	uint64_t now = util_now_ns();
	json_t *args;
	int rc;

	vm->mtree_id = 0;
	if (!p->want_gpa_names || vm->state != QP_UP)
		return;
	if (vm->mtree_ns &&
	    (!vm->mtree_miss || now - vm->mtree_ns < QP_MTREE_RETRY_NS))
		return;
	vm->mtree_ns = now;
	vm->mtree_miss = false;
	args = json_pack("{s:s}", "command-line", "info mtree -f");
	rc = qmp_send(&vm->q, "human-monitor-command", args, deadline,
		      &vm->mtree_id);
	json_decref(args);
	if (rc)
		vm->mtree_id = 0; /* the refresh's own replies say why */
}

/* Says once per connection why the VM's addresses go unnamed. */
static void qp_regions_note(struct provider *p, struct qp_vm *vm,
			    const char *why)
{
	if (vm->mtree_said)
		return;
	vm->mtree_said = true;
	qp_note(p,
		"QMP socket %s (VM %d): no memory map (info mtree -f: %s): its MMIO addresses go unnamed",
		vm->path, (int)vm->pid, why);
}

void qp_vm_regions_take(struct provider *p, struct qp_vm *vm, uint64_t deadline)
{
	struct qp_priv *d = p->priv;
	struct mtree t;
	json_t *r = NULL;
	const char *text;
	char why[64];
	int rc;

	if (!vm->mtree_id)
		return;
	rc = qmp_recv(&vm->q, vm->mtree_id, deadline, &r);
	vm->mtree_id = 0;
	if (rc == -ETIMEDOUT) {
		/* its reply is skipped when it comes; asked again on a miss */
		snprintf(why, sizeof(why), "no reply within %u ms", d->reply_ms);
		qp_regions_note(p, vm, why);
		return;
	}
	if (rc == -EREMOTEIO) {
		qp_regions_note(p, vm, vm->q.err.text);
		return;
	}
	if (rc) {
		if (rc != -EINTR)
			qp_vm_fail(p, vm, "info mtree -f", NULL);
		return;
	}
	text = json_string_value(r);
	if (!text || mtree_parse(&t, text, json_string_length(r))) {
		qp_regions_note(p, vm, "not a memory tree");
		json_decref(r);
		return;
	}
	json_decref(r);
	mtree_free(&vm->mtree);
	vm->mtree = t;
	vm->mtree_have = true;
}

const char *qp_gpa_name(struct provider *p, pid_t pid, uint64_t gpa)
{
	struct qp_priv *d = p->priv;

	for (size_t i = 0; d && pid > 0 && i < d->nvms; i++) {
		struct qp_vm *vm = &d->vms[i];
		const char *name;

		if (vm->pid != pid)
			continue;
		name = vm->mtree_have ? mtree_name(&vm->mtree, gpa) : NULL;
		if (name)
			return name;
		vm->mtree_miss = true;
	}
	return NULL;
}
