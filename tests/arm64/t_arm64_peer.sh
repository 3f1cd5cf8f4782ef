#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# arm64 side by side with kvm_stat 6.12 (issue 33), which decodes
# kvm_exit's esr_ec there: -f help lists the same fields; -l, run by
# both over the same guests, logs in the same columns and adds up to the
# same counts per field, each equal to what the guests made (kvm_exit by
# exception class, in kvm_stat's names, and the arm64 tracepoints); -1's
# rows are kvm_stat's columns, its events and child events (every
# exception class) the same as kvm_stat's.
source tests/arm64/lib.sh
need_arm64
[ -r "$KVM_STAT_PEER" ] || fail "no kvm_stat script at $KVM_STAT_PEER (set KVM_STAT_PEER)"
command -v python3 >/dev/null || fail "no python3 on this host"

# -f help: the same list
peer -f help >"$TMP/ph" 2>"$TMP/ph.err" || fail "kvm_stat -f help: $(tail -n 3 "$TMP/ph.err")"
"$KVMSTAT" -f help >"$TMP/kh" 2>"$TMP/kh.err" || fail "kvmstat -f help: $(cat "$TMP/kh.err")"
cmp -s "$TMP/ph" "$TMP/kh" ||
	fail "-f help differs from kvm_stat's: $(diff "$TMP/ph" "$TMP/kh" | head -n 20)"
echo "ok: -f help: the same $(wc -l <"$TMP/kh") lines as kvm_stat's"

# -l side by side over three guests: each counting before they go
A=200
start_guest h -v 2 -n $A -k hvc -t 60
start_guest w -v 1 -n $A -k wfi -t 60
start_guest s -v 1 -n $A -k sysreg -t 60
re='kvm_exit\((HVC64|WFx|SYS64)\)|kvm_hvc_arm64|kvm_wfx_arm64'
start_kvmstat kl -l -s 1 -f "$re"
peer -l -s 1 -f "$re" >"$TMP/pl.out" 2>"$TMP/pl.err" &
pl_PID=$!
PIDS+=("$pl_PID")
# kvm_stat's first line of deltas shows it counting (its start takes
# seconds here: a perf event per reason and CPU)
for _ in $(seq 1 1200); do
	[ "$(grep -c '^[0-9]' "$TMP/pl.out")" -ge 1 ] && break
	kill -0 "$pl_PID" 2>/dev/null || fail "kvm_stat -l died: $(tail -n 3 "$TMP/pl.err")"
	sleep 0.1
done
grep -q '^[0-9]' "$TMP/pl.out" || fail "kvm_stat -l logged nothing in 120 s"
wait_polling "$kl_PID"
for g in h w s; do go_guest $g; done
wait_done h 2
wait_done w 1
wait_done s 1
W=$(exits_of w 0)
# two more intervals of each log after the last exit
n=$(grep -c '^[0-9]' "$TMP/pl.out")
m=$(grep -c '^[0-9]' "$TMP/kl.out")
for _ in $(seq 1 300); do
	[ "$(grep -c '^[0-9]' "$TMP/pl.out")" -ge $((n + 2)) ] &&
		[ "$(grep -c '^[0-9]' "$TMP/kl.out")" -ge $((m + 2)) ] && break
	sleep 0.1
done
stop kl
kill -TERM "$pl_PID" 2>/dev/null
wait "$pl_PID" 2>/dev/null
# the header: the same names in the same order
[ "$(grep -m 1 -v '^[0-9]' "$TMP/kl.out")" = "$(grep -m 1 -v '^[0-9]' "$TMP/pl.out")" ] ||
	fail "-l headers differ: kvmstat '$(head -n 1 "$TMP/kl.out")', kvm_stat '$(head -n 1 "$TMP/pl.out")'"
for f in 'kvm_exit(HVC64)' kvm_hvc_arm64 'kvm_exit(WFx)' kvm_wfx_arm64 'kvm_exit(SYS64)'; do
	case $f in *HVC* | *hvc*) n=$((2 * A)) ;; *WFx* | *wfx*) n=$W ;; *) n=$A ;; esac
	want "kvmstat -l $f" "$(column_sum "$TMP/kl.out" "$f")" $n
	want "kvm_stat -l $f" "$(column_sum "$TMP/pl.out" "$f")" $n
done
echo "ok: -l: the same header as kvm_stat's, and both log HVC64 $((2 * A)), WFx $W, SYS64 $A"

# -1: kvm_stat's columns, the same events, the same events with children
peer -1 >"$TMP/p1" 2>"$TMP/p1.err" || fail "kvm_stat -1: $(tail -n 3 "$TMP/p1.err")"
"$KVMSTAT" -1 -s 0.2 >"$TMP/k1" 2>"$TMP/k1.err" || fail "kvmstat -1: $(cat "$TMP/k1.err")"
columns "$TMP/p1" "kvm_stat -1"
columns "$TMP/k1" "kvmstat -1"
awk '{ print $1 }' "$TMP/p1" | LC_ALL=C sort >"$TMP/pall"
awk '{ print $1 }' "$TMP/k1" | LC_ALL=C sort >"$TMP/kall"
cmp -s <(grep -v '(' "$TMP/pall") <(grep -v '(' "$TMP/kall") ||
	fail "-1 events differ from kvm_stat's: $(diff <(grep -v '(' "$TMP/pall") <(grep -v '(' "$TMP/kall") | head)"
cmp -s <(sed -n 's/(.*//p' "$TMP/pall" | uniq) <(sed -n 's/(.*//p' "$TMP/kall" | uniq) ||
	fail "-1 events with children differ from kvm_stat's"
# kvm_exit's children: every exception class of kvm_stat's arm64 table,
# spelled alike, and no other
cmp -s <(grep '^kvm_exit(' "$TMP/pall") <(grep '^kvm_exit(' "$TMP/kall") ||
	fail "-1 kvm_exit children differ from kvm_stat's: $(diff <(grep '^kvm_exit(' "$TMP/pall") <(grep '^kvm_exit(' "$TMP/kall") | head)"
# every other child of kvm_stat's too (kvmstat also knows the userspace
# exit reasons of kernels after 6.12: LOONGARCH_IOCSR, MEMORY_FAULT, TDX)
miss=$(grep '(' "$TMP/pall" | LC_ALL=C comm -23 - <(grep '(' "$TMP/kall"))
[ -z "$miss" ] || fail "-1 lacks kvm_stat's child events: $miss"
echo "ok: -1: kvm_stat's columns, events ($(grep -vc '(' "$TMP/kall")), kvm_exit's $(grep -c '^kvm_exit(' "$TMP/kall") exception classes, every child of kvm_stat's"
for g in h w s; do wait_guest $g; done
echo ok
