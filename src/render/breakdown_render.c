// SPDX-License-Identifier: GPL-2.0-only
/*
 * Breakdowns as text, JSON and metrics (breakdown_render.h), from the
 * snapshot's keyed tables. Times are nanoseconds in the rows' log2
 * histograms (hist.h's model, as exit latency's); text writes them with
 * units, metrics in seconds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown_render.h"
#include "hist.h"
#include "openmetrics.h"
#include "units.h"
#include "util.h"

/* Per kind: the key's title, its label, its metric family and its
 * tracepoint where a table does not name it (a replay of an older
 * recording). */
static const struct {
	const char *kind, *title, *label, *metric, *event;
} br_kinds[] = {
	{ "ioport", "IO Port Access", "port", "kvm_ioport_exits", "kvm_pio" },
	{ "mmio", "MMIO Access", "address", "kvm_mmio_exits", "kvm_mmio" },
	{ "msr", "MSR Access", "msr", "kvm_msr_exits", "kvm_msr" },
	{ "hypercall", "Hypercall", "nr", "kvm_hypercall_exits",
	  "kvm_hypercall" },
};

static int br_kind(const char *kind)
{
	for (size_t i = 0; i < ARRAY_SIZE(br_kinds); i++)
		if (!strcmp(kind, br_kinds[i].kind))
			return (int)i;
	return 0;
}

const struct snap_brk_table *breakdown_render_find(const struct snapshot *snap,
						   const char *kind, pid_t pid,
						   int vcpu)
{
	const struct snap_breakdown *bd = snap->breakdown;

	for (size_t i = 0; bd && i < bd->ntables; i++) {
		const struct snap_brk_table *t = &bd->tables[i];

		if (t->pid == pid && t->vcpu == vcpu && !strcmp(t->kind, kind))
			return t;
	}
	return NULL;
}

/* A row's key as perf kvm stat writes it: "0x70:POUT", "0xfebd1000:W". */
static const char *br_key(const struct snap_brk_table *t,
			  const struct snap_brk_row *r, char *buf, size_t len)
{
	const char *d = "";

	if (r->other) {
		snprintf(buf, len, "other");
		return buf;
	}
	if (r->dir && !strcmp(t->kind, "ioport"))
		d = !strcmp(r->dir, "out") ? ":POUT" : ":PIN";
	else if (r->dir)
		d = !strcmp(r->dir, "write") ? ":W" : ":R";
	snprintf(buf, len, "%#" PRIx64 "%s", r->key, d);
	if (!r->key)
		snprintf(buf, len, "0x0%s", d);
	return buf;
}

/* The row's histogram as the model's buckets; how many (0: untimed). */
static size_t br_buckets(const struct snap_brk_row *r, struct hist_bucket *out)
{
	for (size_t i = 0; r->b && i < r->nbuckets; i++) {
		hist_bucket_range(HIST_LOG2, 1, i, r->nbuckets, &out[i].lo,
				  &out[i].hi);
		out[i].count = r->b[i];
	}
	return r->b && r->tcount ? r->nbuckets : 0;
}

static const char *br_ns(double ns, unsigned int units, char *buf, size_t len)
{
	return units_format_seconds(ns / 1e9, units, buf, len);
}

/* The bucket bound of a percentile: "< 8.19 µs", ">= 275 s", "-". */
static const char *br_pct(const struct hist_bucket *bk, size_t n,
			  unsigned int permille, unsigned int units, char *buf,
			  size_t len)
{
	long i = n ? hist_quantile(bk, n, permille) : -1;
	char t[32];

	if (i < 0)
		return "-";
	if (bk[i].hi == UINT64_MAX)
		snprintf(buf, len, ">= %s",
			 br_ns((double)bk[i].lo, units, t, 32));
	else
		snprintf(buf, len, "< %s",
			 br_ns((double)bk[i].hi, units, t, 32));
	return buf;
}

