// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's breakdown view: per key (port, address, MSR, hypercall),
 * its name, count, share and rate, and with latency on the time to
 * re-entry (share, min, avg, max, p50, p99), since the breakdown was
 * turned on (or 'r').
 */
#include <stdio.h>

#include "breakdown_render.h"
#include "strbuf.h"
#include "tui_breakdown.h"
#include "tui_lat.h"

void tui_brk_draw(const struct snapshot *s, const char *title, const char *kind,
		  unsigned int units)
{
	struct strbuf b;
	char hdr[256];

	snprintf(hdr, sizeof(hdr), "kvm statistics - %s exits by key, %s",
		 kind ? kind : "all", title);
	strbuf_init(&b);
	if (!s->breakdown)
		strbuf_add(&b, "starting...\n");
	else
		breakdown_render_text(&b, s, kind, units);
	tui_lat_page(hdr, b.s, " k or Esc back  r reset  h help  q quit ");
	strbuf_free(&b);
}
