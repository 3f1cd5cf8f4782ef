#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor in a locale whose decimal separator is a comma (de_DE.UTF-8,
# made by localedef into this test's directory where the host has none):
# kvmstat takes the user's character set only (issue 20), so µs is still
# written as such, but numbers stay in the C locale: the header says
# "delay 1.0s", the delay prompt takes 0.5 (and says "0.5" after), the
# %Total and time columns print a point, and no number on the screen has
# a comma. A debugfs fixture whose counters a loop moves, no KVM needed.
source tests/system/lib.sh
command -v tmux >/dev/null || skip "tmux not installed"

L=de_DE.UTF-8
if [ "$(LC_ALL=$L locale decimal_point 2>/dev/null)" != , ]; then
	command -v localedef >/dev/null || skip "no $L locale and no localedef to make it (package locales)"
	mkdir -p "$TMP/locale"
	localedef -i de_DE -f UTF-8 "$TMP/locale/$L" 2>"$TMP/localedef.err" ||
		skip "localedef cannot make $L: $(tail -1 "$TMP/localedef.err") (package locales)"
	export LOCPATH=$TMP/locale
fi
[ "$(LC_ALL=$L locale decimal_point)" = , ] || fail "$L has no decimal comma: $(LC_ALL=$L locale decimal_point)"

S=kvmstat-loc-$$
tmux_cleanup() {
	tmux kill-session -t "$S" 2>/dev/null
	cleanup
}
trap tmux_cleanup EXIT
D=$TMP/dbg
mkdir -p "$D"
for f in exits halt_exits; do echo 0 >"$D/$f"; done
echo 2500 >"$D/halt_wait_ns"
(
	put() { printf '%d\n' "$2" 1<>"$D/$1"; }
	a=0
	while :; do
		a=$((a + 50))
		put exits $a; put halt_exits $((a / 3)); put halt_wait_ns $((2500 + a * 7))
		sleep 0.1
	done
) &
PIDS+=($!)

tmux new-session -d -s "$S" -x 120 -y 30 \
	"LC_ALL=$L LOCPATH=${LOCPATH:-} KVMSTAT_DEBUGFS_ROOT=$D $KVMSTAT -d -s 1; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh

expect "kvm statistics - summary"
expect "delay 1.0s"
# the user's character set is still taken: UTF-8, so µs and not us
expect "µs"
keys s; expect "[now: 1.0]:"; keys 0.5 Enter
expect "delay 0.5s"
screen | grep -q 'is not from' && fail "0.5 refused: $(screen)"
keys s; expect "[now: 0.5]:"; keys Escape
sleep 1.2
row exits | grep -qE '^exits +[0-9]+ +[0-9]+\.[0-9] +[0-9]+$' || fail "exits' %Total not with a point: $(screen)"
row halt_wait_ns | grep -qE '^halt_wait_ns +[0-9]+\.[0-9]+ µs +[0-9]+\.[0-9]+%w' ||
	fail "halt_wait_ns not with points: $(screen)"
screen | grep -E '[0-9],[0-9]' && fail "a number with a decimal comma: $(screen)"
echo "ok: in $L: delay 0.5 taken, numbers with a point: $(row exits); $(row halt_wait_ns)"
resize_and_quit