void breakdown_render_table(struct strbuf *b, const struct snap_brk_table *t,
			    bool timed, unsigned int units)
{
	uint64_t time = 0;

	for (size_t i = 0; timed && i < t->nrows; i++)
		time += t->rows[i].sum;
	strbuf_addf(b, " %-22s %-20s %10s %9s %9s",
		    br_kinds[br_kind(t->kind)].title, "Name", "Samples",
		    "Samples%", "Rate/s");
	if (timed)
		strbuf_addf(b, " %6s %10s %10s %10s %11s %11s", "Time%", "Min",
			    "Avg", "Max", "p50", "p99");
	strbuf_add(b, "\n");
	for (size_t i = 0; i < t->nrows; i++) {
		const struct snap_brk_row *r = &t->rows[i];
		struct hist_bucket bk[64];
		size_t nb = br_buckets(r, bk);
		char key[48], mn[32], av[32], mx[32], p50[32], p99[32];

		strbuf_addf(b, " %-22s %-20.20s %10" PRIu64 " %8.2f%% %9.0f",
			    br_key(t, r, key, sizeof(key)),
			    r->name ? r->name : "", r->count,
			    t->total ? 100.0 * (double)r->count /
					       (double)t->total :
				       0.0,
			    r->rate);
		if (timed && r->tcount) {
			const char *s[5] = {
				br_ns((double)r->min, units, mn, sizeof(mn)),
				br_ns((double)r->sum / (double)r->tcount, units,
				      av, sizeof(av)),
				br_ns((double)r->max, units, mx, sizeof(mx)),
				br_pct(bk, nb, HIST_P50, units, p50,
				       sizeof(p50)),
				br_pct(bk, nb, HIST_P99, units, p99,
				       sizeof(p99)),
			};
			char j[5][40];

			for (int k = 0; k < 5; k++)
				s[k] = units_rjust(s[k], k < 3 ? 10 : 11, j[k],
						   sizeof(j[k]));
			strbuf_addf(b, " %5.1f%% %10s %10s %10s %11s %11s",
				    time ? 100.0 * (double)r->sum /
						    (double)time :
					   0.0,
				    s[0], s[1], s[2], s[3], s[4]);
		} else if (timed)
			strbuf_addf(b, " %6s %10s %10s %10s %11s %11s", "-",
				    "-", "-", "-", "-", "-");
		strbuf_add(b, "\n");
	}
	if (!t->nrows)
		strbuf_add(b, " (none yet)\n");
}

void breakdown_render_text(struct strbuf *b, const struct snapshot *snap,
			   const char *kind, unsigned int units)
{
	const struct snap_breakdown *bd = snap->breakdown;

	if (bd->error) {
		strbuf_addf(b, "breakdown is off: %s\n", bd->error);
		return;
	}
	for (size_t k = 0; k < ARRAY_SIZE(br_kinds); k++) {
		const struct snap_brk_table *t;

		if (!(bd->kinds & 1u << k) ||
		    (kind && strcmp(kind, br_kinds[k].kind)))
			continue;
		t = breakdown_render_find(snap, br_kinds[k].kind, 0,
					  SAMPLE_ALL_VCPUS);
		strbuf_addf(b,
			    "\n%s exits by key (top %zu, the rest as other)\n",
			    br_kinds[k].kind, bd->top);
		if (t)
			breakdown_render_table(b, t, bd->timed, units);
		else
			strbuf_addf(b, " %-22s\n (none yet)\n",
				    br_kinds[k].title);
	}
}

