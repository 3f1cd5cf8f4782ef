// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch front-end (-1): prints one snapshot as kvm_stat's NAME TOTAL DELTA
 * lines (with --units, the units after them) and lets the loop end the run.
 */
#include <errno.h>
#include <stdlib.h>

#include "breakdown_render.h"
#include "frontend.h"
#include "lat_render.h"
#include "options.h"
#include "ui_text.h"
#include "util.h"
#include "vcputime_render.h"
#include "writer.h"

/* fe->priv: non-NULL when --units asks for the extras */
static int batch_open(struct frontend *fe, const struct options *opts)
{
	fe->priv = opts->units ? fe : NULL;
	return 0;
}

static int batch_render(struct frontend *fe, const struct snapshot *snap)
{
	struct strbuf b;
	int rc;

	strbuf_init(&b);
	ui_text_batch(&b, snap, fe->priv != NULL);
	if (snap->latency) {
		strbuf_add(&b, "\n");
		lat_render_text(&b, snap);
	}
	if (snap->breakdown)
		breakdown_render_text(&b, snap, NULL);
	if (snap->vcputime) {
		strbuf_add(&b, "\n");
		vcputime_render_text(&b, snap->vcputime, snap->header.pid);
	}
	rc = frontend_write_result(fe, writer_all(1, b.s, b.len));
	strbuf_free(&b);
	return rc;
}

static void batch_close(struct frontend *fe)
{
	(void)fe;
}

/* One interval, then the rows. */
static const struct frontend_view batch_view = {
	.pace = FRONTEND_ONCE,
};

static const struct frontend_view *batch_select(const struct options *opts)
{
	return opts->mode == MODE_BATCH && !opts->json ? &batch_view : NULL;
}

const struct frontend_ops batch_frontend_ops = {
	.name = "batch",
	.select = batch_select,
	.open = batch_open,
	.render = batch_render,
	.close = batch_close,
};
