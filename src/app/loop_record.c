// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's side of the flight recorder (recorder.h) and of the replay
 * (replay.h): a refresh recorded after each sample, with the directory
 * of VMs it names; and, with --replay, the recording's refreshes in place
 * of the providers' samples, at the pace the front-ends set (as fast as
 * they are written, or the monitor's, with its time keys).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop.h"
#include "loop_int.h"
#include "recorder.h"
#include "replay.h"
#include "vmscan.h"

int loop_record_open(struct loop *l)
{
	const struct options *o = l->opts;
	struct recorder_cfg cfg = { .path = o->record,
				    .keep_ns = o->keep_ns,
				    .keep_bytes = o->keep_bytes,
				    .delay = l->run.delay };
	struct errmsg err;
	int rc;

	if (!o->record)
		return 0;
	rc = recorder_open(&l->rec, &cfg, &err);
	if (rc)
		return loop_fail(l, rc, true, "--record: %s", err.text);
	return 0;
}

static void loop_record_stop(struct loop *l, const struct errmsg *err);

void loop_record(struct loop *l)
{
	struct errmsg err;

	if (!l->rec)
		return;
	/* the directory as this refresh's snapshots will have it, and who
	 * every VM is (looked up once) */
	l->vms_scanned = false;
	loop_scan_vms(l);
	l->vms_scanned = true;
	for (; l->rec_keys < l->stats.nkeys; l->rec_keys++) {
		pid_t pid = l->stats.keys[l->rec_keys].pid;

		if (pid)
			vmscan_ident(vmdir_get(&l->vms, pid),
				     l->opts->proc_root, l->opts->run_root);
	}
	if (recorder_write(l->rec, &l->stats, &l->vms, l->providers, &err))
		loop_record_stop(l, &err);
}

void loop_record_breakdown(struct loop *l, const struct snap_breakdown *brk)
{
	struct errmsg err;

	if (l->rec && recorder_breakdown(l->rec, brk, &err))
		loop_record_stop(l, &err);
}

void loop_record_latency(struct loop *l, const struct hist_set *hs,
			 const struct snap_latency *lat)
{
	struct errmsg err;

	if (l->rec && recorder_latency(l->rec, &l->stats.fields, hs, lat, &err))
		loop_record_stop(l, &err);
}

void loop_record_vcputime(struct loop *l, const struct vcputime *vt)
{
	struct errmsg err;

	if (l->rec && recorder_vcputime(l->rec, vt, &err))
		loop_record_stop(l, &err);
}

/* A write failed (a full disk): the recording stops, said once; what it
 * holds stays whole. */
static void loop_record_stop(struct loop *l, const struct errmsg *err)
{
	char line[ERRMSG_MAX + 32];

	snprintf(line, sizeof(line), "recording stopped: %s", err->text);
	recorder_close(l->rec);
	l->rec = NULL;
	/* said on stderr, or in the monitor under its header */
	loop_note_from(l, "record", NULL, false, false, line);
	if (!l->need.owns_terminal)
		loop_say_notes(l, true);
}

/* The header's line about the replay: the recording's time, where. */
static void loop_replay_header(struct loop *l)
{
	size_t pos = replay_pos(l->replay), n = replay_count(l->replay);
	struct timespec w;
	struct tm tm;
	char when[64] = "";

	if (pos == SIZE_MAX)
		pos = 0;
	w = replay_wall(l->replay, pos);
	localtime_r(&w.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(l->replay_at, sizeof(l->replay_at), "replay %s  %zu/%zu%s",
		 when, pos + 1, n,
		 l->replay_paused ? "  paused" :
		 pos + 1 >= n	  ? "  end" :
				    "");
}

int loop_replay_open(struct loop *l)
{
	const struct options *o = l->opts;
	struct errmsg err;
	int rc;

	rc = replay_open(&l->replay, o->replay, o->from, o->to, &err);
	if (rc)
		return loop_fail(l, rc, rc == -EINVAL, "--replay: %s", err.text);
	if (o->vcpu_time && !replay_has_vcputime(l->replay))
		return loop_fail(l, -ENOENT, false,
				 "--replay: %s holds no vCPU time: record with --vcpu-time (or the monitor's t) to see it",
				 o->replay);
	replay_fields(l->replay, &l->stats.fields);
	snprintf(l->providers, sizeof(l->providers), "%s",
		 replay_sources(l->replay, 0));
	if (!o->delay_given && replay_delay(l->replay, 0) > 0)
		l->run.delay = replay_delay(l->replay, 0);
	loop_replay_header(l);
	return 0;
}

int loop_replay_to(struct loop *l, long i, enum replay_how how)
{
	long n = (long)replay_count(l->replay);
	struct errmsg err;
	int rc;

	i = i < 0 ? 0 : i >= n ? n - 1 : i;
	rc = replay_feed(l->replay, (size_t)i, how, &l->stats, &l->vms, &err);
	if (rc)
		return loop_fail(l, rc, false, "--replay: %s", err.text);
	snprintf(l->providers, sizeof(l->providers), "%s",
		 replay_sources(l->replay, (size_t)i));
	loop_replay_header(l);
	return 0;
}

void loop_replay_sample(struct loop *l)
{
	size_t pos = replay_pos(l->replay);
	enum replay_how how = REPLAY_AS_LIVE;
	long next;

	if (pos == SIZE_MAX) {
		next = 0;
		how = REPLAY_START;
	} else if (l->need.pace == FRONTEND_ONCE) {
		next = (long)replay_count(l->replay) - 1;
		how = REPLAY_OVER;
	} else if (l->replay_paused || !loop_replay_more(l)) {
		return;
	} else {
		next = (long)pos + 1;
	}
	if (loop_replay_to(l, next, how))
		loop_say(l, l->msg.text);
}

bool loop_replay_more(const struct loop *l)
{
	size_t pos = replay_pos(l->replay);

	return pos == SIZE_MAX || pos + 1 < replay_count(l->replay);
}

bool loop_replay_request(struct loop *l, const struct ui_request *req)
{
	long pos = (long)replay_pos(l->replay);
	int64_t t;

	switch (req->action) {
	case UI_REPLAY_PAUSE:
		l->replay_paused = !l->replay_paused;
		loop_replay_header(l);
		return true;
	case UI_REPLAY_STEP:
		l->replay_paused = true;
		loop_replay_to(l, pos + req->step, REPLAY_AS_LIVE);
		return true;
	case UI_REPLAY_JUMP:
		l->replay_paused = true;
		if (replay_parse_time(l->replay, req->when, false, &t)) {
			loop_replay_header(l);
			snprintf(l->replay_at + strlen(l->replay_at),
				 sizeof(l->replay_at) - strlen(l->replay_at),
				 "  (not a time: %.30s)", req->when);
			return true;
		}
		loop_replay_to(l, (long)replay_find(l->replay, t),
			       REPLAY_AS_LIVE);
		return true;
	default:
		return false;
	}
}

void loop_record_close(struct loop *l)
{
	recorder_close(l->rec);
	l->rec = NULL;
	replay_close(l->replay);
	l->replay = NULL;
}
