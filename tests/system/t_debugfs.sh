#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The debugfs provider on a fixture tree: batch output byte for byte, -i,
# -p on a VM directory, and a counter that moves during the sample; a
# *_ns file is a time, with --units and in JSON, and left out of the
# plain columns as kvm_stat -d leaves it out.
source tests/system/lib.sh

root="$TMP/dbg"
mkdir -p "$root/4242-11/vcpu0" "$root/4343-12"
echo 1000 >"$root/exits"
echo 70 >"$root/halt_exits"
echo 512 >"$root/pages_4k"; chmod 0444 "$root/pages_4k"
echo 600 >"$root/4242-11/exits"
echo 30 >"$root/4242-11/halt_exits"
echo 4243 >"$root/4242-11/vcpu0/pid"
echo 400 >"$root/4343-12/exits"
echo 40 >"$root/4343-12/halt_exits"

# -i: totals include the past; nothing moves: delta 0
KVMSTAT_DEBUGFS_ROOT=$root "$KVMSTAT" -d -1 -i -s 0.1 >"$TMP/out" 2>"$TMP/err" ||
	fail "status $?: $(cat "$TMP/err")"
printf '%-42s%10d%10d\n' exits 1000 0 halt_exits 70 0 pages_4k 512 0 >"$TMP/want"
cmp "$TMP/out" "$TMP/want" || fail "batch -i: got $(cat "$TMP/out")"

# without -i totals start at kvmstat's start; a counter moving in between
( sleep 0.3; echo 1100 1<>"$root/exits" ) &	# in place, one write
KVMSTAT_DEBUGFS_ROOT=$root "$KVMSTAT" -d -1 -s 0.6 >"$TMP/out" 2>"$TMP/err" ||
	fail "status $?: $(cat "$TMP/err")"
wait
printf '%-42s%10d%10d\n' exits 100 100 halt_exits 0 0 pages_4k 512 0 >"$TMP/want"
cmp "$TMP/out" "$TMP/want" || fail "batch: got $(cat "$TMP/out")"

# a *_ns file counts nanoseconds: its value in its unit and as a share of
# the interval, as for the binary stats' time counters
ns="$TMP/ns"
mkdir -p "$ns"
echo 1000 >"$ns/exits"
echo 1500000000 >"$ns/halt_wait_ns"
( sleep 0.3; echo 1800000000 1<>"$ns/halt_wait_ns" ) &
KVMSTAT_DEBUGFS_ROOT=$ns "$KVMSTAT" -d -1 --units -i -s 0.6 >"$TMP/out" 2>"$TMP/err" ||
	fail "status $?: $(cat "$TMP/err")"
wait
grep -q '^halt_wait_ns  *1800000000  *300000000  1.80 s  +300 ms  [0-9.]*%$' "$TMP/out" ||
	fail "*_ns in batch: $(cat "$TMP/out")"
# kvm_stat -d's columns leave its time files out (without --units)
echo 5 >"$ns/halt_poll_success_ns"
KVMSTAT_DEBUGFS_ROOT=$ns "$KVMSTAT" -d -1 -i -s 0.1 >"$TMP/out" 2>"$TMP/err" ||
	fail "status $?: $(cat "$TMP/err")"
printf '%-42s%10d%10d\n' exits 1000 0 >"$TMP/want"
cmp -s "$TMP/out" "$TMP/want" || fail "-1 shows what kvm_stat -d leaves out: $(cat "$TMP/out")"
if command -v jq >/dev/null; then
	KVMSTAT_DEBUGFS_ROOT=$ns "$KVMSTAT" -d --json -1 -s 0.1 >"$TMP/out.json" \
		2>"$TMP/err" || fail "--json status $?: $(cat "$TMP/err")"
	got=$(jq -r '.fields.halt_wait_ns | "\(.unit) \(.exponent) \(.base)"' "$TMP/out.json")
	[ "$got" = "seconds -9 10" ] || fail "*_ns in JSON: $got"
fi
echo ok
