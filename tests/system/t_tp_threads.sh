#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The tracepoint provider with -p, with no guest: a fake tracefs makes
# kvm_userspace_exit the real tracepoint task:task_rename, and fake VM
# processes (fakevm.py) whose vCPU threads rename themselves on demand
# stand for guests. kvmstat -t -p counts per thread of that VM only: each
# vCPU's exact count (--per-vcpu), nothing from a neighbour VM renaming
# itself 1000 times, and a vCPU thread that starts while kvmstat runs is
# picked up and counted exactly too (in the totals: the log's columns are
# fixed at the start).
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
need_tracepoints
command -v python3 >/dev/null || skip "no python3 for the fake VMs"
fake_tracefs "$TMP/tracefs"
fake_proc

fakevm alpha 2 0
fakevm beta 1 0
vmcmd alpha oom 5	# HLT
vmcmd beta oom 5

KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t -p "$alpha_VM" --per-vcpu \
	-l -s 0.3 -f '^kvm_userspace_exit'
wait_lines "$TMP/k.out" 2
vmcmd alpha rename 0 300
vmcmd alpha rename 1 200
vmcmd beta rename 0 1000
# a vCPU thread that starts now: kvmstat finds it within a refresh or two
vmcmd alpha thread
tid=$(awk '$1 == "vcpu" && $2 == 2 { print $3 }' "$TMP/alpha.out")
[ -n "$tid" ] || fail "no third vCPU thread: $(cat "$TMP/alpha.out")"
sleep 1
vmcmd alpha rename 2 70
lines=$(wc -l <"$TMP/k.out")
wait_lines "$TMP/k.out" $((lines + 3))
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"

# the log's columns are those of the start (issue 11): vCPUs 0 and 1; the
# late thread's count is in the totals, its own column left out and said
got=""
for col in 'kvm_userspace_exit(HLT)' 'kvm_userspace_exit' \
	'kvm_userspace_exit/vcpu0' 'kvm_userspace_exit/vcpu1' \
	'kvm_userspace_exit(IO)'; do
	got="$got $(column_sum "$TMP/k.out" "$col")"
done
[ "$got" = " 570 570 300 200 0" ] ||
	fail "HLT, all, vCPU 0 1, IO sum to$got, want 570 570 300 200 0: $(cat "$TMP/k.out")"
[ "$(grep -vc '^[0-9]\{4\}-' "$TMP/k.out")" = 1 ] ||
	fail "the log's header changed: $(cat "$TMP/k.out")"
[ "$(grep -c 'left out of the log' "$TMP/k.err")" = 1 ] ||
	fail "later vCPU columns not said once: $(cat "$TMP/k.err")"
echo "ok: -p counts 570 = 300 + 200 + 70 (a thread started late), none of the neighbour's 1000"
vmquit alpha
vmquit beta
