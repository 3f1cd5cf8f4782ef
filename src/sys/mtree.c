// SPDX-License-Identifier: GPL-2.0-only
/*
 * QEMU's memory map from the text of `info mtree -f` (include/mtree.h).
 * That text is a list of flat views, each headed "FlatView #N", then the
 * address spaces that share it (' AS "memory", root: system'), its root
 * (" Root memory region: system") and one line per range:
 *
 *   00000000fed00000-00000000fed003ff (prio 0, i/o): hpet
 *   00000000000c0000-00000000000c0fff (prio 0, rom): pc.ram @00000000000c0000
 *   0000000000000000-000000000009ffff (prio 0, ram): pc.ram KVM
 *
 * (lines end with CRLF), the name after "): ", followed by the offset into the region (" @...")
 * when it is not 0 and, under KVM, the accelerator's name once per address
 * space that maps the range as memory (" KVM"); both are cut. A first pass
 * finds the view of "memory", a second reads its ranges. Lines are read
 * within the length given, whatever bytes they hold.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mtree.h"
#include "util.h"

/* The line at *pos (without its newline, nor the carriage return before:
 * the monitor ends its lines with CRLF) in *line, *n; false at the end. */
static bool mt_line(const char *text, size_t len, size_t *pos,
		    const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*line = text + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + (nl != NULL);
	if (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

static bool mt_starts(const char *line, size_t n, const char *with)
{
	size_t w = strlen(with);

	return n >= w && !memcmp(line, with, w);
}

/* Whether line (after leading spaces) is exactly what. */
static bool mt_is(const char *line, size_t n, const char *what)
{
	while (n && *line == ' ') {
		line++;
		n--;
	}
	return n == strlen(what) && !memcmp(line, what, n);
}

/* Where the view to read starts: the first listing AS "memory", else the
 * first whose root is "system"; false when none. */
static bool mt_find_view(const char *text, size_t len, size_t *at)
{
	size_t pos = 0, start = 0, n;
	bool in_view = false, have_system = false;
	const char *line;

	while (mt_line(text, len, &pos, &line, &n)) {
		if (mt_starts(line, n, "FlatView #")) {
			start = (size_t)(line - text);
			in_view = true;
			continue;
		}
		if (!in_view)
			continue;
		if (mt_starts(line, n, " AS \"memory\",")) {
			*at = start;
			return true;
		}
		if (!have_system &&
		    mt_is(line, n, "Root memory region: system")) {
			*at = start;
			have_system = true;
		}
	}
	return have_system;
}

/* Hex digits at *p (at most 16) into *v; false when none or too many. */
static bool mt_hex(const char **p, const char *end, uint64_t *v)
{
	int digits = 0;

	*v = 0;
	for (; *p < end; (*p)++, digits++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 :
					       -1;

		if (d < 0)
			break;
		if (digits == 16)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	return digits > 0;
}

/* The name of a range line: from after "): " to the end, cut at " @" and
 * before trailing " KVM"s and spaces; *n its length (0: none). */
static const char *mt_name(const char *p, const char *end, size_t *n)
{
	const char *s = NULL;

	for (const char *q = p; q + 3 <= end; q++)
		if (q[0] == ')' && q[1] == ':' && q[2] == ' ') {
			s = q + 3;
			break;
		}
	*n = 0;
	if (!s)
		return NULL;
	for (const char *q = s; q + 1 < end; q++)
		if (q[0] == ' ' && q[1] == '@') {
			end = q;
			break;
		}
	for (;;) {
		while (end > s && end[-1] == ' ')
			end--;
		if (end - s >= 4 && !memcmp(end - 4, " KVM", 4))
			end -= 4;
		else
			break;
	}
	*n = (size_t)(end - s);
	return s;
}

/* Reads one range line into t; false when it is not one. */
static bool mt_range(struct mtree *t, const char *line, size_t n, size_t *capr,
		     size_t *capn)
{
	const char *p = line, *end = line + n, *name;
	uint64_t start, last;
	size_t nlen;
	char *dst;

	while (p < end && *p == ' ')
		p++;
	if (!mt_hex(&p, end, &start) || p == end || *p++ != '-' ||
	    !mt_hex(&p, end, &last) || last < start || end - p < 2 ||
	    p[0] != ' ' || p[1] != '(')
		return false;
	name = mt_name(p, end, &nlen);
	if (!nlen)
		return false;
	if (nlen > MTREE_NAME_MAX)
		nlen = MTREE_NAME_MAX;
	if (t->n == *capr) {
		*capr = *capr ? 2 * *capr : 64;
		t->r = xrealloc(t->r, *capr * sizeof(*t->r));
	}
	if (t->names_len + nlen + 1 > *capn) {
		*capn = 2 * (t->names_len + nlen + 1) + 256;
		t->names = xrealloc(t->names, *capn);
	}
	t->r[t->n++] = (struct mtree_range){ start, last,
					     (uint32_t)t->names_len };
	dst = t->names + t->names_len;
	/* shown on terminals and written in labels: printable ASCII only */
	for (size_t i = 0; i < nlen; i++)
		dst[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	dst[nlen] = '\0';
	t->names_len += nlen + 1;
	return true;
}

static int mt_cmp(const void *pa, const void *pb)
{
	const struct mtree_range *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->last < b->last ? -1 : a->last > b->last;
}

int mtree_parse(struct mtree *t, const char *text, size_t len)
{
	size_t pos = 0, capr = 0, capn = 0, n;
	const char *line;

	*t = (struct mtree){ 0 };
	if (!mt_find_view(text, len, &pos))
		return -ENOENT;
	/* the view's header, then its lines up to the next view */
	mt_line(text, len, &pos, &line, &n);
	while (t->n < MTREE_MAX && mt_line(text, len, &pos, &line, &n) &&
	       !mt_starts(line, n, "FlatView #"))
		mt_range(t, line, n, &capr, &capn);
	/* QEMU prints them in order; a text that does not still looks up */
	if (t->n)
		qsort(t->r, t->n, sizeof(*t->r), mt_cmp);
	return 0;
}

const char *mtree_name(const struct mtree *t, uint64_t gpa)
{
	size_t lo = 0, hi = t->n;

	/* the last range starting at or below gpa */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].start <= gpa)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->r[lo - 1].last < gpa)
		return NULL;
	return t->names + t->r[lo - 1].name;
}

void mtree_free(struct mtree *t)
{
	free(t->r);
	free(t->names);
	*t = (struct mtree){ 0 };
}
