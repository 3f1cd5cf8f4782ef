/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where vCPU time goes (--vcpu-time, the monitor's 't') in a recording:
 * what each refresh's renders showed (vcputime.h's struct vcputime: per
 * VM and per vCPU the states' totals and last interval, the VMM's other
 * threads' CPU), written as README's vt_read, vt_value and vt_thread say,
 * every row at each refresh it was computed at (every vCPU's wall time
 * grows, so every row changes); and read back into the same structure for
 * a refresh of the replay. The recorder and the replay own one each.
 */
#ifndef KVMSTAT_REC_VT_H
#define KVMSTAT_REC_VT_H

#include <stdbool.h>

#include "errmsg.h"
#include "recdb.h"
#include "vcputime.h"

struct rec_vt;

struct rec_vt *rec_vt_new(void);
void rec_vt_free(struct rec_vt *v);
/* What vt (NULL: off, nothing written) showed at refresh. 0, or -errno
 * with a line. */
int rec_vt_write(struct rec_vt *v, struct recdb *db, long long refresh,
		 const struct vcputime *vt, struct errmsg *msg);
/* The SQL that drops the rows before refresh keep; caller frees. */
char *rec_vt_drop_sql(long long keep);

struct rp_vt;

/* The reader of db: a recording of layout 2 has no vCPU time (its
 * reads find none). NULL with a line when a statement cannot be made. */
struct rp_vt *rp_vt_open(struct recdb *db, struct errmsg *msg);
void rp_vt_close(struct rp_vt *v);
/* Whether a refresh in [lo, hi] (ids) holds vCPU time. */
bool rp_vt_any(struct rp_vt *v, long long lo, long long hi);
/* Reads refresh id's vCPU time; with from (not 0) each row's interval
 * and deltas are the sums of the refreshes after from up to id (-1 over
 * a window). 0, or -errno with a line. */
int rp_vt_feed(struct rp_vt *v, long long from, long long id,
	       struct errmsg *msg);
/* What the refresh fed showed, or NULL when it had none; the reader's,
 * valid until the next feed. per_vcpu: the outputs' series per vCPU. */
const struct vcputime *rp_vt_read(struct rp_vt *v, bool per_vcpu);

#endif
