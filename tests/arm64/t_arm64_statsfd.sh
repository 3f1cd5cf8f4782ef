#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# arm64's binary stats (-S, issue 33): test guests that keep their stats
# fds (as QEMU 8.1+ does) make known HVC calls, WFI halts and MMIO
# writes; kvmstat -S must give arm64's own fields, per VM and per vCPU,
# exactly: hvc_exit_stat, wfi_exit_stat, wfe_exit_stat (none),
# mmio_exit_user, mmio_exit_kernel, and exits at least their sum; in
# --json with their type and unit, and in -1's FIELD/vcpuN rows.
source tests/arm64/lib.sh
need_arm64
need_statsfd_guest

A=300 B=400
start_guest h -s -v 2 -n $A,$B -k hvc -t 60
start_guest w -s -v 2 -n $A,$B -k wfi -t 60
start_guest m -s -v 2 -n $A,$B -k mmio -t 60
vm_h=${h_VMS%% *} vm_w=${w_VMS%% *} vm_m=${m_VMS%% *}
for g in h w m; do go_guest $g; done
for g in h w m; do wait_done $g 2; done
W0=$(exits_of w 0) W1=$(exits_of w 1)
# totals since each VM started (-i): the guests are done, their VMs kept
"$KVMSTAT" -S -i --json -1 -s 0.5 --per-vcpu >"$TMP/k.out" 2>"$TMP/k.err" ||
	fail "kvmstat -S --json: status $?: $(cat "$TMP/k.err")"
check() {
	local vm=$1 f=$2
	want "VM $vm $f vCPU 0" "$(jfield "$TMP/k.out" "$f" "$vm" 0)" "$3"
	want "VM $vm $f vCPU 1" "$(jfield "$TMP/k.out" "$f" "$vm" 1)" "$4"
	want "VM $vm $f" "$(jfield "$TMP/k.out" "$f" "$vm")" $(($3 + $4))
}
# the kinds the kernel handles end with one MMIO write to userspace a vCPU
check "$vm_h" hvc_exit_stat $A $B
check "$vm_h" mmio_exit_user 1 1
check "$vm_h" wfi_exit_stat 0 0
check "$vm_w" wfi_exit_stat "$W0" "$W1"
check "$vm_w" wfe_exit_stat 0 0
check "$vm_w" mmio_exit_user 1 1
check "$vm_w" mmio_exit_kernel 0 0
check "$vm_m" mmio_exit_user $A $B
check "$vm_m" mmio_exit_kernel 0 0
check "$vm_m" hvc_exit_stat 0 0
echo "ok: hvc_exit_stat, mmio_exit_user $A and $B per vCPU, wfi_exit_stat $W0 and $W1, exact"
for vm in $vm_h $vm_w $vm_m; do
	for v in 0 1; do
		e=$(jfield "$TMP/k.out" exits "$vm" $v)
		[ "$e" != null ] && [ "$e" -ge $A ] || fail "VM $vm vCPU $v: exits $e, want $A or more"
	done
done
got=$(jq -r '.fields.hvc_exit_stat | "\(.type) \(.unit)"' "$TMP/k.out")
want "hvc_exit_stat's type and unit" "$got" "cumulative none"
s=$(jfield "$TMP/k.out" signal_exits "$vm_h" 0)
[ "$s" != null ] || fail "no signal_exits for VM $vm_h vCPU 0"
echo "ok: exits at least the guests' own; signal_exits and exits per vCPU; types and units"

# -1's rows for one VM, per vCPU
"$KVMSTAT" -S -i -1 -s 0.3 -p "$vm_w" --per-vcpu -f '^wfi_exit_stat$' >"$TMP/b.out" 2>"$TMP/b.err" ||
	fail "kvmstat -S -1 -p: status $?: $(cat "$TMP/b.err")"
columns "$TMP/b.out" "-S -1 --per-vcpu"
grep -q "^wfi_exit_stat  *$((W0 + W1)) " "$TMP/b.out" || fail "-1 wfi_exit_stat: $(cat "$TMP/b.out")"
grep -q "^wfi_exit_stat/vcpu0  *$W0 " "$TMP/b.out" || fail "-1 wfi_exit_stat/vcpu0: $(cat "$TMP/b.out")"
grep -q "^wfi_exit_stat/vcpu1  *$W1 " "$TMP/b.out" || fail "-1 wfi_exit_stat/vcpu1: $(cat "$TMP/b.out")"
echo "ok: -S -1 -p --per-vcpu: wfi_exit_stat $((W0 + W1)), $W0 and $W1"
for g in h w m; do
	v=${g}_PID
	kill -TERM "${!v}" 2>/dev/null
done
echo ok
