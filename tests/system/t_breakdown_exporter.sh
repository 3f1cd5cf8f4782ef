#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Breakdowns in the exporter (issue 23), on breakdown_lib.sh's fake
# tracefs (plus lib.sh's kvm_userspace_exit, so --latency has an exit to
# time): two fake VMs with different ports; kvmstat --listen --breakdown
# all --latency must serve kvm_ioport_exits_total{pid,port,name,direction}
# with exact counts per VM (hex keys lower case with 0x), no vcpu label
# without --per-vcpu, kvm_msr_exits_total{msr="0x6e0",name="TSC_DEADLINE",
# direction="write"}, kvm_hypercall_exits_total{nr}, and the time to
# re-entry as kvm_ioport_exits_latency_seconds histograms whose _count is
# exact (the hits followed by an entry of their thread) and whose median
# bucket holds tpkeys's 70 µs gap; promtool must
# pass both formats.
source tests/system/lib.sh
need_tracepoints
for t in curl jq promtool; do
	command -v $t >/dev/null || skip "$t missing"
done
source tests/system/exporter_lib.sh
source tests/system/breakdown_lib.sh
breakdown_tracefs "$TMP/tracefs"
fake_tracefs "$TMP/tracefs"
start_tpkeys a 0:ioport:0x70:1:300:70 1:ioport:0x70:1:100 1:msr:0x6e0:1:250 0:hc:0x77777:0:9
start_tpkeys b 0:ioport:0x3f8:1:123
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --listen "127.0.0.1:$PORT" -s 0.5 \
	--breakdown all --latency -f '^kvm_entry$'
wait_serving k "$URL"
# and with --per-vcpu: each vCPU's tables under names of their own
PORT2=$(free_port)
while [ "$PORT2" = "$PORT" ]; do PORT2=$(free_port); done
URL2="http://127.0.0.1:$PORT2/metrics"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat v -t --listen "127.0.0.1:$PORT2" -s 0.5 \
	--breakdown ioport --per-vcpu -f '^kvm_entry$'
wait_serving v "$URL2"
go_tpkeys a
go_tpkeys b
sa="pid=\"$a_PID\",port=\"0x70\",name=\"CMOS_INDEX\",direction=\"out\""
for _ in $(seq 1 50); do
	text=$(scrape "$URL")
	[ "$(metric "$text" "kvm_ioport_exits_total{$sa}")" = 400 ] && break
	sleep 0.2
done
check() { [ "$(metric "$text" "$1")" = "$2" ] || fail "$1: '$(metric "$text" "$1")', want $2: $(grep -F "pid=\"$a_PID\"" <<<"$text" | head -20)"; }
check "kvm_ioport_exits_total{$sa}" 400
check "kvm_ioport_exits_total{pid=\"$b_PID\",port=\"0x3f8\",name=\"COM1\",direction=\"out\"}" 123
check "kvm_msr_exits_total{pid=\"$a_PID\",msr=\"0x6e0\",name=\"TSC_DEADLINE\",direction=\"write\"}" 250
check "kvm_hypercall_exits_total{pid=\"$a_PID\",nr=\"0x77777\"}" 9
grep -q 'vcpu=' <<<"$text" && fail "vcpu labels without --per-vcpu: $(grep -m3 vcpu= <<<"$text")"
# the whole selection's tables are the VMs' sum: not beside them
bad=$(grep -E '^kvm_(ioport|mmio|msr|hypercall)_exits[a-z_]*\{(port|address|msr|nr)=' <<<"$text" | head -3)
[ -z "$bad" ] || fail "the whole selection's series beside the VMs': $bad"
echo "ok: counters exact per VM and key, no vcpu label, no whole-selection series"
sv="pid=\"$a_PID\",vcpu=\"%d\",port=\"0x70\",name=\"CMOS_INDEX\",direction=\"out\""
for _ in $(seq 1 50); do
	vtext=$(scrape "$URL2")
	[ "$(metric "$vtext" "kvm_vcpu_ioport_exits_total{$(printf "$sv" 1)}")" = 100 ] && break
	sleep 0.2
done
for c in "0 300" "1 100"; do
	read -r vc want <<<"$c"
	got=$(metric "$vtext" "kvm_vcpu_ioport_exits_total{$(printf "$sv" "$vc")}")
	[ "$got" = "$want" ] || fail "--per-vcpu: vCPU $vc has '$got' exits at port 0x70, want $want: $(grep -F "pid=\"$a_PID\"" <<<"$vtext" | head)"
done
[ "$(metric "$vtext" "kvm_ioport_exits_total{$sa}")" = 400 ] || fail "--per-vcpu: the VM's is not 400"
bad=$(grep -E '^kvm_ioport_exits_total\{[^}]*vcpu=' <<<"$vtext" | head -3)
[ -z "$bad" ] || fail "--per-vcpu: a vCPU's series under the VM's name: $bad"
stop v
echo "ok: --per-vcpu: kvm_vcpu_ioport_exits_total 300 + 100, the VM's 400 under its own name"
# the hits followed by an entry of their own thread are timed: vCPU 0's
# 300, each with a 70 µs gap before it; vCPU 1's 100 have none (vCPU 0's
# entries are not theirs). One busy thread only, so that the machine's
# load blurs the gaps least
check "kvm_ioport_exits_latency_seconds_count{$sa}" 300
check "kvm_ioport_exits_latency_seconds_bucket{$sa,le=\"+Inf\"}" 300
check "kvm_ioport_exits_latency_seconds_bucket{$sa,le=\"6.5535e-05\"}" 0
# 70 µs gaps: the median in the bucket [65.5, 131) µs
le=$(grep -F "kvm_ioport_exits_latency_seconds_bucket{$sa," <<<"$text" |
	awk '{ match($1, /le="[^"]*"/); le = substr($1, RSTART + 4, RLENGTH - 5)
		if ($2 >= 150) { print le; exit } }')
[ "$le" = 0.000131071 ] || fail "median bucket le=$le, want 0.000131071: $(grep -F "latency_seconds_bucket{$sa," <<<"$text" | tail -25)"
echo "ok: latency: _count 300, none below 65.5 µs, median below 131 µs"
promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 || fail "promtool: $(cat "$TMP/lint")"
om=$(scrape "$URL" -H 'Accept: application/openmetrics-text; version=1.0.0')
[ "$(tail -n 1 <<<"$om")" = "# EOF" ] || fail "OpenMetrics does not end with # EOF"
grep -q '^# TYPE kvm_ioport_exits counter$' <<<"$om" || fail "OpenMetrics: no TYPE kvm_ioport_exits counter"
grep -q '^# UNIT kvm_ioport_exits_latency_seconds seconds$' <<<"$om" || fail "OpenMetrics: no UNIT line"
echo "ok: promtool clean; OpenMetrics families"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
end_tpkeys a
end_tpkeys b
