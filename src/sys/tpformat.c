// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tracefs event format parser. The header lines (name, ID, one "field:" line
 * per record member) are read line by line; the "print fmt" that follows is
 * a format string and C expressions over REC->field. It is split into
 * tokens with every bracket matched to its partner, then walked once,
 * keeping track of the "cond ? a : b" branches the walk is in, so that each
 * __print_symbolic() table is recorded with the field it decodes, its mask
 * and the "REC->isa == 1" style guard that selects it. Every step checks its
 * bounds against the input length: malformed input is an error, never a
 * crash.
 *
 * Why not libtraceevent, the parser perf and trace-cmd use: its 1.7.1
 * (Debian 12) dies inside tep_parse_format() on malformed files, SIGFPE on
 * a print fmt argument "1 / 0" and SIGSEGV on a kvm_exit format with a
 * few bytes changed (tests/data/formats/div_zero, corrupt_kvm_exit), and
 * leaks on others; it rejects the whole print fmt of the running kernel's
 * kvm_inj_exception (an empty "{ }" table) and of any table holding a
 * value it cannot fold ("7 * 6 - 2"), losing every table of the event;
 * and it joins adjacent literals ("KVM_EXIT_" "HLT") before a caller can
 * see the common prefix.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "tpformat.h"
#include "util.h"

#define TP_MAX_DEPTH 64		/* bracket nesting accepted in a print fmt */
#define TP_MAX_UNARY 64		/* chained unary operators in a constant */
#define TP_MAX_FILE (64u << 20) /* bigger format files are refused */

enum tp_tok_kind {
	TP_TOK_IDENT,
	TP_TOK_NUMBER,
	TP_TOK_STRING,
	TP_TOK_CHAR,
	TP_TOK_PUNCT,
};

struct tp_tok {
	enum tp_tok_kind kind;
	const char *s;
	size_t len;
	size_t match; /* brackets: index of the partner bracket */
};

/* One "cond ? a : b" whose branch the walk is in, on a stack shared by levels. */
struct tp_frame {
	size_t cond_b, cond_e; /* condition tokens [cond_b, cond_e) */
	bool in_else;
	bool parsed;	  /* the fields below are valid */
	bool simple;	  /* cond is "REC->f == const" or "!=" */
	bool ne;	  /* ... with "!=" */
	size_t field_tok; /* token of f */
	int64_t value;
};

/*
 * One bracket level of the walk. A grouping parenthesis ("(a ? b : c)", not a
 * call) has its enclosing level as parent: its contents are in the branch the
 * enclosing level is in.
 */
struct tp_level {
	const struct tp_level *parent;
	size_t base; /* first frame of this level on the stack */
};

struct tp_parser {
	struct tp_format *f;
	size_t tabcap;
	struct tp_tok *tok;
	size_t ntok, tokcap;
	struct tp_frame *frames;
	size_t nframes, framecap;
};

/* Grows *p (of *cap elements of size elem) to hold at least need. A size
 * past what memory can hold is running out of memory (util.h). */
static void tp_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;

	if (need <= *cap)
		return;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			util_die("out of memory: %zu elements", need);
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		util_die("out of memory: %zu elements", need);
	*p = xrealloc(*p, ncap * elem);
	*cap = ncap;
}

static char *tp_strndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static bool tp_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	       c == '\f';
}

