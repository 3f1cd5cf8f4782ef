#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# vCPU threads as the kernel shows them, the threads' names a hint only
# (issue 32). A guest of 2 vCPUs whose vCPU 0 makes N0 port I/O exits and
# vCPU 1 N1: each exit is handled in user space, so its threads never wait
# in the kernel where /proc/PID/task/TID/syscall would show KVM_RUN.
#  - threads not named at all, no KVM debugfs (a monitor that may load
#    BPF but not mount debugfs, as in a container): kvm_exit's vCPU,
#    noted by the counting program at each thread's first hits (kvm_exit
#    counted alone, and with its reasons), places them: --per-vcpu counts
#    N0 for vCPU 0 and N1 for vCPU 1, exactly;
#  - threads named as QEMU names them but the wrong way round (vCPU 0
#    named "CPU 1/KVM"): the kernel's word wins over the names, with KVM's
#    debugfs and without; --vcpu 1 counts vCPU 1's N1 alone;
#  - the same names under --vcpu-time, where vCPU 1 spends its time in
#    user space after each exit and vCPU 0 none: debugfs, read because
#    the named threads were not seen in KVM_RUN, puts each thread's time
#    under its own vCPU (the names would swap them).
# Broken on purpose (names first, as before issue 32's end): the reversed
# names swapped N0 and N1, and the unnamed threads had no vCPU rows.
source tests/system/lib.sh
need_statsfd_guest debugfs

N0=120
N1=370
# kvm_exit counted alone (its plain program notes the vCPUs) or with its
# reasons (the program that reads them does)
F='^kvm_exit$|^kvm_userspace_exit\(IO\)$'
FR='^kvm_exit|^kvm_userspace_exit\(IO\)$'
mkdir -p "$TMP/no-debugfs"
# names, debugfs, filter (unnamed with debugfs: t_vmm_threads)
for c in "none none $F" "none none $FR" "qemu-reversed none $F" "qemu-reversed kernel $F"; do
	read -r style dbg f <<<"$c"
	start_guest g -v 2 -n $N0,$N1 -k pio -t 8 -T $style
	vm=${g_VMS%% *}
	droot=$DBG
	[ $dbg = none ] && droot=$TMP/no-debugfs
	KVMSTAT_DEBUGFS_ROOT=$droot start_kvmstat a -t -1 -s 6 -p "$vm" --per-vcpu -f "$f"
	[ $style = none ] ||
		KVMSTAT_DEBUGFS_ROOT=$droot start_kvmstat b -t -1 -s 6 -p "$vm" --vcpu 1 -f "$f"
	wait_polling "$a_PID"
	[ $style = none ] || wait_polling "$b_PID"
	go_guest g
	wait "$a_PID" || fail "$style, debugfs $dbg: kvmstat --per-vcpu: $(cat "$TMP/a.err")"
	what="$style names, debugfs $dbg, -f '$f'"
	grep -q "^kvm_userspace_exit(IO) *$((N0 + N1)) " "$TMP/a.out" ||
		fail "$what: VM total: $(cat "$TMP/a.out")"
	grep -q "^kvm_userspace_exit(IO)/vcpu0 *$N0 " "$TMP/a.out" ||
		fail "$what: vCPU 0, want $N0: $(cat "$TMP/a.out")"
	grep -q "^kvm_userspace_exit(IO)/vcpu1 *$N1 " "$TMP/a.out" ||
		fail "$what: vCPU 1, want $N1: $(cat "$TMP/a.out")"
	[ "$(grep -c '^kvm_userspace_exit(IO)/vcpu' "$TMP/a.out")" = 2 ] ||
		fail "$what: vCPU rows: $(cat "$TMP/a.out")"
	if [ $style != none ]; then
		wait "$b_PID" || fail "$what: kvmstat --vcpu 1: $(cat "$TMP/b.err")"
		grep -q "^kvm_userspace_exit(IO) *$N1 " "$TMP/b.out" ||
			fail "$what: --vcpu 1, want $N1: $(cat "$TMP/b.out")"
	fi
	wait_guest g
	echo "ok: $what: vCPU 0 $N0, vCPU 1 $N1 exits${b_PID:+, --vcpu 1 alone $N1}"
	b_PID=
done

# --vcpu-time: vCPU 1 spends 3 ms in user space after each exit, vCPU 0
# none; named the wrong way round
start_guest t -s -v 2 -n 0 -k pio -u 0,3000 -t 6 -T qemu-reversed
vm=${t_VMS%% *}
go_guest t
sleep 1
KVMSTAT_DEBUGFS_ROOT=$DBG "$KVMSTAT" -S -1 -s 2 --vcpu-time --json -p "$vm" \
	>"$TMP/t.json" 2>"$TMP/t.err" || fail "--vcpu-time exited $?: $(cat "$TMP/t.err")"
wait_guest t
jq -e '.vcpu_time.vms[0].vcpus | map(.vcpu) == [0, 1]' "$TMP/t.json" >/dev/null ||
	fail "--vcpu-time: vCPUs: $(jq -c '.vcpu_time.vms[0]' "$TMP/t.json")"
u0=$(jq '.vcpu_time.vms[0].vcpus[] | select(.vcpu == 0) | .seconds_per_second.vmm' "$TMP/t.json")
u1=$(jq '.vcpu_time.vms[0].vcpus[] | select(.vcpu == 1) | .seconds_per_second.vmm' "$TMP/t.json")
awk -v a="$u0" -v b="$u1" 'BEGIN { exit !(b > 0.6 && b > a + 0.3) }' ||
	fail "--vcpu-time: VMM share of vCPU 0 $u0, of vCPU 1 $u1 (want it over 0.6 and 0.3 over vCPU 0's): $(jq -c '.vcpu_time.vms[0].vcpus' "$TMP/t.json")"
echo "ok: --vcpu-time: VMM share of vCPU 0 $u0, of vCPU 1 $u1 (threads named the other way)"
echo ok
