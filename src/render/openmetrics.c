// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prometheus and OpenMetrics exposition text from a snapshot. The series
 * of every scope (the whole selection, each VM, each vCPU) are gathered
 * first, then sorted into families, so that a family's samples are
 * contiguous whatever order the fields were interned in. Values in base
 * units are written exactly: a raw integer times 10^exponent is a decimal
 * shift, not a floating-point product. The rules are in openmetrics.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "breakdown_render.h"
#include "levels.h"
#include "numfmt.h"
#include "openmetrics.h"
#include "util.h"
#include "vcputime_render.h"

typedef unsigned __int128 u128;

/* A scope series are read in. */
struct om_scope {
	pid_t pid;	   /* 0: the whole selection */
	int vcpu;	   /* SAMPLE_ALL_VCPUS or an index */
	const char *guest; /* guest name of pid, or NULL */
	size_t lab, nlab;  /* its labels (pid, guest, vcpu) in the writer's
			    * labs, written once per render */
};

/* One series to write: a field of some scope. */
struct om_series {
	int family;		      /* field id of the family's root */
	int field;		      /* the root itself, or a reason child */
	size_t scope;		      /* index in scopes; 0 is the whole */
	uint64_t total;		      /* its value (raw) */
	const struct snap_hist *hist; /* a histogram's buckets, or NULL */
};

/* The "le" of a histogram's bucket, made once: its upper end and text. */
struct om_le {
	uint64_t hi;
	char s[NUMFMT_DOUBLE_SIZE];
	size_t n; /* strlen(s); 0: not made yet */
};

/* A family name made from a field, kept while the field stays the same. */
struct om_name {
	char *fam;	      /* the family's name, or NULL */
	size_t nfam;	      /* strlen(fam) */
	char *from;	      /* the field name it was made from */
	enum field_unit unit; /* and the field's unit, type, histogram, */
	enum field_type type;
	enum field_hist hist;
	int exponent; /* scale */
	unsigned int base;
	/* a histogram's "le" texts by bucket position, made from the
	 * field's scale (kept while it stays) */
	struct om_le *les;
	size_t nles;
	/* a histogram's buckets (by index) that have counted in the whole
	 * selection: the ones its VMs' and vCPUs' series write */
	bool *used;
	size_t nused;
};

/* What the writer keeps from one render to the next (openmetrics.h). */
struct openmetrics_writer {
	bool per_vcpu;		    /* also each vCPU's series */
	struct levels_seen seen;    /* per-VM series of sticky fields
				     * written so far */
	struct levels_scratch sums; /* VMs' values summed from vCPUs */
	struct om_scope *scopes;
	size_t nscopes, scap;
	struct om_series *series;
	size_t nseries, cap;
	struct om_name *names; /* by field id */
	size_t nnames;
	bool *kept;	   /* by field id: in the snapshot's view */
	bool *has_reasons; /* by field id, while gathering a scope */
	bool *done;	   /* by field id, while gathering a VM */
	size_t nflags;
	char **reserved; /* metric and sample names written so far */
	size_t nreserved, rcap;
	struct strbuf labs; /* the scopes' labels (om_scope.lab) */
};

struct om_ctx {
	struct strbuf *out;
	const struct snapshot *snap;
	const struct field_info *fields; /* the snapshot's */
	enum openmetrics_format fmt;
	struct openmetrics_writer *w;
};

/* ---- numbers ---------------------------------------------------------- */

/* Appends v in decimal. */
static void openmetrics_add_u64(struct strbuf *b, uint64_t v)
{
	char d[NUMFMT_INT_SIZE];

	strbuf_addn(b, d, numfmt_u64(d, v));
}

/* base^e as a long double (no libm: the binary links none). */
static long double openmetrics_pow(unsigned int base, int e)
{
	long double r = 1, m = base;

	for (int i = e < 0 ? -e : e; i; i--)
		r *= m;
	return e < 0 ? 1 / r : r;
}

/* Appends mant x 10^exp10 as an exact decimal: "1.5", "0.000001", "42". */
static void openmetrics_decimal(struct strbuf *b, u128 mant, int exp10)
{
	char d[48], out[192];
	int n = 0, k, o = 0;

	if (exp10 == 0 && mant <= UINT64_MAX) {
		/* a count, most values are */
		openmetrics_add_u64(b, (uint64_t)mant);
		return;
	}
	do {
		d[n++] = (char)('0' + (int)(mant % 10));
		mant /= 10;
	} while (mant);
	for (int i = 0; i < n / 2; i++) {
		char t = d[i];

		d[i] = d[n - 1 - i];
		d[n - 1 - i] = t;
	}
	if (n == 1 && d[0] == '0') {
		strbuf_add(b, "0");
		return;
	}
	if (exp10 >= 0) {
		if (exp10 > 120)
			exp10 = 120; /* no KVM scale comes near */
		memcpy(out, d, (size_t)n);
		memset(out + n, '0', (size_t)exp10);
		out[n + exp10] = '\0';
		strbuf_add(b, out);
		return;
	}
	k = -exp10;
	if (k > 120)
		k = 120;
	if (n <= k) {
		out[o++] = '0';
		out[o++] = '.';
		memset(out + o, '0', (size_t)(k - n));
		o += k - n;
		memcpy(out + o, d, (size_t)n);
		o += n;
	} else {
		memcpy(out, d, (size_t)(n - k));
		o = n - k;
		out[o++] = '.';
		memcpy(out + o, d + n - k, (size_t)k);
		o += k;
	}
	while (out[o - 1] == '0')
		o--;
	if (out[o - 1] == '.')
		o--;
	out[o] = '\0';
	strbuf_add(b, out);
}

