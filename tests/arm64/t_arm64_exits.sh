#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# arm64 exits, exact (issue 33): four test guests of 2 vCPUs, one per
# kind (MMIO writes to userspace, HVC calls, WFI halts, system-register
# traps), each vCPU a known number. One kvmstat --json -1 --per-vcpu over
# their run must count, per VM and per vCPU, kvm_exit by exception class
# in kvm_stat's names (DABT_LOW, HVC64, WFx, SYS64), kvm_userspace_exit
# (MMIO), kvm_mmio, kvm_hvc_arm64, kvm_wfx_arm64 and kvm_sys_access,
# exactly as many as the guests made (tests/guest/README.md's table);
# -1's rows name the same counts.
source tests/arm64/lib.sh
need_arm64

# per vCPU: vCPU 0 makes A, vCPU 1 makes B of its kind; the kinds handled
# in the kernel end with one MMIO write to userspace per vCPU (the stop)
A=300 B=500
start_guest m -v 2 -n $A,$B -k mmio -t 30
start_guest h -v 2 -n $A,$B -k hvc -t 30
start_guest w -v 2 -n $A,$B -k wfi -t 30
start_guest s -v 2 -n $A,$B -k sysreg -t 30
vm_m=${m_VMS%% *} vm_h=${h_VMS%% *} vm_w=${w_VMS%% *} vm_s=${s_VMS%% *}
re='^kvm_exit$|^kvm_exit\((DABT_LOW|HVC64|WFx|SYS64)\)$|^kvm_userspace_exit(\(MMIO\))?$|^kvm_(mmio|hvc_arm64|wfx_arm64|sys_access)$'
start_kvmstat k -t --json -1 -s 8 --per-vcpu -f "$re"
start_kvmstat b -t -1 -s 8 -f "$re"
wait_polling "$k_PID"
wait_polling "$b_PID"
for g in m h w s; do go_guest $g; done
for g in m h w s; do wait_done $g 2; done
wait "$k_PID" || fail "kvmstat --json: status $?: $(cat "$TMP/k.err")"
wait "$b_PID" || fail "kvmstat -1: status $?: $(cat "$TMP/b.err")"
jq -e . "$TMP/k.out" >/dev/null || fail "not JSON: $(head -c 300 "$TMP/k.out")"

# check VM FIELD VCPU0 VCPU1: the field's count per vCPU and for the VM
check() {
	local vm=$1 f=$2
	want "VM $vm $f vCPU 0" "$(jfield "$TMP/k.out" "$f" "$vm" 0)" "$3"
	want "VM $vm $f vCPU 1" "$(jfield "$TMP/k.out" "$f" "$vm" 1)" "$4"
	want "VM $vm $f" "$(jfield "$TMP/k.out" "$f" "$vm")" $(($3 + $4))
}
check "$vm_m" 'kvm_exit(DABT_LOW)' $A $B
check "$vm_m" kvm_mmio $A $B
check "$vm_m" 'kvm_userspace_exit(MMIO)' $A $B
echo "ok: MMIO guest: DABT_LOW, kvm_mmio, kvm_userspace_exit(MMIO) $A and $B per vCPU"
check "$vm_h" 'kvm_exit(HVC64)' $A $B
check "$vm_h" kvm_hvc_arm64 $A $B
check "$vm_h" 'kvm_userspace_exit(MMIO)' 1 1
echo "ok: HVC guest: HVC64 and kvm_hvc_arm64 $A and $B per vCPU"
# a WFI made while a host interrupt is pending does not trap: the guest
# says how many did (KVM's own count)
W0=$(exits_of w 0) W1=$(exits_of w 1)
check "$vm_w" 'kvm_exit(WFx)' "$W0" "$W1"
check "$vm_w" kvm_wfx_arm64 "$W0" "$W1"
check "$vm_w" 'kvm_userspace_exit(MMIO)' 1 1
echo "ok: WFI guest: WFx and kvm_wfx_arm64 $W0 and $W1 per vCPU (of $A and $B WFIs)"
check "$vm_s" 'kvm_exit(SYS64)' $A $B
check "$vm_s" kvm_sys_access $A $B
check "$vm_s" 'kvm_userspace_exit(MMIO)' 1 1
echo "ok: system-register guest: SYS64 and kvm_sys_access $A and $B per vCPU"

# host-wide, in -1's rows (nothing else ran): the sums of the four
row() { awk -v f="$1" '$1 == f { print $2 }' "$TMP/b.out"; }
columns "$TMP/b.out" "-1"
want "-1 kvm_exit(HVC64)" "$(row 'kvm_exit(HVC64)')" $((A + B))
want "-1 kvm_exit(WFx)" "$(row 'kvm_exit(WFx)')" $((W0 + W1))
want "-1 kvm_exit(SYS64)" "$(row 'kvm_exit(SYS64)')" $((A + B))
want "-1 kvm_userspace_exit(MMIO)" "$(row 'kvm_userspace_exit(MMIO)')" $((A + B + 6))
want "-1 kvm_hvc_arm64" "$(row kvm_hvc_arm64)" $((A + B))
echo "ok: -1: the same counts host-wide"
for g in m h w s; do wait_guest $g; done
echo ok
