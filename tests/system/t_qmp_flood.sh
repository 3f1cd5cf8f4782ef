#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A QMP peer that floods events (issue 12): with one flooding fake monitor
# and one good one, kvmstat keeps logging, the good VM's count keeps
# moving every interval, the flooding socket is named once on stderr, and
# SIGTERM ends the run within one second while the flood goes on.
source tests/system/lib.sh

command -v python3 >/dev/null || skip "no python3 for the fake QMP servers"
command -v jq >/dev/null || skip "jq missing: apt-get install jq"

# start_fake NAME ARGS...: a fake monitor at $TMP/NAME.sock; sets NAME_PID
start_fake() {
	local name=$1 pid
	shift
	fresh "$TMP/$name.out"
	python3 tests/fakes/fakeqmp.py "$TMP/$name.sock" "$@" \
		>"$TMP/$name.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 50); do grep -q '^ready' "$TMP/$name.out" && break; sleep 0.1; done
	pid=$(awk '$1 == "ready" { print $2 }' "$TMP/$name.out")
	[ -n "$pid" ] || fail "fake QMP $name did not start: $(cat "$TMP/$name.out")"
	printf -v "${name}_PID" %s "$pid"
}
start_fake flood 5 flood
start_fake good 7 count

# the flooding socket first, so it is the one read first in each refresh
"$KVMSTAT" --qmp "$TMP/flood.sock" --qmp "$TMP/good.sock" --json -l -s 0.2 \
	-f '^halt_exits$' >"$TMP/out.jsonl" 2>"$TMP/err" &
KPID=$!
PIDS+=("$KPID")
sleep 3
kill -0 "$KPID" 2>/dev/null || fail "kvmstat ended early: $(cat "$TMP/err")"

# the good VM's count moved in (nearly) every interval of those 3 s
jq -r --argjson p "$good_PID" \
	'[.fields.halt_exits.vms[]? | select(.pid == $p) | .total] | first // empty' \
	"$TMP/out.jsonl" >"$TMP/good.totals" 2>"$TMP/jq.err" ||
	fail "not JSON Lines: $(head -c 300 "$TMP/out.jsonl") $(cat "$TMP/jq.err")"
n=$(wc -l <"$TMP/good.totals")
moves=$(awk 'NR > 1 && $1 > prev { m++ } { prev = $1 } END { print m + 0 }' "$TMP/good.totals")
echo "records with the good VM: $n, of which it moved in $moves"
# 3 s at 0.2 s: 15 intervals; a flood that held a refresh for 1 s would
# leave at most 3
[ "$n" -ge 8 ] || fail "only $n records of the good VM in 3 s (stderr: $(head -c 400 "$TMP/err"))"
[ "$moves" -ge $((n - 2)) ] || fail "the good VM's count stalled: $(tr '\n' ' ' <"$TMP/good.totals")"
grep -q "flood.sock" "$TMP/err" || fail "the flooding socket is not named: $(cat "$TMP/err")"
grep -q "good.sock" "$TMP/err" && fail "the good socket was blamed: $(cat "$TMP/err")"

# SIGTERM while the flood goes on: the run ends within 1 s, status 0
kill -0 "$flood_PID" || fail "the flooding fake is gone"
start=$EPOCHREALTIME
kill -TERM "$KPID"
for _ in $(seq 40); do kill -0 "$KPID" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$KPID" 2>/dev/null; then
	kill -KILL "$KPID"
	fail "kvmstat still running 2 s after SIGTERM"
fi
wait "$KPID"
rc=$?
ms=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
echo "SIGTERM to exit: $ms ms"
[ "$ms" -lt 1000 ] || fail "SIGTERM took $ms ms"
[ "$rc" = 0 ] || fail "status $rc after SIGTERM: $(cat "$TMP/err")"
echo ok
