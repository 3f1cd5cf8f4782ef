#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor's per-guest and per-vCPU views fed by the tracepoint and
# stats-fd providers with no KVM: a fake VM process (fakevm.py) behind a
# fake /proc, and a fake tracefs whose kvm_userspace_exit is the real
# task:task_rename. While vCPU 1's thread renames itself (an "exit") and
# its stats file counts halts, the guests view lists the VM by pid and
# name with a rate; Enter lists both vCPUs with their thread ids, vCPU 1
# busy with both events (the exit by its reason, not also its parent) and
# vCPU 0 idle; Escape goes back; 'p' lists the VM and picks it by name;
# q exits 0.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
need_tracepoints
command -v tmux >/dev/null || skip "tmux not installed"
command -v python3 >/dev/null || skip "no python3 for the fake VM"
fake_tracefs "$TMP/tracefs"
fake_proc

S=kvmstat-v-$$
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
fakevm alpha 2 0
vmcmd alpha oom 5	# HLT
tid0=$(awk '$1 == "vcpu" && $2 == 0 { print $3 }' "$TMP/alpha.out")
tid1=$(awk '$1 == "vcpu" && $2 == 1 { print $3 }' "$TMP/alpha.out")

tmux new-session -d -s "$S" -x 120 -y 30 \
	"env KVMSTAT_TRACEFS_ROOT=$TMP/tracefs $KVMSTAT -S -t -s 0.5 -f '^(kvm_userspace_exit|halt_exits)'; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh
expect "kvm statistics - summary"
expect "[tracepoint statsfd]"

# vCPU 1 works for about 8 s: 50 renames and 10 halts every 0.1 s
( for _ in $(seq 80); do
	vmcmd alpha rename 1 50
	vmcmd alpha add 1 halt_exits 10
	sleep 0.1
  done ) &
PIDS+=($!)

keys b; expect "kvm statistics - guests"
expect "alpha"
[ "$(row "$alpha_VM" | awk '{ print $2 }')" = alpha ] || fail "guests: $(screen)"
for _ in $(seq 30); do
	rate=$(row "$alpha_VM" | awk '{ print $4 }')
	[ -n "$rate" ] && [ "$rate" != 0 ] && break
	sleep 0.1
done
[ -n "$rate" ] && [ "$rate" != 0 ] || fail "no rate for the busy VM: $(screen)"
keys Home Enter; expect "vCPUs of pid $alpha_VM"
expect "$tid0"; expect "$tid1"
# busy(): vCPU 1's row shows a total, a rate and both providers' events
# (the exit by its reason, not its parent beside it); a loaded machine
# may take a few refreshes to show both in one interval
busy() {
	r1=$(screen | awk -v t="$tid1" '$1 == 1 && $2 == t')
	[ "$(awk '{ print $3 }' <<<"$r1")" != 0 ] && [ "$(awk '{ print $4 }' <<<"$r1")" != 0 ] &&
		grep -q 'kvm_userspace_exit(HLT) [0-9]' <<<"$r1" && grep -q 'halt_exits [0-9]' <<<"$r1"
}
for _ in $(seq 60); do busy && break; sleep 0.1; done
busy || fail "vCPU 1 is not shown busy with both providers' events: $r1"
grep -q 'kvm_userspace_exit [0-9]' <<<"$r1" && fail "the parent beside its child: $r1"
r0=$(screen | awk -v t="$tid0" '$1 == 0 && $2 == t')
[ -n "$r0" ] && [ "$(awk '{ print $3 }' <<<"$r0")" = 0 ] || fail "vCPU 0 is idle: '$r0': $(screen)"
keys Escape; expect "kvm statistics - guests"
keys b; expect "kvm statistics - summary"
# 'p' lists the running guests (the loop's directory of VMs), a name picks
# one, the header names it; a pid that is no VM is refused
keys p; expect "Show pid"
expect "$(printf '%8d  alpha' "$alpha_VM")"
keys 1 Enter; expect "is not a KVM VM"
keys a l p h a Enter
expect "kvm statistics - pid $alpha_VM (alpha)"
keys c; expect "kvm statistics - summary"
resize_and_quit
echo "ok: guests view and vCPU drill-down from tracepoints and stats fds: $r1"
