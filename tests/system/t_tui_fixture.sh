#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor under tmux with no KVM at all: a debugfs fixture tree whose
# counters a loop moves, a fake /proc that makes its VMs look like QEMU
# processes (guest names, "CPU N/KVM" threads), and a fake QEMU monitor
# with a histogram. Every key (help, filter and its errors, pid and guest
# prompts and their errors, sort, child events, per-guest view with a VM
# that starts and one that exits, vCPU drill-down, reset, delay), the
# histogram detail view, a *_ns counter shown as a time, a resize to 40x10
# and back, q leaving the terminal as it was with status 0, a crash and a
# closed terminal.
source tests/system/lib.sh
command -v tmux >/dev/null || skip "tmux not installed"
command -v python3 >/dev/null || skip "no python3 for the fake QMP server"

S=kvmstat-f-$$
tmux_cleanup() {
	local s
	for s in "$S" "$S-h" "$S-c" "$S-hup"; do tmux kill-session -t "$s" 2>/dev/null; done
	cleanup
}
trap tmux_cleanup EXIT
D=$TMP/dbg P=$TMP/proc

# vm PID NAME NVCPU: a VM directory in the fixture and a QEMU in /proc
vm() {
	local pid=$1 name=$2 n=$3 tid c f
	mkdir -p "$D/$pid-12" "$P/$pid/fd" "$P/$pid/task"
	ln -sf anon_inode:kvm-vm "$P/$pid/fd/12"
	printf 'qemu-system-x86_64\0-name\0guest=%s,debug-threads=on\0' "$name" \
		>"$P/$pid/cmdline"
	for f in exits halt_exits io_exits; do echo 0 >"$D/$pid-12/$f"; done
	echo 1 >"$D/$pid-12/guest_mode"; chmod 0444 "$D/$pid-12/guest_mode"
	for c in $(seq 0 $((n - 1))); do
		tid=$((pid + 1 + c))
		mkdir -p "$D/$pid-12/vcpu$c" "$P/$pid/task/$tid"
		echo "$tid" >"$D/$pid-12/vcpu$c/pid"
		echo 0 >"$D/$pid-12/vcpu$c/guest_mode"
		chmod 0444 "$D/$pid-12/vcpu$c/guest_mode"
		echo "CPU $c/KVM" >"$P/$pid/task/$tid/comm"
	done
}
mkdir -p "$D" "$P"
for f in exits halt_exits io_exits; do echo 0 >"$D/$f"; done
echo 1 >"$D/guest_mode"; chmod 0444 "$D/guest_mode"
echo 2500 >"$D/halt_wait_ns"
vm 4242 alpha 3
vm 4343 beta 1
# a process that is no VM
mkdir -p "$P/555/fd"; ln -s /dev/null "$P/555/fd/0"; printf 'bash\0' >"$P/555/cmdline"
# VM 4242 makes 50 exits a tick, 4343 makes 7 and one halt. Each value is
# written over the old one in one write, never truncated first: a reader
# must not catch an empty file (the values only grow, so no digit stays).
(
	put() { printf '%d\n' "$2" 1<>"$D/$1"; }
	a=0 b=0
	while :; do
		a=$((a + 50)) b=$((b + 7))
		put 4242-12/exits $a; put 4343-12/exits $b; put exits $((a + b))
		put 4343-12/halt_exits $((b / 7)); put halt_exits $((b / 7))
		put halt_wait_ns $((2500 + a))
		sleep 0.1
	done 2>/dev/null	# 4343's directory goes away below
) &
PIDS+=($!)
python3 tests/fakes/fakeqmp.py "$TMP/qmp.sock" 40 hist >"$TMP/srv.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q '^ready' "$TMP/srv.out" && break; sleep 0.1; done
qpid=$(awk '$1 == "ready" { print $2 }' "$TMP/srv.out")
[ -n "$qpid" ] || fail "fake QMP server did not start: $(cat "$TMP/srv.out")"

SRC="-d --qmp $TMP/qmp.sock"
# the fixture roots, through the environment (tmux and crash_and_hangup
# run $KVMSTAT as a command line)
KVMSTAT="env KVMSTAT_DEBUGFS_ROOT=$D KVMSTAT_PROC_ROOT=$P $KVMSTAT"
tmux new-session -d -s "$S" -x 120 -y 30 \
	"$KVMSTAT $SRC -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh

expect "kvm statistics - summary"
expect "[debugfs qmp]"
screen | grep -q 'Total  *%Total  *CurAvg/s' || fail "columns: $(screen)"
for _ in $(seq 30); do
	rate=$(row exits | awk '{ print $NF }')
	[ -n "$rate" ] && [ "$rate" -gt 0 ] && break
	sleep 0.1
done
[ -n "$rate" ] && [ "$rate" -gt 100 ] || fail "exits rate is '$rate' while the counters move: $(screen)"
# sorted by CurAvg/s: exits first
[ "$(screen | sed -n 4p | awk '{ print $1 }')" = exits ] || fail "sort: $(screen)"
# a *_ns file is a time: in its unit, and as a share of wall time (it
# moves 50 ns a tick: a row that counts nothing is left out)
row halt_wait_ns | grep -qE '^halt_wait_ns +[0-9.]+ (ns|µs|us) +[0-9.]+%w +[0-9.]+ (ns|µs|us)/s$' ||
	fail "halt_wait_ns not a time: $(screen)"
