// SPDX-License-Identifier: GPL-2.0-only
/*
 * Batch, log and CSV text: the formats kvm_stat scripts parse. Batch lines
 * are the name in 42 columns then total and delta in 10 each; log lines are
 * a timestamp then each delta in a 9-wide column after a space; CSV is a
 * timestamp then the deltas, comma separated.
 */
#include <stdio.h>
#include <string.h>

#include "ui_text.h"

void ui_text_timestamp(char *buf, size_t len, const struct timespec *wall)
{
	struct tm tm;
	time_t t = wall->tv_sec;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

void ui_text_batch(struct strbuf *b, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nrows; i++) {
		const struct snap_row *r = &snap->rows[i];

		if (r->valid) {
			/* kvm_stat's columns; a number too wide for its
			 * column still gets a blank before it */
			char t[32], d[32];

			snprintf(t, sizeof(t), "%10llu",
				 (unsigned long long)r->total);
			snprintf(d, sizeof(d), "%10lld", (long long)r->delta);
			strbuf_addf(b, "%-42s%s%s%s%s\n", r->name,
				    t[0] == ' ' ? "" : " ", t,
				    d[0] == ' ' ? "" : " ", d);
		} else
			strbuf_addf(b, "%-42s%10s%10s\n", r->name, "-", "-");
	}
}

void ui_text_log_header(struct strbuf *b, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nrows; i++)
		strbuf_addf(b, "%s ", snap->rows[i].name);
	strbuf_add(b, "\n");
}

void ui_text_log_line(struct strbuf *b, const struct snapshot *snap)
{
	char ts[32];

	ui_text_timestamp(ts, sizeof(ts), &snap->wall);
	strbuf_add(b, ts);
	for (size_t i = 0; i < snap->nrows; i++) {
		if (snap->rows[i].valid)
			strbuf_addf(b, " %9lld", (long long)snap->rows[i].delta);
		else
			strbuf_addf(b, " %9s", "-");
	}
	strbuf_add(b, "\n");
}

void ui_text_csv_header(struct strbuf *b, const struct snapshot *snap)
{
	strbuf_add(b, "timestamp");
	for (size_t i = 0; i < snap->nrows; i++)
		strbuf_addf(b, ",%s", snap->rows[i].name);
	strbuf_add(b, "\n");
}

void ui_text_csv_line(struct strbuf *b, const struct snapshot *snap)
{
	char ts[32];

	ui_text_timestamp(ts, sizeof(ts), &snap->wall);
	strbuf_add(b, ts);
	for (size_t i = 0; i < snap->nrows; i++) {
		if (snap->rows[i].valid)
			strbuf_addf(b, ",%lld", (long long)snap->rows[i].delta);
		else
			strbuf_add(b, ",");
	}
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
