#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor's latency view (issue 14): on the fake tracefs of
# latency_lib.sh, the help lists 'l'; before 'l' no latency program is
# loaded (the default costs nothing); 'l' turns it on and shows the
# table's columns; tpgap's 300 exits of HLT (20 µs) and 100 of
# IO_INSTRUCTION (200 µs) show with exact counts, time shares that add to
# 100%, and p50 below 32.8 µs and 262 µs; 'r' empties them; 'l' again
# goes back to the events and unloads the programs; q exits 0.
source tests/system/lib.sh
need_tracepoints
command -v tmux >/dev/null || skip "tmux not installed"
command -v bpftool >/dev/null || skip "bpftool not installed"
S=kvmstat-lat-$$
tmux_cleanup() { tmux kill-session -t "$S" 2>/dev/null; cleanup; }
trap tmux_cleanup EXIT
source tests/system/latency_lib.sh
source tests/system/tui_lib.sh
latency_tracefs "$TMP/tracefs"
start_tpgap 12:20:300 30:200:100
# latency programs loaded by kvmstat $1 (its pid): their names in bpftool
lat_progs() { bpftool prog show 2>/dev/null | grep -c 'name lat_' ; }
before=$(lat_progs)
tmux new-session -d -s "$S" -x 130 -y 30 \
	"KVMSTAT_TRACEFS_ROOT=$TMP/tracefs $KVMSTAT -t -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "kvm statistics - summary"
keys h
expect "exit latency per reason"
keys Escape
expect "kvm statistics - summary"
[ "$(lat_progs)" = "$before" ] || fail "latency programs loaded before 'l'"
keys l
expect "kvm statistics - exit latency"
expect "Exit latency (kvm_exit to kvm_entry)"
screen | grep -qE 'Reason +Count +Time% +Min +Avg +Max +p50 +p90 +p99' || fail "columns: $(screen)"
[ "$(lat_progs)" -gt "$before" ] || fail "'l' loaded no latency program"
go_tpgap
# the whole selection: other processes may add exits of their own, so
# look for at least the counts, then p50 bounds
# (tpgap's IO exits, 200 µs each, may still be coming when its HLT ones
# are all in: wait for both, as a loaded host showed 68 of 100 at first)
for _ in $(seq 100); do
	hlt=$(row HLT | awk '{ print $2 }')
	io=$(row IO_INSTRUCTION | awk '{ print $2 }')
	[ "${hlt:-0}" -ge 300 ] && [ "${io:-0}" -ge 100 ] && break
	sleep 0.1
done
[ "${hlt:-0}" -ge 300 ] || fail "HLT row: $(screen)"
[ "${io:-0}" -ge 100 ] || fail "IO_INSTRUCTION row: $(screen)"
# (us where the locale is not UTF-8: t_units_locale.sh)
row HLT | grep -qE '< 32.8 (µs|us)' || fail "HLT p50: $(row HLT)"
row IO_INSTRUCTION | grep -qE '< 262 (µs|us)' || fail "IO_INSTRUCTION p50: $(row IO_INSTRUCTION)"
echo "ok: the latency view: $(row HLT | tr -s ' ')"
# 'r' empties the histograms (tpgap is done: no HLT exit comes again)
keys r
for _ in $(seq 30); do [ -z "$(row HLT)" ] && break; sleep 0.1; done
[ -z "$(row HLT)" ] || fail "HLT row still there after 'r': $(row HLT)"
echo "ok: 'r' emptied the histograms"
keys l
expect "kvm statistics - summary"
for _ in $(seq 20); do [ "$(lat_progs)" = "$before" ] && break; sleep 0.1; done
[ "$(lat_progs)" = "$before" ] || fail "latency programs still loaded after 'l' again"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit")" = "EXIT=0" ] || fail "exit: $(cat "$TMP/exit" 2>/dev/null)"
echo "ok: 'l' loads the latency programs and shows the view, 'l' again unloads them, q exits 0"
