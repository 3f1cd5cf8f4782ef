#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -g finds the VM by the guest name in its command line (QEMU's
# -name guest=NAME,...), counts only that VM, and refuses a name that
# matches no VM or several.
source tests/system/lib.sh
need_kvm

start_guest a --name guest=alpha,debug-threads=on -m 1 -v 2 -n 400 -k hlt -t 0.5
start_guest b --name guest=beta -m 1 -v 1 -n 900 -k hlt -t 0.5
start_guest c --name guest=beta -m 1 -v 1 -n 10 -k hlt -t 3
"$KVMSTAT" -1 -t -g beta >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] || fail "-g beta (two VMs) did not fail with status 2"
grep -q 'matches several VMs' "$TMP/err" || fail "-g beta: $(cat "$TMP/err")"
start_kvmstat k -t -g alpha -l -s 0.2 -f '^kvm_userspace_exit'
wait_lines "$TMP/k.out" 2
go_guest a
go_guest b
wait_guest a
wait_guest b
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
got=$(column_sum "$TMP/k.out" 'kvm_userspace_exit(HLT)')
[ "$got" = 800 ] || fail "-g alpha counted $got HLT exits, want 800: $(cat "$TMP/k.out")"
echo "ok: -g alpha counted $got"
