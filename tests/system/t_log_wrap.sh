#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A counter that wraps never logs a negative delta (issue 12): on a
# debugfs fixture, exits goes 10 -> 15 -> 2^64-1 (a jump no interval can
# make: a reset to that value, 0 counted) -> 3 (over the top: a reset, 3
# counted). The CSV log holds no negative value and sums to 5 + 3.
source tests/system/lib.sh

debugfs_fixture exits=10

start_kvmstat log -d -f '^exits$' -l -c -s 0.1
wait_lines "$TMP/log.out" 3
# each value stays for several intervals
for v in 15 18446744073709551615 3; do
	n=$(wc -l <"$TMP/log.out")
	printf '%s\n' "$v" >"$root/exits"
	wait_lines "$TMP/log.out" $((n + 4))
done
stop log
[ "$STATUS" = 0 ] || fail "status $STATUS: $(cat "$TMP/log.err")"
grep -q ',-' "$TMP/log.out" && fail "a negative delta: $(cat "$TMP/log.out")"
sum=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' "$TMP/log.out")
[ "$sum" = 8 ] || fail "sum $sum, want 8: $(cat "$TMP/log.out")"
echo ok
