#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Breakdowns in the flight recorder (issues 23 and 25), on breakdown_lib.sh's
# fake tracefs (plus lib.sh's kvm_userspace_exit, so --latency times the
# keys): two fake VMs (tests/fakes/tpkeys) make exact hits per port, MSR,
# address and hypercall while kvmstat -t --breakdown all --latency records.
# Replayed, JSON Lines (the breakdown objects, their times, exit latency)
# and -1's tables must be byte for byte what the live run printed; the
# counts are the hits made; --replay --export openmetrics writes the
# exporter's breakdown series with those counts; sqlite3 finds the file
# whole and the counts in brk_value; --replay --breakdown is refused.
# shellcheck disable=SC2154 # NAME_PID is set by printf -v
source tests/system/lib.sh
source tests/system/record_lib.sh
need_tracepoints
command -v sqlite3 >/dev/null || skip "sqlite3 missing: apt-get install sqlite3"
command -v jq >/dev/null || skip "jq missing"
source tests/system/breakdown_lib.sh
breakdown_tracefs "$TMP/tracefs"
fake_tracefs "$TMP/tracefs"
export KVMSTAT_TRACEFS_ROOT=$TMP/tracefs

# brk ARGS...: kvmstat -t ARGS --record $TMP/j.db while a makes its hits,
# then b, a refresh or more apart; stopped by SIGINT
brk() {
	rm -f "$TMP"/j.db* "$TMP/a.go" "$TMP/b.go"
	start_tpkeys a 0:ioport:0x70:1:300:70 0:ioport:0x71:0:200 1:ioport:0x70:1:100 \
		1:msr:0x6e0:1:250 0:msr:0xc0000080:0:7 1:hc:0x12345:0:40 1:mmio:0xfebd1000:2:30
	start_tpkeys b 0:ioport:0x3f8:1:123 0:msr:0x10:0:77
	start_kvmstat j -t -s 0.3 -f '^kvm_entry$' --record "$TMP/j.db" "$@"
	wait_polling "$j_PID"
	sleep 0.5
	go_tpkeys a
	sleep 0.7
	go_tpkeys b
	sleep 0.9
	kill -INT "$j_PID"
	wait "$j_PID" || fail "kvmstat $* --record exited $?: $(cat "$TMP/j.err")"
	end_tpkeys a
	end_tpkeys b
}

# JSON Lines with every kind: each line replayed identical
brk --json -l --breakdown all
last=$(tail -1 "$TMP/j.out")
# count PID KIND KEY DIR: the VM's row's count in the last line
count() {
	jq -r --argjson p "$1" --arg k "$2" --arg key "$3" --arg d "$4" \
		'.breakdown.vms[] | select(.pid == $p) | .[$k][] | select(.key == $key and (.direction // "-") == $d) | .count' <<<"$last"
}
[ "$(count "$a_PID" ioport 0x70 out)" = 400 ] || fail "live: a's port 0x70 out: $(count "$a_PID" ioport 0x70 out), want 400: $last"
[ "$(count "$a_PID" msr 0x6e0 write)" = 250 ] || fail "live: a's MSR 0x6e0: $(count "$a_PID" msr 0x6e0 write), want 250"
[ "$(count "$b_PID" ioport 0x3f8 out)" = 123 ] || fail "live: b's port 0x3f8: $(count "$b_PID" ioport 0x3f8 out), want 123"
grep -q '"breakdown"' "$TMP/j.out" || fail "live: no breakdown object"
lines_with=$(grep -c '"0x70"' "$TMP/j.out")
[ "$lines_with" -ge 2 ] || fail "live: port 0x70 in $lines_with lines, want the refreshes after a's hits"
same j --json -l
echo "ok: JSON Lines with breakdowns replayed identical ($(wc -l <"$TMP/j.out") lines; a's 0x70 out 400, 0x6e0 250, b's 0x3f8 123)"

# timed (--latency): the breakdowns with their times and exit latency's
# own histograms and facts replayed identical
brk --json -l --breakdown ioport --latency
grep -q '"latency"' "$TMP/j.out" || fail "live: no latency object"
same j --json -l
last=$(tail -1 "$TMP/j.out")
t=$(jq -r --argjson p "$a_PID" '.breakdown.vms[] | select(.pid == $p) | .ioport[] | select(.key == "0x70") | .timed' <<<"$last")
[ "$t" = 300 ] || fail "live: a's port 0x70 timed $t, want 300 (tpkeys times vCPU 0's hits)"
echo "ok: timed breakdowns and exit latency replayed identical (a's 0x70: 300 timed)"

