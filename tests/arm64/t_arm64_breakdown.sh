#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exits by key on arm64 (issue 33): a test guest of 2 vCPUs makes known
# MMIO writes at 0x80000000, another calls two SMCCC function ids in turn
# (PSCI_VERSION 0x84000000 and an unknown 0x83000000) a known number of
# times each. kvmstat --breakdown mmio,hypercall must count each address
# and each function id (kvm_hvc_arm64's r0) exactly, per VM and per vCPU,
# PSCI_VERSION named; --breakdown all is those two kinds; ioport and msr,
# x86's, are refused in one line naming what arm64 has; --latency times
# the HVC64 exits; --vcpu-time gives each vCPU's states.
source tests/arm64/lib.sh
need_arm64

# x86's kinds: one line each, status 2, before anything starts
for k in ioport msr; do
	"$KVMSTAT" -1 -s 0.1 --breakdown "$k" >"$TMP/x.out" 2>"$TMP/x.err"
	rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/x.out" ] && [ "$(wc -l <"$TMP/x.err")" = 1 ] ||
		fail "--breakdown $k: status $rc: $(cat "$TMP/x.out" "$TMP/x.err")"
	grep -q "x86 only; on arm64: mmio, hypercall" "$TMP/x.err" || fail "--breakdown $k: $(cat "$TMP/x.err")"
done
echo "ok: --breakdown ioport and msr: $(head -c 200 "$TMP/x.err")"

A=300 B=501
start_guest m -v 2 -n $A,$B -k mmio -t 60
start_guest h -v 2 -n $A,$B -k hvc -f 0x84000000,0x83000000 -t 60
vm_m=${m_VMS%% *} vm_h=${h_VMS%% *}
start_kvmstat k -t --json -1 -s 8 --breakdown all --latency --vcpu-time --per-vcpu \
	-f '^kvm_(mmio|hvc_arm64)$|^kvm_exit\(HVC64\)$'
wait_polling "$k_PID"
go_guest m
go_guest h
wait_done m 2
wait_done h 2
wait "$k_PID" || fail "kvmstat: status $?: $(cat "$TMP/k.err")"
jq -e . "$TMP/k.out" >/dev/null || fail "not JSON: $(head -c 300 "$TMP/k.out")"
# row PID VCPU KIND KEY: the key's count (VCPU - for the VM's table)
row() {
	local sel='.breakdown.vms[] | select(.pid == $p)'
	[ "$2" = - ] || sel="$sel"' | .vcpus[] | select(.vcpu == ($v | tonumber))'
	jq --argjson p "$1" --arg v "$2" --arg k "$3" --arg key "$4" \
		"[$sel | .[\$k][]? | select(.key == \$key) | .count] | add" "$TMP/k.out"
}
want "VM $vm_m mmio 0x80000000" "$(row "$vm_m" - mmio 0x80000000)" $((A + B))
want "VM $vm_m vCPU 0 mmio 0x80000000" "$(row "$vm_m" 0 mmio 0x80000000)" $A
want "VM $vm_m vCPU 1 mmio 0x80000000" "$(row "$vm_m" 1 mmio 0x80000000)" $B
# the in-kernel kinds' one report write a vCPU
want "VM $vm_h mmio 0x80000008" "$(row "$vm_h" - mmio 0x80000008)" 2
got=$(jq -r --argjson p "$vm_m" '.breakdown.vms[] | select(.pid == $p) | .mmio[] | select(.key == "0x80000000") | .direction' "$TMP/k.out")
want "VM $vm_m's MMIO direction" "$got" write
echo "ok: mmio: 0x80000000 written $((A + B)) times, $A and $B per vCPU"
# the guest says how many calls of each id each vCPU made
for id in 0x84000000 0x83000000; do
	t=0
	for v in 0 1; do
		n=$(awk -v i=$v -v id=$id '$1 == "hvc" && $3 == i && $4 == id { print $5 }' "$TMP/h.out")
		[ -n "$n" ] || fail "the guest gave no count of $id for vCPU $v: $(cat "$TMP/h.out")"
		want "VM $vm_h vCPU $v hypercall $id" "$(row "$vm_h" $v hypercall $id)" "$n"
		t=$((t + n))
	done
	want "VM $vm_h hypercall $id" "$(row "$vm_h" - hypercall $id)" $t
done
got=$(jq -r --argjson p "$vm_h" '.breakdown.vms[] | select(.pid == $p) | .hypercall[] | select(.key == "0x84000000") | .name' "$TMP/k.out")
want "0x84000000's name" "$got" PSCI_VERSION
echo "ok: hypercall: each function id per vCPU as the guest made them, 0x84000000 named PSCI_VERSION"
# --latency: every HVC64 exit of the VM timed (each is re-entered: the
# vCPU's last exit is its report write)
got=$(jq --argjson p "$vm_h" '[.latency.histograms[]? | select(.kind == "exit" and .reason == "HVC64" and .pid == $p and .tid == 0) | .count] | add' "$TMP/k.out")
want "--latency: VM $vm_h's HVC64 exits timed" "$got" $((A + B))
# --vcpu-time: both VMs' vCPUs
for vm in $vm_m $vm_h; do
	n=$(jq --argjson p "$vm" '[.vcpu_time.vms[]? | select(.pid == $p) | .vcpus[]?] | length' "$TMP/k.out")
	want "--vcpu-time's vCPUs of VM $vm" "$n" 2
done
echo "ok: --latency timed the $((A + B)) HVC64 exits; --vcpu-time: both VMs' 2 vCPUs"
echo ok
