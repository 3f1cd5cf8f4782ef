// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's latency view: per exit reason, count, share of the time
 * out of the guest, min, avg, max and p50/p90/p99 (perf kvm stat's
 * columns plus percentiles), for exits handled in the kernel and for time
 * spent in the VMM, since latency was turned on (or 'r').
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "lat_render.h"
#include "strbuf.h"
#include "tui_lat.h"

void tui_lat_page(const char *hdr, const char *text, const char *footer)
{
	int rows, cols, y = 0;
	const char *p = text;

	getmaxyx(stdscr, rows, cols);
	erase();
	attron(A_BOLD);
	mvaddnstr(y++, 0, hdr, cols);
	attroff(A_BOLD);
	while (p && *p && y < rows - 1) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		y++;
		mvaddnstr(y, 0, p, len < cols ? len : cols);
		p = nl ? nl + 1 : NULL;
	}
	attron(A_REVERSE);
	mvaddnstr(rows - 1, 0, footer, cols);
	attroff(A_REVERSE);
	refresh();
}

void tui_lat_draw(const struct snapshot *snap, const char *title,
		  unsigned int units)
{
	struct strbuf b;
	char hdr[256];

	snprintf(hdr, sizeof(hdr), "kvm statistics - exit latency, %s", title);
	strbuf_init(&b);
	if (!snap->latency)
		strbuf_add(&b, "starting...\n");
	else if (snap->latency->error)
		strbuf_addf(&b, "latency is off: %s\n", snap->latency->error);
	else
		lat_render_text(&b, snap, units);
	tui_lat_page(hdr, b.s, " l or Esc back  r reset  h help  q quit ");
	strbuf_free(&b);
}
