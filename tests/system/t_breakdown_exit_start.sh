#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --breakdown with --latency times each key's exits from their kvm_exit,
# the start the exit-latency programs keep in the thread's state, which
# the breakdown programs share (issue 31: so that a hit reads no clock).
# On breakdown_lib.sh's fake tracefs with lib.sh's fake kvm_exit: each of
# tpkeys's 200 port hits comes 120 µs after an exit and 30 µs before the
# re-entry, so each key's time is over 150 µs, none under 131 µs (timed
# from the hit it would be 30 µs), and the key's total is the exits'
# total that --latency measured, within 5 % (the same starts, each end
# read by its own program).
source tests/system/lib.sh
need_tracepoints
for t in curl; do
	command -v $t >/dev/null || skip "$t missing"
done
source tests/system/exporter_lib.sh
source tests/system/breakdown_lib.sh
breakdown_tracefs "$TMP/tracefs"
fake_tracefs "$TMP/tracefs"
fake_kvm_exit "$TMP/tracefs"
start_tpkeys a 0:ioport:0x70:1:200:30:1:120
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --listen "127.0.0.1:$PORT" -s 0.5 \
	--breakdown ioport --latency -f '^kvm_entry$'
wait_serving k "$URL"
go_tpkeys a
sa="pid=\"$a_PID\",port=\"0x70\",name=\"CMOS_INDEX\",direction=\"out\""
for _ in $(seq 1 50); do
	text=$(scrape "$URL")
	[ "$(metric "$text" "kvm_ioport_exits_latency_seconds_count{$sa}")" = 200 ] && break
	sleep 0.2
done
check() { [ "$(metric "$text" "$1")" = "$2" ] || fail "$1: '$(metric "$text" "$1")', want $2: $(grep -F "pid=\"$a_PID\"" <<<"$text" | head -30)"; }
check "kvm_ioport_exits_total{$sa}" 200
check "kvm_ioport_exits_latency_seconds_count{$sa}" 200
check "kvm_ioport_exits_latency_seconds_bucket{$sa,le=\"0.000131071\"}" 0
echo "ok: 200 timed, none under 131 µs: from the exit, not from the hit"
# the exits' total of the same process, every reason
ksum=$(metric "$text" "kvm_ioport_exits_latency_seconds_sum{$sa}")
lsum=$(awk -v p="pid=\"$a_PID\"" 'index($1, "kvm_exit_latency_seconds_sum{") == 1 &&
	index($1, p) && !index($1, "vcpu=") { s += $2 } END { print s + 0 }' <<<"$text")
lcount=$(awk -v p="pid=\"$a_PID\"" 'index($1, "kvm_exit_latency_seconds_count{") == 1 &&
	index($1, p) && !index($1, "vcpu=") { s += $2 } END { print s + 0 }' <<<"$text")
[ "$lcount" = 200 ] || fail "exit latency of the process: _count $lcount, want 200: $(grep -F kvm_exit_latency_seconds_count <<<"$text")"
awk -v a="$ksum" -v b="$lsum" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.05 * b) }' ||
	fail "the key's total $ksum s against the exits' $lsum s: more than 5 % apart"
echo "ok: the key's total $ksum s, the exits' $lsum s"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
end_tpkeys a

# Threads made to share the pending hits' one entry
# (KVMSTAT_BREAKDOWN_PENDS=1): the first to hit claims it, the others keep
# theirs in the hash, every hit still timed; a thread gone gives its entry
# back at a sweep (every 32 refreshes) and the next thread claims it.
# Which thread holds it: brk_powner, read with bpftool.
command -v bpftool >/dev/null || fail "bpftool missing (make deps installs it)"
KVMSTAT_BREAKDOWN_PENDS=1 KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat j -t --json -l -s 0.1 \
	--breakdown ioport --latency -f '^kvm_entry$'
wait_lines "$TMP/j.out" 1
# owner: the thread id holding the entry, from kvmstat's brk_powner (the
# newest of that name: bpftool here may not say which process holds a map)
owner() {
	local id
	id=$(bpftool -j map show | jq '[.[] | select(.name == "brk_powner") | .id] | max // empty')
	[ -n "$id" ] || fail "no brk_powner map (kvmstat $j_PID)"
	# the value's bytes, little-endian (or BTF's formatted number)
	bpftool -j map dump id "$id" | jq -r '.[0] // empty |
		.formatted.value // (.value | to_entries |
			map((.value | ltrimstr("0x") | explode |
				map(if . >= 97 then . - 87 else . - 48 end) | .[0] * 16 + .[1]) *
				pow(256; .key)) | add)'
}
start_tpkeys c 0:ioport:0x70:1:50:30:1:120
go_tpkeys c
c_tid=$(ls /proc/"$c_PID"/task | grep -vx "$c_PID")
[ "$(owner)" = "$c_tid" ] || fail "the entry's owner $(owner), want tpkeys c's vCPU thread $c_tid"
end_tpkeys c
sleep 4 # over 32 refreshes: a sweep
start_tpkeys d 0:ioport:0x71:1:100:30:1:120 1:ioport:0x72:1:100:30:1:120
go_tpkeys d
d_tids=" $(ls /proc/"$d_PID"/task | grep -vx "$d_PID" | tr '\n' ' ')"
o=$(owner)
[[ -n "$o" && "$d_tids" == *" $o "* ]] || fail "after c ended the entry's owner is '$o', not one of d's vCPU threads:$d_tids"
for _ in $(seq 1 50); do
	n=$(tail -n 1 "$TMP/j.out" | jq --argjson p "$d_PID" \
		'[.breakdown.vms[] | select(.pid == $p) | .ioport[] | .timed // 0] | add // 0')
	[ "$n" = 200 ] && break
	sleep 0.2
done
[ "$n" = 200 ] || fail "d's hits timed: $n, want 200 (100 a thread, one of them in the hash): $(tail -n 1 "$TMP/j.out" | jq -c --argjson p "$d_PID" '.breakdown.vms[] | select(.pid == $p)')"
# a thread alive keeps its entry through the sweeps
sleep 4
[ "$(owner)" = "$o" ] || fail "a sweep took the entry of d's live thread $o: now '$(owner)'"
echo "ok: one entry shared: its owner c's thread, then one of d's (kept while it lives); d's 200 hits timed"
stop j
end_tpkeys d
