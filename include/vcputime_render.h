/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where each vCPU's time goes (vcputime.h) rendered: the table -1 and -l
 * print with --vcpu-time (and the monitor's 't' view draws), its JSON
 * object, and the exporter's kvm_vcpu_seconds_total and
 * kvm_vmm_thread_seconds_total.
 */
#ifndef KVMSTAT_VCPUTIME_RENDER_H
#define KVMSTAT_VCPUTIME_RENDER_H

#include <jansson.h>
#include <stdbool.h>

#include "strbuf.h"
#include "vcputime.h"

/* The table: one line per VM (and per vCPU with vt->per_vcpu, or for the
 * VM pid alone when pid is not 0), seconds per second of the last
 * interval; then the VMM's other threads. */
void vcputime_render_text(struct strbuf *b, const struct vcputime *vt,
			  pid_t pid);
/* One table line of a row (a VM's sum or a vCPU), for the monitor too:
 * the five states, a merged one shown in the first column of its pair
 * with "+" in the second. */
void vcputime_render_cells(char *buf, size_t len, const struct vcputime_row *r);
/* The "vcpu_time" object of --json. */
json_t *vcputime_render_json(const struct vcputime *vt);
/* The exporter's series (om: OpenMetrics, else Prometheus text 0.0.4). */
void vcputime_render_openmetrics(struct strbuf *b, const struct vcputime *vt,
				 bool om);

#endif
