#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Names read from the kernel with control characters, blanks, commas or
# backslashes are escaped as \xNN in log and CSV headers (issue 12), so
# they split no column and start no line: on a debugfs fixture whose file
# names hold a newline, a tab, a blank and a comma, the CSV header has as
# many columns as every line, the plain header is one line, and a count
# lands in its own field's column.
source tests/system/lib.sh

debugfs_fixture exits=1 "odd name,x=2" "$(printf 'nl\nname')=3" "$(printf 'tab\tname')=4" \
	'back\slash=5'

start_kvmstat csv -d -l -c -s 0.1
start_kvmstat plain -d -l -s 0.1
wait_lines "$TMP/csv.out" 3
wait_lines "$TMP/plain.out" 3
echo 9 >"$root/odd name,x"
n=$(wc -l <"$TMP/csv.out")
wait_lines "$TMP/csv.out" $((n + 3))
stop csv
stop plain
want='timestamp,back\x5cslash,exits,nl\x0aname,odd\x20name\x2cx,tab\x09name'
[ "$(head -n 1 "$TMP/csv.out")" = "$want" ] ||
	fail "CSV header '$(head -n 1 "$TMP/csv.out")', want '$want'"
[ "$(awk -F, '{ print NF }' "$TMP/csv.out" | sort -u)" = 6 ] ||
	fail "CSV columns: $(cat "$TMP/csv.out")"
sum=$(awk -F, 'NR > 1 { s += $5 } END { print s + 0 }' "$TMP/csv.out")
[ "$sum" = 7 ] || fail "odd name,x: sum $sum in its column, want 7: $(cat "$TMP/csv.out")"
[ "$(head -n 1 "$TMP/plain.out")" = 'back\x5cslash exits nl\x0aname odd\x20name\x2cx tab\x09name ' ] ||
	fail "log header: $(head -n 2 "$TMP/plain.out")"
awk 'NR > 1 && NF != 7 { exit 1 }' "$TMP/plain.out" || fail "log lines: $(cat "$TMP/plain.out")"
echo ok