# events that counted nothing are left out, as in kvm_stat
[ -z "$(row io_exits)" ] || fail "io_exits counted nothing but is shown: $(screen)"
# the Total line sums the events
sum=$(screen | awk '$1 == "exits" || $1 == "halt_exits" { s += $2 } END { print s + 0 }')
expect "Total"
tot=$(row Total | awk '{ print $2 }')
[ -n "$tot" ] && [ "$tot" -ge "$sum" ] || fail "Total '$tot' below exits + halt_exits ($sum): $(screen)"

keys h; expect "Interactive commands"; keys z; expect "kvm statistics - summary"
# ? is h's alias; the help screen is drawn whole from the key table
keys '?'; expect "Interactive commands"; expect "Up Down PgUp PgDn Home End"
expect "Any other key refreshes at once"; keys z; expect "kvm statistics - summary"

keys f; expect "Filter fields"; keys BSpace "(" Enter
expect "invalid regular expression"
keys Escape; expect_not "Filter fields"
keys f; keys "halt_exits" Enter; expect "filter halt_exits"
sleep 0.8
[ "$(screen | sed -n '4,$p' | grep -c '^[a-z]')" = 1 ] || fail "filter halt_exits shows: $(screen)"
keys c; expect_not "filter halt_exits"

keys p; expect "Show pid"; keys 555 Enter; expect "is not a KVM VM"; keys Escape
keys p; keys 4343 Enter; expect "kvm statistics - pid 4343"
for _ in $(seq 30); do	# the first rate after the change
	rate=$(row exits | awk '{ print $NF }')
	[ -n "$rate" ] && [ "$rate" -gt 0 ] && break
	sleep 0.1
done
[ -n "$rate" ] && [ "$rate" -gt 20 ] && [ "$rate" -lt 300 ] ||
	fail "pid 4343 exits rate '$rate' (about 70/s): $(screen)"
keys c; expect "kvm statistics - summary"
keys g; expect "Show guest"; keys nosuchguest Enter; expect "nosuchguest"; keys Escape
keys g; keys alpha Enter; expect "kvm statistics - pid 4242 (alpha)"
keys c; expect "kvm statistics - summary"

keys o; expect "Total*"; keys o; expect "CurAvg/s*"

keys x; expect "+children"; expect "  halt_wait_hist(4)"
keys x; expect_not "+children"

keys b; expect "kvm statistics - guests"
expect "4242    alpha"; expect "4343    beta"; expect "$qpid "
# a VM that starts is picked up; one that exits is marked gone
vm 4444 gamma 2
expect "4444    gamma"
# moved away in one step: an rm -rf racing the writer's next put could
# leave the directory with a new file in it
mv "$D/4343-12" "$TMP/4343-gone"
rm -rf "$TMP/4343-gone" "$P/4343"
expect "(gone)" 40
# the list goes by pid: 4242 is first unless the fake QEMU monitor's real
# pid is lower (pids wrap)
down=()
[ "$qpid" -lt 4242 ] && down=(Down)
keys Home "${down[@]}" Enter; expect "vCPUs of pid 4242"
for t in 4243 4244 4245; do expect "$t"; done
keys Escape; expect "kvm statistics - guests"
keys b; expect "kvm statistics - summary"

sleep 1
before=$(row exits | awk '{ print $2 }')
keys r
# the row is back at the next refresh (at 0 it is left out), lower
for _ in $(seq 50); do
	after=$(row exits | awk '{ print $2 }')
	[ -n "$after" ] && [ "$after" -lt "$before" ] && break
	sleep 0.1
done
[ -n "$after" ] && [ "$after" -lt "$before" ] || fail "r did not reset exits' total ($before -> $after)"

keys s; expect "Update interval"; keys BSpace BSpace BSpace "30" Enter
expect "is not from 0.1 to 25.5"; keys BSpace BSpace "1" Enter
expect "delay 1.0s"

resize_and_quit
tmux kill-session -t "$S"

# the histogram: buckets in order; Enter shows its detail with ranges
tmux new-session -d -s "$S-h" -x 120 -y 40 \
	"LANG=C.UTF-8 $KVMSTAT --qmp $TMP/qmp.sock -s 0.5 -f halt_wait_hist"
S=$S-h
expect "  halt_wait_hist(1) "
[ "$(screen | grep -o 'halt_wait_hist([0-9]*)' | head -3 | tr '\n' ' ')" = "halt_wait_hist(0) halt_wait_hist(1) halt_wait_hist(2) " ] ||
	fail "buckets out of order: $(screen)"
keys Up Enter
expect "kvm statistics - histogram halt_wait_hist"
expect "[8 ns, 16 ns)"
# per interval 1, 2 and 3 in buckets 1, 2 and 4: the median is below 4 ns
expect "p50 < 4 ns, p90 < 16 ns"
keys Escape; expect "kvm statistics - summary"
keys q
tmux kill-session -t "$S"

# a crash restores the terminal first; a closed terminal ends the monitor
crash_and_hangup $SRC -s 1
echo ok
