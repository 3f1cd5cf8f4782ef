#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# vCPU threads named as VMMs other than QEMU name them (issue 32):
# Firecracker's "fc_vcpu N", cloud-hypervisor's "vcpuN", crosvm's
# "crosvm_vcpuN", kvmtool's "kvm-vcpu-N", QEMU's "CPU N/KVM" beside them,
# and threads not named at all (found in KVM's debugfs, vcpuN/pid).
# For test guests of 2 vCPUs named each way:
#  - -t -1 --per-vcpu counts exactly N HLT exits for each vCPU
#    (kvm_userspace_exit(HLT)/vcpu0 and /vcpu1), 2N for the VM, and
#    --vcpu 1 alone its N;
#  - --vcpu-time --json on the same guest spinning (-k spin) has both
#    vCPUs, each with its states summing to the wall time within 2 %, and
#    no VMM thread with a vCPU's CPU (the spinning vCPU's time taken for
#    a VMM thread's was the failure: over 0.5 s a second);
#  - that guest runs with the VMM's command line (-C): --json's "vms"
#    names its VMM, and its name and UUID where the VMM's options give
#    them.
source tests/system/lib.sh
need_statsfd_guest

N=300
UUID=9b2e4c1a-7d3f-4e5a-8b6c-0d1e2f3a4b5c
# cmdline STYLE: a command line as that VMM's; who: what --json says of it
declare -A cmdline=(
	[qemu]="qemu-system-x86_64 -name guest=q1,debug-threads=on -uuid $UUID -smp 2"
	[firecracker]="firecracker --id fc1 --api-sock /run/fc1.sock"
	[cloud-hypervisor]="cloud-hypervisor --api-socket /run/ch1.sock --cpus boot=2"
	[crosvm]="crosvm run --cpus 2 /vmlinux"
	[kvmtool]="lkvm run --name kt1 -c 2"
	[none]="/opt/vmm/myvmm --vcpus 2"
)
declare -A who=(
	[qemu]='{"guest":"q1","vmm":"qemu","uuid":"'$UUID'"}'
	[firecracker]='{"guest":"fc1","vmm":"firecracker","uuid":null}'
	[cloud-hypervisor]='{"guest":null,"vmm":"cloud-hypervisor","uuid":null}'
	[crosvm]='{"guest":null,"vmm":"crosvm","uuid":null}'
	[kvmtool]='{"guest":"kt1","vmm":"kvmtool","uuid":null}'
	[none]='{"guest":null,"vmm":"other","uuid":null}'
)
for style in qemu firecracker cloud-hypervisor crosvm kvmtool none; do
	start_guest g -v 2 -n $N -k hlt -t 8 -T $style
	vm=${g_VMS%% *}
	if [ $style = none ]; then
		# not run yet, not named: its thread is not known, and said so
		"$KVMSTAT" -t -1 -s 0.1 -p "$vm" --vcpu 1 >"$TMP/n.out" 2>"$TMP/n.err"
		st=$?
		[ $st = 2 ] && grep -q "the thread of vCPU 1 is not known yet" "$TMP/n.err" ||
			fail "none: --vcpu 1 before it ran: status $st: $(cat "$TMP/n.err")"
		"$KVMSTAT" -t -1 -s 0.1 -p "$vm" --vcpu 2 >"$TMP/n.out" 2>"$TMP/n.err"
		grep -q "has no vCPU 2 (its vCPUs: 0 1)" "$TMP/n.err" ||
			fail "none: --vcpu 2: $(cat "$TMP/n.err")"
		echo "ok: none: vCPU 1 not run yet: not known, said so; vCPU 2 none"
	fi
	start_kvmstat a -t -1 -s 6 -p "$vm" --per-vcpu -f '^kvm_userspace_exit\(HLT\)'
	[ $style = none ] ||
		start_kvmstat b -t -1 -s 6 -p "$vm" --vcpu 1 -f '^kvm_userspace_exit\(HLT\)'
	wait_polling "$a_PID"
	[ $style = none ] || wait_polling "$b_PID"
	go_guest g
	wait "$a_PID" || fail "$style: kvmstat --per-vcpu: $(cat "$TMP/a.err")"
	if [ $style = none ]; then
		# once run, KVM's debugfs tells
		sleep 0.5
		start_kvmstat b -t -1 -s 0.2 -p "$vm" --vcpu 1 -f '^kvm_userspace_exit\(HLT\)'
	fi
	wait "$b_PID" || fail "$style: kvmstat --vcpu 1: $(cat "$TMP/b.err")"
	grep -q "^kvm_userspace_exit(HLT) *$((2 * N)) " "$TMP/a.out" || fail "$style: VM total: $(cat "$TMP/a.out")"
	for c in 0 1; do
		grep -q "^kvm_userspace_exit(HLT)/vcpu$c *$N " "$TMP/a.out" ||
			fail "$style: vCPU $c: $(cat "$TMP/a.out")"
	done
	# (none: started after the exits; its total is the vCPU's since
	# its start, as -t counts from kvmstat's)
	[ $style = none ] || grep -q "^kvm_userspace_exit(HLT) *$N " "$TMP/b.out" ||
		fail "$style: --vcpu 1: $(cat "$TMP/b.out")"
	wait_guest g
	echo "ok: $style: $N exits on each vCPU, --vcpu 1 alone $N"

	start_guest s -s -v 2 -k spin -n 0 -t 8 -T $style -C "${cmdline[$style]}"
	vm=${s_VMS%% *}
	go_guest s
	sleep 1
	"$KVMSTAT" -S -1 -s 1 --vcpu-time --json -p "$vm" >"$TMP/s.json" 2>"$TMP/s.jerr" ||
		fail "$style: kvmstat --vcpu-time exited $?: $(cat "$TMP/s.jerr")"
	wait_guest s
	jq -e '.vcpu_time.vms[0].vcpus | map(.vcpu) == [0, 1]' "$TMP/s.json" >/dev/null ||
		fail "$style: vCPUs of --vcpu-time: $(jq -c '.vcpu_time.vms[0]' "$TMP/s.json")"
	vt_sums "$TMP/s.json" "$style"
	busy=$(jq '[.vcpu_time.vms[0].threads[] | select(.cpu > 0.5)] | length' "$TMP/s.json")
	[ "$busy" = 0 ] || fail "$style: a VMM thread with a spinning vCPU's CPU: $(jq -c '.vcpu_time.vms[0].threads' "$TMP/s.json")"
	got=$(jq -c --argjson p "$vm" '.vms[] | select(.pid == $p) | {guest, vmm, uuid}' "$TMP/s.json")
	[ "$got" = "${who[$style]}" ] || fail "$style: --json's vms: $got, want ${who[$style]}"
	echo "ok: $style: --vcpu-time: both vCPUs, no VMM thread busy; $got"
done
