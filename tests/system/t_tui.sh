#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor under tmux against two busy test guests: first screen, rates,
# every key (help, filter and its errors, pid prompt and its errors, sort,
# child events, per-guest view, vCPU drill-down, reset, delay), a resize
# to 40x10 and back, and q leaving the terminal as it was with status 0.
source tests/system/lib.sh
need_kvm
command -v tmux >/dev/null || skip "tmux not installed"

S=kvmstat-t-$$
tmux_cleanup() { tmux kill-session -t "$S" 2>/dev/null; cleanup; }
trap tmux_cleanup EXIT

tests/guest/kvmguest -m 1 -v 3 -n 0 -k pio -t 60 >"$TMP/a.out" &
PIDS+=($!)
tests/guest/kvmguest -m 1 -v 1 -n 0 -k hlt -t 60 >"$TMP/b.out" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$TMP/a.out" && grep -q ready "$TMP/b.out" && break; sleep 0.05; done
vm_a=$(awk '$1 == "vm" { print $2 }' "$TMP/a.out")
vm_b=$(awk '$1 == "vm" { print $2 }' "$TMP/b.out")
tids_a=$(awk '$1 == "vcpu" { print $4 }' "$TMP/a.out")

tmux new-session -d -s "$S" -x 120 -y 30 \
	"$KVMSTAT -t -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
screen() { tmux capture-pane -p -t "$S"; }
keys() { tmux send-keys -t "$S" "$@"; }
# expect TEXT [TIMEOUT]: until the screen shows TEXT
expect() {
	for _ in $(seq 1 "${2:-60}"); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	fail "screen lacks '$1':
$(screen)"
}
expect_not() {
	sleep 0.8
	! screen | grep -qF -- "$1" || fail "screen still shows '$1':
$(screen)"
}
row() { screen | awk -v n="$1" '$1 == n'; }

expect "kvm statistics - summary"
expect "Event"
screen | grep -q 'Total  *%Total  *CurAvg/s' || fail "columns: $(screen)"
expect "[tracepoint]"
sleep 1.2
rate=$(row kvm_pio | awk '{ print $NF }')
[ -n "$rate" ] && [ "$rate" != 0 ] || fail "kvm_pio rate is '$rate' while the guest runs: $(screen)"

keys h; expect "Interactive commands"; keys z; expect "kvm statistics - summary"

keys f; expect "Filter fields"; keys BSpace "(" Enter
expect "invalid regular expression"
keys Escape; expect_not "Filter fields"
keys f; keys "kvm_pio" Enter; expect "filter kvm_pio"
sleep 0.8
[ "$(screen | grep -c '^kvm_')" = 1 ] || fail "filter kvm_pio shows: $(screen)"
keys c; expect_not "filter kvm_pio"

keys p; expect "Show pid"; keys 1 Enter; expect "is not a KVM VM"; keys Escape
keys p; keys "$vm_a" Enter; expect "kvm statistics - pid $vm_a"
keys c; expect "kvm statistics - summary"

keys o; expect "Total*"; keys o; expect "CurAvg/s*"

keys x; expect "+children"; expect "  kvm_userspace_exit(IO)"
keys x; expect_not "+children"

keys b; expect "kvm statistics - guests"
expect "$vm_a "; expect "$vm_b "
# a VM that starts is picked up; one that exits is marked gone
tests/guest/kvmguest -m 1 -v 1 -n 0 -k pio -t 1.5 >"$TMP/c.out" &
c_pid=$!
PIDS+=($c_pid)
for _ in $(seq 100); do grep -q ready "$TMP/c.out" && break; sleep 0.05; done
vm_c=$(awk '$1 == "vm" { print $2 }' "$TMP/c.out")
expect "$vm_c "
wait "$c_pid"
expect "(gone)" 40
keys Home Enter; expect "vCPUs of pid"
sel=$(screen | sed -n 's/.*vCPUs of pid \([0-9]*\).*/\1/p')
if [ "$sel" = "$vm_a" ]; then
	for t in $tids_a; do expect "$t"; done
