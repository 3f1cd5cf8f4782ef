#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight recorder when things go wrong, on a debugfs fixture whose
# counters move: a recorder killed with SIGKILL (at several moments)
# leaves a file that sqlite3 checks as ok and that replays, with every
# refresh but at most the last; a text file, an empty file and another
# program's SQLite database are refused with one line and left untouched;
# --record-keep drops the oldest refreshes and the rest still replays with
# whole totals; a full disk (a small tmpfs, in a mount namespace of this
# test's own) stops the recording with one line while the log goes on,
# and the file stays whole.
# shellcheck disable=SC2154 # NAME_PID is set by printf -v
source tests/system/lib.sh
command -v sqlite3 >/dev/null || skip "sqlite3 missing: apt-get install sqlite3"

# shellcheck disable=SC2046
debugfs_fixture exits=0 $(printf 'c%s=0 ' $(seq 0 7))

# bump N: every counter moves (by N, and exits by 10 N)
bump() {
	local f
	echo $(($(cat "$root/exits") + 10 * $1)) >"$root/exits"
	for f in "$root"/c*; do echo $(($(cat "$f") + $1)) >"$f"; done
}

# sum DB FIELD: the sum of FIELD's deltas of the host in DB
sum() {
	sqlite3 "$1" "SELECT coalesce(sum(v.delta), 0) FROM value v JOIN field f ON f.id = v.field
		JOIN scope s ON s.id = v.scope WHERE f.name = '$2' AND s.pid = 0"
}

