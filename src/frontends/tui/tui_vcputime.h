/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The monitor's view of where vCPU time goes ('t'): one line per VM, its
 * vCPUs on Enter, seconds per second in guest, kernel, vmm, halted and
 * waiting (and the VMM's other threads' CPU per VM), sorted by a column
 * (waiting first). Its model is built at each render from the snapshot;
 * keys move and sort without a new sample.
 */
#ifndef KVMSTAT_TUI_VCPUTIME_H
#define KVMSTAT_TUI_VCPUTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "frontend.h"
#include "snapshot.h"

#define TUI_VT_COLS 8 /* id, name, five states, other threads */

/* One line: its cells as text, the numbers it sorts by. */
struct tui_vt_line {
	char id[16], name[24], cells[80], other[16];
	double key[TUI_VT_COLS];
	pid_t pid;
};

struct tui_vt {
	bool on;      /* the view is shown */
	pid_t vm;     /* whose vCPUs are shown, 0: the VMs */
	int sel, top; /* selected line, first shown */
	int sort;     /* column sorted by */
	bool have;    /* a result was rendered */
	char src[192];
	struct tui_vt_line *lines;
	size_t n;
};

/* The lines of vt's level from snap (freeing the last ones). */
void tui_vt_model(struct tui_vt *vt, const struct snapshot *snap);
/* Draws the view on the whole screen; header shows delay and sources (and
 * a replay's time and place: replay, or NULL). */
void tui_vt_draw(struct tui_vt *vt, const char *replay, const char *providers,
		 double delay);
/* A key while the view is shown: true when it was the view's (act what
 * the loop is to do: UI_SET_VCPUTIME with fe->req.on when it closes). */
bool tui_vt_key(struct tui_vt *vt, struct frontend *fe, int ch,
		enum ui_action *act);
void tui_vt_free(struct tui_vt *vt);

#endif
