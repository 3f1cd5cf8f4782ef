// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch, log and CSV text: the formats kvm_stat scripts parse. Batch lines
 * are the name in 42 columns then total and delta in 10 each; log lines are
 * a timestamp then each delta in a 9-wide column after a space; CSV is a
 * timestamp then the deltas, comma separated. Log and CSV values are
 * always integers; their headers escape what would split a column.
 */
#include <stdio.h>
#include <string.h>

#include "hist_fmt.h"
#include "ui_text.h"
#include "units.h"

void ui_text_escape_name(struct strbuf *b, const char *name)
{
	static const char hex[] = "0123456789abcdef";
	char esc[5] = { '\\', 'x', 0, 0, 0 };
	const char *run = name;
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++) {
		if (*p > ' ' && *p != 0x7f && *p != ',' && *p != '\\')
			continue;
		if ((const char *)p > run)
			strbuf_addf(b, "%.*s", (int)((const char *)p - run),
				    run);
		esc[2] = hex[*p >> 4];
		esc[3] = hex[*p & 0xf];
		strbuf_add(b, esc);
		run = (const char *)p + 1;
	}
	strbuf_add(b, run);
}

void ui_text_timestamp(char *buf, size_t len, const struct timespec *wall)
{
	struct tm tm;
	time_t t = wall->tv_sec;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/*
 * After kvm_stat's columns, for the fields kvm_stat never had: the values
 * in their unit ("  1.23 s  +300 ms  30.0%"), a histogram's percentiles
 * over the interval (over all time when the interval saw none), a
 * bucket's range. Plain counters get nothing, so their lines stay
 * byte-compatible.
 */
#define HIST_MAX_BUCKETS 128 /* KVM's log2 histograms have 32 or 64 */

static void ui_text_batch_extra(struct strbuf *b, const struct snapshot *snap,
				const struct snap_row *r, unsigned int flags)
{
	const struct field_info *f = snapshot_row_field(snap, r);
	struct hist_bucket hb[HIST_MAX_BUCKETS];
	char x[UNITS_BUF], y[UNITS_BUF], p[256];
	size_t n;

	if (!f || r->per_vcpu)
		return;
	if (f->hist != HIST_NONE) {
		n = hist_gather(r->hist, true, hb, HIST_MAX_BUCKETS);
		if (n > HIST_MAX_BUCKETS)
			n = HIST_MAX_BUCKETS;
		if (n && !hist_total(hb, n))
			n = hist_gather(r->hist, false, hb, HIST_MAX_BUCKETS);
		if (n > HIST_MAX_BUCKETS)
			n = HIST_MAX_BUCKETS;
		if (n)
			strbuf_addf(b, "  %s",
				    hist_format_percentiles(f, hb, n, flags, p,
							    sizeof(p)));
		return;
	}
	if (f->bucket >= 0) {
		struct hist_bucket one = { f->bucket_lo, f->bucket_hi, 0 };

		strbuf_addf(b, "  %s",
			    hist_format_range(f, &one, flags, p, sizeof(p)));
		return;
	}
	if (f->unit == UNIT_NONE)
		return;
	if (f->unit == UNIT_BOOLEAN) {
		/* summed over vCPUs (or VMs): how many say yes */
		if (r->total > 1)
			strbuf_addf(b, "  yes on %llu",
				    (unsigned long long)r->total);
		else
			strbuf_addf(b, "  %s", r->total ? "yes" : "no");
		return;
	}
	strbuf_addf(b, "  %s  %s%s",
		    units_format(f, (double)r->total, UNITS_COUNT | flags, x,
				 sizeof(x)),
		    r->delta < 0 ? "-" : "+",
		    units_format(f,
				 (double)(r->delta < 0 ? -r->delta : r->delta),
				 UNITS_COUNT | flags, y, sizeof(y)));
	if (units_has_share(f) && snap->interval_ns)
		strbuf_addf(b, "  %.1f%%",
			    units_share_pct(f, r->delta, snap->interval_ns));
}

void ui_text_batch(struct strbuf *b, const struct snapshot *snap, bool units,
		   unsigned int flags)
{
	struct strbuf name;

	strbuf_init(&name);
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *r = &snap->rows[i];
		char t[32], d[32];

		strbuf_reset(&name);
		ui_text_escape_name(&name, r->name);
		if (!r->valid) {
			/* kvm_stat never prints a value it could not read:
			 * neither does the default, and never as 0 */
			if (units)
				strbuf_addf(b, "%-42s%10s%10s\n", name.s, "-",
					    "-");
			continue;
		}
		/* kvm_stat's columns; a number too wide for its column
		 * still gets a blank before it */
		snprintf(t, sizeof(t), "%10llu", (unsigned long long)r->total);
		snprintf(d, sizeof(d), "%10lld", (long long)r->delta);
		strbuf_addf(b, "%-42s%s%s%s%s", name.s, t[0] == ' ' ? "" : " ",
			    t, d[0] == ' ' ? "" : " ", d);
		if (units)
			ui_text_batch_extra(b, snap, r, flags);
		strbuf_add(b, "\n");
	}
	strbuf_free(&name);
}

void ui_text_log_header(struct strbuf *b, char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ui_text_escape_name(b, names[i]);
		strbuf_add(b, " ");
	}
	strbuf_add(b, "\n");
}

void ui_text_log_line(struct strbuf *b, const struct timespec *wall,
		      const int64_t *deltas, size_t n)
{
	char ts[32];

	ui_text_timestamp(ts, sizeof(ts), wall);
	strbuf_add(b, ts);
	for (size_t i = 0; i < n; i++)
		strbuf_add_int(b, ' ', 9, (long long)deltas[i]);
	strbuf_add(b, "\n");
}

void ui_text_csv_header(struct strbuf *b, char *const *names, size_t n)
{
	strbuf_add(b, "timestamp");
	for (size_t i = 0; i < n; i++) {
		strbuf_add(b, ",");
		ui_text_escape_name(b, names[i]);
	}
	strbuf_add(b, "\n");
}

void ui_text_csv_line(struct strbuf *b, const struct timespec *wall,
		      const int64_t *deltas, size_t n)
{
	char ts[32];

	ui_text_timestamp(ts, sizeof(ts), wall);
	strbuf_add(b, ts);
	for (size_t i = 0; i < n; i++)
		strbuf_add_int(b, ',', 0, (long long)deltas[i]);
	strbuf_add(b, "\n");
}

bool ui_text_all_zero(const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nrows; i++)
		if (snap->rows[i].valid && snap->rows[i].delta)
			return false;
	return true;
}

void ui_text_scaled(char *buf, size_t len, double v, int width)
{
	static const char units[] = " kMGTPE";
	int u = 0;

	snprintf(buf, len, "%.0f", v);
	while ((int)strlen(buf) > width && v >= 1000 && u < 6) {
		v /= 1000;
		u++;
		snprintf(buf, len, "%.*f%c", v < 9.95 ? 1 : 0, v, units[u]);
	}
}
