#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where each vCPU's time goes (--vcpu-time, issue 24) on real guests
# (tests/guest/kvmguest, binary stats fds kept as QEMU 8.1+ keeps them):
#  - two vCPUs spinning in guest code (-k spin) pinned to one host CPU
#    each wait for it about half the time;
#  - a vCPU whose VMM spends 20 ms in user space after each port I/O exit
#    (-u 20000) is mostly in the VMM (an exit's way to user space and
#    back takes a few µs natively but 0.4 to 1 ms on the emulated KVM
#    host, where 500 µs left the VMM about half of the time);
#  - a vCPU halted in the kernel (-k idle: in-kernel irqchip, HLT with
#    interrupts off, never woken) is mostly halted, though its halt never
#    ends (halt_wait_ns does not grow: blocking and the thread's state
#    tell it);
#  - for every vCPU the five states (merged ones included) sum to the
#    wall time within 2 %.
source tests/system/lib.sh
# shellcheck disable=SC2119 # no debugfs needed
need_statsfd_guest

# vt NAME GUEST-ARGS...: a guest running 10 s, kvmstat -S -1 --vcpu-time
# --json on it over one second from its second, into $TMP/NAME.json (the
# guest outlives kvmstat's start even on the emulated KVM host, where
# starting kvmstat takes seconds)
vt() {
	local name=$1 vm; shift
	start_guest "$name" -s -n 0 -t 10 "$@"
	vm=$(eval echo "\${${name}_VMS}")
	go_guest "$name"
	sleep 1
	$OFF_CPU "$KVMSTAT" -S -1 -s 1 --vcpu-time --json -p "$vm" >"$TMP/$name.json" 2>"$TMP/$name.jerr" ||
		fail "kvmstat on $name exited $?: $(cat "$TMP/$name.jerr")"
	wait_guest "$name"
	jq -e '.vcpu_time.vms | length == 1' "$TMP/$name.json" >/dev/null ||
		fail "$name: no VM in $(jq -c .vcpu_time "$TMP/$name.json")"
	# every vCPU's states sum to its interval within 2 %
	vt_sums "$TMP/$name.json" "$name"
}

# rate NAME VCPU STATE: its seconds per second (a merged pair's where the
# state is merged into it)
rate() {
	jq -r --argjson i "$2" --arg s "$3" '.vcpu_time.vms[0].vcpus[] | select(.vcpu == $i) | .seconds_per_second |
		(.[$s] // (if $s == "guest" or $s == "kernel" then .["guest+kernel"] else .["halted+vmm"] end))' \
		"$TMP/$1.json"
}

CPU=$(taskset -pc $$ | awk -F': ' '{ n = split($2, a, ","); split(a[n], b, "-"); print b[2] != "" ? b[2] : b[1] }')
# kvmstat itself runs on the other CPUs: on the spinning vCPUs' CPU it
# would make three sharing it (seen on the emulated KVM host: waits of 0.72)
others=$(taskset -pc $$ | awk -F': ' -v c="$CPU" '{
	n = split($2, a, ",")
	for (i = 1; i <= n; i++) {
		m = split(a[i], b, "-"); hi = m > 1 ? b[2] : b[1]
		for (j = b[1]; j <= hi; j++) if (j != c) o = o (o == "" ? "" : ",") j
	}
	print o }')
OFF_CPU=${others:+taskset -c $others}
vt spin -k spin -v 2 -c "$CPU"
for i in 0 1; do
	w=$(rate spin "$i" waiting)
	awk -v w="$w" 'BEGIN { exit !(w > 0.4 && w < 0.65) }' ||
		fail "spinning vCPU $i sharing CPU $CPU waits $w of each second, not about half"
done
echo "ok: two spinning vCPUs on CPU $CPU wait $(rate spin 0 waiting), $(rate spin 1 waiting)"

vt slow -k pio -u 20000
v=$(rate slow 0 vmm)
awk -v v="$v" 'BEGIN { exit !(v > 0.8) }' ||
	fail "20 ms in the VMM per exit: vmm $v of each second"
echo "ok: a VMM spending 20 ms per exit: vmm $v"

vt idle -k idle
h=$(rate idle 0 halted)
awk -v h="$h" 'BEGIN { exit !(h > 0.9) }' ||
	fail "a vCPU halted in the kernel: halted $h of each second"
echo "ok: a vCPU halted in the kernel, never woken: halted $h"
