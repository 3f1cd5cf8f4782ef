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
tmux_cleanup() {
	local s
	for s in "$S" "$S-h" "$S-c" "$S-hup"; do tmux kill-session -t "$s" 2>/dev/null; done
	cleanup
}
trap tmux_cleanup EXIT

# busy until the test ends them (cleanup): on the emulated KVM host the
# steps below take minutes, not seconds; niced (here and below), or their
# vCPUs take the CPUs from the monitor and tmux (they doubled this test's
# time there)
nice -n 19 tests/guest/kvmguest -m 1 -v 3 -n 0 -k pio -t 900 >"$TMP/a.out" &
PIDS+=($!)
nice -n 19 tests/guest/kvmguest -m 1 -v 1 -n 0 -k hlt -t 900 >"$TMP/b.out" &
PIDS+=($!)
for _ in $(seq 600); do grep -q ready "$TMP/a.out" && grep -q ready "$TMP/b.out" && break; sleep 0.05; done
grep -q ready "$TMP/a.out" && grep -q ready "$TMP/b.out" || fail "guests not ready in 30 s"
vm_a=$(awk '$1 == "vm" { print $2 }' "$TMP/a.out")
vm_b=$(awk '$1 == "vm" { print $2 }' "$TMP/b.out")
tids_a=$(awk '$1 == "vcpu" { print $4 }' "$TMP/a.out")

tmux new-session -d -s "$S" -x 120 -y 30 \
	"$KVMSTAT -t -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh

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
# a VM that starts is picked up; one that exits is marked gone (it lives
# until it is shown: on the emulated KVM host that takes seconds). Not
# niced: beside the niced busy ones it got too little CPU to start and
# exit within the wait (both kernels, in a CI run)
tests/guest/kvmguest -m 1 -v 1 -n 0 -k pio -t 900 >"$TMP/c.out" &
c_pid=$!
PIDS+=($c_pid)
for _ in $(seq 200); do grep -q ready "$TMP/c.out" && break; sleep 0.05; done
vm_c=$(awk '$1 == "vm" { print $2 }' "$TMP/c.out")
[ -n "$vm_c" ] || fail "guest c not ready: $(cat "$TMP/c.out")"
expect "$vm_c "
kill -TERM "$vm_c"
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

resize_and_quit

# binary stats: a histogram's buckets in order; Enter shows its detail.
# KVM fills halt_wait_hist only for halts that waited in the kernel (an
# in-kernel irqchip): idle vCPUs, each woken every 20 ms (a HLT exit to
# user space, as -k hlt makes, never waits and leaves it empty)
tests/guest/kvmguest -s -m 1 -v 2 -n 0 -k idle -W 20 -t 900 >"$TMP/h.out" &
PIDS+=($!)
for _ in $(seq 100); do grep -q ready "$TMP/h.out" && break; sleep 0.05; done
tmux new-session -d -s "$S-h" -x 120 -y 50 "LANG=C.UTF-8 $KVMSTAT -S -s 0.5 -f 'halt_wait_hist'"
S0=$S; S=$S-h
expect "halt_wait_hist"
expect "  halt_wait_hist("
# the buckets that counted, in their order (rows that counted nothing
# are hidden, as kvm_stat hides them)
shown=$(screen | grep -o 'halt_wait_hist([0-9]*)' | tr -dc '0-9\n')
[ -n "$shown" ] && [ "$shown" = "$(sort -n <<<"$shown")" ] ||
	fail "buckets out of order: $(screen)"
keys Up Enter
expect "kvm statistics - histogram halt_wait_hist"
expect "[1 ns, 2 ns)"
expect "[512 ns, 1.02 µs)"
expect "halt_wait_hist this interval: p50 <"
keys Escape; expect "kvm statistics - summary"
keys q
tmux kill-session -t "$S" 2>/dev/null
S=$S0

# a crash restores the terminal first; a closed terminal ends the monitor
crash_and_hangup -t -s 1 -f '^kvm_pio\$'
echo ok
