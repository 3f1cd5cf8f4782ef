#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Time in the VMM, on a real guest (issue 14): a 2-vCPU test guest makes N
# port I/O exits per vCPU and spends 300 µs (vCPU 0) and 1,500 µs (vCPU 1)
# in user space after each one before it runs the guest again (-u).
# kvmstat --latency --json -1 must time each vCPU's IO exits into the log2
# bucket that holds its spin: p50 below 524 µs (the bucket [262 µs,
# 524 µs)) and below 2,097 µs ([1,049 µs, 2,097 µs)), min at least the spin,
# and count every exit that was followed by a return to the guest: N - 1
# (the guest stops after its last exit, which so never ends), while
# kvm_userspace_exit(IO) counts all N.
# Twice: with the exits in flight in BPF task storage (the default where
# the kernel has it) and in the LRU hash kvmstat falls back to elsewhere
# (KVMSTAT_LATENCY_STATE=hash forces it); each run checks, in kvmstat's
# fds, that it used the store it names (a task-storage map, type 29, or
# none and an LRU hash, type 9).

source tests/system/lib.sh
need_kvm
N=300
# map types of kvmstat $1's BPF maps, one a line
map_types() { grep -h '^map_type:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u; }
for state in task hash; do
	start_guest g -v 2 -n $N -k pio -u 300,1500 -t 8
	vm=${g_VMS%% *}
	KVMSTAT_LATENCY_STATE=$state start_kvmstat k -t --json -1 -s 6 --latency -p "$vm" -f '^kvm_userspace_exit$'
	wait_polling "$k_PID"
	types=$(map_types "$k_PID")
	go_guest g
	wait "$k_PID" || fail "$state: kvmstat: status $?: $(cat "$TMP/k.err")"
	wait_guest g
	if [ $state = task ]; then
		grep -qx 29 <<<"$types" || fail "task: no task-storage map among kvmstat's: $(echo $types)"
	else
		! grep -qx 29 <<<"$types" && grep -qx 9 <<<"$types" ||
			fail "hash: want an LRU hash and no task storage, kvmstat's map types: $(echo $types)"
	fi
	grep -c "^done $vm [01] $N " "$TMP/g.out" | grep -qx 2 || fail "$state: guest: $(cat "$TMP/g.out")"
	io=$(jq '.fields.kvm_userspace_exit.total' "$TMP/k.out")
	[ "$io" = $((2 * N)) ] || fail "$state: kvm_userspace_exit $io, want $((2 * N)): $(jq -c .fields "$TMP/k.out")"
	for v in 0 1; do
		h=$(jq -c --argjson v $v '.latency.histograms[] |
			select(.kind == "vmm" and .reason == "IO" and .vcpu == $v)' "$TMP/k.out")
		[ -n "$h" ] || fail "$state: no VMM-time histogram of vCPU $v: $(jq -c .latency "$TMP/k.out")"
		# each spin leaves room in its bucket for the way from the exit
		# to user space and back: a few µs natively, up to ~100 µs on
		# the emulated KVM host (TCG)
		spin=$((v ? 1500000 : 300000)) want=$((v ? 2097152 : 524288))
		[ "$(jq .count <<<"$h")" = $((N - 1)) ] || fail "$state: vCPU $v: count, want $((N - 1)): $h"
		[ "$(jq .p50_ns <<<"$h")" = $want ] || fail "$state: vCPU $v: p50 bound, want $want ns: $h"
		[ "$(jq .min_ns <<<"$h")" -ge $spin ] || fail "$state: vCPU $v: min below the $spin ns spin: $h"
		echo "ok: $state: vCPU $v ($((spin / 1000)) µs in user space): $(jq -c '{count, min_ns, p50_ns, p90_ns, max_ns}' <<<"$h")"
	done
	# the VM's row sums its vCPUs
	vmrow=$(jq -c --argjson p "$vm" '.latency.histograms[] |
		select(.kind == "vmm" and .reason == "IO" and .pid == $p and .tid == 0)' "$TMP/k.out")
	[ "$(jq .count <<<"$vmrow")" = $((2 * N - 2)) ] || fail "$state: VM row: $vmrow"
	echo "ok: $state: the VM's row counts $((2 * N - 2))"
done
