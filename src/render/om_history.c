// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gathers expositions into one OpenMetrics text with timestamps: a
 * "# HELP/# TYPE/# UNIT NAME" line opens family NAME, the sample lines
 * after it are its own; each sample line gets " SECONDS.MMM", the
 * refresh's wall clock (OpenMetrics timestamps are seconds), each
 * exposition's later than the one before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_history.h"
#include "util.h"

void om_history_init(struct om_history *h)
{
	memset(h, 0, sizeof(*h));
	hashtab_init(&h->index);
}

void om_history_free(struct om_history *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].name);
		strbuf_free(&h->v[i].meta);
		strbuf_free(&h->v[i].lines);
	}
	free(h->v);
	hashtab_free(&h->index);
	memset(h, 0, sizeof(*h));
}

/* The family name (n bytes), added when new; *fresh says so. */
static struct om_history_family *
om_history_family(struct om_history *h, const char *name, size_t n, bool *fresh)
{
	char *key = xasprintf("%.*s", (int)n, name);
	uint32_t hash = hashtab_hash_str(key);
	struct hashtab_iter it = hashtab_iter(&h->index, hash);
	struct om_history_family *f;
	long i;

	while ((i = hashtab_next(&h->index, &it)) >= 0)
		if (!strcmp(h->v[i].name, key)) {
			free(key);
			*fresh = false;
			return &h->v[i];
		}
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	f = &h->v[h->n];
	f->name = key;
	strbuf_init(&f->meta);
	strbuf_init(&f->lines);
	hashtab_add(&h->index, hash, h->n++);
	*fresh = true;
	return f;
}

void om_history_add(struct om_history *h, const char *text, size_t len,
		    const struct timespec *ts)
{
	struct om_history_family *fam = NULL;
	const char *end = text + len;
	bool fresh = false;
	char stamp[48];
	long long ms = (long long)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;

	if (h->last_ms && ms <= h->last_ms)
		ms = h->last_ms + 1;
	h->last_ms = ms;
	snprintf(stamp, sizeof(stamp), " %lld.%03lld\n", ms / 1000, ms % 1000);
	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = xasprintf("%.*s", (int)n, p);

		p += n + (nl != NULL);
		if (!strncmp(line, "# EOF", 5)) {
			free(line);
			continue;
		}
		if (line[0] == '#') {
			/* "# KIND NAME ...": its family */
			const char *name = line + 2 + strcspn(line + 2, " ");
			size_t nn;
			struct om_history_family *next;
			bool is_new;

			name += strspn(name, " ");
			nn = strcspn(name, " ");
			next = om_history_family(h, name, nn, &is_new);
			if (next != fam)
				fresh = is_new;
			fam = next;
			if (fresh) {
				strbuf_add(&fam->meta, line);
				strbuf_add(&fam->meta, "\n");
			}
		} else if (fam && line[0]) {
			strbuf_add(&fam->lines, line);
			strbuf_add(&fam->lines, stamp);
		}
		free(line);
	}
}

void om_history_write(const struct om_history *h, struct strbuf *out)
{
	for (size_t i = 0; i < h->n; i++) {
		strbuf_add(out, h->v[i].meta.s ? h->v[i].meta.s : "");
		strbuf_add(out, h->v[i].lines.s ? h->v[i].lines.s : "");
	}
	strbuf_add(out, "# EOF\n");
}