/*
 * Appends mant x 10^exp10 x (f's base^exponent): a value in f's base unit.
 * Base 10 is a decimal shift; base 2 multiplies by 2^e or by 5^k for
 * 2^-k = 5^k x 10^-k; past 128 bits it falls back to a double.
 */
static void openmetrics_scaled(struct strbuf *b, u128 mant, int exp10,
			       const struct field_info *f)
{
	int e = f->exponent;

	if (f->base != 2) {
		openmetrics_decimal(b, mant, exp10 + e);
		return;
	}
	if (e >= 0) {
		if (e < 128 && mant <= (~(u128)0 >> e)) {
			openmetrics_decimal(b, mant << e, exp10);
			return;
		}
	} else {
		u128 m = mant;
		int k = -e;
		bool ok = true;

		for (int i = 0; i < k && ok; i++) {
			ok = m <= ~(u128)0 / 5;
			m *= 5;
		}
		if (ok) {
			openmetrics_decimal(b, m, exp10 - k);
			return;
		}
	}
	strbuf_addf(b, "%.17Lg",
		    (long double)mant * openmetrics_pow(10, exp10) *
			    openmetrics_pow(2, e));
}

void openmetrics_canonical(double v, char *buf, size_t len)
{
	char t[NUMFMT_DOUBLE_SIZE];

	numfmt_canonical(t, v);
	snprintf(buf, len, "%s", t);
}

/* ---- text ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t openmetrics_utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Appends s escaped: backslash, newline and (when quote) double quote get
 * a backslash; bytes that are not UTF-8 become U+FFFD, as both formats
 * require UTF-8.
 */
