// SPDX-License-Identifier: GPL-2.0-only
/*
 * The helpers providers report with and ask the filter and the arbiter
 * through. The list of providers is in registry.c, so what links one
 * provider alone (a fuzz target) need not link them all.
 */
#include <stdarg.h>

#include "arbiter.h"
#include "errmsg.h"
#include "options.h"
#include "provider.h"

void provider_msg(struct provider *p, bool notice, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_vset(&p->msg, 0, fmt, ap);
	va_end(ap);
	p->notice = notice;
}

void provider_cfg_init(struct provider_cfg *c, const struct options *o)
{
	*c = (struct provider_cfg){
		.pid = o->pid,
		.guest = o->guest,
		.include_past = o->include_past,
		.no_bpf = o->no_bpf,
		.tracefs_root = o->tracefs_root,
		.debugfs_root = o->debugfs_root,
		.proc_root = o->proc_root,
		.qmp_paths = o->qmp_paths,
		.nqmp = o->nqmp,
		.qmp_reply_timeout_ms = o->qmp_reply_timeout_ms,
		.qmp_retry_ms = o->qmp_retry_ms,
		.kvm_stat_columns = (o->mode == MODE_BATCH ||
				     o->mode == MODE_LOG) &&
				    !o->json && !o->units,
	};
}

bool provider_asked(const struct provider_ops *ops, const struct options *opts)
{
	return ops->asked && ops->asked(opts);
}

bool provider_claimed(const struct provider *p, const char *name)
{
	return arbiter_claimed(p->arbiter, name, p->ops->name);
}

bool provider_keeps(const struct provider *p, const char *name)
{
	/* counting a parent the snapshot then leaves out costs little;
	 * missing one a kept child brings in would show it empty */
	return filter_keeps(p->filter, name, p->children) ||
	       filter_may_keep_children(p->filter, name);
}

bool provider_wants(const struct provider *p, const char *name)
{
	return provider_keeps(p, name) && !provider_claimed(p, name);
}

bool provider_served(const struct provider *p, int field, pid_t pid)
{
	return arbiter_served(p->arbiter, field, pid);
}