static bool tp_is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool tp_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool tp_is_xdigit(char c)
{
	return tp_is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool tp_is_ident_char(char c)
{
	return tp_is_ident_start(c) || tp_is_digit(c);
}

static void tp_trim(const char **s, size_t *n)
{
	while (*n && tp_is_blank(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && tp_is_blank((*s)[*n - 1]))
		(*n)--;
}

static bool tp_starts(const char *s, size_t n, const char *prefix)
{
	size_t pn = strlen(prefix);

	return n >= pn && !memcmp(s, prefix, pn);
}

/* Strict unsigned decimal of n bytes, at most max; 0 or -EINVAL. */
static int tp_parse_udec(const char *s, size_t n, unsigned long long max,
			 unsigned long long *out)
{
	unsigned long long v = 0;

	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (!tp_is_digit(s[i]) || d > max || v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* ---- header: name, ID, fields ---- */

/*
 * Splits a field declaration ("unsigned int exit_reason", "char comm[16]",
 * "__data_loc char[] name") into its name and its type with any array
 * suffix moved onto the type.
 */
static int tp_parse_decl(const char *s, size_t n, struct tp_field *fld)
{
	const char *suffix = NULL;
	size_t slen = 0, nb, ne, tlen;

	tp_trim(&s, &n);
	if (n && s[n - 1] == ']') {
		size_t k = n - 1;

		while (k > 0 && s[k] != '[')
			k--;
		if (s[k] != '[')
			return -EINVAL;
		suffix = s + k;
		slen = n - k;
		n = k;
		while (n && tp_is_blank(s[n - 1]))
			n--;
	}
	ne = n;
	nb = ne;
	while (nb > 0 && tp_is_ident_char(s[nb - 1]))
		nb--;
	if (nb == ne || tp_is_digit(s[nb]))
		return -EINVAL;
	tlen = nb;
	while (tlen && tp_is_blank(s[tlen - 1]))
		tlen--;
	fld->name = tp_strndup(s + nb, ne - nb);
	fld->type = xmalloc(tlen + slen + 1);
	memcpy(fld->type, s, tlen);
	if (slen)
		memcpy(fld->type + tlen, suffix, slen);
	fld->type[tlen + slen] = '\0';
	return 0;
}

/*
 * Parses one "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" line (s points past
 * "field:") and appends it to f. Unknown "key:value;" pairs are ignored.
 */
static int tp_parse_field_line(struct tp_format *f, size_t *cap, const char *s,
			       size_t n)
{
	struct tp_field fld = { 0 };
	bool have_off = false, have_size = false;
	const char *semi = memchr(s, ';', n);
	size_t pos;
	int rc;

	if (!semi)
		return -EINVAL;
	rc = tp_parse_decl(s, (size_t)(semi - s), &fld);
	pos = (size_t)(semi - s) + 1;
	while (!rc) {
		const char *key, *colon, *end;
		unsigned long long v = 0;
		size_t klen;

		while (pos < n && tp_is_blank(s[pos]))
			pos++;
		if (pos == n)
			break;
		key = s + pos;
		colon = memchr(key, ':', n - pos);
		end = memchr(key, ';', n - pos);
		if (!colon || !end || end < colon) {
			rc = -EINVAL;
			break;
		}
		klen = (size_t)(colon - key);
		pos = (size_t)(end - s) + 1;
		if (klen == 6 && !memcmp(key, "offset", 6)) {
			rc = tp_parse_udec(colon + 1, (size_t)(end - colon - 1),
					   UINT_MAX, &v);
			fld.offset = (unsigned int)v;
			have_off = true;
		} else if (klen == 4 && !memcmp(key, "size", 4)) {
			rc = tp_parse_udec(colon + 1, (size_t)(end - colon - 1),
					   UINT_MAX, &v);
			fld.size = (unsigned int)v;
			have_size = true;
		} else if (klen == 6 && !memcmp(key, "signed", 6)) {
			rc = tp_parse_udec(colon + 1, (size_t)(end - colon - 1),
					   1, &v);
			fld.is_signed = v;
		}
	}
	if (!rc && (!have_off || !have_size))
		rc = -EINVAL;
	if (rc) {
		free(fld.name);
		free(fld.type);
		return rc;
	}
	tp_grow((void **)&f->fields, cap, f->nfields + 1, sizeof(*f->fields));
	f->fields[f->nfields++] = fld;
	return 0;
}

/* Unrecognised header lines are skipped if they look like "key: value" text. */
static bool tp_is_text_line(const char *s, size_t n)
{
	bool colon = false;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t' && c != '\r') || c >= 0x7f)
			return false;
		colon |= c == ':';
	}
	return colon;
}

/*
 * Reads the header lines up to "print fmt:", whose text starts at *fmt_at.
 * name, ID and format: are required, fields only after format:.
 */
static int tp_parse_header(struct tp_format *f, const char *s, size_t len,
			   size_t *fmt_at)
{
	bool have_id = false, in_format = false;
	size_t pos = 0, fcap = 0;

	while (pos < len) {
		const char *line = s + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		const char *t = line;
		size_t tn = n;
		int rc;

		pos += n + (nl ? 1 : 0);
		if (tp_starts(line, n, "print fmt:")) {
			if (!f->name || !have_id || !in_format)
				return -EINVAL;
			*fmt_at = (size_t)(line - s) + strlen("print fmt:");
			return 0;
		}
		tp_trim(&t, &tn);
		if (!tn)
			continue;
		if (tp_starts(line, n, "name:")) {
			t = line + 5;
			tn = n - 5;
			tp_trim(&t, &tn);
			if (f->name || !tn || !tp_is_text_line(line, n))
				return -EINVAL;
			f->name = tp_strndup(t, tn);
		} else if (tp_starts(line, n, "ID:")) {
			unsigned long long id;

			t = line + 3;
			tn = n - 3;
			tp_trim(&t, &tn);
			if (have_id || tp_parse_udec(t, tn, INT_MAX, &id))
				return -EINVAL;
			f->id = (int)id;
			have_id = true;
		} else if (tp_starts(line, n, "format:")) {
			if (in_format || tn != strlen("format:"))
				return -EINVAL;
			in_format = true;
		} else if (tp_starts(t, tn, "field:")) {
			if (!in_format)
				return -EINVAL;
			rc = tp_parse_field_line(f, &fcap, t + 6, tn - 6);
			if (rc)
				return rc;
		} else if (!tp_is_text_line(line, n)) {
			return -EINVAL;
		}
	}
	return -EINVAL;
}

/* ---- print fmt: tokens ---- */

static bool tp_punct(const struct tp_tok *t, const char *p)
{
	size_t n = strlen(p);

	return t->kind == TP_TOK_PUNCT && t->len == n && !memcmp(t->s, p, n);
}

static bool tp_ident(const struct tp_tok *t, const char *p)
{
	size_t n = strlen(p);

	return t->kind == TP_TOK_IDENT && t->len == n && !memcmp(t->s, p, n);
}

static bool tp_is_open(const struct tp_tok *t)
{
	return tp_punct(t, "(") || tp_punct(t, "[") || tp_punct(t, "{");
}

/* Scans a quoted literal starting at s[i]; its length including quotes, or 0. */
static size_t tp_scan_quoted(const char *s, size_t len, size_t i)
{
	char q = s[i];

	for (size_t j = i + 1; j < len; j++) {
		if (s[j] == '\\') {
			j++;
			continue;
		}
		if (s[j] == q)
			return j - i + 1;
	}
	return 0;
}

static const char *const tp_puncts2[] = {
	"->", "==", "!=", "<=", ">=", "<<", ">>", "&&", "||", "++", "--",
};

/*
 * Splits the print fmt into tokens and matches every bracket with its
 * partner; unterminated literals, stray bytes, unbalanced brackets and
 * nesting deeper than TP_MAX_DEPTH are errors.
 */
static int tp_tokenize(struct tp_parser *p, const char *s, size_t len)
{
	size_t stack[TP_MAX_DEPTH], depth = 0, i = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		struct tp_tok t = { .s = s + i, .len = 1 };

		if (tp_is_blank((char)c)) {
			i++;
			continue;
		}
		if (c == '"' || c == '\'') {
			t.kind = c == '"' ? TP_TOK_STRING : TP_TOK_CHAR;
			t.len = tp_scan_quoted(s, len, i);
			if (!t.len)
				return -EINVAL;
		} else if (tp_is_ident_start((char)c)) {
			t.kind = TP_TOK_IDENT;
			while (i + t.len < len && tp_is_ident_char(s[i + t.len]))
				t.len++;
		} else if (tp_is_digit((char)c)) {
			t.kind = TP_TOK_NUMBER;
			while (i + t.len < len &&
			       (tp_is_ident_char(s[i + t.len]) ||
				s[i + t.len] == '.'))
				t.len++;
		} else if (c > 0x20 && c < 0x7f) {
			t.kind = TP_TOK_PUNCT;
			for (size_t k = 0;
			     k < sizeof(tp_puncts2) / sizeof(tp_puncts2[0]);
			     k++)
				if (i + 1 < len &&
				    !memcmp(s + i, tp_puncts2[k], 2))
					t.len = 2;
		} else {
			return -EINVAL;
		}
		if (t.kind == TP_TOK_PUNCT && t.len == 1 && strchr("([{", c)) {
			if (depth == TP_MAX_DEPTH)
				return -EINVAL;
			stack[depth++] = p->ntok;
		} else if (t.kind == TP_TOK_PUNCT && t.len == 1 &&
			   strchr(")]}", c)) {
			static const char pairs[] = "()[]{}";
			const char *open = strchr(pairs, c) - 1;

			if (!depth || *p->tok[stack[depth - 1]].s != *open)
				return -EINVAL;
			t.match = stack[--depth];
			p->tok[t.match].match = p->ntok;
		}
		tp_grow((void **)&p->tok, &p->tokcap, p->ntok + 1,
			sizeof(*p->tok));
		p->tok[p->ntok++] = t;
		i += t.len;
	}
	return depth ? -EINVAL : 0;
}

/* Index of the first top-level "," in [b, e), or e. */
static size_t tp_next_comma(const struct tp_parser *p, size_t b, size_t e)
{
	for (size_t k = b; k < e; k++) {
		if (tp_is_open(&p->tok[k]))
			k = p->tok[k].match;
		else if (tp_punct(&p->tok[k], ","))
			return k;
	}
	return e;
}

/* Drops parentheses that enclose the whole of [*b, *e). */
static void tp_strip_parens(const struct tp_parser *p, size_t *b, size_t *e)
{
	while (*e - *b >= 2 && tp_punct(&p->tok[*b], "(") &&
	       p->tok[*b].match == *e - 1) {
		(*b)++;
		(*e)--;
	}
}

/* Whether [b, e) is "REC->name", maybe in parentheses; *field gets name's token. */
static bool tp_field_ref(const struct tp_parser *p, size_t b, size_t e,
			 size_t *field)
{
	tp_strip_parens(p, &b, &e);
	if (e - b != 3 || !tp_ident(&p->tok[b], "REC") ||
	    !tp_punct(&p->tok[b + 1], "->") ||
	    p->tok[b + 2].kind != TP_TOK_IDENT)
		return false;
	*field = b + 2;
	return true;
}

/* ---- constant expressions ---- */

/* Parses a C integer literal (0x, 0b, octal, decimal, u/l suffixes). */
static int tp_parse_number(const char *s, size_t n, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;
	size_t i = 0, digits = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (n >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		base = 2;
		i = 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (; i < n; i++, digits++) {
		char c = s[i];
		unsigned int d;

		if (tp_is_digit(c))
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a') + 10;
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A') + 10;
		else
			break;
		if (d >= base)
			break; /* a suffix, or an error found below */
		if (v > (UINT64_MAX - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	if (!digits)
		return -EINVAL;
	if (n - i > 3)
		return -EINVAL;
	for (; i < n; i++)
		if (!strchr("uUlL", s[i]))
			return -EINVAL;
	*out = v;
	return 0;
}

/*
 * A recursive-descent evaluator over tokens [i, end). err is -EINVAL for
 * malformed input and -ENOENT for what it does not evaluate (identifiers,
 * casts, ?:); the first error sticks.
 */
struct tp_eval {
	const struct tp_parser *p;
	size_t i, end;
	int err;
	unsigned int unary; /* chained unary operators, bounded */
};

static uint64_t tp_ev_expr(struct tp_eval *ev, int level);

static const struct tp_tok *tp_ev_peek(const struct tp_eval *ev)
{
	return ev->i < ev->end ? &ev->p->tok[ev->i] : NULL;
}

static uint64_t tp_ev_fail(struct tp_eval *ev, int err)
{
	if (!ev->err)
		ev->err = err;
	ev->i = ev->end;
	return 0;
}

/* primary: number | "(" expr ")" ; unary: [-+~!] unary | primary */
static uint64_t tp_ev_unary(struct tp_eval *ev)
{
	const struct tp_tok *t = tp_ev_peek(ev);
	uint64_t v = 0;

	if (!t)
		return tp_ev_fail(ev, -EINVAL);
	if (tp_punct(t, "-") || tp_punct(t, "+") || tp_punct(t, "~") ||
	    tp_punct(t, "!")) {
		if (++ev->unary > TP_MAX_UNARY)
			return tp_ev_fail(ev, -EINVAL);
		ev->i++;
		v = tp_ev_unary(ev);
		ev->unary--;
		switch (*t->s) {
		case '-':
			return -v;
		case '~':
			return ~v;
		case '!':
			return !v;
		default:
			return v;
		}
	}
	if (t->kind == TP_TOK_NUMBER) {
		ev->i++;
		if (tp_parse_number(t->s, t->len, &v))
			return tp_ev_fail(ev, -EINVAL);
		return v;
	}
	if (tp_punct(t, "(")) {
		struct tp_eval sub = { .p = ev->p,
				       .i = ev->i + 1,
				       .end = t->match };

		v = tp_ev_expr(&sub, 0);
		if (!sub.err && sub.i != sub.end)
			sub.err = tp_punct(&ev->p->tok[sub.i], "?") ? -ENOENT :
								      -EINVAL;
		if (sub.err)
			return tp_ev_fail(ev, sub.err);
		ev->i = t->match + 1;
		return v;
	}
	if (t->kind == TP_TOK_IDENT)
		return tp_ev_fail(ev, -ENOENT);
	return tp_ev_fail(ev, -EINVAL);
}

/* Binary operators by precedence level, loosest first. */
static const char *const tp_ev_ops[][4] = {
	{ "||" },
	{ "&&" },
	{ "|" },
	{ "^" },
	{ "&" },
	{ "==", "!=" },
	{ "<", ">", "<=", ">=" },
	{ "<<", ">>" },
	{ "+", "-" },
	{ "*", "/", "%" },
};

#define TP_EV_LEVELS ((int)(sizeof(tp_ev_ops) / sizeof(tp_ev_ops[0])))

static uint64_t tp_ev_apply(struct tp_eval *ev, const char *op, uint64_t a,
			    uint64_t b)
{
	if (!strcmp(op, "||"))
		return a || b;
	if (!strcmp(op, "&&"))
		return a && b;
	if (!strcmp(op, "|"))
		return a | b;
	if (!strcmp(op, "^"))
		return a ^ b;
	if (!strcmp(op, "&"))
		return a & b;
	if (!strcmp(op, "=="))
		return a == b;
	if (!strcmp(op, "!="))
		return a != b;
	if (!strcmp(op, "<"))
		return a < b;
	if (!strcmp(op, ">"))
		return a > b;
	if (!strcmp(op, "<="))
		return a <= b;
	if (!strcmp(op, ">="))
		return a >= b;
	if (!strcmp(op, "<<") || !strcmp(op, ">>")) {
		if (b >= 64)
			return tp_ev_fail(ev, -EINVAL);
		return op[0] == '<' ? a << b : a >> b;
	}
	if (!strcmp(op, "+"))
		return a + b;
	if (!strcmp(op, "-"))
		return a - b;
	if (!strcmp(op, "*"))
		return a * b;
	if (!b)
		return tp_ev_fail(ev, -EINVAL);
	return op[0] == '/' ? a / b : a % b;
}

/* Left-associative binary expression of precedence level and tighter. */
static uint64_t tp_ev_expr(struct tp_eval *ev, int level)
{
	uint64_t v = 0;

	if (level == TP_EV_LEVELS)
		return tp_ev_unary(ev);
	v = tp_ev_expr(ev, level + 1);
	for (;;) {
		const struct tp_tok *t = tp_ev_peek(ev);
		const char *op = NULL;

		for (int k = 0; t && k < 4 && tp_ev_ops[level][k]; k++)
			if (tp_punct(t, tp_ev_ops[level][k]))
				op = tp_ev_ops[level][k];
		if (!op || ev->err)
			return v;
		ev->i++;
		v = tp_ev_apply(ev, op, v, tp_ev_expr(ev, level + 1));
	}
}

/*
 * Evaluates the constant expression [b, e): 0, -ENOENT if it is not one this
 * evaluator knows (identifiers, casts, ?:), -EINVAL if it is malformed.
 */
static int tp_eval(const struct tp_parser *p, size_t b, size_t e, uint64_t *out)
{
	struct tp_eval ev = { .p = p, .i = b, .end = e };
	uint64_t v = tp_ev_expr(&ev, 0);

	if (!ev.err && ev.i != e)
		ev.err = tp_punct(&p->tok[ev.i], "?") ? -ENOENT : -EINVAL;
	if (ev.err)
		return ev.err;
	*out = v;
	return 0;
}

/* ---- print fmt: tables ---- */

/* Whether [b, e) has, outside brackets, a token among ops (NULL-terminated). */
static bool tp_has_op(const struct tp_parser *p, size_t b, size_t e,
		      const char *const *ops)
{
	for (size_t k = b; k < e; k++) {
		if (tp_is_open(&p->tok[k])) {
			k = p->tok[k].match;
			continue;
		}
		for (size_t j = 0; ops[j]; j++)
			if (tp_punct(&p->tok[k], ops[j]))
				return true;
	}
	return false;
}

/* Operators binding looser than "&" (and so than "=="), and "&" itself. */
static const char *const tp_loose_ops[] = { "&", "^", "|", "&&", "||",
					    "?", ":", ",", NULL };

/* Finds the single top-level token equal to one of ops in [b, e); SIZE_MAX if none or many. */
static size_t tp_find_op(const struct tp_parser *p, size_t b, size_t e,
			 const char *const *ops)
{
	size_t at = SIZE_MAX;

	for (size_t k = b; k < e; k++) {
		if (tp_is_open(&p->tok[k])) {
			k = p->tok[k].match;
			continue;
		}
		for (size_t j = 0; ops[j]; j++) {
			if (!tp_punct(&p->tok[k], ops[j]))
				continue;
			if (at != SIZE_MAX)
				return SIZE_MAX;
			at = k;
		}
	}
	return at;
}

/*
 * Reads a table's first argument [b, e): 1 with *field and *mask for
 * "REC->f", "REC->f & C" or "C & REC->f"; 0 for any other expression;
 * -EINVAL if C is malformed.
 */
static int tp_parse_first_arg(const struct tp_parser *p, size_t b, size_t e,
			      size_t *field, uint64_t *mask)
{
	static const char *const amp[] = { "&", NULL };
	static const char *const others[] = { "^", "|", "&&", "||",
					      "?", ":", ",",  NULL };
	size_t at;
	int rc;

	tp_strip_parens(p, &b, &e);
	if (tp_field_ref(p, b, e, field)) {
		*mask = ~0ULL;
		return 1;
	}
	at = tp_find_op(p, b, e, amp);
	if (at == SIZE_MAX || at == b || tp_has_op(p, b, e, others))
		return 0;
	if (tp_field_ref(p, b, at, field))
		rc = tp_eval(p, at + 1, e, mask);
	else if (tp_field_ref(p, at + 1, e, field))
		rc = tp_eval(p, b, at, mask);
	else
		return 0;
	if (rc == -EINVAL)
		return rc;
	return rc ? 0 : 1;
}

/* Works out, once, whether a frame's condition is "REC->f ==/!= C". */
static void tp_frame_guard(const struct tp_parser *p, struct tp_frame *fr)
{
	static const char *const eq[] = { "==", "!=", NULL };
	size_t b = fr->cond_b, e = fr->cond_e, at;
	uint64_t v = 0;

	if (fr->parsed)
		return;
	fr->parsed = true;
	tp_strip_parens(p, &b, &e);
	at = tp_find_op(p, b, e, eq);
	if (at == SIZE_MAX || tp_has_op(p, b, e, tp_loose_ops))
		return;
	if (tp_field_ref(p, b, at, &fr->field_tok))
		fr->simple = !tp_eval(p, at + 1, e, &v);
	else if (tp_field_ref(p, at + 1, e, &fr->field_tok))
		fr->simple = !tp_eval(p, b, at, &v);
	if (fr->simple) {
		fr->value = (int64_t)v;
		fr->ne = tp_punct(&p->tok[at], "!=");
	}
}

/* The innermost ?: frame around the current position, or NULL. */
static struct tp_frame *tp_current_frame(struct tp_parser *p,
					 const struct tp_level *lv)
{
	size_t top = p->nframes;

	for (; lv; top = lv->base, lv = lv->parent)
		if (top > lv->base)
			return &p->frames[top - 1];
	return NULL;
}

/* Decodes the escapes of a string literal token's contents, appending to out. */
static int tp_decode_literal(const struct tp_tok *t, char *out, size_t *olen)
{
	const char *s = t->s + 1;
	size_t n = t->len - 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;
		char c = s[i];

		if (c != '\\') {
			out[(*olen)++] = c;
			continue;
		}
		c = s[++i]; /* the tokenizer saw a byte after every backslash */
		switch (c) {
		case 'n':
			v = '\n';
			break;
		case 't':
			v = '\t';
			break;
		case 'r':
			v = '\r';
			break;
		case 'a':
			v = '\a';
			break;
		case 'b':
			v = '\b';
			break;
		case 'f':
			v = '\f';
			break;
		case 'v':
			v = '\v';
			break;
		case 'e':
			v = 0x1b;
			break;
		case 'x':
			v = 0;
			if (i + 1 >= n || !tp_is_xdigit(s[i + 1]))
				return -EINVAL;
			while (i + 1 < n && tp_is_xdigit(s[i + 1])) {
				char h = s[++i];

				v = v * 16 +
				    (unsigned int)(tp_is_digit(h) ?
							   h - '0' :
							   (h | 0x20) - 'a' +
								   10);
				if (v > 0xff)
					return -EINVAL;
			}
			break;
		default:
			if (c >= '0' && c <= '7') {
				v = (unsigned int)(c - '0');
				for (int k = 0;
				     k < 2 && i + 1 < n && s[i + 1] >= '0' &&
				     s[i + 1] <= '7';
				     k++)
					v = v * 8 +
					    (unsigned int)(s[++i] - '0');
				if (v > 0xff)
					return -EINVAL;
			} else {
				v = (unsigned char)
					c; /* \\ \" \' \? and the rest */
			}
		}
		if (!v)
			return -EINVAL;
		out[(*olen)++] = (char)v;
	}
	return 0;
}

static void tp_symtab_release(struct tp_symtab *t)
{
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i].name);
	free(t->syms);
	free(t->field);
	free(t->guard_field);
	free(t->prefix);
}

/* State of one table while its entries are read. */
struct tp_table_build {
	struct tp_symtab t;
	size_t cap;
	size_t nentries;
	bool prefix_ok;
};

/*
 * Reads one "{ value, "name" ... }" entry, tokens [b, e) inside the braces,
 * into the table. Left out: an empty "{ }" (an empty list), an entry whose
 * name is not string literals (the "{ -1, 0 }" terminator some events
 * print), an entry whose value is not evaluated (an unresolved enum).
 */
static int tp_parse_entry(const struct tp_parser *p, size_t b, size_t e,
			  struct tp_table_build *tb)
{
	size_t c = tp_next_comma(p, b, e), total = 0, len = 0, nlit = 0,
	       firstlen = 0;
	uint64_t v = 0;
	char *name;
	int rc;

	if (b == e)
		return 0;
	if (c == b || c + 1 >= e)
		return -EINVAL;
	rc = tp_eval(p, b, c, &v);
	if (rc == -EINVAL)
		return rc;
	for (size_t k = c + 1; k < e; k++) {
		if (p->tok[k].kind != TP_TOK_STRING)
			return 0;
		total += p->tok[k].len;
	}
	name = xmalloc(total + 1);
	for (size_t k = c + 1; k < e; k++, nlit++) {
		if (tp_decode_literal(&p->tok[k], name, &len)) {
			free(name);
			return -EINVAL;
		}
		if (!nlit)
			firstlen = len;
	}
	name[len] = '\0';

	/* The prefix is the first literal, if every entry starts with the same one. */
	if (!tb->nentries++) {
		tb->prefix_ok = nlit >= 2;
		if (tb->prefix_ok)
			tb->t.prefix = tp_strndup(name, firstlen);
	} else if (tb->prefix_ok &&
		   (nlit < 2 || strlen(tb->t.prefix) != firstlen ||
		    memcmp(tb->t.prefix, name, firstlen))) {
		tb->prefix_ok = false;
	}

	if (rc) {
		free(name);
		return 0;
	}
	tp_grow((void **)&tb->t.syms, &tb->cap, tb->t.nsyms + 1,
		sizeof(*tb->t.syms));
	tb->t.syms[tb->t.nsyms].value = v;
	tb->t.syms[tb->t.nsyms].name = name;
	tb->t.nsyms++;
	return 0;
}

/* Completes a table: field, size cut, guard; then appends it to the format. */
static void tp_finish_table(struct tp_parser *p, struct tp_table_build *tb,
			    size_t field_tok, struct tp_frame *fr)
{
	const struct tp_tok *ft = &p->tok[field_tok];
	struct tp_format *f = p->f;

	if (!tb->prefix_ok) {
		free(tb->t.prefix);
		tb->t.prefix = NULL;
	}
	tb->t.field = tp_strndup(ft->s, ft->len);
	for (size_t i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, tb->t.field))
			tb->t.field_size = f->fields[i].size;
	if (tb->t.field_size && tb->t.field_size < 8) {
		uint64_t cut = (1ULL << (8 * tb->t.field_size)) - 1;

		for (size_t i = 0; i < tb->t.nsyms; i++)
			tb->t.syms[i].value &= cut;
	}
	if (fr) {
		tp_frame_guard(p, fr);
		if (fr->simple) {
			const struct tp_tok *g = &p->tok[fr->field_tok];

			tb->t.guard_field = tp_strndup(g->s, g->len);
			tb->t.guard_value = fr->value;
			tb->t.guard_negated = fr->in_else != fr->ne;
		}
	}
	tp_grow((void **)&f->tabs, &p->tabcap, f->ntabs + 1, sizeof(*f->tabs));
	f->tabs[f->ntabs++] = tb->t;
	memset(&tb->t, 0, sizeof(tb->t));
}

/*
 * Reads the __print_symbolic(...) call whose name is token i: its first
 * argument, then every "{ value, names }" entry. A table whose first
 * argument is not a plain (masked) field, or with no symbol left, is read
 * but not kept.
 */
static int tp_parse_symbolic(struct tp_parser *p, size_t i,
			     const struct tp_level *lv)
{
	size_t close = p->tok[i + 1].match, a = i + 2, c, field_tok = 0;
	struct tp_table_build tb = { .t = { .mask = ~0ULL } };
	int simple, rc = 0;

	c = tp_next_comma(p, a, close);
	if (c == a)
		return -EINVAL;
	simple = tp_parse_first_arg(p, a, c, &field_tok, &tb.t.mask);
	if (simple < 0)
		return simple;
	while (c < close && !rc) {
		size_t eb = c + 1, ee = tp_next_comma(p, eb, close);

		if (ee - eb < 2 || !tp_punct(&p->tok[eb], "{") ||
		    p->tok[eb].match != ee - 1)
			rc = -EINVAL;
		else
			rc = tp_parse_entry(p, eb + 1, ee - 1, &tb);
		c = ee;
	}
	if (!rc && simple && tb.t.nsyms)
		tp_finish_table(p, &tb, field_tok, tp_current_frame(p, lv));
	tp_symtab_release(&tb.t);
	return rc;
}

/* Whether token i starts a __print_symbolic(...) call inside [.., e). */
static bool tp_is_symbolic_call(const struct tp_parser *p, size_t i, size_t e)
{
	return (tp_ident(&p->tok[i], "__print_symbolic") ||
		tp_ident(&p->tok[i], "__print_symbolic_u64")) &&
	       i + 1 < e && tp_punct(&p->tok[i + 1], "(");
}

/*
 * Walks tokens [b, e) of one bracket level, tracking "?" and ":" so that a
 * table knows which branch of which condition it is in. Other helpers
 * (__print_flags, __print_hex, ...) are walked like any call and yield
 * nothing. Recursion depth is bounded by TP_MAX_DEPTH.
 */
static int tp_walk(struct tp_parser *p, size_t b, size_t e,
		   const struct tp_level *parent)
{
	struct tp_level lv = { .parent = parent, .base = p->nframes };
	size_t seg = b;
	int rc = 0;

	for (size_t i = b; i < e && !rc; i++) {
		const struct tp_tok *t = &p->tok[i];

		if (tp_punct(t, ",")) {
			p->nframes = lv.base;
			seg = i + 1;
		} else if (tp_punct(t, "?")) {
			tp_grow((void **)&p->frames, &p->framecap,
				p->nframes + 1, sizeof(*p->frames));
			p->frames[p->nframes++] = (struct tp_frame){
				.cond_b = seg, .cond_e = i
			};
			seg = i + 1;
		} else if (tp_punct(t, ":")) {
			/* Closes the innermost condition still in its "?" branch. */
			while (p->nframes > lv.base &&
			       p->frames[p->nframes - 1].in_else)
				p->nframes--;
			if (p->nframes > lv.base)
				p->frames[p->nframes - 1].in_else = true;
			seg = i + 1;
		} else if (tp_is_symbolic_call(p, i, e)) {
			rc = tp_parse_symbolic(p, i, &lv);
			i = p->tok[i + 1].match;
		} else if (tp_is_open(t)) {
			const struct tp_tok *prev = i > b ? &p->tok[i - 1] :
							    NULL;
			bool grouping = tp_punct(t, "(") &&
					!(prev && (prev->kind == TP_TOK_IDENT ||
						   tp_punct(prev, ")") ||
						   tp_punct(prev, "]")));

			rc = tp_walk(p, i + 1, t->match, grouping ? &lv : NULL);
			i = t->match;
		}
	}
	p->nframes = lv.base;
	return rc;
}

void tp_format_free(struct tp_format *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nfields; i++) {
		free(f->fields[i].name);
		free(f->fields[i].type);
	}
	free(f->fields);
	for (size_t i = 0; i < f->ntabs; i++)
		tp_symtab_release(&f->tabs[i]);
	free(f->tabs);
	free(f->name);
	free(f);
}

/* Header lines first, then the print fmt: tokens, then one walk for the tables. */
struct tp_format *tp_format_parse(const char *text, size_t len, int *err)
{
	struct tp_parser p = { 0 };
	size_t fmt_at = 0;
	int rc;

	if (!text || memchr(text, '\0', len)) {
		rc = -EINVAL;
		goto out;
	}
	p.f = xcalloc(1, sizeof(*p.f));
	rc = tp_parse_header(p.f, text, len, &fmt_at);
	if (!rc)
		rc = tp_tokenize(&p, text + fmt_at, len - fmt_at);
	if (!rc && (!p.ntok || p.tok[0].kind != TP_TOK_STRING))
		rc = -EINVAL;
	if (!rc)
		rc = tp_walk(&p, 0, p.ntok, NULL);
out:
	free(p.tok);
	free(p.frames);
	if (rc) {
		tp_format_free(p.f);
		p.f = NULL;
	}
	if (err)
		*err = rc;
	return p.f;
}

int tp_format_load(const char *path, struct tp_format **out)
{
	size_t len;
	char *buf;
	int rc;

	*out = NULL;
	rc = fs_read_all_at(AT_FDCWD, path, TP_MAX_FILE, &buf, &len);
	if (rc)
		return rc;
	*out = tp_format_parse(buf, len, &rc);
	free(buf);
	return rc;
}

const struct tp_field *tp_format_field(const struct tp_format *f,
				       const char *name)
{
	for (size_t i = 0; f && i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

const struct tp_symtab *tp_format_symtab(const struct tp_format *f,
					 const char *field)
{
	for (size_t i = 0; f && i < f->ntabs; i++)
		if (!strcmp(f->tabs[i].field, field))
			return &f->tabs[i];
	return NULL;
}

bool tp_symtab_applies(const struct tp_symtab *t, int64_t guard_value)
{
	if (!t->guard_field)
		return true;
	return (guard_value == t->guard_value) != t->guard_negated;
}

const struct tp_symtab *tp_format_symtab_for(const struct tp_format *f,
					     const char *field,
					     int64_t guard_value)
{
	for (size_t i = 0; f && i < f->ntabs; i++)
		if (!strcmp(f->tabs[i].field, field) &&
		    tp_symtab_applies(&f->tabs[i], guard_value))
			return &f->tabs[i];
	return NULL;
}

/* A linear search: tables are short and lookups happen at setup. */
const char *tp_symtab_name(const struct tp_symtab *t, uint64_t raw_value)
{
	uint64_t v = raw_value & t->mask;

	if (t->field_size && t->field_size < 8)
		v &= (1ULL << (8 * t->field_size)) - 1;
	for (size_t i = 0; i < t->nsyms; i++)
		if (t->syms[i].value == v)
			return t->syms[i].name;
	return NULL;
}

const struct tp_symbol *tp_symtab_find(const struct tp_symtab *t,
				       const char *name)
{
	for (size_t i = 0; i < t->nsyms; i++)
		if (!strcmp(t->syms[i].name, name))
			return &t->syms[i];
	return NULL;
}

struct tp_symtab *tp_format_add_symtab(struct tp_format *f, const char *field,
				       uint64_t mask)
{
	const struct tp_field *fld = tp_format_field(f, field);
	struct tp_symtab *t;

	f->tabs = xrealloc(f->tabs, (f->ntabs + 1) * sizeof(*f->tabs));
	t = &f->tabs[f->ntabs++];
	memset(t, 0, sizeof(*t));
	t->field = xstrdup(field);
	t->field_size = fld ? fld->size : 0;
	t->mask = mask;
	return t;
}

void tp_format_drop_symtab(struct tp_format *f, size_t i)
{
	if (i >= f->ntabs)
		return;
	tp_symtab_release(&f->tabs[i]);
	memmove(&f->tabs[i], &f->tabs[i + 1],
		(f->ntabs - i - 1) * sizeof(*f->tabs));
	f->ntabs--;
}

/* The value as tp_symtab_name() compares it: masked, cut to the field. */
static uint64_t tp_symtab_key(const struct tp_symtab *t, uint64_t value)
{
	value &= t->mask;
	if (t->field_size && t->field_size < 8)
		value &= (1ULL << (8 * t->field_size)) - 1;
	return value;
}

void tp_symtab_set(struct tp_symtab *t, uint64_t value, const char *name)
{
	uint64_t v = tp_symtab_key(t, value);

	for (size_t i = 0; i < t->nsyms; i++) {
		if (tp_symtab_key(t, t->syms[i].value) != v)
			continue;
		free(t->syms[i].name);
		t->syms[i].name = xstrdup(name);
		return;
	}
	t->syms = xrealloc(t->syms, (t->nsyms + 1) * sizeof(*t->syms));
	t->syms[t->nsyms].value = v;
	t->syms[t->nsyms].name = xstrdup(name);
	t->nsyms++;
}
