#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The perf fallback gives the BPF engine's numbers. Three kvmstat watch
# the same 2-vCPU guest making 500 HLT exits per vCPU: on BPF, with
# --no-bpf, and without CAP_BPF and CAP_SYS_ADMIN (BPF cannot load: it
# falls back to perf events and says so in one line on stderr). All three
# must print the same rows, exact: kvm_userspace_exit and its HLT child
# 1000, each vCPU's 500, no IO, and the same kvm_fpu count per vCPU.
# CAP_PERFMON, which the third keeps, opens perf events only where
# kernel.perf_event_paranoid is 2 or below (the kernel's default); above
# 2, a level Debian and Ubuntu add and default to, only CAP_SYS_ADMIN
# does: there the third must fail and say so (the sysctl to lower, the
# capability to give) before it runs with the sysctl at 2, as it says.
source tests/system/lib.sh
need_kvm
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
cat >"$TMP/nobpf" <<EOS
#!/bin/sh
exec setpriv --bounding-set=-bpf,-sys_admin --inh-caps=-bpf,-sys_admin -- "$KVMSTAT" "\$@"
EOS
chmod +x "$TMP/nobpf"

N=500
# one interval of 10 s (the three must all be seen in their main loop
# before the guest goes, and on the emulated KVM host each look takes up
# to a second or two), the VM held past its end
start_guest g -v 2 -n $N -k hlt -t 12
args=(-t -1 -s 10 -p "${g_VMS%% *}" --per-vcpu
	-f '^kvm_userspace_exit$|^kvm_userspace_exit\((HLT|IO)\)|^kvm_fpu$')

PARANOID=/proc/sys/kernel/perf_event_paranoid
level=$(cat "$PARANOID") || skip "no $PARANOID"
if [ "$level" -gt 2 ]; then
	"$TMP/nobpf" "${args[@]}" >"$TMP/denied.out" 2>"$TMP/denied.err"
	rc=$?
	[ "$rc" = 1 ] && [ ! -s "$TMP/denied.out" ] && [ "$(wc -l <"$TMP/denied.err")" = 1 ] ||
		fail "paranoid $level, without CAP_SYS_ADMIN: status $rc, want 1 and one line: $(cat "$TMP/denied.out" "$TMP/denied.err")"
	grep -q "kernel.perf_event_paranoid is $level, where only CAP_SYS_ADMIN may open perf events" "$TMP/denied.err" &&
		grep -q 'run with CAP_SYS_ADMIN, or lower it with sysctl kernel.perf_event_paranoid=2 (CAP_PERFMON then suffices)' "$TMP/denied.err" ||
		fail "paranoid $level, without CAP_SYS_ADMIN: the fix not named: $(cat "$TMP/denied.err")"
	echo "ok: kernel.perf_event_paranoid $level, without CAP_SYS_ADMIN: $(cat "$TMP/denied.err")"
	trap 'echo "$level" >"$PARANOID"; cleanup' EXIT
	echo 2 >"$PARANOID" || fail "cannot set kernel.perf_event_paranoid to 2"
fi
start_kvmstat bpf "${args[@]}"
start_kvmstat perf "${args[@]}" --no-bpf
KVMSTAT="$TMP/nobpf" start_kvmstat nocap "${args[@]}"
# the guest goes once all three have taken their first sample (a fixed
# wait was shorter than opening the providers takes on the emulated KVM
# host)
for k in bpf perf nocap; do
	v="${k}_PID"; wait_polling "${!v}"
done
go_guest g
for k in bpf perf nocap; do
	v="${k}_PID"; wait "${!v}" || fail "$k: status $?: $(cat "$TMP/$k.err")"
	awk '{ print $1, $2 }' "$TMP/$k.out" >"$TMP/$k.rows"
done
wait_guest g
want="kvm_userspace_exit $((2 * N))
kvm_userspace_exit(HLT) $((2 * N))
kvm_userspace_exit(HLT)/vcpu0 $N
kvm_userspace_exit(HLT)/vcpu1 $N
kvm_userspace_exit/vcpu0 $N
kvm_userspace_exit/vcpu1 $N"
for k in bpf perf nocap; do
	got=$(grep -v -e '^kvm_fpu' -e '(IO)' "$TMP/$k.rows")
	[ "$got" = "$want" ] || fail "$k: got
$got
want
$want"
	grep -q '^kvm_userspace_exit(IO) 0$' "$TMP/$k.rows" || fail "$k: IO: $(cat "$TMP/$k.rows")"
	grep -q '^kvm_fpu/vcpu1 [1-9]' "$TMP/$k.rows" || fail "$k: no kvm_fpu: $(cat "$TMP/$k.rows")"
done
cmp -s "$TMP/bpf.rows" "$TMP/perf.rows" && cmp -s "$TMP/bpf.rows" "$TMP/nocap.rows" ||
	fail "the rows differ: $(paste "$TMP/bpf.rows" "$TMP/perf.rows" "$TMP/nocap.rows")"
echo "ok: BPF, --no-bpf and without CAP_BPF print the same exact rows: $(tr '\n' ',' <"$TMP/bpf.rows")"
[ ! -s "$TMP/bpf.err" ] && [ ! -s "$TMP/perf.err" ] ||
	fail "BPF or --no-bpf said: $(cat "$TMP/bpf.err" "$TMP/perf.err")"
[ "$(grep -c 'BPF unavailable (no permission' "$TMP/nocap.err")" = 1 ] &&
	[ "$(wc -l <"$TMP/nocap.err")" = 1 ] ||
	fail "without CAP_BPF, want one line on stderr: $(cat "$TMP/nocap.err")"
echo "ok: without CAP_BPF: $(cat "$TMP/nocap.err")"
