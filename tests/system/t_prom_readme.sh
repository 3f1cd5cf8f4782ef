#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# README's example queries (the block under "JSON and Prometheus" that
# names this test) give the right numbers on the exporter's real output
# (issue 32): fake VMs (fakevm.py, binary stats behind a fake /proc) whose
# vCPU threads make fake kvm_userspace_exit events (a fake tracefs over
# task:task_rename, the reason their process's oom_score_adj) make known
# exits between two scrapes of kvmstat --listen --per-vcpu. Every series
# of the second scrape goes to promtool as ten minutes of growth at the
# rate the two scrapes show (the first scrape's value at minute 0, the
# second's at 1, and so on), and each query is evaluated there by
# `promtool test rules` against the numbers the exits make: exits/s by
# reason, per VM, per vCPU, per guest through kvm_vm_info, and the median
# halt wait of the VMs' summed histograms.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
need_tracepoints
for t in curl promtool python3; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
source tests/system/exporter_lib.sh

# the queries, in README's order
mapfile -t Q < <(awk '
	/t_prom_readme/ { on = 1; next }
	on && /^    / { sub(/^    /, ""); print; got = 1; next }
	on && got { exit }' README.md)
[ "${#Q[@]}" = 5 ] || fail "README's tested queries: ${#Q[@]}, want 5: ${Q[*]}"

fake_tracefs "$TMP/tracefs"
fake_proc
fakevm alpha 2 0
fakevm beta 1 0
# shellcheck disable=SC2154 # fakevm sets them (printf -v)
A=$alpha_VM B=$beta_VM

PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
# (no debugfs: the fake VMs are found in the fake /proc)
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs KVMSTAT_DEBUGFS_ROOT=$TMP/no-debugfs \
	start_kvmstat k --listen "127.0.0.1:$PORT" -s 0.2 --per-vcpu
wait_serving k "$URL"
sleep 0.5
scrape "$URL" >"$TMP/a.prom"

# the exits between the scrapes: alpha's vCPU 0 60 HLT exits to user
# space and 60 halts, its vCPU 1 30 and 120, beta's vCPU 0 120 IO exits
# and 30 halts; 10 halts of alpha's waited 4-7 ns (bucket 3)
vmcmd alpha oom 5	# HLT
vmcmd alpha rename 0 60
vmcmd alpha rename 1 30
vmcmd beta oom 2	# IO
vmcmd beta rename 0 120
vmcmd alpha add 0 halt_exits 60
vmcmd alpha add 1 halt_exits 120
vmcmd beta add 0 halt_exits 30
vmcmd alpha hist 0 3 10
for _ in $(seq 1 50); do
	scrape "$URL" >"$TMP/b.prom"
	[ "$(metric "$(cat "$TMP/b.prom")" "kvm_userspace_exit_total{pid=\"$B\",guest=\"beta\",reason=\"IO\"}")" = 120 ] &&
		[ "$(metric "$(cat "$TMP/b.prom")" "kvm_halt_exits_total{pid=\"$B\",guest=\"beta\"}")" = 30 ] && break
	sleep 0.2
done
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"

# the promtool test: every series of the second scrape, its values at
# minutes 0..10 growing by its growth between the scrapes; at 10m a
# [5m] rate is that growth a minute (no extrapolation: samples at both
# ends of the range)
python3 - "$TMP/a.prom" "$TMP/b.prom" >"$TMP/series.yml" <<-'EOF' || fail "cannot build the series"
	import re, sys
	def read(path):
	    d = {}
	    for line in open(path):
	        if line.startswith("#") or not line.strip():
	            continue
	        name, value = line.rsplit(" ", 1)
	        d[name] = float(value)
	    return d
	a, b = read(sys.argv[1]), read(sys.argv[2])
	for s, v in b.items():
	    v0 = a.get(s, 0.0)
	    print("      - series: '%s'" % s.replace("\\", "\\\\").replace("'", "''"))
	    print("        values: '%s'" % " ".join(repr(v0 + i * (v - v0)) for i in range(11)))
EOF
want() {	# want INDEX LABELS VALUE: an expected sample of query INDEX
	W[$1]="${W[$1]:-}          - labels: '$2'
            value: $3
"
}
declare -a W
want 0 '{reason="HLT"}' 1.5
want 0 '{reason="IO"}' 2
want 1 "{pid=\"$A\",guest=\"alpha\"}" 3
want 1 "{pid=\"$B\",guest=\"beta\"}" 0.5
want 2 "{pid=\"$A\",vcpu=\"0\"}" 1
want 2 "{pid=\"$A\",vcpu=\"1\"}" 2
want 2 "{pid=\"$B\",vcpu=\"0\"}" 0.5
want 3 '{guest="alpha",vmm="qemu"}' 3
want 3 '{guest="beta",vmm="qemu"}' 0.5
# 10 of alpha's halts in (3, 7] ns: the median halfway, 5 ns
want 4 '{}' 5e-09
{
	echo "tests:"
	echo "  - interval: 1m"
	echo "    input_series:"
	cat "$TMP/series.yml"
	echo "    promql_expr_test:"
	for i in "${!Q[@]}"; do
		echo "      - expr: '${Q[$i]//\'/\'\'}'"
		echo "        eval_time: 10m"
		echo "        exp_samples:"
		printf '%s' "${W[$i]}"
	done
} >"$TMP/readme.test.yml"
echo "rule_files: []" | cat - "$TMP/readme.test.yml" >"$TMP/readme.yml"
promtool test rules "$TMP/readme.yml" >"$TMP/promtool.out" 2>&1 ||
	fail "README's queries on the exporter's output: $(cat "$TMP/promtool.out")"
echo "ok: README's ${#Q[@]} queries give the exits' numbers on the exporter's output ($(grep -c "series:" "$TMP/series.yml") series)"
vmquit alpha
vmquit beta
