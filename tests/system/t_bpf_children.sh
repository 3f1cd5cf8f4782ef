#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Child events counted by BPF, with no guest: a fake tracefs names the real
# tracepoint task:task_rename (fired by each write to /proc/self/comm)
# kvm_userspace_exit, its "reason" the renamer's oom_score_adj. A shell
# that sets oom_score_adj 5 (HLT) and renames itself N times must show
# exactly N kvm_userspace_exit(HLT); after it exits its key leaves the BPF
# map and its count stays in the totals: the log still sums to N, not 0
# and not 2N, over the intervals that follow.
source tests/system/lib.sh
need_tracepoints
fake_tracefs "$TMP/tracefs"
N=1000

start_kvmstat k -t --tracefs-root "$TMP/tracefs" -l -s 0.3 -f '^kvm_userspace_exit'
wait_lines "$TMP/k.out" 2 || fail "no log: $(cat "$TMP/k.err")"
# no fork inside: a fork's exec would rename (and count) too
( echo 5 >/proc/self/oom_score_adj
  for ((i = 0; i < N; i++)); do echo -n "kvmst$i" >/proc/self/comm; done )
sleep 1.5	# several intervals after the renamer exited
stop k
[ "$STATUS" = 0 ] || fail "status $STATUS: $(cat "$TMP/k.err")"
hlt=$(column_sum "$TMP/k.out" 'kvm_userspace_exit(HLT)')
[ "$hlt" = $N ] || fail "kvm_userspace_exit(HLT) sums to '$hlt', want $N: $(cat "$TMP/k.out")"
io=$(column_sum "$TMP/k.out" 'kvm_userspace_exit(IO)')
[ "${io:-0}" = 0 ] || fail "kvm_userspace_exit(IO) sums to $io"
all=$(column_sum "$TMP/k.out" 'kvm_userspace_exit')
[ "$all" -ge $N ] || fail "the parent (perf counting) has $all < $N"
echo "ok: kvm_userspace_exit(HLT) $hlt of $N renames (parent $all, every renamer), kept after the renamer exited"
