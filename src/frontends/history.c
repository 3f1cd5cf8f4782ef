// SPDX-License-Identifier: GPL-2.0-only
/*
 * --replay FILE --export openmetrics: every refresh of the recording as
 * the exporter would have served it (OpenMetrics, openmetrics.h), the
 * samples stamped with the refresh's time and gathered by family
 * (om_history.h), written to stdout when the replay ends, for promtool
 * tsdb create-blocks-from openmetrics.
 */
#include <errno.h>
#include <stdlib.h>

#include "errmsg.h"
#include "frontend.h"
#include "om_history.h"
#include "openmetrics.h"
#include "options.h"
#include "util.h"
#include "writer.h"

struct history_priv {
	struct om_history h;
	struct openmetrics_writer *w; /* the exporter's level of detail */
	struct strbuf b;
};

static int history_open(struct frontend *fe, const struct options *opts)
{
	struct history_priv *hp = xcalloc(1, sizeof(*hp));

	om_history_init(&hp->h);
	hp->w = openmetrics_writer_new(opts->per_vcpu);
	strbuf_init(&hp->b);
	fe->priv = hp;
	return 0;
}

static int history_render(struct frontend *fe, const struct snapshot *snap)
{
	struct history_priv *hp = fe->priv;

	strbuf_reset(&hp->b);
	openmetrics_write(hp->w, &hp->b, snap, OPENMETRICS_OPENMETRICS);
	om_history_add(&hp->h, hp->b.s, hp->b.len, &snap->wall);
	return 0;
}

static int history_finish(struct frontend *fe)
{
	struct history_priv *hp = fe->priv;

	strbuf_reset(&hp->b);
	om_history_write(&hp->h, &hp->b);
	return frontend_write_result(fe, writer_all(1, hp->b.s, hp->b.len));
}

static void history_close(struct frontend *fe)
{
	struct history_priv *hp = fe->priv;

	if (!hp)
		return;
	om_history_free(&hp->h);
	openmetrics_writer_free(hp->w);
	strbuf_free(&hp->b);
	free(hp);
	fe->priv = NULL;
}

/* The exporter's series: every VM (and vCPU with --per-vcpu), child
 * events as labels, totals since each VM started where known. */
static const struct frontend_view history_view = {
	.pace = FRONTEND_EVERY,
	.at_once = true,
	.vms = true,
	.children = true,
	.past = true,
	.whole = true,
};

static const struct frontend_view *history_select(const struct options *opts)
{
	return opts->mode == MODE_HISTORY ? &history_view : NULL;
}

const struct frontend_ops history_frontend_ops = {
	.name = "history",
	.select = history_select,
	.open = history_open,
	.render = history_render,
	.finish = history_finish,
	.close = history_close,
};
