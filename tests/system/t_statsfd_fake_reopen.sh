#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A VMM that closes a vCPU's stats fd while its VM lives (as one tearing
# down does, just before it exits) takes none of that vCPU's counts with
# it: kvmstat reads its copy a last time and keeps those values; when the
# same vCPU's stats come back under another fd number, they count on from
# where the kernel is, not twice. Fake VM processes behind a fake /proc
# (fakevm.py), so this runs without KVM; the log's sum must be exact.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v python3 >/dev/null || skip "no python3 for the fake VMs"

fake_proc

# held N: waits until kvmstat holds N fake stats files
held() {
	for _ in $(seq 1 100); do
		[ "$(memfds "$log_PID")" = "$1" ] && return 0
		sleep 0.05
	done
	fail "kvmstat holds $(memfds "$log_PID") stats fds, want $1: $(cat "$TMP/log.err")"
}

fakevm gamma 2 0
start_kvmstat log -S -l -s 0.2 -f '^halt_exits$'
wait_lines "$TMP/log.out" 2
held 3 # the VM's and two vCPUs'
vmcmd gamma add 0 halt_exits 100
vmcmd gamma add 1 halt_exits 3
sleep 0.5
vmcmd gamma close 0
# kvmstat's next scan (every 2 s) lets its copy go after one last read
held 2
# counted by the kernel while no fd shows them: seen once reopened
vmcmd gamma add 0 halt_exits 50
lines=$(wc -l <"$TMP/log.out")
wait_lines "$TMP/log.out" $((lines + 3))
mid=$(column_sum "$TMP/log.out" halt_exits)
[ "$mid" = 103 ] || fail "after vCPU 0's stats fd closed: log sums to $mid, want 103: $(cat "$TMP/log.out")"
vmcmd gamma reopen 0
held 3
vmcmd gamma add 0 halt_exits 25
vmcmd gamma add 1 halt_exits 4
lines=$(wc -l <"$TMP/log.out")
wait_lines "$TMP/log.out" $((lines + 3))
vmquit gamma
held 0
lines=$(wc -l <"$TMP/log.out")
wait_lines "$TMP/log.out" $((lines + 3))
stop log
[ "$STATUS" = 0 ] || fail "kvmstat -l exited $STATUS: $(cat "$TMP/log.err")"
got=$(column_sum "$TMP/log.out" halt_exits)
[ "$got" = 182 ] || fail "log sums to $got, want 100 + 3 + 50 + 25 + 4 = 182: $(cat "$TMP/log.out")"
neg=$(awk 'NR > 1 && $NF < 0' "$TMP/log.out")
[ -z "$neg" ] || fail "a negative delta: $neg"
echo "ok: a vCPU stats fd closed mid-run: 103 kept; reopened: 182 in all, none twice"
echo ok