void openmetrics_escape(struct strbuf *b, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;
	char chunk[256];
	size_t o = 0;

	while (*p) {
		size_t n = openmetrics_utf8_len(p);

		if (o + 8 > sizeof(chunk)) {
			chunk[o] = '\0';
			strbuf_add(b, chunk);
			o = 0;
		}
		if (!n) {
			memcpy(chunk + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		if (*p == '\\' || *p == '\n' || (quote && *p == '"')) {
			chunk[o++] = '\\';
			chunk[o++] = *p == '\n' ? 'n' : (char)*p;
			p++;
			continue;
		}
		memcpy(chunk + o, p, n);
		o += n;
		p += n;
	}
	chunk[o] = '\0';
	strbuf_add(b, chunk);
}

static bool openmetrics_ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/*
 * Spells out the words of s[0, len) that Prometheus reads as abbreviated
 * time units ("_ns" at the end or before "_"): "_nsec". s has room for
 * len * 5 / 3 bytes. Returns the new length.
 */
static size_t openmetrics_spell_units(char *s, size_t len)
{
	for (size_t i = 0; i + 3 <= len; i++) {
		if (s[i] != '_' || !strchr("num", s[i + 1]) || !s[i + 1] ||
		    s[i + 2] != 's' || (i + 3 < len && s[i + 3] != '_'))
			continue;
		memmove(s + i + 5, s + i + 3, len - i - 3);
		memcpy(s + i + 3, "ec", 2);
		len += 2;
		i += 4;
	}
	return len;
}

char *openmetrics_name(const struct field_info *f)
{
	static const char *const raw_time[] = { "_ns", "_us", "_ms" };
	bool prefixed = !strncmp(f->name, "kvm_", 4);
	size_t n = strlen(f->name), len;
	char *s = xmalloc(2 * (n + 4 + 16) + 1);

	len = 0;
	if (!prefixed) {
		memcpy(s, "kvm_", 4);
		len = 4;
	}
	for (size_t i = 0; i < n; i++) {
		char c = f->name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == ':';

		s[len++] = ok ? c : '_';
	}
	if (f->unit == UNIT_SECONDS) {
		for (size_t i = 0; i < ARRAY_SIZE(raw_time); i++)
			if (openmetrics_ends_with(s, len, raw_time[i]) &&
			    len > strlen(raw_time[i]) + 4) {
				len -= strlen(raw_time[i]);
				break;
			}
		if (!openmetrics_ends_with(s, len, "_seconds")) {
			memcpy(s + len, "_seconds", 8);
			len += 8;
		}
	} else if (f->unit == UNIT_BYTES &&
		   !openmetrics_ends_with(s, len, "_bytes")) {
		memcpy(s + len, "_bytes", 6);
		len += 6;
	}
	len = openmetrics_spell_units(s, len);
	/* a counter's samples get "_total"; the family has none */
	if (f->type == FIELD_CUMULATIVE && f->hist == HIST_NONE &&
	    openmetrics_ends_with(s, len, "_total") && len > 10)
		len -= 6;
	s[len] = '\0';
	return s;
}

/* ---- gathering -------------------------------------------------------- */

/* The per-field flags sized for snap, kept cleared; the view's fields
 * marked kept: what is exported. */
static void openmetrics_kept(struct om_ctx *c)
{
	struct openmetrics_writer *w = c->w;
	const struct snapshot *snap = c->snap;
	size_t n = snap->nfields ? snap->nfields : 1;

	if (w->nflags < n) {
		w->kept = xrealloc(w->kept, n * sizeof(*w->kept));
		w->has_reasons = xrealloc(w->has_reasons,
					  n * sizeof(*w->has_reasons));
		w->done = xrealloc(w->done, n * sizeof(*w->done));
		memset(w->has_reasons, 0, n * sizeof(*w->has_reasons));
		memset(w->done, 0, n * sizeof(*w->done));
		w->nflags = n;
	}
	memset(w->kept, 0, n * sizeof(*w->kept));
	for (size_t i = 0; i < snap->nrows; i++)
		if (!snap->rows[i].per_vcpu && snap->rows[i].field >= 0 &&
		    (size_t)snap->rows[i].field < snap->nfields)
			w->kept[snap->rows[i].field] = true;
}

static void openmetrics_push(struct om_ctx *c, int family, int field,
			     size_t scope, uint64_t total,
			     const struct snap_hist *hist)
{
	struct openmetrics_writer *w = c->w;

	if (w->nseries == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->series = xrealloc(w->series, w->cap * sizeof(*w->series));
	}
	w->series[w->nseries++] = (struct om_series){ family, field, scope,
						      total, hist };
}

/* Whether series x, gathered in a VM's or vCPU's scope, is written: a
 * sticky field's once it is not 0, and from then on (levels.h). */
static bool openmetrics_keep(struct om_ctx *c, const struct om_series *x)
{
	const struct om_scope *sc = &c->w->scopes[x->scope];
	const struct field_info *f = &c->fields[x->field];
	struct snap_row r = { .total = x->total };

	if (!sc->pid || !levels_sticky(f))
		return true;
	return levels_seen_keep(&c->w->seen, sc->pid, sc->vcpu, x->field,
				levels_zero(&r, x->hist));
}

/* The series of field in a scope, its value in row (and hist): a
 * reason child joins its parent's family. */
static void openmetrics_add_row(struct om_ctx *c, const struct snap_row *r,
				size_t scope)
{
	const struct field_info *f = &c->fields[r->field];

	if (f->hist != HIST_NONE) {
		if (r->hist && r->hist->nbuckets)
			openmetrics_push(c, r->field, r->field, scope, 0,
					 r->hist);
	} else if (f->parent >= 0) {
		openmetrics_push(c, f->parent, r->field, scope, r->total, NULL);
		c->w->has_reasons[f->parent] = true;
	} else {
		openmetrics_push(c, r->field, r->field, scope, r->total, NULL);
	}
}

/* Whether row r of a scope is exported: read in the last refresh, of a
 * field the view keeps, not a bucket (its histogram has it). */
static bool openmetrics_row_ok(const struct om_ctx *c, const struct snap_row *r)
{
	/* rows renamed for a per-vCPU view are not whole-scope rows */
	return !r->per_vcpu && r->valid &&
	       !snapshot_is_bucket(c->snap, r->field) && c->w->kept[r->field];
}

/*
 * The histograms of scope sc read whole by their source (exit latency):
 * those the view keeps or that an option of their own turned on; a keyed
 * child joins its parent's family.
 */
static void openmetrics_gather_hists(struct om_ctx *c,
				     const struct snap_scope *sc, size_t scope)
{
	for (size_t i = 0; sc && i < sc->nhists; i++) {
		const struct snap_hist *h = &sc->hists[i];
		const struct field_info *f = &c->fields[h->field];
		int fam = h->field;

		if (!h->measured || !h->nbuckets ||
		    (!c->w->kept[h->field] && !(f->flags & FIELD_OWN_SWITCH)))
			continue;
		if (f->parent >= 0 && c->fields[f->parent].hist != HIST_NONE)
			fam = f->parent;
		openmetrics_push(c, fam, h->field, scope, 0, h);
	}
}

/*
 * Ends the series of one scope gathered from first on: where the scope
 * has reason series, the parent's own goes; series of sticky fields that
 * are still 0 in a VM or vCPU are left out until they count.
 */
static void openmetrics_end_scope(struct om_ctx *c, size_t first)
{
	struct openmetrics_writer *w = c->w;
	size_t kept = first;

	for (size_t i = first; i < w->nseries; i++) {
		const struct om_series *x = &w->series[i];

		if (x->field == x->family && w->has_reasons[x->family] &&
		    c->fields[x->family].hist == HIST_NONE)
			continue;
		if (!openmetrics_keep(c, x))
			continue;
		w->series[kept++] = *x;
	}
	for (size_t i = first; i < w->nseries; i++)
		w->has_reasons[w->series[i].family] = false;
	w->nseries = kept;
}

/* The series of one scope's rows. */
static void openmetrics_gather_scope(struct om_ctx *c,
				     const struct snap_row *rows, size_t nrows,
				     size_t scope)
{
	for (size_t i = 0; i < nrows; i++)
		if (openmetrics_row_ok(c, &rows[i]))
			openmetrics_add_row(c, &rows[i], scope);
}

/*
 * The series of a VM's scope: its rows, and the fields only its vCPUs
 * have, summed over them (levels.h); none read in the last refresh when
 * the VM was not.
 */
static void openmetrics_gather_vm(struct om_ctx *c, const struct snap_scope *vm,
				  size_t scope)
{
	struct openmetrics_writer *w = c->w;

	openmetrics_gather_scope(c, vm->rows, vm->nrows, scope);
	for (size_t i = 0; i < vm->nrows; i++)
		w->done[vm->rows[i].field] = true;
	for (size_t j = 0; j < vm->nchildren; j++) {
		const struct snap_scope *vc = &vm->children[j];

		for (size_t i = 0; i < vc->nrows; i++) {
			int f = vc->rows[i].field;
			struct snap_row sum;
			const struct snap_row *r;

			if (w->done[f])
				continue;
			w->done[f] = true;
			if (!w->kept[f] || snapshot_is_bucket(c->snap, f) ||
			    !levels_vm_value(c->snap, vm, f, &sum, &r,
					     &w->sums) ||
			    !r->valid)
				continue;
			openmetrics_add_row(c, r, scope);
		}
	}
	for (size_t i = 0; i < vm->nrows; i++)
		w->done[vm->rows[i].field] = false;
	for (size_t j = 0; j < vm->nchildren; j++)
		for (size_t i = 0; i < vm->children[j].nrows; i++)
			w->done[vm->children[j].rows[i].field] = false;
}

/* Whether scope sc holds a histogram read whole (exit latency's). */
static bool openmetrics_has_measured(const struct snap_scope *sc)
{
	for (size_t i = 0; i < sc->nhists; i++)
		if (sc->hists[i].measured)
			return true;
	return false;
}

/* Appends the labels of scope sc: pid="..",guest="..",vcpu="..", or
 * nothing for the whole selection. */
static void openmetrics_scope_labels(struct strbuf *b, const struct om_scope *sc)
{
	const char *sep = "";

	if (sc->pid) {
		strbuf_add(b, "pid=\"");
		openmetrics_add_u64(b, (uint64_t)sc->pid);
		strbuf_add(b, "\"");
		sep = ",";
		if (sc->guest) {
			strbuf_add(b, ",guest=\"");
			openmetrics_escape(b, sc->guest, true);
			strbuf_add(b, "\"");
		}
	}
	if (sc->vcpu >= 0) {
		strbuf_add(b, sep);
		strbuf_add(b, "vcpu=\"");
		openmetrics_add_u64(b, (uint64_t)sc->vcpu);
		strbuf_add(b, "\"");
	}
}

static size_t openmetrics_add_scope(struct om_ctx *c, pid_t pid, int vcpu,
				    const char *guest)
{
	struct openmetrics_writer *w = c->w;

	if (w->nscopes == w->scap) {
		w->scap = w->scap ? 2 * w->scap : 64;
		w->scopes = xrealloc(w->scopes, w->scap * sizeof(*w->scopes));
	}
	w->scopes[w->nscopes] = (struct om_scope){ pid, vcpu, guest,
						   w->labs.len, 0 };
	openmetrics_scope_labels(&w->labs, &w->scopes[w->nscopes]);
	w->scopes[w->nscopes].nlab = w->labs.len - w->scopes[w->nscopes].lab;
	return w->nscopes++;
}

/* Every scope in order (whole, then each VM read in the last refresh
 * followed, with per_vcpu, by its vCPUs read in it), and the series of
 * each. */
static void openmetrics_gather(struct om_ctx *c)
{
	struct openmetrics_writer *w = c->w;
	const struct snapshot *snap = c->snap;
	const struct snap_scope *whole = snap->whole;
	size_t first = w->nseries, sc;

	openmetrics_add_scope(c, 0, SAMPLE_ALL_VCPUS, NULL);
	openmetrics_gather_scope(c, snap->rows, snap->nrows, 0);
	openmetrics_gather_hists(c, whole, 0);
	openmetrics_end_scope(c, first);
	for (size_t i = 0; whole && i < whole->nchildren; i++) {
		const struct snap_scope *vm = &whole->children[i];

		bool rows = levels_vm_fresh(vm),
		     any = rows || openmetrics_has_measured(vm);

		/* a VM not read in the last refresh has only the histograms
		 * read whole (exit latency's), its vCPUs too */
		for (size_t j = 0; !any && w->per_vcpu && j < vm->nchildren; j++)
			any = openmetrics_has_measured(&vm->children[j]);
		if (!any)
			continue;
		sc = openmetrics_add_scope(c, vm->pid, SAMPLE_ALL_VCPUS,
					   vm->guest);
		first = w->nseries;
		if (rows)
			openmetrics_gather_vm(c, vm, sc);
		openmetrics_gather_hists(c, vm, sc);
		openmetrics_end_scope(c, first);
		for (size_t j = 0; w->per_vcpu && j < vm->nchildren; j++) {
			const struct snap_scope *vc = &vm->children[j];
			bool vrows = rows && vc->fresh;

			if (!vrows && !openmetrics_has_measured(vc))
				continue;
			sc = openmetrics_add_scope(c, vc->pid, vc->vcpu,
						   vc->guest);
			first = w->nseries;
			if (vrows)
				openmetrics_gather_scope(c, vc->rows, vc->nrows,
							 sc);
			openmetrics_gather_hists(c, vc, sc);
			openmetrics_end_scope(c, first);
		}
	}
}

/* The family name of field, made once and kept while the field stays as
 * it was (openmetrics_names checks that once per render). */
static const char *openmetrics_family(struct om_ctx *c, int field)
{
	struct om_name *n = &c->w->names[field];

	if (!n->fam) {
		const struct field_info *f = &c->fields[field];

		n->fam = openmetrics_name(f);
		n->nfam = strlen(n->fam);
		n->from = xstrdup(f->name);
		n->exponent = f->exponent;
		n->base = f->base;
		n->unit = f->unit;
		n->type = f->type;
		n->hist = f->hist;
	}
	return n->fam;
}

/* Drops the names kept for fields that are not what they were made from
 * (names made by an earlier render). */
static void openmetrics_names(struct om_ctx *c)
{
	for (size_t i = 0; i < c->snap->nfields; i++) {
		const struct field_info *f = &c->fields[i];
		struct om_name *n = &c->w->names[i];

		if (n->fam &&
		    (n->unit != f->unit || n->type != f->type ||
		     n->hist != f->hist || n->exponent != f->exponent ||
		     n->base != f->base || strcmp(n->from, f->name))) {
			free(n->fam);
			free(n->from);
			n->fam = NULL;
			/* its "le" texts were of the old scale */
			free(n->les);
			n->les = NULL;
			n->nles = 0;
		}
	}
}

/* Families by metric name (then field id), scopes in order, the parent's
 * own series before its reasons, reasons by name. */
static int openmetrics_series_cmp(const void *a, const void *b, void *arg)
{
	const struct om_series *x = a, *y = b;
	struct om_ctx *c = arg;
	int d;

	if (x->family != y->family) {
		d = strcmp(openmetrics_family(c, x->family),
			   openmetrics_family(c, y->family));
		if (d)
			return d;
		return x->family < y->family ? -1 : 1;
	}
	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	if (x->field == y->field)
		return 0;
	if (x->field == x->family)
		return -1;
	if (y->field == y->family)
		return 1;
	return strcmp(c->fields[x->field].name, c->fields[y->field].name);
}

/* ---- writing ---------------------------------------------------------- */

static bool openmetrics_reserved(const struct om_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->w->nreserved; i++)
		if (!strcmp(c->w->reserved[i], name))
			return true;
	return false;
}

/*
 * Claims the names a family writes (its own and its samples'); false,
 * claiming nothing, when one is taken by an earlier family.
 */
static bool openmetrics_claim(struct om_ctx *c, const char *fam,
			      const char *const *suffixes, size_t n)
{
	char *names[5];

	for (size_t i = 0; i < n; i++) {
		names[i] = xasprintf("%s%s", fam, suffixes[i]);
		if (openmetrics_reserved(c, names[i])) {
			for (size_t j = 0; j <= i; j++)
				free(names[j]);
			return false;
		}
	}
	struct openmetrics_writer *w = c->w;

	if (w->nreserved + n > w->rcap) {
		w->rcap = w->rcap ? 2 * w->rcap : 64;
		if (w->rcap < w->nreserved + n)
			w->rcap = w->nreserved + n;
		w->reserved = xrealloc(w->reserved,
				       w->rcap * sizeof(*w->reserved));
	}
	for (size_t i = 0; i < n; i++)
		w->reserved[w->nreserved++] = names[i];
	return true;
}

/* The reason of child NAME(REASON) of parent NAME: REASON, else the
 * child's whole name. Into buf. */
static const char *openmetrics_reason(const struct field_info *child,
				      const struct field_info *parent,
				      char *buf, size_t len)
{
	size_t pn = strlen(parent->name), cn = strlen(child->name);

	if (cn > pn + 2 && !strncmp(child->name, parent->name, pn) &&
	    child->name[pn] == '(' && child->name[cn - 1] == ')')
		snprintf(buf, len, "%.*s", (int)(cn - pn - 2),
			 child->name + pn + 1);
	else
		snprintf(buf, len, "%s", child->name);
	return buf;
}

/* Appends {pid=..,guest=..,vcpu=..,reason=..,le=..}, or nothing: the
 * scope's labels as written once for it. */
static void openmetrics_labels(struct strbuf *b,
			       const struct openmetrics_writer *w,
			       const struct om_scope *sc, const char *reason,
			       const char *le, size_t nle)
{
	bool any = sc->nlab;

	if (!any && !reason && !le)
		return;
	strbuf_addn(b, "{", 1);
	strbuf_addn(b, w->labs.s + sc->lab, sc->nlab);
	if (reason) {
		strbuf_add(b, any ? ",reason=\"" : "reason=\"");
		openmetrics_escape(b, reason, true);
		strbuf_addn(b, "\"", 1);
		any = true;
	}
	if (le) {
		strbuf_add(b, any ? ",le=\"" : "le=\"");
		strbuf_addn(b, le, nle);
		strbuf_addn(b, "\"", 1);
	}
	strbuf_addn(b, "}", 1);
}

static const char *openmetrics_unit_name(enum field_unit u)
{
	return u == UNIT_SECONDS ? "seconds" : u == UNIT_BYTES ? "bytes" : NULL;
}

/* # TYPE, # UNIT (OpenMetrics only) and # HELP of a family. */
static void openmetrics_header(struct om_ctx *c, const char *fam,
			       const struct field_info *f, const char *type,
			       bool reasons)
{
	bool om = c->fmt == OPENMETRICS_OPENMETRICS;
	const char *unit = openmetrics_unit_name(f->unit);
	/* 0.0.4 names a counter's family by its sample name */
	const char *suffix = !om && !strcmp(type, "counter") ? "_total" : "";
	struct strbuf *b = c->out;

	if (om) {
		strbuf_addf(b, "# TYPE %s %s\n", fam, type);
		if (unit)
			strbuf_addf(b, "# UNIT %s %s\n", fam, unit);
	}
	if (f->help) {
		/* its source's words */
		strbuf_addf(b, "# HELP %s%s ", fam, suffix);
		openmetrics_escape(b, f->help, om);
		strbuf_add(b, "\n");
		goto out_type;
	}
	strbuf_addf(b, "# HELP %s%s KVM %s ", fam, suffix,
		    f->hist != HIST_NONE ? "histogram" : "statistic");
	openmetrics_escape(b, f->name, om);
	if (f->provider)
		strbuf_addf(b, " (%s)", f->provider);
	if (unit)
		strbuf_addf(b, ", in %s", unit);
	if (reasons)
		strbuf_add(b, ", by reason");
	if (f->hist != HIST_NONE)
		strbuf_add(b, "; _sum estimated from bucket midpoints");
	strbuf_add(b, "\n");
out_type:
	if (!om)
		strbuf_addf(b, "# TYPE %s%s %s\n", fam, suffix, type);
}

/*
 * The canonical "le" of bucket i of a histogram of family's, holding raw
 * values up to hi - 1 in the family's scale: made the first time, then
 * kept with the family's name (every VM's series has the same buckets).
 */
static const struct om_le *openmetrics_le(struct om_ctx *c, int family,
					  size_t i, uint64_t hi)
{
	struct om_name *nm = &c->w->names[family];
	struct om_le *le;

	if (i >= nm->nles) {
		size_t n = i + 1 > 2 * nm->nles ? i + 1 : 2 * nm->nles;

		nm->les = xrealloc(nm->les, n * sizeof(*nm->les));
		memset(nm->les + nm->nles, 0, (n - nm->nles) * sizeof(*nm->les));
		nm->nles = n;
	}
	le = &nm->les[i];
	if (!le->n || le->hi != hi) {
		struct strbuf t;

		le->hi = hi;
		if (hi == UINT64_MAX) {
			le->n = 4;
			memcpy(le->s, "+Inf", 5);
			return le;
		}
		strbuf_init(&t);
		openmetrics_scaled(&t, hi ? hi - 1 : 0, 0, &c->fields[family]);
		le->n = numfmt_canonical(le->s, strtod(t.s, NULL));
		strbuf_free(&t);
	}
	return le;
}

/* Appends " v\n": a sample's value that is a count. */
static void openmetrics_value(struct strbuf *b, uint64_t v)
{
	char d[NUMFMT_INT_SIZE + 2];
	size_t n;

	d[0] = ' ';
	n = 1 + numfmt_u64(d + 1, v);
	d[n++] = '\n';
	strbuf_addn(b, d, n);
}

/* Appends the name of a family's sample: fam and suffix. */
static void openmetrics_sample(struct strbuf *b, const struct om_name *nm,
			       const char *suffix, size_t nsuffix)
{
	strbuf_addn(b, nm->fam, nm->nfam);
	strbuf_addn(b, suffix, nsuffix);
}

/*
 * The buckets of field's histogram that a VM's or vCPU's series writes:
 * those that have counted in the whole selection (from then on) and the
 * one below each (its lower edge, for histogram_quantile()), the same
 * for every VM, so that sum by (le) over VMs adds up; NULL (every one)
 * when the whole selection has no such histogram. *n: how many indices
 * the array covers.
 */
static const bool *openmetrics_used(struct om_ctx *c, int field, size_t *n)
{
	static const bool none[1];
	const struct snap_hist *h = snapshot_scope_hist(c->snap->whole, field);
	struct om_name *nm = &c->w->names[field];

	if (!h)
		return NULL;
	for (size_t i = 0; i < h->nbuckets; i++) {
		const struct snap_bucket *b = &h->buckets[i];
		size_t k = (size_t)b->index;

		if (b->index < 0 || !b->seen || !b->total)
			continue;
		if (k >= nm->nused) {
			nm->used = xrealloc(nm->used,
					    (k + 1) * sizeof(*nm->used));
			memset(nm->used + nm->nused, 0,
			       (k + 1 - nm->nused) * sizeof(*nm->used));
			nm->nused = k + 1;
		}
		nm->used[k] = true;
		/* and the bucket below, whose le is this one's lower edge:
		 * without it histogram_quantile() would take 0 for it */
		if (k)
			nm->used[k - 1] = true;
	}
	*n = nm->nused;
	return nm->used ? nm->used : none;
}

/*
 * One histogram series, of every histogram alike (binary stats, exit
 * latency): cumulative _bucket lines (a +Inf bucket added when the last
 * one is closed), _count, and _sum: the one its source measured, else the
 * estimate where twice the sum is exact in integers (count x (lo + hi -
 * 1), or x 2lo in the open bucket), halved as a decimal shift. reason:
 * the key of a keyed histogram ("HLT"), or NULL.
 */
static void openmetrics_write_hist(struct om_ctx *c, const struct om_series *x,
				   const char *reason)
{
	const struct openmetrics_writer *w = c->w;
	const struct om_name *nm = &w->names[x->family];
	const struct om_scope *sc = &w->scopes[x->scope];
	const struct field_info *pf = &c->fields[x->family];
	const struct snap_hist *h = x->hist;
	struct strbuf *b = c->out;
	bool open_last = false, exact = true;
	u128 sum2 = 0;
	long double sumf = 0;
	uint64_t cum = 0;
	size_t nused = 0;
	const bool *used = sc->pid ? openmetrics_used(c, x->field, &nused) :
				     NULL;

	for (size_t i = 0; i < h->nbuckets; i++) {
		const struct snap_bucket *bk = &h->buckets[i];
		const struct om_le *le;
		uint64_t n = bk->seen ? bk->total : 0;
		size_t k = (size_t)bk->index;
		u128 mid2, add;

		cum += n;
		if (bk->hi == UINT64_MAX) {
			open_last = true;
			mid2 = (u128)bk->lo * 2;
		} else {
			mid2 = (u128)bk->lo + bk->hi - 1;
		}
		sumf += (long double)n * (long double)mid2;
		if (exact && (__builtin_mul_overflow((u128)n, mid2, &add) ||
			      __builtin_add_overflow(sum2, add, &sum2)))
			exact = false;
		/* a bucket nothing counted in anywhere is left out (the
		 * open last one never: it is +Inf) */
		if (used && bk->hi != UINT64_MAX &&
		    (bk->index < 0 || k >= nused || !used[k]))
			continue;
		le = openmetrics_le(c, x->family, i, bk->hi);
		openmetrics_sample(b, nm, "_bucket", 7);
		openmetrics_labels(b, w, sc, reason, le->s, le->n);
		openmetrics_value(b, cum);
	}
	if (!open_last) {
		openmetrics_sample(b, nm, "_bucket", 7);
		openmetrics_labels(b, w, sc, reason, "+Inf", 4);
		openmetrics_value(b, cum);
	}
	openmetrics_sample(b, nm, "_count", 6);
	openmetrics_labels(b, w, sc, reason, NULL, 0);
	openmetrics_value(b, cum);
	openmetrics_sample(b, nm, "_sum", 4);
	openmetrics_labels(b, w, sc, reason, NULL, 0);
	strbuf_addn(b, " ", 1);
	if (h->measured)
		openmetrics_scaled(b, h->sum, 0, pf);
	else if (exact && !(sum2 & 1))
		openmetrics_scaled(b, sum2 / 2, 0, pf);
	else if (exact && sum2 <= ~(u128)0 / 5)
		openmetrics_scaled(b, sum2 * 5, -1, pf);
	else
		strbuf_addf(b, "%.17Lg",
			    sumf / 2 *
				    openmetrics_pow(pf->base == 2 ? 2 : 10,
						    pf->exponent));
	strbuf_add(b, "\n");
}

/* Writes the family of series [i, j) (one root field), unless its names
 * are taken. */
static void openmetrics_write_family(struct om_ctx *c, size_t i, size_t j)
{
	static const char *const counter[] = { "", "_total", "_created" };
	static const char *const gauge[] = { "" };
	static const char *const hist[] = { "", "_bucket", "_count", "_sum",
					    "_created" };
	const struct om_series *series = c->w->series;
	const struct field_info *f = &c->fields[series[i].family];
	const char *fam = openmetrics_family(c, series[i].family);
	const struct om_name *nm = &c->w->names[series[i].family];
	const char *const *claim;
	const char *type;
	bool reasons = false;
	size_t nclaim;

	if (f->hist != HIST_NONE) {
		type = "histogram";
		claim = hist;
		nclaim = ARRAY_SIZE(hist);
	} else if (f->type == FIELD_CUMULATIVE) {
		type = "counter";
		claim = counter;
		nclaim = ARRAY_SIZE(counter);
	} else {
		type = "gauge";
		claim = gauge;
		nclaim = ARRAY_SIZE(gauge);
	}
	if (!openmetrics_claim(c, fam, claim, nclaim))
		return;
	for (size_t k = i; k < j; k++)
		reasons |= series[k].field != series[k].family;
	openmetrics_header(c, fam, f, type, reasons);
	for (size_t k = i; k < j; k++) {
		const struct om_series *x = &series[k];
		const struct field_info *xf = &c->fields[x->field];
		char reason[256];

		if (f->hist != HIST_NONE) {
			openmetrics_write_hist(
				c, x,
				x->field == x->family ?
					NULL :
					openmetrics_reason(xf, f, reason,
							   sizeof(reason)));
			continue;
		}
		openmetrics_sample(c->out, nm, "_total",
				   f->type == FIELD_CUMULATIVE ? 6 : 0);
		openmetrics_labels(c->out, c->w, &c->w->scopes[x->scope],
				   x->field == x->family ?
					   NULL :
					   openmetrics_reason(xf, f, reason,
							      sizeof(reason)),
				   NULL, 0);
		strbuf_addn(c->out, " ", 1);
		openmetrics_scaled(c->out, x->total, 0, f);
		strbuf_add(c->out, "\n");
	}
}

struct openmetrics_writer *openmetrics_writer_new(bool per_vcpu)
{
	struct openmetrics_writer *w = xcalloc(1, sizeof(*w));

	w->per_vcpu = per_vcpu;
	levels_seen_init(&w->seen);
	levels_scratch_init(&w->sums);
	strbuf_init(&w->labs);
	return w;
}

void openmetrics_writer_free(struct openmetrics_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nnames; i++) {
		free(w->names[i].fam);
		free(w->names[i].from);
		free(w->names[i].used);
		free(w->names[i].les);
	}
	free(w->names);
	levels_seen_free(&w->seen);
	levels_scratch_free(&w->sums);
	free(w->scopes);
	free(w->series);
	free(w->kept);
	free(w->has_reasons);
	free(w->done);
	free(w->reserved);
	strbuf_free(&w->labs);
	free(w);
}

