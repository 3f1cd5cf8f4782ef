// SPDX-License-Identifier: GPL-2.0-only
/*
 * The monitor's view of where vCPU time goes ('t', tui_vcputime.h): a
 * line per VM (its vCPUs summed, so up to its vCPU count per second) or,
 * after Enter, per vCPU; the state cells are the table's of -1
 * (vcputime_render.h), a merged pair shown once with "+".
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"
#include "tui_vcputime.h"
#include "util.h"
#include "vcputime_render.h"

static const char *const tui_vt_names[TUI_VT_COLS] = {
	"PID", "Guest", "guest", "kernel", "vmm", "halted", "waiting", "VMM thr"
};

/* The sort key of a state: its rate, a merged pair's in its first column,
 * -1 where not measured. */
static double tui_vt_key_of(const struct vcputime_row *r, enum vcputime_state s)
{
	double v, m = 0;

	if (s == VT_GUEST && vcputime_rate(r, VT_GUEST_KERNEL, &m) &&
	    !vcputime_rate(r, s, &v))
		return m;
	if (s == VT_VMM && vcputime_rate(r, VT_HALTED_VMM, &m) &&
	    !vcputime_rate(r, s, &v))
		return m;
	return vcputime_rate(r, s, &v) ? v + m : -1;
}

static void tui_vt_line_of(struct tui_vt_line *l, const struct vcputime_row *r)
{
	vcputime_render_cells(l->cells, sizeof(l->cells), r);
	for (int s = 0; s < VT_NBASIC; s++)
		l->key[2 + s] = tui_vt_key_of(r, (enum vcputime_state)s);
}

static const struct tui_vt *tui_vt_cmp_vt;

static int tui_vt_cmp(const void *a, const void *b)
{
	const struct tui_vt_line *x = a, *y = b;
	int c = tui_vt_cmp_vt->sort;

	if (c == 1)
		return util_name_cmp(x->name, y->name);
	if (c == 0) /* ids ascending */
		return x->key[0] < y->key[0] ? -1 : x->key[0] > y->key[0];
	if (x->key[c] != y->key[c])
		return x->key[c] < y->key[c] ? 1 : -1;
	return x->key[0] < y->key[0] ? -1 : x->key[0] > y->key[0];
}

void tui_vt_model(struct tui_vt *vt, const struct snapshot *snap)
{
	const struct vcputime *t = snap->vcputime;
	const struct vcputime_vm *drill = NULL;

	free(vt->lines);
	vt->lines = NULL;
	vt->n = 0;
	vt->have = t != NULL;
	if (!t)
		return;
	snprintf(vt->src, sizeof(vt->src), "%s", t->source ? t->source : "");
	for (size_t i = 0; vt->vm && i < t->nvms; i++)
		if (t->vms[i].pid == vt->vm)
			drill = &t->vms[i];
	if (vt->vm && !drill)
		vt->vm = 0; /* the VM left: back to the list */
	vt->lines = xcalloc((drill ? drill->nvcpus : t->nvms) + 1,
			    sizeof(*vt->lines));
	if (drill) {
		for (size_t k = 0; k < drill->nvcpus; k++) {
			struct tui_vt_line *l = &vt->lines[vt->n++];
			const struct vcputime_row *r = &drill->vcpus[k];

			snprintf(l->id, sizeof(l->id), "%d", r->vcpu);
			snprintf(l->name, sizeof(l->name), "%d", (int)r->tid);
			l->key[0] = r->vcpu;
			l->pid = drill->pid;
			tui_vt_line_of(l, r);
		}
	}
	for (size_t i = 0; !drill && i < t->nvms; i++) {
		const struct vcputime_vm *vm = &t->vms[i];
		struct tui_vt_line *l = &vt->lines[vt->n++];
		double cpu = 0;

		snprintf(l->id, sizeof(l->id), "%d", (int)vm->pid);
		snprintf(l->name, sizeof(l->name), "%s",
			 vm->guest ? vm->guest : "-");
		l->key[0] = vm->pid;
		l->pid = vm->pid;
		tui_vt_line_of(l, &vm->sum);
		for (size_t k = 0; k < vm->nthreads; k++)
			if (vm->threads[k].interval_ns)
				cpu += (double)vm->threads[k].delta_ns /
				       (double)vm->threads[k].interval_ns;
		snprintf(l->other, sizeof(l->other), "%.3f", cpu);
		l->key[7] = cpu;
	}
	tui_vt_cmp_vt = vt;
	if (vt->n > 1) /* no line: lines may be NULL */
		qsort(vt->lines, vt->n, sizeof(*vt->lines), tui_vt_cmp);
	if (vt->sel >= (int)vt->n)
		vt->sel = vt->n ? (int)vt->n - 1 : 0;
}