fi
keys Escape; expect "kvm statistics - guests"
keys b; expect "kvm statistics - summary"

sleep 1
before=$(row kvm_pio | awk '{ print $2 }')
keys r; sleep 0.3
after=$(row kvm_pio | awk '{ print $2 }')
[ "$after" != "$before" ] || fail "r did not reset kvm_pio's total ($before)"

keys s; expect "Update interval"; keys BSpace BSpace BSpace "30" Enter
expect "is not from 0.1 to 25.5"; keys BSpace BSpace "1" Enter
expect "delay 1.0s"

tmux resize-window -t "$S" -x 40 -y 10 2>/dev/null || tmux resize-pane -t "$S" -x 40 -y 10
expect "terminal too small"
tmux resize-window -t "$S" -x 120 -y 30 2>/dev/null || tmux resize-pane -t "$S" -x 120 -y 30
expect "kvm statistics - summary"; expect "Event"

keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
# the terminal is back: curses left the alternate screen
[ "$(tmux display -p -t "$S" '#{alternate_on}')" = 0 ] || fail "alternate screen still on"

# binary stats: a histogram's buckets in order; Enter shows its detail
tests/guest/kvmguest -s -m 1 -v 2 -n 0 -k hlt -t 20 >"$TMP/h.out" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$TMP/h.out" && break; sleep 0.05; done
tmux new-session -d -s "$S-h" -x 120 -y 50 "LANG=C.UTF-8 $KVMSTAT -S -s 0.5 -f 'halt_wait_hist'"
S0=$S; S=$S-h
expect "halt_wait_hist"
expect "  halt_wait_hist(1) "
[ "$(screen | grep -o 'halt_wait_hist([0-9]*)' | head -3 | tr '\n' ' ')" = "halt_wait_hist(0) halt_wait_hist(1) halt_wait_hist(2) " ] ||
	fail "buckets out of order: $(screen)"
keys Up Enter
expect "kvm statistics - histogram halt_wait_hist"
expect "[1 ns, 2 ns)"
expect "[512 ns, 1.02 µs)"
keys Escape; expect "kvm statistics - summary"
keys q
tmux kill-session -t "$S" 2>/dev/null
S=$S0

# a crash inside kvmstat: the terminal is restored first, then reported
tmux new-session -d -s "$S-c" -x 80 -y 24 "$KVMSTAT -t -s 1 -f '^kvm_pio\$'; sleep 5"
sleep 1
mon=$(pgrep -P "$(tmux list-panes -t "$S-c" -F '#{pane_pid}')" -x kvmstat)
[ -n "$mon" ] || fail "no monitor to crash"
kill -SEGV "$mon"
sleep 0.8
tmux capture-pane -p -t "$S-c" | grep -q "internal error (fatal signal); the terminal was restored" ||
	fail "crash not reported: $(tmux capture-pane -p -t "$S-c")"
[ "$(tmux display -p -t "$S-c" '#{alternate_on}')" = 0 ] || fail "crash left the alternate screen on"
tmux kill-session -t "$S-c"

# a terminal that goes away (window closed) ends the monitor, no spinning
tmux new-session -d -s "$S-hup" -x 80 -y 24 "$KVMSTAT -t -s 0.5 -f '^kvm_pio\$'"
sleep 1
mon=$(tmux list-panes -t "$S-hup" -F '#{pane_pid}')
tmux kill-session -t "$S-hup"
for _ in $(seq 30); do
	st=$(ps -o stat= -p "$mon" 2>/dev/null)
	case "$st" in ""|Z*) break ;; esac
	sleep 0.1
done
case "$st" in ""|Z*) ;; *) fail "monitor $mon still running (state $st) after its terminal closed" ;; esac
echo ok