void openmetrics_write(struct openmetrics_writer *w, struct strbuf *b,
		       const struct snapshot *snap, enum openmetrics_format fmt)
{
	struct om_ctx c = { .out = b,
			    .snap = snap,
			    .fields = snap->fields,
			    .fmt = fmt,
			    .w = w };
	size_t nf = snap->nfields;

	if (w->nnames < nf) {
		w->names = xrealloc(w->names, nf * sizeof(*w->names));
		memset(w->names + w->nnames, 0,
		       (nf - w->nnames) * sizeof(*w->names));
		w->nnames = nf;
	}
	w->nscopes = w->nseries = 0;
	strbuf_reset(&w->labs);
	levels_scratch_reset(&w->sums);
	levels_seen_prune(&w->seen, snap);
	openmetrics_names(&c);
	openmetrics_kept(&c);
	openmetrics_gather(&c);
	if (w->nseries)
		qsort_r(w->series, w->nseries, sizeof(*w->series),
			openmetrics_series_cmp, &c);
	for (size_t i = 0, j; i < w->nseries; i = j) {
		for (j = i + 1; j < w->nseries &&
				w->series[j].family == w->series[i].family;
		     j++)
			;
		openmetrics_write_family(&c, i, j);
	}
	breakdown_render_metrics(b, snap, fmt == OPENMETRICS_OPENMETRICS);
	if (snap->vcputime)
		vcputime_render_openmetrics(b, snap->vcputime,
					    fmt == OPENMETRICS_OPENMETRICS);
	if (fmt == OPENMETRICS_OPENMETRICS)
		strbuf_add(b, "# EOF\n");
	for (size_t i = 0; i < w->nreserved; i++)
		free(w->reserved[i]);
	w->nreserved = 0;
}

void openmetrics_render(struct strbuf *b, const struct snapshot *snap,
			enum openmetrics_format fmt, bool per_vcpu)
{
	struct openmetrics_writer *w = openmetrics_writer_new(per_vcpu);

	openmetrics_write(w, b, snap, fmt);
	openmetrics_writer_free(w);
}
