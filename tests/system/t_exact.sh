#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The test guest makes exactly N exits of one kind per vCPU; kvmstat's log
# output (system-wide tracepoint groups) must sum to exactly that, with the
# BPF reason counter and with kvm_stat-style filtered events (--no-bpf).
source tests/system/lib.sh
need_kvm

N=2000
V=2
# system-wide counts are exact for our guest only when it is the only VM
others=$(ls /sys/kernel/debug/kvm 2>/dev/null | grep -c -- '-[0-9]*$')
[ "$others" = 0 ] || skip "another VM runs on this host ($others): system-wide counts include it"
check() {	# kind field bpfopt
	local kind=$1 field=$2 opt=$3
	start_guest g -m 1 -v $V -n $N -k "$kind" -t 0.3
	start_kvmstat k -t -l -s 0.2 $opt -f '^kvm_(pio|mmio|userspace_exit)'
	wait_lines "$TMP/k.out" 2
	go_guest g
	wait_guest g
	stop k
	[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
	got=$(column_sum "$TMP/k.out" "$field")
	[ "$got" = $((V * N)) ] ||
		fail "$kind $opt: $field summed to $got, want $((V * N)); log: $(cat "$TMP/k.out"); kvmstat said: $(cat "$TMP/k.err"); guest said: $(cat "$TMP/g.out" "$TMP/g.err")"
	echo "ok: $kind $opt $field = $got"
}
check pio 'kvm_pio' ''
check pio 'kvm_userspace_exit(IO)' ''
check pio 'kvm_userspace_exit(IO)' --no-bpf
check mmio 'kvm_userspace_exit(MMIO)' ''
check mmio 'kvm_userspace_exit(MMIO)' --no-bpf
check hlt 'kvm_userspace_exit(HLT)' ''
check hlt 'kvm_userspace_exit(HLT)' --no-bpf
