#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Whether this machine's KVM serves the tests that need real KVM: prints
# "native" where it does, else "none: REASON" (one line). It does where
# the test guest runs on /dev/kvm and the kernel's kvm tracepoints fire
# for its exits: kvm:kvm_exit counted once or more per exit the guest
# made. A kernel that is itself a paravirtual guest may offer a /dev/kvm
# whose kvm:kvm_exit never fires; the tests run on the emulated KVM host
# there (tests/kvmhost/).
cd "$(dirname "$0")/.." || exit 1
GUEST=${GUEST:-tests/guest/kvmguest}
say() { echo "$*"; exit 0; }
[ "$(id -u)" = 0 ] || say "none: not root"
[ -c /dev/kvm ] || say "none: no /dev/kvm"
[ -r /dev/kvm ] && [ -w /dev/kvm ] || say "none: /dev/kvm is not read-write"
[ -x "$GUEST" ] || say "none: test guest $GUEST not built"
ev=
for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d "$t/events/kvm/kvm_exit" ] && { ev=$t; break; }
done
[ -n "$ev" ] || say "none: no kvm:kvm_exit tracepoint (tracefs not mounted, or no KVM module)"
inst=$ev/instances/kvmstat-probe.$$
mkdir "$inst" 2>/dev/null || say "none: cannot make a tracefs instance in $ev/instances"
trap 'echo 0 >"$inst/events/kvm/kvm_exit/enable" 2>/dev/null; rmdir "$inst" 2>/dev/null' EXIT
echo 1 >"$inst/events/kvm/kvm_exit/enable" 2>/dev/null ||
	say "none: cannot enable kvm:kvm_exit (kernel lockdown?)"
out=$("$GUEST" -n 100 -k mmio -t 0 2>&1) || say "none: the test guest fails on /dev/kvm: $(echo "$out" | tail -n 1)"
n=$(grep -c ' kvm_exit: ' "$inst/trace")
[ "$n" -ge 100 ] || say "none: /dev/kvm runs guests, but kvm:kvm_exit fired $n times for 100 exits (a paravirtual KVM?)"
say native
