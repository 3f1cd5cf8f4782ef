#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -p counts one VM (per-thread groups, threads started after kvmstat are
# picked up) and not its neighbour; -g finds a VM by its name.
source tests/system/lib.sh
need_kvm

start_guest a -m 1 -v 3 -n 700 -k hlt -t 0.5
start_guest b -m 1 -v 1 -n 900 -k hlt -t 0.5
vm_a=${a_VMS%% *}
start_kvmstat k -t -p "$vm_a" -l -s 0.2 -f '^kvm_userspace_exit'
wait_lines "$TMP/k.out" 2
go_guest a
go_guest b
wait_guest a
wait_guest b
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
got=$(column_sum "$TMP/k.out" 'kvm_userspace_exit(HLT)')
[ "$got" = 2100 ] || fail "-p $vm_a: kvm_userspace_exit(HLT) = $got, want 2100 (3 x 700, not b's 900): $(cat "$TMP/k.out")"
echo "ok: -p counted $got"