static json_t *br_u64(uint64_t v)
{
	return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

/* A key in hex, lower case, with 0x ("0x0" for 0). */
static void br_hex(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%" PRIx64, v);
}

static json_t *br_json_row(const struct snap_brk_row *r)
{
	json_t *o = json_object();
	struct hist_bucket bk[64];
	size_t nb = br_buckets(r, bk);
	char key[32];

	br_hex(r->key, key, sizeof(key));
	json_object_set_new(o, "key",
			    r->other ? json_string("other") : json_string(key));
	json_object_set_new(o, "name",
			    r->name ? json_string(r->name) : json_null());
	json_object_set_new(o, "direction",
			    r->dir ? json_string(r->dir) : json_null());
	json_object_set_new(o, "count", br_u64(r->count));
	json_object_set_new(o, "delta", json_integer(r->delta));
	json_object_set_new(o, "rate", json_real(r->rate));
	if (!nb)
		return o;
	json_object_set_new(o, "timed", br_u64(r->tcount));
	json_object_set_new(o, "total_ns", br_u64(r->sum));
	json_object_set_new(o, "min_ns", br_u64(r->min));
	json_object_set_new(o, "max_ns", br_u64(r->max));
	for (int p = 0; p < 2; p++) {
		long i = hist_quantile(bk, nb, p ? HIST_P99 : HIST_P50);

		json_object_set_new(o, p ? "p99_ns" : "p50_ns",
				    i < 0 || bk[i].hi == UINT64_MAX ?
					    json_null() :
					    br_u64(bk[i].hi));
	}
	return o;
}

json_t *breakdown_render_json(const struct snapshot *snap, pid_t pid, int vcpu)
{
	const struct snap_breakdown *bd = snap->breakdown;
	json_t *o = NULL;

	for (size_t i = 0; bd && i < bd->ntables; i++) {
		const struct snap_brk_table *t = &bd->tables[i];
		json_t *a;

		if (t->pid != pid || t->vcpu != vcpu)
			continue;
		if (!o)
			o = json_object();
		a = json_array();
		for (size_t j = 0; j < t->nrows; j++)
			json_array_append_new(a, br_json_row(&t->rows[j]));
		json_object_set_new(o, t->kind, a);
	}
	return o;
}

/* The events and child events whose exits a kind breaks down: its
 * tracepoint, and kvm_exit's and kvm_userspace_exit's reasons for it
 * (VMX's and SVM's spellings, kvm_stat's and the kernel's; arm64's
 * exception classes: a data abort from the guest, an HVC). */
static const struct {
	const char *kind, *event;
} br_events[] = {
	{ "ioport", "kvm_pio" },
	{ "ioport", "kvm_exit(IO_INSTRUCTION)" },
	{ "ioport", "kvm_exit(IOIO)" },
	{ "ioport", "kvm_exit(io)" },
	{ "ioport", "kvm_userspace_exit(IO)" },
	{ "mmio", "kvm_mmio" },
	{ "mmio", "kvm_exit(EPT_MISCONFIG)" },
	{ "mmio", "kvm_exit(EPT_VIOLATION)" },
	{ "mmio", "kvm_exit(NPF)" },
	{ "mmio", "kvm_exit(npf)" },
	{ "mmio", "kvm_userspace_exit(MMIO)" },
	{ "mmio", "kvm_exit(DABT_LOW)" },
	{ "msr", "kvm_msr" },
	{ "msr", "kvm_exit(MSR_READ)" },
	{ "msr", "kvm_exit(MSR_WRITE)" },
	{ "msr", "kvm_exit(MSR)" },
	{ "msr", "kvm_exit(msr)" },
	{ "msr", "kvm_userspace_exit(X86_RDMSR)" },
	{ "msr", "kvm_userspace_exit(X86_WRMSR)" },
	{ "hypercall", "kvm_hypercall" },
	{ "hypercall", "kvm_exit(VMCALL)" },
	{ "hypercall", "kvm_exit(VMMCALL)" },
	{ "hypercall", "kvm_exit(hypercall)" },
	{ "hypercall", "kvm_userspace_exit(HYPERCALL)" },
	{ "hypercall", "kvm_hvc_arm64" },
	{ "hypercall", "kvm_exit(HVC64)" },
	{ "hypercall", "kvm_exit(HVC32)" },
};

const char *breakdown_render_kind_of(const char *event, unsigned *bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(br_events); i++)
		if (!strcmp(event, br_events[i].event)) {
			*bit = 1u << br_kind(br_events[i].kind);
			return br_events[i].kind;
		}
	return NULL;
}

