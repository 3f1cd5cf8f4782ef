/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The monitor's latency view ('l'): the exit-latency tables of
 * lat_render.h drawn on the curses screen, with a header and a key line.
 */
#ifndef KVMSTAT_TUI_LAT_H
#define KVMSTAT_TUI_LAT_H

#include "snapshot.h"

/* Draws s (NULL: not read yet) for the selection title (e.g. "pid 123",
 * or "summary") over the whole screen, times with units.h's flags units. */
void tui_lat_draw(const struct snapshot *snap, const char *title,
		  unsigned int units);
/* A page of text under a bold header, a footer in reverse (the latency
 * and breakdown views). */
void tui_lat_page(const char *hdr, const char *text, const char *footer);

#endif
