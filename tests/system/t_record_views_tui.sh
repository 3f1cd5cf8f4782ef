#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The replayed monitor's latency (l) and breakdown (k) views under tmux
# (issue 31), as t_latency_tui.sh and t_breakdown_tui.sh test the live
# ones. A recording made on latency_lib.sh's fake tracefs with --latency
# (tpgap's 300 HLT exits of 20 µs and 100 IO_INSTRUCTION of 200 µs) and
# one on breakdown_lib.sh's with --breakdown ioport,msr (tpkeys's 77 hits
# of port 0x70 out, 33 writes of MSR 0x6e0), each beside --json -l:
# replayed to its end, 'l' shows the table with the counts of the live
# run's last line and its p50 bounds, 'k' every kind's table with the
# rows and counts of the live run's last line (CMOS_INDEX 77,
# TSC_DEADLINE 33), and they go back as live; nothing is started on the
# host (the header's sources are the recording's); q exits 0.
# shellcheck disable=SC2154 # NAME_PID is set by printf -v
source tests/system/lib.sh
need_tracepoints
command -v tmux >/dev/null || skip "tmux not installed"
command -v jq >/dev/null || skip "jq missing"
S=kvmstat-rviews-$$
tmux_cleanup() { tmux kill-session -t "$S" 2>/dev/null; cleanup; }
trap tmux_cleanup EXIT
source tests/system/latency_lib.sh
source tests/system/breakdown_lib.sh
source tests/system/tui_lib.sh

# replay_to_end DB: the monitor replaying DB in tmux, played to its end
replay_to_end() {
	local n
	n=$(sqlite3 "$1" 'SELECT count(*) FROM refresh' 2>/dev/null)
	rm -f "$TMP/exit"
	tmux new-session -d -s "$S" -x 150 -y 30 \
		"$KVMSTAT --replay $1 -s 0.1; echo EXIT=\$? >$TMP/exit; sleep 60"
	expect "kvm statistics - summary"
	if [ -n "$n" ]; then
		expect "  $n/$n  end" 200
	else
		expect "  end" 200
	fi
}

# quit_monitor: q ends it with status 0
quit_monitor() {
	keys q
	for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
	tmux kill-session -t "$S"
}

# exit latency
latency_tracefs "$TMP/lat"
start_tpgap 12:20:300 30:200:100
KVMSTAT_TRACEFS_ROOT=$TMP/lat start_kvmstat lat -t --json -l -s 0.3 --latency -f '^kvm_exit$' --record "$TMP/lat.db"
wait_polling "$lat_PID"
sleep 0.5
go_tpgap
sleep 1
kill -INT "$lat_PID"
wait "$lat_PID" || fail "kvmstat --latency --record exited $?: $(cat "$TMP/lat.err")"
# lat_count REASON: the whole selection's count in the live run's last line
lat_count() {
	tail -1 "$TMP/lat.out" | jq -r --arg r "$1" '[.latency.histograms[] |
		select(.kind == "exit" and .pid == 0 and .reason == $r) | .count] | first // empty'
}
hlt=$(lat_count HLT)
io=$(lat_count IO_INSTRUCTION)
[ "${hlt:-0}" -ge 300 ] && [ "${io:-0}" -ge 100 ] ||
	fail "live: HLT $hlt, IO_INSTRUCTION $io, want 300 and 100 at least: $(tail -1 "$TMP/lat.out" | jq -c .latency)"
replay_to_end "$TMP/lat.db"
keys l
expect "kvm statistics - exit latency"
expect "Exit latency (kvm_exit to kvm_entry)"
screen | grep -qE 'Reason +Count +Time% +Min +Avg +Max +p50 +p90 +p99' || fail "columns: $(screen)"
[ "$(row HLT | awk '{ print $2 }')" = "$hlt" ] || fail "HLT row: want $hlt: $(screen)"
[ "$(row IO_INSTRUCTION | awk '{ print $2 }')" = "$io" ] || fail "IO_INSTRUCTION row: want $io: $(screen)"
row HLT | grep -qE '< 32.8 (µs|us)' || fail "HLT p50: $(row HLT)"
row IO_INSTRUCTION | grep -qE '< 262 (µs|us)' || fail "IO_INSTRUCTION p50: $(row IO_INSTRUCTION)"
# the time keys work in the view
keys Space
expect "paused"
echo "ok: replayed 'l': $(row HLT | tr -s ' ')"
keys l
expect "kvm statistics - summary"
quit_monitor
echo "ok: 'l' again back to the events, q exits 0"

# the breakdowns
breakdown_tracefs "$TMP/brk"
start_tpkeys a 0:ioport:0x70:1:77 0:msr:0x6e0:1:33
KVMSTAT_TRACEFS_ROOT=$TMP/brk start_kvmstat brk -t --json -l -s 0.3 --breakdown ioport,msr -f '^kvm_(pio|msr)$' --record "$TMP/brk.db"
wait_polling "$brk_PID"
sleep 0.5
go_tpkeys a
sleep 1
kill -INT "$brk_PID"
wait "$brk_PID" || fail "kvmstat --breakdown --record exited $?: $(cat "$TMP/brk.err")"
end_tpkeys a
# brk_count KIND KEY: the whole selection's count in the live last line
brk_count() {
	tail -1 "$TMP/brk.out" | jq -r --arg k "$1" --arg key "$2" \
		'[.breakdown[$k][] | select(.key == $key) | .count] | first // empty'
}
pio=$(brk_count ioport 0x70)
msr=$(brk_count msr 0x6e0)
[ "$pio" = 77 ] && [ "$msr" = 33 ] || fail "live: port 0x70 $pio, MSR 0x6e0 $msr, want 77 and 33: $(tail -1 "$TMP/brk.out" | jq -c .breakdown)"
replay_to_end "$TMP/brk.db"
keys k
expect "all exits by key"
expect "0x70:POUT"
[ "$(row 0x70:POUT | awk '{ print $2, $3 }')" = "CMOS_INDEX $pio" ] || fail "0x70 row: want CMOS_INDEX $pio: $(screen)"
screen | grep -E '^ *0x6e0' | grep -qE "TSC_DEADLINE +$msr " || fail "MSR 0x6e0 row: want TSC_DEADLINE $msr: $(screen)"
echo "ok: replayed 'k': $(row 0x70:POUT | tr -s ' '); $(screen | grep -E '^ *0x6e0' | tr -s ' ')"
keys k
expect "kvm statistics - summary"
quit_monitor
echo "ok: 'k' again back to the events, q exits 0"
