#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The exporter on arm64 (issue 33): a named test guest keeping its stats
# fds makes known HVC calls; kvmstat --listen -p VM --per-vcpu must serve
# its kvm_exit by exception class as reason labels, kvm_hvc_arm64, the
# binary stats' hvc_exit_stat, per VM and per vCPU, exactly, and the VM's
# info series; the exposition is kept for promtool (make check runs it
# on the x86 side: tests/kvmcheck.sh).
source tests/arm64/lib.sh
need_arm64
# free_port, metric (its scrape is curl's: fetch, below, is arm64's)
source tests/system/exporter_lib.sh
need_statsfd_guest

A=300 B=700
start_guest g -N arm1 -s -v 2 -n $A,$B -k hvc -t 120
VM=${g_VMS%% *}
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
start_kvmstat k --listen "127.0.0.1:$PORT" -s 0.5 -p "$VM" --per-vcpu
for _ in $(seq 1 600); do
	http_get "$URL" >/dev/null && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
	sleep 0.1
done
wait_polling "$k_PID"
go_guest g
wait_done g 2
l="pid=\"$VM\",guest=\"arm1\""
for _ in $(seq 1 100); do
	text=$(fetch "$URL")
	[ "$(metric "$text" "kvm_hvc_arm64_total{$l}")" = $((A + B)) ] && break
	sleep 0.2
done
want "kvm_hvc_arm64_total{$l}" "$(metric "$text" "kvm_hvc_arm64_total{$l}")" $((A + B))
want "kvm_exit_total{$l,reason=\"HVC64\"}" "$(metric "$text" "kvm_exit_total{$l,reason=\"HVC64\"}")" $((A + B))
want "kvm_hvc_exit_stat_total{$l}" "$(metric "$text" "kvm_hvc_exit_stat_total{$l}")" $((A + B))
v0=$(grep '^kvm_vcpu_exit_total{' <<<"$text" | grep 'HVC64' | grep 'vcpu="0"' | awk '{ print $2 }')
want "vCPU 0's HVC64 series" "$v0" $A
v1=$(grep '^kvm_vcpu_exit_total{' <<<"$text" | grep 'HVC64' | grep 'vcpu="1"' | awk '{ print $2 }')
want "vCPU 1's HVC64 series" "$v1" $B
v1=$(grep '^kvm_vcpu_hvc_exit_stat_total{' <<<"$text" | grep 'vcpu="1"' | awk '{ print $2 }')
want "vCPU 1's hvc_exit_stat series" "$v1" $B
grep -q "^kvm_vm_info{.*pid=\"$VM\".*} 1$" <<<"$text" || fail "no kvm_vm_info for $VM: $(grep kvm_vm_info <<<"$text")"
echo "ok: kvm_exit{reason=\"HVC64\"}, kvm_hvc_arm64 and hvc_exit_stat $((A + B)); per vCPU $A and $B"
# for promtool, after the host (the x86 side has it)
[ -z "${KVMSTAT_ARM64_KEEP:-}" ] || printf '%s\n' "$text" >"$KVMSTAT_ARM64_KEEP/metrics.txt"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat --listen exited $STATUS: $(cat "$TMP/k.err")"
echo ok
