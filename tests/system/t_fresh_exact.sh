#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A fresh host, counted exactly (issue 19): in a mount namespace of its own
# with tracefs and debugfs unmounted, kvmstat -l mounts tracefs itself and
# logs exactly the N HLT exits each vCPU of the test guest makes; stderr
# says what it mounted, and this host's mounts stay as they were.
source tests/system/lib.sh
need_kvm
fresh_mounts
others=$(ls /sys/kernel/debug/kvm 2>/dev/null | grep -c -- '-[0-9]*$')
[ "$others" = 0 ] || skip "another VM runs on this host ($others): system-wide counts include it"

N=3000
V=2
before=$(kfs_mounts)
start_guest g -m 1 -v $V -n $N -k hlt -t 0.3
KVMSTAT=$FRESH start_kvmstat k "$KVMSTAT" -l -s 0.2 -f '^kvm_userspace_exit'
wait_lines "$TMP/k.out" 2
wait_polling "$k_PID"
ns=$(kfs_mounts "$k_PID")
go_guest g
wait_guest g
sleep 0.5
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
[ "$ns" = "/sys/kernel/tracing tracefs" ] ||
	fail "kvmstat's namespace has '$ns' mounted, want tracefs alone"
grep -q '^kvmstat: mounted tracefs on /sys/kernel/tracing' "$TMP/k.err" ||
	fail "stderr does not say tracefs was mounted: $(cat "$TMP/k.err")"
got=$(column_sum "$TMP/k.out" 'kvm_userspace_exit(HLT)')
[ "$got" = $((V * N)) ] ||
	fail "kvm_userspace_exit(HLT) summed to $got, want $((V * N)); log: $(cat "$TMP/k.out")"
[ "$(kfs_mounts)" = "$before" ] ||
	fail "this host's mounts changed: '$before' became '$(kfs_mounts)'"
echo "ok: $got HLT exits counted exactly after mounting tracefs"