json_t *breakdown_render_json_all(const struct snapshot *snap)
{
	const struct snap_breakdown *bd = snap->breakdown;
	json_t *o = breakdown_render_json(snap, 0, SAMPLE_ALL_VCPUS);
	json_t *vms = json_array(), *vm = NULL, *vcpus = NULL;
	pid_t last = 0;

	if (!o)
		o = json_object();
	json_object_set_new(o, "timed", json_boolean(bd->timed));
	json_object_set_new(o, "top", br_u64(bd->top));
	if (bd->error)
		json_object_set_new(o, "error", json_string(bd->error));
	/* tables come by scope: each VM, then its vCPUs */
	for (size_t i = 0; i < bd->ntables; i++) {
		const struct snap_brk_table *t = &bd->tables[i];
		json_t *s;

		if (!t->pid || (i && t->pid == bd->tables[i - 1].pid &&
				t->vcpu == bd->tables[i - 1].vcpu))
			continue;
		s = breakdown_render_json(snap, t->pid, t->vcpu);
		if (t->pid != last) {
			vm = json_object();
			vcpus = json_array();
			json_object_set_new(vm, "pid", json_integer(t->pid));
			json_object_set_new(vm, "vcpus", vcpus);
			json_array_append_new(vms, vm);
			last = t->pid;
		}
		if (t->vcpu == SAMPLE_ALL_VCPUS) {
			json_object_update(vm, s);
			json_decref(s);
			continue;
		}
		json_object_set_new(s, "vcpu", json_integer(t->vcpu));
		json_object_set_new(s, "tid", json_integer(t->tid));
		json_array_append_new(vcpus, s);
	}
	json_object_set_new(o, "vms", vms);
	return o;
}

/* The labels of row r of table t: pid (vcpu), the key, its name, its
 * direction. */
static void br_labels(struct strbuf *b, const struct snap_brk_table *t,
		      const struct snap_brk_row *r, const char *le)
{
	char key[32];

	strbuf_add(b, "{");
	if (t->pid)
		strbuf_addf(b, "pid=\"%d\",", (int)t->pid);
	if (t->vcpu != SAMPLE_ALL_VCPUS)
		strbuf_addf(b, "vcpu=\"%d\",", t->vcpu);
	br_hex(r->key, key, sizeof(key));
	strbuf_addf(b, "%s=\"%s\"", br_kinds[br_kind(t->kind)].label,
		    r->other ? "other" : key);
	/* MMIO addresses' names are the VMM's: escaped */
	if (r->name) {
		strbuf_add(b, ",name=\"");
		openmetrics_escape(b, r->name, true);
		strbuf_add(b, "\"");
	}
	if (r->dir)
		strbuf_addf(b, ",direction=\"%s\"", r->dir);
	if (le)
		strbuf_addf(b, ",le=\"%s\"", le);
	strbuf_add(b, "}");
}

/* Seconds from ns, in OpenMetrics' canonical form. */
static void br_secs(struct strbuf *b, double ns)
{
	char buf[64];

	openmetrics_canonical(ns / 1e9, buf, sizeof(buf));
	strbuf_add(b, buf);
}

/*
 * Whether table t goes out as kind k's series at a level: vcpu, a vCPU's
 * (with --per-vcpu alone, under their own names); else a VM's, or the
 * whole selection's where no VM has a table of the kind (a name holds
 * no aggregate beside its parts: the host's is sum() over the VMs).
 */
static bool br_written(const struct snap_breakdown *bd,
		       const struct snap_brk_table *t, size_t k, bool vcpu,
		       bool vm_tables)
{
	if (strcmp(t->kind, br_kinds[k].kind))
		return false;
	if (vcpu)
		return t->vcpu != SAMPLE_ALL_VCPUS && bd->vcpu_series;
	return t->vcpu == SAMPLE_ALL_VCPUS && (t->pid || !vm_tables);
}

