#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Units follow the locale's character set (issue 31). Where it is not
# UTF-8 (the POSIX locale, LANG, LC_ALL and LC_CTYPE unset, of cron, ssh
# and systemd; LC_ALL=C; a Latin-1 locale made by localedef) every text
# output writes microseconds as "us"; in a UTF-8 one (C.UTF-8, another
# installed) as "µs", the most specific variable deciding; never the
# "21.7   s" (read as seconds) a terminal makes of a µ it cannot show.
# -1 --units on a debugfs fixture (JSON the same in every locale); then,
# with root, on the fake tracefs of latency_lib.sh and breakdown_lib.sh
# (tpgap's exits of 20 and 200 µs, tpkeys's port hits 10 µs after an
# exit and 70 µs before re-entry): -1's --latency and --breakdown tables
# in both locales, and the monitor's latency view (l) in the POSIX one.
source tests/system/lib.sh

PLAIN=(-u LANG -u LC_ALL -u LC_CTYPE)
D=$TMP/dbg
mkdir -p "$D"
echo 5 >"$D/exits"
echo 21700 >"$D/halt_wait_ns"

# units UNIT ENV...: -1 --units in the locale of env ENV writes 21.7 UNIT
units() {
	local unit=$1 out
	shift
	out=$(env "$@" KVMSTAT_DEBUGFS_ROOT="$D" "$KVMSTAT" -d -i -1 --units -s 0.1 \
		-f '^halt_wait_ns$' 2>"$TMP/u.err") || fail "env $*: status $?: $(cat "$TMP/u.err")"
	grep -qE "^halt_wait_ns +21700 +0  21\.7 $unit  \+0 ns  0\.0%$" <<<"$out" ||
		fail "env $*: want 21.7 $unit: $out"
	echo "ok: env $*: $(tr -s ' ' <<<"$out")"
}
units us "${PLAIN[@]}"
units us -u LANG -u LC_CTYPE LC_ALL=C
units us -u LC_ALL -u LC_CTYPE LANG=POSIX
units µs -u LC_ALL -u LC_CTYPE LANG=C.UTF-8
units µs -u LC_ALL -u LANG LC_CTYPE=C.UTF-8
# LC_ALL over LC_CTYPE over LANG, as setlocale reads them
units us LC_ALL=C LC_CTYPE=C.UTF-8 LANG=C.UTF-8
units us -u LC_ALL LC_CTYPE=C LANG=C.UTF-8
units µs LC_ALL=C.UTF-8 LC_CTYPE=C LANG=C
# a locale the system lacks is the C locale
units us -u LANG -u LC_CTYPE LC_ALL=xx_NOWHERE.UTF-8
other=$(locale -a 2>/dev/null | grep -iE '\.utf-?8$' | grep -viE '^(c|posix)\.' | head -n 1)
if [ -n "$other" ]; then
	units µs -u LANG -u LC_CTYPE LC_ALL="$other"
else
	echo "note: no UTF-8 locale installed but C.UTF-8"
fi
# not C and not UTF-8: what counts is the character set
mkdir -p "$TMP/locale"
if command -v localedef >/dev/null &&
	localedef -i de_DE -f ISO-8859-1 "$TMP/locale/de_DE.ISO-8859-1" >"$TMP/localedef.err" 2>&1; then
	units us -u LANG -u LC_CTYPE LOCPATH="$TMP/locale" LC_ALL=de_DE.ISO-8859-1
else
	echo "note: localedef cannot make de_DE.ISO-8859-1 (package locales): a Latin-1 locale is not checked"
fi
# JSON is the same in every locale
json() {
	env "$@" KVMSTAT_DEBUGFS_ROOT="$D" "$KVMSTAT" -d -i --json -1 -s 0.1 -f '^halt_wait_ns$' |
		jq -S 'del(.timestamp, .epoch, .interval)'
}
[ "$(json "${PLAIN[@]}")" = "$(json LC_ALL=C.UTF-8)" ] ||
	fail "JSON differs by locale: $(json "${PLAIN[@]}")"
echo "ok: JSON the same in the POSIX locale and C.UTF-8"

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/tracing/events/kvm/kvm_entry/format ]; then
	echo "note: the latency and breakdown tables need root and the kvm tracepoints: not checked"
	exit 0
fi
source tests/system/latency_lib.sh
source tests/system/breakdown_lib.sh
# one tree: kvm_pio... (syscalls), kvm_exit (task_rename), kvm_entry
# (oom_score_adj_update, both trees')
breakdown_tracefs "$TMP/tracefs"
latency_tracefs "$TMP/tracefs"

