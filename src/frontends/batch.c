// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch front-end (-1): prints one snapshot as kvm_stat's NAME TOTAL DELTA
 * lines (with --units, the units after them) and lets the loop end the run.
 * Microseconds are "us" unless the user's locale is UTF-8 (units.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "breakdown_render.h"
#include "frontend.h"
#include "lat_render.h"
#include "options.h"
#include "ui_text.h"
#include "units.h"
#include "util.h"
#include "vcputime_render.h"
#include "writer.h"

/* fe->priv */
struct batch_priv {
	bool units;	    /* --units: the extras after kvm_stat's columns */
	unsigned int flags; /* units.h's, from the locale */
};

static int batch_open(struct frontend *fe, const struct options *opts)
{
	struct batch_priv *bp = xcalloc(1, sizeof(*bp));

	bp->units = opts->units;
	bp->flags = units_locale_flags();
	fe->priv = bp;
	return 0;
}

static int batch_render(struct frontend *fe, const struct snapshot *snap)
{
	const struct batch_priv *bp = fe->priv;
	struct strbuf b;
	int rc;

	strbuf_init(&b);
	ui_text_batch(&b, snap, bp->units, bp->flags);
	if (snap->latency) {
		strbuf_add(&b, "\n");
		lat_render_text(&b, snap, bp->flags);
	}
	if (snap->breakdown)
		breakdown_render_text(&b, snap, NULL, bp->flags);
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
	free(fe->priv);
	fe->priv = NULL;
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
