#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight recorder on a real guest: the test guest makes exactly N
# port-I/O exits per vCPU while kvmstat -t -l records; the replay's log
# is the live log byte for byte and both sum to exactly V x N, and -1 over
# the whole recording shows the same delta. Needs /dev/kvm, root and
# tracefs (skips otherwise).
# shellcheck disable=SC2154 # NAME_PID is set by printf -v
source tests/system/lib.sh
need_kvm
command -v sqlite3 >/dev/null || skip "sqlite3 missing: apt-get install sqlite3"

N=3000
V=2
# shellcheck disable=SC2010 # the VM directories, as t_exact.sh
others=$(ls /sys/kernel/debug/kvm 2>/dev/null | grep -c -- '-[0-9]*$')
[ "$others" = 0 ] || skip "another VM runs on this host ($others): system-wide counts include it"
start_guest g -m 1 -v $V -n $N -k pio -t 0.3
start_kvmstat k -t -l -s 0.2 -f '^kvm_(pio|userspace_exit)' --record "$TMP/g.db"
wait_lines "$TMP/k.out" 2
wait_polling "$k_PID"
go_guest g
wait_guest g
sleep 0.5
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
live=$(column_sum "$TMP/k.out" kvm_pio)
[ "$live" = $((V * N)) ] || fail "the live log sums kvm_pio to $live, want $((V * N))"
"$KVMSTAT" --replay "$TMP/g.db" -l -f '^kvm_(pio|userspace_exit)' >"$TMP/r.out" 2>"$TMP/r.err" ||
	fail "--replay exited $?: $(cat "$TMP/r.err")"
cmp -s "$TMP/k.out" "$TMP/r.out" || fail "the replay differs: $(diff "$TMP/k.out" "$TMP/r.out" | head)"
[ "$(column_sum "$TMP/r.out" 'kvm_userspace_exit(IO)')" = "$(column_sum "$TMP/k.out" 'kvm_userspace_exit(IO)')" ] ||
	fail "kvm_userspace_exit(IO) sums differ"
"$KVMSTAT" --replay "$TMP/g.db" -1 -f '^kvm_pio$' >"$TMP/o.out" || fail "--replay -1"
awk -v n=$((V * N)) '$1 == "kvm_pio" && $3 == n { ok = 1 } END { exit !ok }' "$TMP/o.out" ||
	fail "-1 over the recording: $(cat "$TMP/o.out"), want a delta of $((V * N))"
[ "$(sqlite3 "$TMP/g.db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
echo "ok: $((V * N)) port-I/O exits recorded; the replayed log is the live one, -1 over it $((V * N))"