# fakes N: tpgap's 100 HLT exits of 20 µs and 50 IO of 200 µs, and
# tpkeys kN's 100 hits of port 0x70 each 10 µs after an exit and 70 µs
# before its re-entry, all waiting for their go
fakes() {
	rm -f "$TMP/go"
	fresh "$TMP/tp.out"
	start_tpgap 12:20:100 30:200:50
	start_tpkeys "k$1" 0:ioport:0x70:1:100:70:1:10
}
go_fakes() {
	go_tpgap
	go_tpkeys "k$1"
}

# no_bare_s TEXT: no µ and no time in bare seconds (a µ dropped)
no_bare_s() {
	grep -q $'\xc2\xb5' <<<"$1" && fail "a µ in the POSIX locale: $1"
	grep -E '[0-9] +s( |$)' <<<"$1" && fail "a time in bare s: $1"
	return 0
}

# port_re UNIT: port 0x70's row, its min and p50 in UNIT (its max and p99
# may be longer where the machine is loaded)
port_re() {
	echo "^ *0x70:POUT +CMOS_INDEX +100 +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9.]+ $1 .* < [0-9.]+ $1 +< [0-9.]+ [um$1]*s\$"
}

# tables N UNIT ENV...: -1's tables in the locale of env ENV, in UNIT
tables() {
	local n=$1 u=$2 hlt io port pid
	shift 2
	fakes "$n"
	# env execs kvmstat: one process
	env "$@" KVMSTAT_TRACEFS_ROOT="$TMP/tracefs" "$KVMSTAT" -t -1 -s 2 \
		--latency --breakdown ioport -f '^kvm_entry$' >"$TMP/t$n.out" 2>"$TMP/t$n.err" &
	pid=$!
	PIDS+=("$pid")
	wait_polling "$pid"
	go_fakes "$n"
	wait "$pid" || fail "env $*: status $?: $(cat "$TMP/t$n.err")"
	end_tpkeys "k$n"
	hlt=$(grep -E '^ HLT ' "$TMP/t$n.out")
	io=$(grep -E '^ IO_INSTRUCTION ' "$TMP/t$n.out")
	port=$(grep -E '^ 0x70:POUT ' "$TMP/t$n.out")
	[[ $hlt == *"< 32.8 $u"* ]] || fail "env $*: HLT p50 not < 32.8 $u: $(cat "$TMP/t$n.out")"
	[[ $io == *"< 262 $u"* ]] || fail "env $*: IO_INSTRUCTION p50 not < 262 $u: $(cat "$TMP/t$n.out")"
	grep -qE "$(port_re "$u")" <<<"$port" ||
		fail "env $*: port 0x70's times not in $u: $(cat "$TMP/t$n.out")"
	echo "ok: env $*: $(tr -s ' ' <<<"$hlt"); $(tr -s ' ' <<<"$port")"
}
tables 1 us "${PLAIN[@]}"
no_bare_s "$(cat "$TMP/t1.out")"
tables 2 µs LC_ALL=C.UTF-8

# the monitor's latency view in the POSIX locale, on the latency tree
# alone (beside the syscall tracepoints, the monitor's child events of
# the fake kvm_exit would need filters on fields task_rename lacks; its
# breakdown view draws with the same flags as its latency view)
command -v tmux >/dev/null || { echo "note: no tmux: the monitor's latency view is not checked"; exit 0; }
S=kvmstat-units-$$
tmux_cleanup() { tmux kill-session -t "$S" 2>/dev/null; cleanup; }
trap tmux_cleanup EXIT
source tests/system/tui_lib.sh
latency_tracefs "$TMP/lat"
rm -f "$TMP/go"
fresh "$TMP/tp.out"
start_tpgap 12:20:100 30:200:50
tmux new-session -d -s "$S" -x 150 -y 30 \
	"env ${PLAIN[*]} KVMSTAT_TRACEFS_ROOT=$TMP/lat $KVMSTAT -t -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "kvm statistics - summary"
keys l
expect "Exit latency (kvm_exit to kvm_entry)"
go_tpgap
# (other processes that rename a thread may add exits of their own)
for _ in $(seq 100); do
	[ "$(row HLT | awk '{ print $2 }')" -ge 100 ] 2>/dev/null &&
		[ "$(row IO_INSTRUCTION | awk '{ print $2 }')" -ge 50 ] 2>/dev/null && break
	sleep 0.1
done
[[ $(row HLT) == *"< 32.8 us"* ]] || fail "l: HLT: $(screen)"
[[ $(row IO_INSTRUCTION) == *"< 262 us"* ]] || fail "l: IO_INSTRUCTION: $(screen)"
row HLT | grep -qE '^ *HLT +[0-9]+ +[0-9.]+% +[0-9.]+ us +[0-9.]+ us ' || fail "l: HLT's min and avg: $(screen)"
no_bare_s "$(screen)"
echo "ok: l: $(row HLT | tr -s ' ')"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
echo ok
