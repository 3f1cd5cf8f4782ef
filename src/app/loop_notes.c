// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lines about the sources (struct loop_note): one that could not start,
 * one whose reads fail, what one did on the host (it mounted tracefs).
 * Said once on stderr where no front-end owns the terminal, shown by the
 * monitor (the snapshot carries them) and said after it ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "loop.h"
#include "loop_int.h"
#include "util.h"

/* Says a note on stderr, once: a failure as "NAME provider left out:
 * why", anything else as it is. */
static void loop_say_note(struct loop *l, struct loop_note *n)
{
	char line[ERRMSG_MAX + 64];

	if (n->said || n->quiet)
		return;
	if (n->failed && !n->reading)
		snprintf(line, sizeof(line), "%s provider left out: %s",
			 n->source, n->text.text);
	else
		snprintf(line, sizeof(line), "%s", n->text.text);
	loop_say(l, line);
	n->said = true;
}

/* Says the notes not said yet (with failures, or only the others). */
void loop_say_notes(struct loop *l, bool failures)
{
	for (size_t i = 0; i < l->nnotes; i++)
		if (failures || !l->notes[i].failed)
			loop_say_note(l, &l->notes[i]);
}

/*
 * Keeps a line about a source; the same line again is no news. Where no
 * front-end owns the terminal it is said before the next output, else
 * the monitor shows it and it is said when the monitor ends. When the
 * notes are full, the oldest one that is no failure makes room.
 */
struct loop_note *loop_note_from(struct loop *l, const char *source,
				 const struct provider_ops *ops, bool failed,
				 bool quiet, const char *text)
{
	struct loop_note *n;

	for (size_t i = 0; i < l->nnotes; i++) {
		n = &l->notes[i];
		if (n->source == source && n->failed == failed &&
		    !strcmp(n->text.text, text)) {
			n->stale = false;
			return n;
		}
	}
	if (l->nnotes == LOOP_MAX_NOTES) {
		size_t k = 0;

		while (k < l->nnotes && l->notes[k].failed)
			k++;
		if (k == l->nnotes)
			return NULL;
		memmove(&l->notes[k], &l->notes[k + 1],
			(l->nnotes - k - 1) * sizeof(*l->notes));
		l->nnotes--;
	}
	n = &l->notes[l->nnotes++];
	*n = (struct loop_note){
		.source = source,
		.ops = ops,
		.failed = failed,
		.quiet = quiet,
	};
	errmsg_set(&n->text, 0, "%s", text);
	l->notes_gen++;
	return n;
}

/* A note about provider ops (loop_note_from). */
struct loop_note *loop_note(struct loop *l, const struct provider_ops *ops,
			    bool failed, bool quiet, const char *text)
{
	return loop_note_from(l, ops->name, ops, failed, quiet, text);
}

/* Before the providers open again: their failures are kept only if
 * they fail again (loop_forget_stale). */
void loop_mark_failures(struct loop *l)
{
	for (size_t i = 0; i < l->nnotes; i++)
		l->notes[i].stale = l->notes[i].failed;
}

/* Drops the failures of sources that opened now. No news: the notes
 * generation stays. */
void loop_forget_stale(struct loop *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->nnotes; i++)
		if (!l->notes[i].stale)
			l->notes[k++] = l->notes[i];
	l->nnotes = k;
}

/* Whether a source could not start. */
bool loop_has_failures(const struct loop *l)
{
	for (size_t i = 0; i < l->nnotes; i++)
		if (l->notes[i].failed && !l->notes[i].reading)
			return true;
	return false;
}

/* An open provider read well again: its reading failures are over. */
void loop_read_well(struct loop *l, const struct provider_ops *ops)
{
	size_t k = 0;

	for (size_t i = 0; i < l->nnotes; i++)
		if (!(l->notes[i].reading && l->notes[i].ops == ops))
			l->notes[k++] = l->notes[i];
	l->nnotes = k;
}

/* A provider's notices: said (once) when the user asked for it (-t, -d,
 * -S, --qmp, or the tracepoints -1/-l/-L use without one), shown by the
 * monitor in any case. */
void loop_report_notices(struct loop *l)
{
	for (size_t i = 0; i < l->nprovs; i++) {
		struct provider *p = &l->provs[i];

		if (p->notice && errmsg_isset(&p->msg))
			loop_note(l, p->ops, false,
				  !provider_asked(p->ops, l->opts),
				  p->msg.text);
		p->notice = false;
		errmsg_clear(&p->msg);
	}
}

/* What a provider's open did on the host (it mounted tracefs): a note. */
void loop_report_did(struct loop *l, struct provider *p)
{
	if (errmsg_isset(&p->did))
		loop_note(l, p->ops, false, false, p->did.text);
	errmsg_clear(&p->did);
}
