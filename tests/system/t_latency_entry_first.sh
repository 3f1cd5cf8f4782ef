#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kvm_entry first where it fires (issue 14): once kvm_entry has fired, it
# ends the time in the VMM, and the KVM_RUN mark loaded beside it (for
# kernels where kvm_entry never fires) leaves at once. On the fake
# tracefs of latency_lib.sh, kvm_userspace_exit is task:task_rename too
# (its reason the renamer's oom_score_adj, 2: IO), and the mark is
# raw_syscalls:sys_enter filtered to ioctl KVM_RUN
# (KVMSTAT_LATENCY_MARK=syscall). tpgap makes 300 exits of 200 µs and
# calls ioctl(KVM_RUN) 50 µs into each: the mark fires mid-gap, kvm_entry
# at its end (and once before the first exit, when tpgap sets the
# reason). Every VMM time must be the whole gap (min at least 200 µs, p50
# in [131, 262) µs), none the 50 µs the mark would make, count exactly
# 300.
source tests/system/lib.sh
need_tracepoints
[ "$(uname -m)" = x86_64 ] || skip "the syscall mark is x86-64 only"
[ -r /sys/kernel/tracing/events/raw_syscalls/sys_enter/id ] || skip "no raw_syscalls:sys_enter"
source tests/system/latency_lib.sh
latency_tracefs "$TMP/tracefs"
u=$TMP/tracefs/events/kvm/kvm_userspace_exit
mkdir -p "$u"
cp "$TMP/tracefs/events/kvm/kvm_exit/id" "$u/id"
printf '%s\n' "name: kvm_userspace_exit" "ID: $(cat "$u/id")" "format:" \
	"	field:unsigned short common_type;	offset:0;	size:2;	signed:0;" \
	"	field:short reason;	offset:44;	size:2;	signed:1;" "" \
	'print fmt: "reason %s", __print_symbolic(REC->reason, { 2, "KVM_EXIT_" "IO" }, { 5, "KVM_EXIT_" "HLT" })' \
	>"$u/format"
start_tpgap 2:200:300:50
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs KVMSTAT_LATENCY_MARK=syscall \
	start_kvmstat k -t --json -1 -s 2.5 --latency -f '^kvm_exit$'
sleep 0.8
go_tpgap
wait "$k_PID" || fail "kvmstat: status $?: $(cat "$TMP/k.err")"
jq -e '.latency.reentry | test("KVM_RUN")' "$TMP/k.out" >/dev/null ||
	fail "mark not the syscall one: $(jq -c '.latency | del(.histograms)' "$TMP/k.out")"
h=$(jq -c --argjson p "$TP" '.latency.histograms[] |
	select(.kind == "vmm" and .pid == $p and .tid == 0 and .reason == "IO")' "$TMP/k.out")
[ -n "$h" ] || fail "no VMM-time histogram of IO: $(jq -c .latency "$TMP/k.out")"
[ "$(jq .count <<<"$h")" = 300 ] || fail "count, want 300: $h"
[ "$(jq .min_ns <<<"$h")" -ge 200000 ] || fail "a VMM time below the 200 µs gap (ended by the mark): $h"
[ "$(jq .p50_ns <<<"$h")" = 262144 ] || fail "p50 bound, want 262144 ns: $h"
echo "ok: ended by kvm_entry: $(jq -c '{count, min_ns, p50_ns, max_ns}' <<<"$h")"
# Then the mark goes: a monitoring run that has seen kvm_entry fire
# detaches it at its next read (the guest stops paying for its hits),
# keeps kvm_entry's. Links by tracepoint, from kvmstat's fdinfo.
links() { grep -h "^tp_name:[[:space:]]*$2\$" /proc/"$1"/fdinfo/* 2>/dev/null | wc -l; }
rm -f "$TMP/go"
start_tpgap 2:200:20
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs KVMSTAT_LATENCY_MARK=syscall \
	start_kvmstat l -t -l -s 0.2 --latency -f '^kvm_exit$'
wait_polling "$l_PID"
[ "$(links "$l_PID" sys_enter)" = 1 ] || fail "no sys_enter link before kvm_entry fired: $(cat "$TMP/l.err")"
go_tpgap
sleep 0.8
[ "$(links "$l_PID" sys_enter)" = 0 ] || fail "the sys_enter mark still attached after kvm_entry fired"
[ "$(links "$l_PID" oom_score_adj_update)" = 1 ] || fail "kvm_entry's link gone too"
kill -0 "$l_PID" || fail "kvmstat -l died: $(cat "$TMP/l.err")"
echo "ok: the mark detached once kvm_entry fired"
