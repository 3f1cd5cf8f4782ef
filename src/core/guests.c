// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest-name cache: a pid-sorted array, looked up by binary search,
 * filled on first use. Names stay for the run: a pid is not reused while
 * kvmstat watches it, and a VM that went away costs a few bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "guests.h"
#include "util.h"
#include "vm.h"

void guests_init(struct guests *g, const char *proc_root)
{
	memset(g, 0, sizeof(*g));
	g->proc_root = proc_root;
}

void guests_free(struct guests *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].name);
	free(g->v);
	memset(g, 0, sizeof(*g));
}

/* Index of pid, or where it would go (*found says which). */
static size_t guests_find(const struct guests *g, pid_t pid, bool *found)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < g->n && g->v[lo].pid == pid;
	return lo;
}

/* Puts name (taken over) at pid's place, replacing what was there. */
static struct guest_name *guests_put(struct guests *g, pid_t pid, char *name)
{
	bool found;
	size_t i = guests_find(g, pid, &found);

	if (found) {
		free(g->v[i].name);
		g->v[i].name = name;
		return &g->v[i];
	}
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->v = xrealloc(g->v, g->cap * sizeof(*g->v));
	}
	memmove(&g->v[i + 1], &g->v[i], (g->n - i) * sizeof(*g->v));
	g->v[i] = (struct guest_name){ pid, name };
	g->n++;
	return &g->v[i];
}

const char *guests_name(struct guests *g, pid_t pid)
{
	bool found;
	size_t i = guests_find(g, pid, &found);

	if (found)
		return g->v[i].name;
	return guests_put(g, pid,
			  g->proc_root ? vm_guest_name(g->proc_root, pid) : NULL)
		->name;
}

void guests_set(struct guests *g, pid_t pid, const char *name)
{
	guests_put(g, pid, name ? xstrdup(name) : NULL);
}
