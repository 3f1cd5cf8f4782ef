// SPDX-License-Identifier: GPL-2.0-only
/*
 * The provider registry: the one place that lists every provider, in the
 * order they are tried, plus the helpers providers report with and ask
 * the filter and the arbiter through.
 */
#include <stdarg.h>
#include <string.h>

#include "arbiter.h"
#include "errmsg.h"
#include "provider.h"

extern const struct provider_ops tracepoint_provider_ops;
extern const struct provider_ops statsfd_provider_ops;
extern const struct provider_ops debugfs_provider_ops;
extern const struct provider_ops qmp_provider_ops;

/* In this order each provider declares the field names no earlier one has
 * (exact per-VM binary stats before debugfs, which lockdown may hide) and
 * owns them; a later one fills in, for a claimed name, the VMs its owner
 * does not see (the arbiter decides, see arbiter.h). */
const struct provider_ops *const provider_registry[] = {
	&tracepoint_provider_ops,
	&statsfd_provider_ops,
	&debugfs_provider_ops,
	&qmp_provider_ops,
	NULL,
};

const struct provider_ops *provider_find(const char *name)
{
	for (size_t i = 0; provider_registry[i]; i++)
		if (!strcmp(provider_registry[i]->name, name))
			return provider_registry[i];
	return NULL;
}

void provider_msg(struct provider *p, bool notice, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_vset(&p->msg, 0, fmt, ap);
	va_end(ap);
	p->notice = notice;
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
