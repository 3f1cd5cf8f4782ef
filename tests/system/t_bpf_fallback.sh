#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The perf fallback gives the BPF engine's numbers. Three kvmstat watch
# the same 2-vCPU guest making 500 HLT exits per vCPU: on BPF, with
# --no-bpf, and without CAP_BPF and CAP_SYS_ADMIN (BPF cannot load: it
# falls back to perf events and says so in one line on stderr). All three
# must print the same rows, exact: kvm_userspace_exit and its HLT child
# 1000, each vCPU's 500, no IO, and the same kvm_fpu count per vCPU.
source tests/system/lib.sh
need_kvm
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
cat >"$TMP/nobpf" <<EOS
#!/bin/sh
exec setpriv --bounding-set=-bpf,-sys_admin --inh-caps=-bpf,-sys_admin -- "$KVMSTAT" "\$@"
EOS
chmod +x "$TMP/nobpf"

N=500
start_guest g -v 2 -n $N -k hlt -t 1
args=(-t -1 -s 1.5 -p "${g_VMS%% *}" --per-vcpu
	-f '^kvm_userspace_exit$|^kvm_userspace_exit\((HLT|IO)\)|^kvm_fpu$')
start_kvmstat bpf "${args[@]}"
start_kvmstat perf "${args[@]}" --no-bpf
KVMSTAT="$TMP/nobpf" start_kvmstat nocap "${args[@]}"
sleep 0.5
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
