#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exit latency in the exporter (issue 14): kvmstat --listen --latency on
# the fake tracefs of latency_lib.sh, while tpgap makes 400 "exits" of
# reason 12 (HLT) 20 µs long and 200 of 30 (IO_INSTRUCTION) 200 µs long.
# /metrics must carry kvm_exit_latency_seconds histograms by reason, per
# process with pid, that pass promtool check metrics (both formats'
# series, OpenMetrics ending in # EOF), with _count 400 and 200; and a
# real Prometheus scraping them must compute histogram_quantile(0.5, ...)
# inside the log2 bucket that holds each gap: [16.4, 32.8] µs and
# [131, 262] µs.
source tests/system/lib.sh
need_tracepoints
for t in curl jq prometheus promtool; do
	command -v $t >/dev/null || { [ "${KVMSTAT_REQUIRE_KVM:-0}" = 1 ] && fail "$t missing"; skip "$t missing"; }
done
source tests/system/exporter_lib.sh
source tests/system/latency_lib.sh
latency_tracefs "$TMP/tracefs"
start_tpgap 12:20:400 30:200:200
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --listen "127.0.0.1:$PORT" -s 0.5 --latency -f '^kvm_exit$'
wait_serving k "$URL"
go_tpgap
sel="pid=\"$TP\",reason=\"HLT\""
for _ in $(seq 1 50); do
	text=$(scrape "$URL")
	[ "$(metric "$text" "kvm_exit_latency_seconds_count{$sel}")" = 400 ] && break
	sleep 0.1
done
[ "$(metric "$text" "kvm_exit_latency_seconds_count{$sel}")" = 400 ] ||
	fail "HLT _count: $(grep "pid=\"$TP\"" <<<"$text" | grep _count)"
[ "$(metric "$text" "kvm_exit_latency_seconds_count{pid=\"$TP\",reason=\"IO_INSTRUCTION\"}")" = 200 ] ||
	fail "IO_INSTRUCTION _count: $(grep "pid=\"$TP\"" <<<"$text" | grep _count)"
[ "$(metric "$text" "kvm_exit_latency_seconds_bucket{$sel,le=\"+Inf\"}")" = 400 ] ||
	fail "HLT +Inf bucket: $(grep "$sel" <<<"$text" | head -3)"
grep -q '^# TYPE kvm_exit_latency_seconds histogram$' <<<"$text" || fail "no TYPE line"
promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 || fail "promtool check metrics: $(cat "$TMP/lint")"
om=$(scrape "$URL" -H 'Accept: application/openmetrics-text; version=1.0.0')
[ "$(tail -n 1 <<<"$om")" = "# EOF" ] || fail "OpenMetrics does not end with # EOF"
grep -q '^# UNIT kvm_exit_latency_seconds seconds$' <<<"$om" || fail "OpenMetrics: no UNIT line"
echo "ok: /metrics: kvm_exit_latency_seconds_count HLT 400, IO_INSTRUCTION 200, promtool clean"

prom_start
q() { echo "histogram_quantile(0.5, sum by (le) (kvm_exit_latency_seconds_bucket{pid=\"$TP\",reason=\"$1\"}))"; }
prom_wait "sum(kvm_exit_latency_seconds_count{pid=\"$TP\"})" 600
for want in HLT:0.000016384:0.000032768 IO_INSTRUCTION:0.000131072:0.000262144; do
	IFS=: read -r reason lo hi <<<"$want"
	m=$(prom_value "$(q "$reason")")
	awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(m != "" && m + 0 >= lo && m + 0 <= hi) }' ||
		fail "Prometheus: median of $reason is '$m', want in [$lo, $hi]"
	echo "ok: Prometheus: histogram_quantile(0.5) of $reason = $m s, in [$lo, $hi]"
done
prom_stop
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
