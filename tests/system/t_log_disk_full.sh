#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A full disk while logging (issue 12): the -L file on a small tmpfs is
# filled up while kvmstat logs a debugfs fixture whose counter moves. The
# file never holds part of a record (it ends in a newline and every line
# is whole), kvmstat keeps running and says so once on stderr, and once
# space returns the record it writes carries the missed intervals'
# deltas: the column sums to the counter's whole change.
source tests/system/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (mounts a tmpfs)"

mnt=$TMP/mnt
mkdir -p "$mnt"
mount -t tmpfs -o size=16k kvmstat-test "$mnt" || skip "cannot mount a tmpfs"
full_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	umount "$mnt" 2>/dev/null || umount -l "$mnt"
	cleanup
}
trap full_cleanup EXIT

# wide lines (100 more columns) fill a tmpfs page within seconds
# shellcheck disable=SC2046
debugfs_fixture exits=0 $(printf 'c%s=0 ' $(seq -w 0 99))
log=$mnt/k.csv

# whole FILE: ends in a newline; the header, then lines of 102 fields
whole() {
	[ ! -s "$1" ] || [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "$1 ends in part of a record: $(tail -c 80 "$1")"
	awk -F, 'NR == 1 { if ($1 != "timestamp" || NF != 102) exit 1; next }
		NF != 102 || $1 !~ /^[0-9-]+ [0-9:]+$/ { exit 1 }
		{ for (i = 2; i <= NF; i++) if ($i !~ /^[0-9]+$/) exit 1 }' "$1" ||
		fail "$1 has a line that is not whole: $(cat "$1")"
}

start_kvmstat k -d -s 0.1 -L "$log" -c
wait_lines "$log" 3
echo 50 >"$root/exits"
dd if=/dev/zero of="$mnt/filler" bs=1k 2>/dev/null
# the log fills the rest of its page, then a record no longer fits
for _ in $(seq 1 200); do
	grep -q 'No space left on device' "$TMP/k.err" && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat ended: $(cat "$TMP/k.err")"
	sleep 0.05
done
grep -q 'No space left on device' "$TMP/k.err" || fail "the disk never got full"
# counts while full
echo 120 >"$root/exits"
sleep 0.5
echo 300 >"$root/exits"
sleep 0.5
kill -0 "$k_PID" 2>/dev/null || fail "kvmstat ended on a full disk: $(cat "$TMP/k.err")"
whole "$log"
# space again: the missed deltas are written
rm -f "$mnt/filler"
echo 400 >"$root/exits"
n=$(wc -l <"$log")
wait_lines "$log" $((n + 3))
stop k
[ "$STATUS" = 0 ] || fail "status $STATUS: $(cat "$TMP/k.err")"
whole "$log"
[ "$(grep -c 'No space left on device' "$TMP/k.err")" = 1 ] ||
	fail "not said once: $(cat "$TMP/k.err")"
sum=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "exits") c = i; next }
	{ s += $c } END { print s + 0 }' "$log")
[ "$sum" = 400 ] || fail "exits sum $sum, want 400"
echo ok
