#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor replaying a recording (--replay) under tmux: the header
# shows the recording's time and which refresh of how many; Space pauses,
# ] and [ step a refresh on and back, } ten on, j jumps to a time typed in
# (and says so when it is none), each screen showing the totals the
# recording holds for that refresh (checked with sqlite3); played on
# (Space) it reaches the end; q leaves with status 0.
# shellcheck disable=SC2154 # NAME_PID is set by printf -v
source tests/system/lib.sh
source tests/system/tui_lib.sh
command -v tmux >/dev/null || skip "tmux not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 missing: apt-get install sqlite3"

S=kvmstat-rec-$$
tmux_cleanup() {
	tmux kill-session -t "$S" 2>/dev/null
	cleanup
}
trap tmux_cleanup EXIT

# a recording of 30-odd refreshes whose exits grow by a different step
debugfs_fixture exits=0 halt_exits=0
DB=$TMP/r.db
start_kvmstat rec -d -s 0.1 -l --record "$DB"
wait_lines "$TMP/rec.out" 2
for i in $(seq 1 30); do
	echo $((i * i * 7)) >"$root/exits"
	echo $((i * 3)) >"$root/halt_exits"
	sleep 0.1
done
stop rec
[ "$STATUS" = 0 ] || fail "the recording run exited $STATUS: $(cat "$TMP/rec.err")"
N=$(sqlite3 "$DB" 'SELECT count(*) FROM refresh')
[ "$N" -ge 20 ] || fail "only $N refreshes recorded"

# total K: exits' total at the K-th refresh, as the recording holds it
# ("-" where it was not read then: the fixture's file caught half-written)
total() {
	sqlite3 "$DB" "SELECT iif(v.fresh, v.total, '-') FROM value v JOIN field f ON f.id = v.field
		JOIN scope s ON s.id = v.scope WHERE f.name = 'exits' AND s.pid = 0
		AND v.refresh <= (SELECT id FROM refresh ORDER BY id LIMIT 1 OFFSET $(($1 - 1)))
		ORDER BY v.refresh DESC LIMIT 1"
}
# clock K: the K-th refresh's local time of day
clock() {
	sqlite3 "$DB" "SELECT strftime('%H:%M:%S', time, 'unixepoch', 'localtime')
		FROM refresh ORDER BY id LIMIT 1 OFFSET $(($1 - 1))"
}
# shows K: the screen is at refresh K: its place, time and exits' total
shows() {
	expect "replay 20"
	expect "  $1/$N"
	expect "$(clock "$1")"
	local want
	want=$(total "$1")
	# a total of 0 is no row (events that counted nothing are left out)
	[ "${want:-0}" = 0 ] && want=
	for _ in $(seq 1 30); do
		[ "$(row exits | awk '{ print $2 }')" = "$want" ] && return 0
		sleep 0.1
	done
	fail "refresh $1: exits' total is not $(total "$1"): $(screen)"
}

tmux new-session -d -s "$S" -x 120 -y 30 "$KVMSTAT --replay $DB -s 25; echo EXIT=\$? >$TMP/exit; sleep 30"
expect "kvm statistics - summary"
# the first refresh at once, the second a moment later (as live: the
# first rates soon), then one every -s
keys Space
expect "paused"
p=$(screen | sed -n 's|.*replay [-0-9]* [:0-9]*  \([0-9]*\)/.*|\1|p' | head -n 1)
if [ -z "$p" ] || [ "$p" -gt 2 ]; then
	fail "paused at refresh '$p': $(screen)"
fi
shows "$p"
keys ']' ']' ']' ']' ']'
shows $((p + 5))
keys '['
shows $((p + 4))
keys '}'
shows $((p + 14))
echo "ok: Space pauses at refresh $p; ] [ } step to $((p + 5)), $((p + 4)) and $((p + 14)) with their times and totals"

# j: a time typed in (half-way between refresh 10 and 11)
at=$(sqlite3 "$DB" "SELECT printf('@%.3f', (time + lead(time) OVER (ORDER BY id)) / 2)
	FROM refresh ORDER BY id LIMIT 1 OFFSET 9")
keys j
expect "Jump to the time"
keys "$at" Enter
shows 10
keys j
expect "Jump to the time"
keys "soon" Enter
expect "not a time: soon"
shows 10
echo "ok: j $at jumps to refresh 10; j soon is refused"

# played on at the fastest pace, it reaches the end and stays
keys s
expect "Update interval"
keys 0.1 Enter
keys Space
expect "  $N/$N  end" 100
shows "$N"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
echo "ok: played on to the end ($N/$N), q exits 0"
