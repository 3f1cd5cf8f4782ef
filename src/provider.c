// SPDX-License-Identifier: GPL-2.0-only
/*
 * The provider registry: the one place that lists every provider, in the
 * order they are tried, plus the message helper providers report with.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

extern const struct provider_ops tracepoint_provider_ops;
extern const struct provider_ops statsfd_provider_ops;
extern const struct provider_ops debugfs_provider_ops;
extern const struct provider_ops qmp_provider_ops;

/* In this order each provider declares the field names no earlier one has
 * (exact per-VM binary stats before debugfs, which lockdown may hide) and
 * owns them; a later one fills in, for a claimed name, the VMs its owner
 * does not see (stats_update() arbitrates). */
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
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	p->notice = notice;
}

static int served_cmp(const void *a, const void *b)
{
	const struct served_key *x = a, *y = b;

	if (x->field != y->field)
		return x->field < y->field ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t served_normalize(struct served_key *v, size_t n)
{
	size_t m = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), served_cmp);
	for (size_t i = 0; i < n; i++)
		if (!m || served_cmp(&v[m - 1], &v[i]))
			v[m++] = v[i];
	return m;
}

bool provider_served(const struct provider *p, int field, pid_t pid)
{
	struct served_key k = { field, pid };

	return p->nserved &&
	       bsearch(&k, p->served, p->nserved, sizeof(k), served_cmp);
}
