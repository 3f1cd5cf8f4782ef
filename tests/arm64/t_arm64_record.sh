#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight recorder on arm64 (issue 33): a test guest makes known HVC
# calls and system-register traps while kvmstat -t -l records; the live
# log adds up to the guest's counts, the replay's log is the live one
# line for line, and -1 over the recording shows the same deltas.
source tests/arm64/lib.sh
need_arm64

A=400 B=600
start_guest h -v 2 -n $A,$B -k hvc -t 60
start_guest s -v 1 -n $A -k sysreg -t 60
re='^kvm_(hvc_arm64|exit)$|^kvm_exit\((HVC64|SYS64)\)$'
start_kvmstat k -t -l -s 0.5 -f "$re" --record "$TMP/g.db"
wait_lines "$TMP/k.out" 2
wait_polling "$k_PID"
go_guest h
go_guest s
wait_done h 2
wait_done s 1
# two more lines after the last exit
n=$(wc -l <"$TMP/k.out")
wait_lines "$TMP/k.out" $((n + 2))
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
want "the live log's kvm_hvc_arm64" "$(column_sum "$TMP/k.out" kvm_hvc_arm64)" $((A + B))
want "the live log's kvm_exit(HVC64)" "$(column_sum "$TMP/k.out" 'kvm_exit(HVC64)')" $((A + B))
want "the live log's kvm_exit(SYS64)" "$(column_sum "$TMP/k.out" 'kvm_exit(SYS64)')" $A
"$KVMSTAT" --replay "$TMP/g.db" -l -f "$re" >"$TMP/r.out" 2>"$TMP/r.err" ||
	fail "--replay exited $?: $(cat "$TMP/r.err")"
cmp -s "$TMP/k.out" "$TMP/r.out" || fail "the replay differs: $(diff "$TMP/k.out" "$TMP/r.out" | head)"
"$KVMSTAT" --replay "$TMP/g.db" -1 -f "$re" >"$TMP/o.out" 2>"$TMP/o.err" ||
	fail "--replay -1 exited $?: $(cat "$TMP/o.err")"
awk -v n=$((A + B)) '$1 == "kvm_exit(HVC64)" && $3 == n { ok = 1 } END { exit !ok }' "$TMP/o.out" ||
	fail "-1 over the recording: $(cat "$TMP/o.out"), want kvm_exit(HVC64) $((A + B))"
awk -v n=$A '$1 == "kvm_exit(SYS64)" && $3 == n { ok = 1 } END { exit !ok }' "$TMP/o.out" ||
	fail "-1 over the recording: $(cat "$TMP/o.out"), want kvm_exit(SYS64) $A"
echo "ok: $((A + B)) HVC64 and $A SYS64 exits recorded; the replayed log is the live one, -1 over it the same"
echo ok
