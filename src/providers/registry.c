// SPDX-License-Identifier: GPL-2.0-only
/*
 * The provider registry: the one place that lists every provider, in the
 * order they are tried.
 */
#include <string.h>

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
