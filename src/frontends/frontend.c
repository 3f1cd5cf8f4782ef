// SPDX-License-Identifier: GPL-2.0-only
/*
 * The front-end registry: the one place that lists every output mode, in
 * the order they open and render, and picks the ones the options select.
 * A new mode adds its file and one line here; the loop and main name none.
 */
#include <errno.h>
#include <string.h>

#include "errmsg.h"
#include "frontend.h"

/* The exporter comes last: a bad -L file is a usage error before it binds
 * its port, and it is the first to stop. */
const struct frontend_ops *const frontend_registry[] = {
	&batch_frontend_ops,
	&log_frontend_ops,
	&json_frontend_ops,
	&tui_frontend_ops,
	&exporter_frontend_ops,
	&history_frontend_ops,
	NULL,
};

size_t frontend_select(const struct options *opts, struct frontend *out,
		       size_t max)
{
	size_t n = 0;

	for (size_t i = 0; frontend_registry[i] && n < max; i++) {
		const struct frontend_ops *ops = frontend_registry[i];
		const struct frontend_view *view = ops->select(opts);

		if (!view)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].ops = ops;
		out[n].view = view;
		n++;
	}
	return n;
}

void frontend_needs(const struct frontend *fes, size_t n,
		    struct frontend_view *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const struct frontend_view *v = fes[i].view;

		if (v->pace > out->pace)
			out->pace = v->pace;
		out->at_once |= v->at_once;
		out->owns_terminal |= v->owns_terminal;
		out->vms |= v->vms;
		out->children |= v->children;
		out->counts_all |= v->counts_all;
		out->past |= v->past;
		out->whole |= v->whole;
	}
}

int frontend_write_result(struct frontend *fe, int rc)
{
	if (rc < 0 && rc != -EPIPE)
		errmsg_set(&fe->msg, rc, "cannot write the output: %s",
			   strerror(-rc));
	return rc;
}
