#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exit latency's mechanism where kvm_exit and kvm_entry never fire (issue
# 14): a fake tracefs names the real tracepoint task:task_rename kvm_exit,
# with the real kvm_exit format laid over it (exit_reason is the renamer's
# oom_score_adj, isa the first bytes of its old name), and
# oom:oom_score_adj_update kvm_entry. tests/fakes/tpgap renames itself
# (an exit), busy-waits a known gap, then writes its oom_score_adj (the
# entry): 500 exits of reason 12 (VMX HLT) 20 µs long and 300 of 30
# (IO_INSTRUCTION) 200 µs long, in two rounds of 250 and 150 (so the
# thread also goes back to a histogram other than its last). kvmstat
# --latency must count exactly 500 and 300 for that process, under the
# kernel's names, with their p50 in the log2 buckets that hold the gaps:
# [16.4, 32.8) µs and [131, 262) µs.
source tests/system/lib.sh
need_tracepoints
source tests/system/latency_lib.sh
latency_tracefs "$TMP/tracefs"
start_tpgap 12:20:250 30:200:150 12:20:250 30:200:150
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --json -1 -s 2.5 --latency -f '^kvm_exit$'
sleep 0.8
go_tpgap
wait "$k_PID" || fail "kvmstat: status $?: $(cat "$TMP/k.err")"
jq -e '.latency.exits_timed' "$TMP/k.out" >/dev/null || fail "exits not timed: $(jq -c .latency "$TMP/k.out")"
for want in HLT:500:32768 IO_INSTRUCTION:300:262144; do
	IFS=: read -r reason n p50 <<<"$want"
	h=$(jq -c --argjson p "$TP" --arg r "$reason" '.latency.histograms[] |
		select(.kind == "exit" and .pid == $p and .tid == 0 and .reason == $r)' "$TMP/k.out")
	[ -n "$h" ] || fail "no exit-latency histogram of $reason: $(jq -c .latency "$TMP/k.out")"
	[ "$(jq .count <<<"$h")" = "$n" ] || fail "$reason: count, want $n: $h"
	[ "$(jq .p50_ns <<<"$h")" = "$p50" ] || fail "$reason: p50 bound, want $p50 ns: $h"
	[ "$(jq '[.buckets[].count] | add' <<<"$h")" = "$n" ] || fail "$reason: buckets do not sum to $n: $h"
	echo "ok: $reason: $(jq -c '{count, min_ns, p50_ns, p90_ns, max_ns}' <<<"$h")"
done
others=$(jq --argjson p "$TP" '[.latency.histograms[] | select(.pid == $p and .tid == 0)] | length' "$TMP/k.out")
[ "$others" = 2 ] || fail "reasons other than HLT and IO_INSTRUCTION: $(jq -c .latency "$TMP/k.out")"
# without CAP_BPF and CAP_SYS_ADMIN: one line saying why, status 1
if command -v setpriv >/dev/null; then
	KVMSTAT_TRACEFS_ROOT=$TMP/tracefs setpriv --bounding-set=-bpf,-sys_admin \
		--inh-caps=-bpf,-sys_admin -- "$KVMSTAT" -t -1 -s 0.1 --latency -f '^kvm_exit$' >"$TMP/nc.out" 2>"$TMP/nc.err"
	rc=$?
	[ $rc = 1 ] || fail "without CAP_BPF: status $rc, want 1: $(cat "$TMP/nc.err")"
	[ "$(wc -l <"$TMP/nc.err")" = 1 ] && grep -q '^kvmstat: --latency: cannot load its BPF programs.*needs root' "$TMP/nc.err" ||
		fail "without CAP_BPF: $(cat "$TMP/nc.err")"
	echo "ok: without CAP_BPF: $(cat "$TMP/nc.err")"
fi
