/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The monitor's breakdown view ('k', or Enter on kvm_pio, kvm_mmio,
 * kvm_msr, kvm_hypercall or the kvm_exit(...)/kvm_userspace_exit(...)
 * children they break down): the keyed tables of breakdown_render.h
 * drawn on the screen, with a header and a key line.
 */
#ifndef KVMSTAT_TUI_BREAKDOWN_H
#define KVMSTAT_TUI_BREAKDOWN_H

#include "snapshot.h"

/* Draws the table of kind (NULL: every kind asked for) of s for the
 * selection title ("pid 123", "summary") over the whole screen, times
 * with units.h's flags units. */
void tui_brk_draw(const struct snapshot *s, const char *title, const char *kind,
		  unsigned int units);

#endif
