#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor on arm64 under tmux (issue 33), two busy test guests (HVC
# calls and WFI halts): the first screen in kvm_stat's columns, the arm64
# events with rates, child events by exception class (x), the guests'
# view (b), one guest's (p), the binary stats' arm64 fields beside (-S),
# a resize, and q leaving the terminal as it was with status 0.
source tests/arm64/lib.sh
need_arm64
command -v tmux >/dev/null || fail "no tmux on this host"

S=kvmstat-t-$$
tmux_cleanup() {
	local s
	for s in "$S" "$S-c" "$S-hup"; do tmux kill-session -t "$s" 2>/dev/null; done
	cleanup
}
trap tmux_cleanup EXIT

# busy until the test ends them (cleanup); niced: their vCPUs would
# otherwise take the emulated host's CPUs from the monitor and tmux
nice -n 19 "$GUEST" -s -v 2 -n 0 -k hvc -t 900 >"$TMP/a.out" &
PIDS+=($!)
nice -n 19 "$GUEST" -s -v 1 -n 0 -k wfi -t 900 >"$TMP/b.out" &
PIDS+=($!)
for _ in $(seq 600); do grep -q ready "$TMP/a.out" && grep -q ready "$TMP/b.out" && break; sleep 0.05; done
grep -q ready "$TMP/a.out" && grep -q ready "$TMP/b.out" || fail "guests not ready in 30 s"
vm_a=$(awk '$1 == "vm" { print $2 }' "$TMP/a.out")
vm_b=$(awk '$1 == "vm" { print $2 }' "$TMP/b.out")

tmux new-session -d -s "$S" -x 120 -y 30 \
	"$KVMSTAT -t -S -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh

expect "kvm statistics - summary" 300
expect "Event"
screen | grep -q 'Total  *%Total  *CurAvg/s' || fail "columns: $(screen)"
for f in kvm_hvc_arm64 kvm_wfx_arm64 hvc_exit_stat wfi_exit_stat; do
	expect "$f " 100
done
sleep 1.2
for f in kvm_hvc_arm64 kvm_wfx_arm64; do
	rate=$(row $f | awk '{ print $NF }')
	[ -n "$rate" ] && [ "$rate" != 0 ] || fail "$f's rate is '$rate' while the guests run: $(screen)"
done
echo "ok: the first screen: kvm_hvc_arm64, kvm_wfx_arm64 with rates; hvc_exit_stat, wfi_exit_stat"

keys x; expect "+children"; expect "  kvm_exit(HVC64)"; expect "  kvm_exit(WFx)"
keys x; expect_not "+children"
echo "ok: x: kvm_exit's children by exception class"

keys b; expect "kvm statistics - guests"
expect "$vm_a "; expect "$vm_b "
keys b; expect "kvm statistics - summary"
keys p; expect "Show pid"; keys "$vm_a" Enter; expect "kvm statistics - pid $vm_a"
sleep 1.2
[ -n "$(row kvm_hvc_arm64)" ] || fail "pid $vm_a: no kvm_hvc_arm64: $(screen)"
[ -z "$(row kvm_wfx_arm64 | awk '$NF != 0')" ] || fail "pid $vm_a shows the other guest's WFI rate: $(screen)"
keys c; expect "kvm statistics - summary"
echo "ok: b lists both guests; p $vm_a shows its HVC calls, not the other's WFIs"

resize_and_quit
echo "ok: resized to 40x10 and back; q: status 0, the terminal as it was"
echo ok
