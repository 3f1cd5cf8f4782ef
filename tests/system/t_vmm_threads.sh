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
#    them; QEMU's as libvirt lays it out, in a scope of machine.slice
#    (cgroup v2), which is its unit;
#  - unnamed threads (none): --vcpu-time started before the vCPUs ran
#    lists both once they have (debugfs read again), and without debugfs
#    finds halted vCPUs by their ioctl(KVM_RUN) (/proc/PID/task/TID/syscall).
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
# libvirt's layout for the QEMU guest: a scope under machine.slice, on
# cgroup v2 (mounted aside where the host has only v1)
CG=/sys/fs/cgroup
if [ "$(stat -f -c %T "$CG" 2>/dev/null)" != cgroup2fs ]; then
	CG=$TMP/cgroup2
	mkdir -p "$CG"
	mount -t cgroup2 none "$CG" 2>/dev/null && CGMOUNT=1 || CG=
fi
SCOPE='machine.slice/machine-qemu\x2d1\x2dq1.scope'
cg_cleanup() {
	[ -n "$CG" ] || return 0
	[ -d "$CG/$SCOPE" ] &&
		while read -r p; do echo "$p" >"$CG/cgroup.procs"; done <"$CG/$SCOPE/cgroup.procs" 2>/dev/null
	rmdir "$CG/$SCOPE" "$CG/machine.slice" 2>/dev/null
	[ -z "${CGMOUNT:-}" ] || umount "$CG"
}
trap 'cg_cleanup; cleanup' EXIT
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
	if [ $style = none ]; then
		# its vCPUs have not run: KVM's debugfs has no thread for
		# them yet; --vcpu-time running meanwhile finds them once
		# they have (the VM's threads listed again)
		start_kvmstat r -S -l -s 0.5 --vcpu-time --json -p "$vm"
		wait_polling "$r_PID"
	fi
	want=${who[$style]}
	if [ $style = qemu ] && [ -n "$CG" ]; then
		mkdir -p "$CG/$SCOPE"
		echo "$vm" >"$CG/$SCOPE/cgroup.procs" || fail "cannot move VM $vm into $CG/$SCOPE"
		want=${want%\}},\"unit\":\"machine-qemu\\\\x2d1\\\\x2dq1.scope\"}
	fi
	go_guest s
	sleep 1
	"$KVMSTAT" -S -1 -s 1 --vcpu-time --json -p "$vm" >"$TMP/s.json" 2>"$TMP/s.jerr" ||
		fail "$style: kvmstat --vcpu-time exited $?: $(cat "$TMP/s.jerr")"
	if [ $style = none ]; then
		sleep 1.5
		stop r
		tail -n 1 "$TMP/r.out" >"$TMP/r.json"
		jq -e '.vcpu_time.vms[0].vcpus | map(.vcpu) == [0, 1]' "$TMP/r.json" >/dev/null ||
			fail "none: --vcpu-time started before the vCPUs ran: $(jq -c '.vcpu_time.vms[0]' "$TMP/r.json")"
		busy=$(jq '[.vcpu_time.vms[0].threads[] | select(.cpu > 0.5)] | length' "$TMP/r.json")
		[ "$busy" = 0 ] || fail "none: a spinning vCPU taken for a VMM thread: $(jq -c '.vcpu_time.vms[0].threads' "$TMP/r.json")"
		echo "ok: none: --vcpu-time started before the vCPUs ran lists both once they have"
		# without KVM's debugfs (a user without root): the threads
		# the kernel shows in ioctl(vCPU fd, KVM_RUN), here halted
		start_guest i -s -v 2 -k idle -n 0 -t 6 -T none -C "${cmdline[none]}"
		ivm=${i_VMS%% *}
		go_guest i
		sleep 1
		KVMSTAT_DEBUGFS_ROOT=$TMP/no-debugfs "$KVMSTAT" -S -1 -s 0.5 --vcpu-time --json -p "$ivm" \
			>"$TMP/i.json" 2>"$TMP/i.err" || fail "none, no debugfs: kvmstat exited $?: $(cat "$TMP/i.err")"
		jq -e '.vcpu_time.vms[0].vcpus | map(.vcpu) == [0, 1]' "$TMP/i.json" >/dev/null ||
			fail "none, no debugfs: vCPUs of --vcpu-time: $(jq -c '.vcpu_time.vms[0]' "$TMP/i.json")"
		kill -TERM "$i_PID" 2>/dev/null
		wait "$i_PID" 2>/dev/null
		echo "ok: none, no debugfs: both halted vCPUs found in KVM_RUN"
	fi
	wait_guest s
	jq -e '.vcpu_time.vms[0].vcpus | map(.vcpu) == [0, 1]' "$TMP/s.json" >/dev/null ||
		fail "$style: vCPUs of --vcpu-time: $(jq -c '.vcpu_time.vms[0]' "$TMP/s.json")"
	vt_sums "$TMP/s.json" "$style"
	busy=$(jq '[.vcpu_time.vms[0].threads[] | select(.cpu > 0.5)] | length' "$TMP/s.json")
	[ "$busy" = 0 ] || fail "$style: a VMM thread with a spinning vCPU's CPU: $(jq -c '.vcpu_time.vms[0].threads' "$TMP/s.json")"
	fields='{guest, vmm, uuid}'
	[ "$want" = "${who[$style]}" ] || fields='{guest, vmm, uuid, unit}'
	got=$(jq -c --argjson p "$vm" ".vms[] | select(.pid == \$p) | $fields" "$TMP/s.json")
	[ "$got" = "$want" ] || fail "$style: --json's vms: $got, want $want"
	echo "ok: $style: --vcpu-time: both vCPUs, no VMM thread busy; $got"
done