# the file: whole, and the counts in its tables
[ "$(sqlite3 "$TMP/j.db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
n=$(sqlite3 "$TMP/j.db" "SELECT v.count FROM brk_value v JOIN brk_key k ON k.id = v.key
	WHERE k.pid = $a_PID AND k.vcpu = -1 AND k.kind = 'ioport' AND k.key = 112 AND k.dir = 'out'
	ORDER BY v.refresh DESC LIMIT 1")
[ "$n" = 400 ] || fail "sqlite3: a's port 0x70 out, last count $n, want 400"
echo "ok: sqlite3: integrity ok, brk_value holds a's 400 exits on port 0x70"

# the export: the exporter's series, each refresh stamped
"$KVMSTAT" --replay "$TMP/j.db" --export openmetrics >"$TMP/j.om" 2>"$TMP/j.oerr" ||
	fail "--export exited $?: $(cat "$TMP/j.oerr")"
grep -Eq "^kvm_ioport_exits_total\{[^}]*pid=\"$a_PID\"[^}]*port=\"0x70\"[^}]*\} 400 [0-9.]+$" "$TMP/j.om" ||
	fail "--export: no kvm_ioport_exits_total of a's port 0x70 at 400: $(grep -m5 '^kvm_ioport_exits_total' "$TMP/j.om")"
grep -Eq '^kvm_ioport_exits_latency_seconds_count\{' "$TMP/j.om" || fail "--export: no latency histograms per key"
if command -v promtool >/dev/null; then
	promtool tsdb create-blocks-from openmetrics "$TMP/j.om" "$TMP/tsdb" >"$TMP/prom.out" 2>&1 ||
		fail "promtool refused the export: $(tail -5 "$TMP/prom.out")"
fi
echo "ok: --export openmetrics: a's port 0x70 at 400, latency per key"

# -1: the tables after the rows, over the first refresh and the one after
start_tpkeys c 0:ioport:0x64:0:42 1:msr:0x6e0:1:9
start_kvmstat once -t -1 -s 2 --breakdown ioport,msr --latency -f '^kvm_entry$' --record "$TMP/once.db"
wait_polling "$once_PID"
sleep 0.5
go_tpkeys c
wait "$once_PID" || fail "kvmstat -1 --record exited $?: $(cat "$TMP/once.err")"
end_tpkeys c
grep -Eq '^ 0x64:PIN +KBD_CMD +42 ' "$TMP/once.out" || fail "-1: no row 0x64:PIN KBD_CMD 42: $(cat "$TMP/once.out")"
same once -1
echo "ok: -1's breakdown tables replayed identical ($(grep -cE '^ 0x' "$TMP/once.out") rows)"
# the same as one JSON document, rates to the last digit
rm -f "$TMP/c.go"
start_tpkeys c 0:ioport:0x64:0:42 1:msr:0x6e0:1:9
start_kvmstat jonce -t --json -1 -s 2 --breakdown ioport,msr -f '^kvm_entry$' --record "$TMP/jonce.db"
wait_polling "$jonce_PID"
sleep 0.5
go_tpkeys c
wait "$jonce_PID" || fail "kvmstat --json -1 --record exited $?: $(cat "$TMP/jonce.err")"
end_tpkeys c
[ "$(jq -r '.breakdown.ioport[] | select(.key == "0x64") | .count' "$TMP/jonce.out")" = 42 ] ||
	fail "--json -1: port 0x64 not 42: $(head -c 500 "$TMP/jonce.out")"
same jonce --json -1
echo "ok: --json -1's breakdown object replayed identical"

# exit latency alone (latency_lib.sh's tree: kvm_exit and kvm_entry timed,
# tpgap's 500 HLT and 300 IO exits): its histograms replayed identical
source tests/system/latency_lib.sh
latency_tracefs "$TMP/lat"
start_tpgap 12:20:250 30:200:150 12:20:250 30:200:150
KVMSTAT_TRACEFS_ROOT=$TMP/lat start_kvmstat lat -t --json -l -s 0.3 --latency -f '^kvm_exit$' --record "$TMP/lat.db"
wait_polling "$lat_PID"
sleep 0.5
go_tpgap
sleep 0.7
kill -INT "$lat_PID"
wait "$lat_PID" || fail "kvmstat --latency --record exited $?: $(cat "$TMP/lat.err")"
n=$(tail -1 "$TMP/lat.out" | jq --argjson p "$TP" '.latency.histograms[] |
	select(.kind == "exit" and .pid == $p and .tid == 0 and .reason == "HLT") | .count')
[ "$n" = 500 ] || fail "live: HLT exit latency count $n, want 500: $(tail -1 "$TMP/lat.out" | jq -c .latency)"
same lat --json -l
echo "ok: exit latency's histograms replayed identical (HLT: 500 timed)"

"$KVMSTAT" --replay "$TMP/j.db" -1 --breakdown all >"$TMP/rb.out" 2>"$TMP/rb.err" && fail "--replay --breakdown accepted"
if [ "$(wc -l <"$TMP/rb.err")" != 1 ] || ! grep -q -- "--breakdown" "$TMP/rb.err"; then
	fail "--replay --breakdown: want one line: $(cat "$TMP/rb.err")"
fi
echo "ok: --replay --breakdown refused: $(cat "$TMP/rb.err")"
