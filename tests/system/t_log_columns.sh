#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The columns of -l, -c and -L are fixed when the run starts, as
# kvm_stat's (issue 11): a stats-fd VM that starts later or exits mid-run
# never adds, drops or blanks a column. A CSV log keeps one header and one
# column count, and every value is an integer (0 for a field whose VM is
# gone). With --per-vcpu, a vCPU that appears later is left out and said
# once. Fake VMs (fakevm.py) where there is no KVM; with KVM also a real
# guest (kvmguest -s) that opens its stats fds after kvmstat started.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v python3 >/dev/null || skip "no python3 for the fake VMs"

# check_csv FILE: one header, the same column count on every line,
# integers only
check_csv() {
	local f=$1
	[ "$(grep -cE '^timestamp(,|$)' "$f")" = 1 ] ||
		fail "$f: not exactly one header: $(cat "$f")"
	head -n 1 "$f" | grep -qE '^timestamp(,|$)' || fail "$f: header not first: $(cat "$f")"
	[ "$(awk -F, '{ print NF }' "$f" | sort -u | wc -l)" = 1 ] ||
		fail "$f: the column count changes: $(cat "$f")"
	awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) if ($i !~ /^-?[0-9]+$/) { print; exit 1 } }' "$f" >/dev/null ||
		fail "$f: a value is not an integer: $(cat "$f")"
	[ "$(wc -l <"$f")" -ge 4 ] || fail "$f: too few lines: $(cat "$f")"
}

fake_proc

# alpha runs from the start; beta starts mid-run; then both exit
fakevm alpha 2 0
start_kvmstat log -S -f '^(halt_exits|remote_tlb_flush)$' -l -c -s 0.2
sleep 0.5
vmcmd alpha add 0 halt_exits 7
fakevm beta 3 50
vmcmd beta add 1 halt_exits 5
sleep 0.5
vmquit alpha
sleep 0.5
vmcmd beta add 2 halt_exits 11
vmquit beta
sleep 0.5
stop log
[ "$STATUS" = 0 ] || fail "kvmstat -l -c: status $STATUS: $(cat "$TMP/log.err")"
check_csv "$TMP/log.out"
[ "$(head -n 1 "$TMP/log.out")" = "timestamp,halt_exits,remote_tlb_flush" ] ||
	fail "header: $(head -n 1 "$TMP/log.out")"
# the columns carry the counts (exact sums across VM churn are the
# stats-fd provider's tests)
awk -F, 'NR > 1 && $2 == 7 { found = 1 } END { exit !found }' "$TMP/log.out" ||
	fail "alpha's 7 halt exits are not logged: $(cat "$TMP/log.out")"

# the plain log: the header is written at the start and then every 20
# lines, as kvm_stat's -l does, never again when VMs come and go
fakevm gamma 1 0
start_kvmstat plain -S -f '^halt_exits$' -l -s 0.2
sleep 0.5
fakevm delta 2 0
sleep 0.5
vmquit gamma
vmquit delta
sleep 0.5
stop plain
awk '!/^[0-9]{4}-/ { if (NR % 21 != 1) exit 1; h++ } END { exit !h }' "$TMP/plain.out" ||
	fail "plain log headers: $(cat "$TMP/plain.out")"
awk '/^[0-9]{4}-/ { if (NF != 3 || $3 !~ /^-?[0-9]+$/) exit 1 }' "$TMP/plain.out" ||
	fail "plain log lines: $(cat "$TMP/plain.out")"

# --per-vcpu: the vCPUs of the start are the columns
fakevm eps 1 0
start_kvmstat vcpu -S -f '^halt_exits$' --per-vcpu -p "$eps_VM" -l -c -s 0.2
sleep 0.5
vmcmd eps add 0 halt_exits 3
sleep 0.5
stop vcpu
check_csv "$TMP/vcpu.out"
[ "$(head -n 1 "$TMP/vcpu.out")" = "timestamp,halt_exits,halt_exits/vcpu0" ] ||
	fail "--per-vcpu header: $(head -n 1 "$TMP/vcpu.out")"
vmquit eps

# a real guest whose stats fds appear after kvmstat started
# (where this host's KVM cannot, the whole test runs again on the
# emulated KVM host)
kvm_usable || skip_kvm
[ -x "$GUEST" ] || fail "test guest $GUEST not built"
# the real /proc, so that the kernel's fields are known at start
unset KVMSTAT_PROC_ROOT
start_kvmstat real -S -f '^(halt_exits|mmio_exits)$' -l -c -s 0.2
wait_polling "$real_PID"
"$GUEST" -s -n 200 -k hlt -t 1 >"$TMP/g.out" 2>"$TMP/g.err" ||
	fail "guest: $(cat "$TMP/g.err")"
sleep 0.5
stop real
check_csv "$TMP/real.out"
# counted from its start: every one of its 200 HLT exits
col=$(head -n 1 "$TMP/real.out" | tr ',' '\n' | grep -n -x halt_exits | cut -d: -f1)
[ -n "$col" ] || fail "no halt_exits column: $(head -n 1 "$TMP/real.out")"
sum=$(awk -F, -v c="$col" 'NR > 1 { s += $c } END { print s + 0 }' "$TMP/real.out")
[ "$sum" = 200 ] || fail "a VM started during the run: halt_exits summed $sum, the guest made 200: $(cat "$TMP/real.out")"
echo ok
