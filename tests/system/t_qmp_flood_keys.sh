#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Keys are honoured within one second whatever a QMP peer does (issue 12):
# the monitor under tmux with a flooding fake monitor and a good one shows
# its screen, answers 'h' with the help screen and 'q' by ending, each
# within a second, while the flood goes on.
source tests/system/lib.sh

command -v python3 >/dev/null || skip "no python3 for the fake QMP servers"
command -v tmux >/dev/null || skip "tmux not installed"

S=kvmstat-qf-$$
tmux_cleanup() {
	tmux kill-session -t "$S" 2>/dev/null
	cleanup
}
trap tmux_cleanup EXIT

# start_fake NAME ARGS...: a fake monitor at $TMP/NAME.sock
start_fake() {
	local name=$1
	shift
	fresh "$TMP/$name.out"
	python3 tests/fakes/fakeqmp.py "$TMP/$name.sock" "$@" \
		>"$TMP/$name.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 50); do grep -q '^ready' "$TMP/$name.out" && break; sleep 0.1; done
	grep -q '^ready' "$TMP/$name.out" || fail "fake QMP $name did not start: $(cat "$TMP/$name.out")"
}
start_fake flood 5 flood
start_fake good 7 count

tmux new-session -d -s "$S" -x 120 -y 30 \
	"$KVMSTAT --qmp $TMP/flood.sock --qmp $TMP/good.sock -s 0.5 2>$TMP/err; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh
expect "kvm statistics" 100
sleep 1

# within_1s TEXT: the screen shows TEXT within a second of now
within_1s() {
	local start=$EPOCHREALTIME
	expect "$1" 10
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f ms\n", (b - a) * 1000 }'
}
keys h
echo "help after $(within_1s "Interactive commands")"
keys z
expect "kvm statistics" 10
start=$EPOCHREALTIME
keys q
for _ in $(seq 20); do [ -s "$TMP/exit" ] && break; sleep 0.05; done
[ -s "$TMP/exit" ] || fail "q did not end the monitor within 1 s during the flood (stderr: $(head -c 300 "$TMP/err"))"
grep -qx 'EXIT=0' "$TMP/exit" || fail "monitor ended with $(cat "$TMP/exit"): $(cat "$TMP/err")"
echo "ok: q ended the monitor after $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms; the flood goes on: $(kill -0 "${PIDS[0]}" && echo yes)"