/* Kind k's families at one level (VMs, or vCPUs: kvm_vcpu_...). */
static void br_metrics_level(struct strbuf *b, const struct snap_breakdown *bd,
			     size_t k, bool vcpu, bool vm_tables,
			     bool openmetrics)
{
	const char *base = br_kinds[k].metric, *event = NULL;
	char m[64];
	bool any = false;

	snprintf(m, sizeof(m), "%s%s", vcpu ? "kvm_vcpu_" : "",
		 vcpu ? base + 4 : base);
	/* the tracepoint is the architecture's (kvm_hypercall, or arm64's
	 * kvm_hvc_arm64), named in each table */
	for (size_t i = 0; i < bd->ntables && !event; i++)
		if (br_written(bd, &bd->tables[i], k, vcpu, vm_tables))
			event = bd->tables[i].event ? bd->tables[i].event :
						      br_kinds[k].event;
	if (!event)
		return;
	strbuf_addf(b,
		    "# HELP %s%s Exits by %s and direction, counted "
		    "from %s (the top %zu keys of each %s, the rest as "
		    "other).\n# TYPE %s%s counter\n",
		    m, openmetrics ? "" : "_total", br_kinds[k].label, event,
		    bd->top, vcpu ? "vCPU" : "VM", m,
		    openmetrics ? "" : "_total");
	for (size_t i = 0; i < bd->ntables; i++) {
		const struct snap_brk_table *t = &bd->tables[i];

		if (!br_written(bd, t, k, vcpu, vm_tables))
			continue;
		for (size_t j = 0; j < t->nrows; j++) {
			strbuf_addf(b, "%s_total", m);
			br_labels(b, t, &t->rows[j], NULL);
			strbuf_addf(b, " %" PRIu64 "\n", t->rows[j].count);
			any |= t->rows[j].tcount != 0;
		}
	}
	if (!bd->timed || !any)
		return;
	strbuf_addf(b,
		    "# HELP %s_latency_seconds Time from the exit to "
		    "the vCPU's re-entry, by %s.\n# TYPE "
		    "%s_latency_seconds histogram\n",
		    m, br_kinds[k].label, m);
	if (openmetrics)
		strbuf_addf(b, "# UNIT %s_latency_seconds seconds\n", m);
	for (size_t i = 0; i < bd->ntables; i++) {
		const struct snap_brk_table *t = &bd->tables[i];

		if (!br_written(bd, t, k, vcpu, vm_tables))
			continue;
		for (size_t j = 0; j < t->nrows; j++) {
			const struct snap_brk_row *r = &t->rows[j];
			struct hist_bucket bk[64];
			size_t nb = br_buckets(r, bk);
			uint64_t cum = 0;
			char le[64];

			for (size_t x = 0; x < nb; x++) {
				cum += bk[x].count;
				if (bk[x].hi == UINT64_MAX)
					snprintf(le, sizeof(le), "+Inf");
				else
					openmetrics_canonical((double)(bk[x].hi -
								       1) /
								      1e9,
							      le, sizeof(le));
				strbuf_addf(b, "%s_latency_seconds_bucket", m);
				br_labels(b, t, r, le);
				strbuf_addf(b, " %" PRIu64 "\n", cum);
			}
			if (!nb)
				continue;
			strbuf_addf(b, "%s_latency_seconds_count", m);
			br_labels(b, t, r, NULL);
			strbuf_addf(b, " %" PRIu64 "\n", r->tcount);
			strbuf_addf(b, "%s_latency_seconds_sum", m);
			br_labels(b, t, r, NULL);
			strbuf_add(b, " ");
			br_secs(b, (double)r->sum);
			strbuf_add(b, "\n");
		}
	}
}

void breakdown_render_metrics(struct strbuf *b, const struct snapshot *snap,
			      bool openmetrics)
{
	const struct snap_breakdown *bd = snap->breakdown;

	if (!bd || bd->error)
		return;
	for (size_t k = 0; k < ARRAY_SIZE(br_kinds); k++) {
		bool vm_tables = false;

		if (!(bd->kinds & 1u << k))
			continue;
		for (size_t i = 0; i < bd->ntables && !vm_tables; i++)
			vm_tables = bd->tables[i].pid &&
				    !strcmp(bd->tables[i].kind,
					    br_kinds[k].kind);
		br_metrics_level(b, bd, k, false, vm_tables, openmetrics);
		br_metrics_level(b, bd, k, true, vm_tables, openmetrics);
	}
}