# SIGKILL at several moments: each file opens and replays what it holds
for delay in 0.05 0.37 0.81 1.3; do
	db=$TMP/kill.db
	rm -f "$db" "$db-wal" "$db-shm"
	start_kvmstat kill -d -s 0.1 -l -f '^(exits|c)' --record "$db"
	wait_lines "$TMP/kill.out" 2
	for _ in 1 2 3 4 5; do bump 3; sleep 0.06; done
	sleep "$delay"
	kill -KILL "$kill_PID"
	wait "$kill_PID" 2>/dev/null
	[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "killed after $delay s: integrity_check"
	"$KVMSTAT" --replay "$db" -l -f '^(exits|c)' >"$TMP/kill.rep" 2>"$TMP/kill.rerr" ||
		fail "killed after $delay s: --replay exited $?: $(cat "$TMP/kill.rerr")"
	live=$(column_sum "$TMP/kill.out" exits)
	rep=$(column_sum "$TMP/kill.rep" exits)
	[ "$rep" = "$(sum "$db" exits)" ] || fail "the replay sums $rep, the file $(sum "$db" exits)"
	# the live log's last line may be of the refresh the kill lost
	lines=$(grep -c '^20' "$TMP/kill.out")
	rlines=$(grep -c '^20' "$TMP/kill.rep")
	[ "$rlines" -ge $((lines - 1)) ] ||
		fail "killed after $delay s: the replay has $rlines lines, the live log $lines"
	head -n "$((rlines + 1))" "$TMP/kill.out" | cmp -s - <(head -n "$((rlines + 1))" "$TMP/kill.rep") ||
		fail "the replay of a killed recording differs: $(diff "$TMP/kill.out" "$TMP/kill.rep" | head -n 10)"
	echo "ok: SIGKILL after $delay s: integrity ok, $rlines of $lines lines replayed identical (sums $rep of $live)"
done

# files that are no recording: one line, untouched
echo "notes" >"$TMP/notes.txt"
: >"$TMP/empty"
sqlite3 "$TMP/other.db" 'CREATE TABLE t(a); INSERT INTO t VALUES (1)'
sha=$(sha256sum "$TMP/other.db" "$TMP/notes.txt")
for args in "--replay $TMP/notes.txt -l" "--replay $TMP/other.db -1" \
	"--replay $TMP/empty -l" "-d -l --record $TMP/other.db" \
	"-d -l --record $TMP/notes.txt" "--replay $TMP/none.db -l"; do
	# shellcheck disable=SC2086 # the arguments as listed
	"$KVMSTAT" $args >"$TMP/f.out" 2>"$TMP/f.err"
	rc=$?
	[ "$rc" != 0 ] || fail "$args: exited 0"
	[ "$(wc -l <"$TMP/f.err")" = 1 ] || fail "$args: not one line: $(cat "$TMP/f.err")"
	[ ! -s "$TMP/f.out" ] || fail "$args printed: $(cat "$TMP/f.out")"
	echo "ok: $args: status $rc: $(cat "$TMP/f.err")"
done
"$KVMSTAT" -d -l --record "$TMP/other.db" 2>&1 | grep -q "SQLite database of another program" ||
	fail "another program's database is not named so"
[ "$(sha256sum "$TMP/other.db" "$TMP/notes.txt")" = "$sha" ] || fail "a refused file changed"
if [ -e "$TMP/other.db-wal" ] || [ -e "$TMP/notes.txt-wal" ]; then
	fail "a refused file got a WAL"
fi

# --record-keep 1s at -s 0.1: what is older goes (looked at every 16
# refreshes), the rest replays with the whole totals
t0=$(cat "$root/exits")
start_kvmstat keep -d -s 0.1 -l -f '^exits$' --record "$TMP/keep.db" --record-keep 1s
wait_lines "$TMP/keep.out" 2
for _ in $(seq 1 40); do bump 1; sleep 0.1; done
stop keep
[ "$STATUS" = 0 ] || fail "--record-keep: kvmstat exited $STATUS: $(cat "$TMP/keep.err")"
span=$(sqlite3 "$TMP/keep.db" 'SELECT max(time) - min(time) FROM refresh')
awk -v s="$span" 'BEGIN { exit !(s < 3.0) }' || fail "--record-keep 1s keeps $span s"
[ "$(sqlite3 "$TMP/keep.db" 'PRAGMA integrity_check')" = ok ] || fail "--record-keep: integrity_check"
total=$(($(cat "$root/exits") - t0))
"$KVMSTAT" --replay "$TMP/keep.db" -1 -f '^exits$' >"$TMP/keep.rep" || fail "--record-keep: no replay"
awk -v t="$total" '$1 == "exits" && $2 == t { ok = 1 } END { exit !ok }' "$TMP/keep.rep" ||
	fail "--record-keep: the replay's total is not $total: $(cat "$TMP/keep.rep")"
echo "ok: --record-keep 1s: $span s kept, the replay's total is the run's whole $total"

# a full disk, in a mount namespace of this test's own
[ "$(id -u)" = 0 ] || { echo "note: the full disk needs root (a tmpfs): not checked"; exit 0; }
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m --propagation private bash -c '
	mnt=$1 K=$2 out=$3
	mount -t tmpfs -o size=256k kvmstat-rec "$mnt" || exit 77
	"$K" -d -s 0.1 -l -f "^(exits|c)" --record "$mnt/r.db" >"$out.out" 2>"$out.err" &
	k=$!
	sleep 0.5
	dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
	for _ in $(seq 1 100); do
		grep -q "recording stopped" "$out.err" && break
		sleep 0.1
	done
	sleep 0.5
	kill -0 $k || echo "kvmstat ended" >>"$out.err"
	n=$(wc -l <"$out.out")
	sleep 0.5
	[ "$(wc -l <"$out.out")" -gt "$n" ] || echo "the log stopped" >>"$out.err"
	kill -TERM $k
	wait $k
	echo "status $?" >>"$out.err"
	rm -f "$mnt/filler"
	cp "$mnt"/r.db* "${out%/*}/" 2>/dev/null
	sqlite3 "$mnt/r.db" "PRAGMA integrity_check" >"$out.check" 2>&1
	"$K" --replay "$mnt/r.db" -l -f "^exits$" >"$out.rep" 2>&1
	echo "replay $?" >>"$out.check"
	umount "$mnt"' full "$(mktemp -d "$TMP/mnt.XXXX")" "$KVMSTAT" "$TMP/full" &
PIDS+=($!)
for _ in $(seq 1 50); do bump 7; sleep 0.05; done
wait "${PIDS[-1]}"
rc=$?
[ "$rc" = 77 ] && { echo "note: no tmpfs could be mounted: the full disk is not checked"; exit 0; }
[ "$(grep -c 'recording stopped' "$TMP/full.err")" = 1 ] ||
	fail "a full disk: not one line: $(cat "$TMP/full.err")"
grep -q 'disk is full' "$TMP/full.err" || fail "a full disk not named: $(cat "$TMP/full.err")"
grep -q 'kvmstat ended\|the log stopped' "$TMP/full.err" && fail "a full disk stopped the run: $(cat "$TMP/full.err")"
grep -q '^status 0$' "$TMP/full.err" || fail "a full disk: kvmstat's status: $(cat "$TMP/full.err")"
[ "$(head -n 1 "$TMP/full.check")" = ok ] || fail "a full disk: integrity_check: $(cat "$TMP/full.check")"
grep -q '^replay 0$' "$TMP/full.check" || fail "a full disk: no replay: $(cat "$TMP/full.rep")"
echo "ok: a full disk: $(grep 'recording stopped' "$TMP/full.err"); the log went on, the file is ok and replays ($(grep -c '^20' "$TMP/full.rep") lines)"
