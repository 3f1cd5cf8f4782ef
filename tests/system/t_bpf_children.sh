#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Child events counted by BPF, with no guest: a fake tracefs names the real
# tracepoint task:task_rename (fired by each write to /proc/self/comm)
# kvm_userspace_exit, its "reason" the renamer's oom_score_adj. A shell
# that sets oom_score_adj 5 (HLT) and renames itself N times must show
# exactly N kvm_userspace_exit(HLT); after it exits its key leaves the BPF
# map and its count stays in the totals: the log still sums to N, not 0
# and not 2N, over the intervals that follow.
# Where the kernel has kvm:kvm_exit, its real format file (VMX and SVM
# tables behind "REC->isa == 1 ?") is laid over task_rename too: exit_reason
# is oom_score_adj and isa the first bytes of the old name, so a renamer
# called "\1" is VMX and any other SVM. 400 renames with 120 (SVM's hlt)
# and 300 named "\1" with 12 (VMX's HLT) must count exactly, under the
# names of the host ISA's table alone, spelled as kvm_stat (blanks in the
# kernel's, as in "DB excp", made '_').
source tests/system/lib.sh
need_tracepoints
fake_tracefs "$TMP/tracefs"
N=1000
X=/sys/kernel/tracing/events/kvm/kvm_exit/format
[ -r "$X" ] && fake_kvm_exit "$TMP/tracefs"

KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t -l -s 0.3 -f '^kvm_(userspace_)?exit'
wait_lines "$TMP/k.out" 2 || fail "no log: $(cat "$TMP/k.err")"
# no fork inside: a fork's exec would rename (and count) too
( echo 5 >/proc/self/oom_score_adj
  for ((i = 0; i < N; i++)); do echo -n "kvmst$i" >/proc/self/comm; done )
if [ -r "$X" ]; then
	( echo 120 >/proc/self/oom_score_adj
	  for ((i = 0; i < 400; i++)); do echo -n "kx$i" >/proc/self/comm; done )
	# the first rename's old name is the shell's own: SVM, not counted below
	( echo 12 >/proc/self/oom_score_adj
	  for ((i = 0; i <= 300; i++)); do printf '\001' >/proc/self/comm; done )
fi
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
[ -r "$X" ] || exit 0
grep -qE 'kvm_exit\([^ )]* ' "$TMP/k.out" && fail "a reason with a blank: $(head -1 "$TMP/k.out")"
# only the host ISA's table names children, in kvm_stat's spelling (issue
# 11): SVM's hlt is HLT too; the other ISA's exits count under a number
head -1 "$TMP/k.out" | grep -qF 'kvm_exit(hlt)' && fail "the kernel's lower-case SVM names: $(head -1 "$TMP/k.out")"
if head -1 "$TMP/k.out" | grep -qF 'kvm_exit(IOIO)'; then isa=SVM want=400
else isa=VMX want=300; fi
hlt=$(column_sum "$TMP/k.out" 'kvm_exit(HLT)')
[ "$hlt" = $want ] || fail "kvm_exit(HLT) ($isa) sums to $hlt, want $want: $(cat "$TMP/k.out")"
echo "ok: the kernel's kvm_exit table of the host ISA ($isa): HLT $hlt"
