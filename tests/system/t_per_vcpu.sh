#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --per-vcpu batch output for a 2-VM x 3-vCPU guest: each vCPU's exact
# count as FIELD/vcpuN rows (plain rows unchanged), --vcpu N alone, and a
# vCPU that does not exist named as an error with the ones that do.
source tests/system/lib.sh
need_kvm

N=600
start_guest g -m 2 -v 3 -n $N -k hlt -t 8
read -r vm1 vm2 <<<"$g_VMS"
"$KVMSTAT" -t -1 -s 0.1 -p "$vm1" --vcpu 7 >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] || fail "--vcpu 7 did not fail with status 2"
grep -q 'has no vCPU 7 (its vCPUs: 0 1 2)' "$TMP/err" || fail "--vcpu 7: $(cat "$TMP/err")"
for vm in $vm1 $vm2; do
	start_kvmstat "k$vm" -t -1 -s 6 -p "$vm" --per-vcpu -f '^kvm_userspace_exit$|^kvm_userspace_exit\(HLT\)'
done
start_kvmstat one -t -1 -s 6 -p "$vm1" --vcpu 2 -f '^kvm_userspace_exit\(HLT\)'
# each counting before the guest goes (a fixed pause was too short on
# the emulated KVM host, where loading the BPF programs takes seconds);
# each counts 6 s from its start, the guest alive 8 s after its exits:
# with 1.5 s, two emulated hosts on two CPUs left a guest's 1,800 exits
# at 1,004 when kvmstat ended
for vm in $vm1 $vm2; do
	v="k${vm}_PID"
	wait_polling "${!v}"
done
wait_polling "$one_PID"
go_guest g
for vm in $vm1 $vm2; do
	v="k${vm}_PID"; wait "${!v}" || fail "kvmstat -p $vm: $(cat "$TMP/k$vm.err")"
	out="$TMP/k$vm.out"
	grep -q "^kvm_userspace_exit(HLT) *$((3 * N)) " "$out" || fail "VM $vm total: $(cat "$out")"
	for c in 0 1 2; do
		grep -q "^kvm_userspace_exit(HLT)/vcpu$c *$N " "$out" ||
			fail "VM $vm vCPU $c: $(cat "$out")"
	done
	[ "$(grep -c '/vcpu' "$out")" = 6 ] || fail "VM $vm: $(cat "$out")"
done
wait "$one_PID" || fail "--vcpu 2: $(cat "$TMP/one.err")"
# the child -f keeps brings in its parent, as in kvm_stat
[ "$(awk '{ print $1, $2 }' "$TMP/one.out" | tr '\n' ' ')" = \
	"kvm_userspace_exit $N kvm_userspace_exit(HLT) $N " ] ||
	fail "--vcpu 2: $(cat "$TMP/one.out")"
wait_guest g
echo ok