void tui_vt_draw(struct tui_vt *vt, const char *replay, const char *providers,
		 double delay)
{
	int rows, cols, y = 0, body;
	char line[512];

	getmaxyx(stdscr, rows, cols);
	erase();
	if (vt->vm)
		snprintf(line, sizeof(line),
			 "kvm statistics - vCPU time of pid %d (s/s)", vt->vm);
	else
		snprintf(line, sizeof(line),
			 "kvm statistics - where vCPU time goes (s/s per VM)");
	attron(A_BOLD);
	mvaddnstr(y, 0, line, cols);
	attroff(A_BOLD);
	snprintf(line, sizeof(line), "   %s%s[%s]  delay %.1fs",
		 replay ? replay : "", replay ? "  " : "",
		 providers ? providers : "", delay);
	addnstr(line, cols - getcurx(stdscr) > 0 ? cols - getcurx(stdscr) : 0);
	y++;
	mvaddnstr(y++, 0, vt->src, cols);
	attron(A_BOLD | A_UNDERLINE);
	move(y, 0);
	for (int c = 0; c < TUI_VT_COLS; c++) {
		char cell[32];
		const char *n = c == 0 && vt->vm ? "vCPU" :
				c == 1 && vt->vm ? "TID" :
						   tui_vt_names[c];

		if (c == 7 && vt->vm)
			break;
		snprintf(cell, sizeof(cell),
			 c == 0 ? "%8s%s " :
			 c == 1 ? "%-16s%s " :
				  "%7s%s ",
			 n, c == vt->sort ? "*" : " ");
		addnstr(cell, cols - getcurx(stdscr) > 0 ?
				      cols - getcurx(stdscr) :
				      0);
	}
	attroff(A_BOLD | A_UNDERLINE);
	y++;
	body = rows - y - 2;
	if (vt->sel < vt->top)
		vt->top = vt->sel;
	if (body > 0 && vt->sel >= vt->top + body)
		vt->top = vt->sel - body + 1;
	for (int i = vt->top; i < (int)vt->n && y < rows - 2; i++, y++) {
		const struct tui_vt_line *l = &vt->lines[i];

		snprintf(line, sizeof(line), "%8s  %-16.16s  %s  %8s", l->id,
			 l->name, l->cells, vt->vm ? "" : l->other);
		if (i == vt->sel)
			attron(A_REVERSE);
		mvaddnstr(y, 0, line, cols);
		if (i == vt->sel)
			attroff(A_REVERSE);
	}
	if (!vt->n)
		mvaddnstr(y, 0,
			  vt->have ? "(no VM with vCPU threads found)" :
				     "reading...",
			  cols);
	mvaddnstr(rows - 2, 0,
		  "+: merged into the column on its left (not measured apart "
		  "on this host)",
		  cols);
	attron(A_REVERSE);
	mvaddnstr(rows - 1, 0,
		  vt->vm ?
			  " Esc back  1-7 sort  t close  h help  q quit " :
			  " Enter vCPUs  1-8 sort (7 waiting)  t or Esc close  h help  q quit ",
		  cols);
	attroff(A_REVERSE);
	refresh();
}

bool tui_vt_key(struct tui_vt *vt, struct frontend *fe, int ch,
		enum ui_action *act)
{
	struct tui_priv *tp = fe->priv;

	*act = UI_NONE;
	if (ch >= '1' && ch <= '8') {
		vt->sort = ch - '1';
		if (vt->vm && vt->sort == 7)
			vt->sort = 6;
		tui_vt_cmp_vt = vt;
		if (vt->n > 1)
			qsort(vt->lines, vt->n, sizeof(*vt->lines), tui_vt_cmp);
	} else if (ch == KEY_UP || ch == KEY_DOWN || ch == KEY_PPAGE ||
		   ch == KEY_NPAGE || ch == KEY_HOME || ch == KEY_END) {
		int page = LINES > 8 ? LINES - 6 : 1;

		vt->sel += ch == KEY_UP	   ? -1 :
			   ch == KEY_DOWN  ? 1 :
			   ch == KEY_PPAGE ? -page :
			   ch == KEY_NPAGE ? page :
			   ch == KEY_HOME  ? -vt->sel :
					     (int)vt->n;
		if (vt->sel >= (int)vt->n)
			vt->sel = vt->n ? (int)vt->n - 1 : 0;
		if (vt->sel < 0)
			vt->sel = 0;
	} else if ((ch == '\n' || ch == '\r' || ch == KEY_ENTER || ch == 'v') &&
		   !vt->vm) {
		if (!vt->n)
			return true;
		vt->vm = vt->lines[vt->sel].pid;
		vt->sel = vt->top = 0;
		*act = UI_RENDER;
		return true;
	} else if (ch == KEY_ESC && vt->vm) {
		vt->vm = 0;
		vt->sel = vt->top = 0;
		*act = UI_RENDER;
		return true;
	} else if (ch == KEY_ESC || ch == 't') {
		vt->on = false;
		fe->req.on = false;
		*act = UI_SET_VCPUTIME;
		tui_draw(tp);
		return true;
	} else {
		return false;
	}
	tui_vt_draw(vt, tp->replay, tp->providers, tp->delay);
	return true;
}

void tui_vt_free(struct tui_vt *vt)
{
	free(vt->lines);
	vt->lines = NULL;
	vt->n = 0;
}
