#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor in a locale whose decimal separator is a comma (de_DE.UTF-8,
# made by localedef into this test's directory where the host has none):
# kvmstat takes the user's character set only (issue 20), so µs is still
# written as such, but numbers stay in the C locale: the header says
# "delay 1.0s", the delay prompt takes 0.5 (and says "0.5" after), the
# %Total and time columns print a point, and no number on the screen has
# a comma. In the POSIX locale (LANG, LC_ALL and LC_CTYPE unset, as under
# cron, ssh and systemd) the terminal cannot be given a µ: the times say
# us (issue 31), never the bare s a dropped µ leaves; in C.UTF-8 µs
# again. A debugfs fixture whose counters a loop moves, no KVM needed
# (t_units_locale.sh checks the latency view and the text outputs).
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
tmux kill-session -t "$S"

# monitor ENV...: the monitor on the fixture, in the locale of env ENV
# (the system's locales: not de_DE's LOCPATH)
monitor() {
	rm -f "$TMP/exit"
	tmux new-session -d -s "$S" -x 120 -y 30 \
		"env -u LOCPATH $* KVMSTAT_DEBUGFS_ROOT=$D $KVMSTAT -d -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
	expect "kvm statistics - summary"
}
# time_row UNIT: halt_wait_ns's total and rate come to be in UNIT (us or
# µs: the total counts from 0 ns, 3.5 µs a second)
time_row() {
	local re="^halt_wait_ns +[0-9]+(\.[0-9]+)? $1 +[0-9]+\.[0-9]+%w +[0-9]+(\.[0-9]+)? $1/s\$"
	for _ in $(seq 100); do row halt_wait_ns | grep -qE "$re" && return; sleep 0.1; done
	fail "halt_wait_ns not in $1: $(screen)"
}
monitor -u LANG -u LC_ALL -u LC_CTYPE
time_row us
screen | grep -q $'\xc2\xb5' && fail "a µ in the POSIX locale: $(screen)"
screen | grep -E '[0-9] +s( |/|$)' && fail "a time in bare s: $(screen)"
echo "ok: POSIX locale: $(row halt_wait_ns)"
resize_and_quit
tmux kill-session -t "$S"
monitor -u LANG LC_ALL=C.UTF-8
time_row µs
echo "ok: C.UTF-8: $(row halt_wait_ns)"
resize_and_quit
