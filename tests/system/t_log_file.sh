#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The -L file, as root in directories others may write to (issue 12):
# a symbolic link planted at the path is refused, the file it points to
# left as it was; a FIFO is refused at once (never a blocked open());
# so is a directory; a new file gets mode 0640. The same for --json -L.
# Appending CSV with another field set than the file's header is refused
# with one line naming both headers and the fix, status 2, the file left
# as it was; with the same field set it appends under the one header.
source tests/system/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (the case is root appending)"

debugfs_fixture exits=1000 halt_exits=70

# refused WHAT ARGS...: kvmstat must end within 5 s, status 2, one line
# on stderr that contains WHAT
refused() {
	local what=$1; shift
	timeout -s KILL 5 "$KVMSTAT" -d -s 0.1 "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ $rc = 2 ] || fail "kvmstat $*: status $rc, want 2: $(cat "$TMP/err")"
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "kvmstat $*: stderr not one line: $(cat "$TMP/err")"
	grep -q -- "$what" "$TMP/err" || fail "kvmstat $*: stderr '$(cat "$TMP/err")' lacks '$what'"
}

# a symbolic link to a root-only file, planted by someone else
echo secret >"$TMP/shadow"
chmod 0600 "$TMP/shadow"
ln -s "$TMP/shadow" "$TMP/link.log"
refused "is a symbolic link" -L "$TMP/link.log"
refused "is a symbolic link" -L "$TMP/link.log" -c
refused "is a symbolic link" -L "$TMP/link.log" --json
[ "$(cat "$TMP/shadow")" = secret ] || fail "the link's target was written: $(cat "$TMP/shadow")"

# a FIFO (no reader, then one)
mkfifo "$TMP/fifo"
refused "is a FIFO" -L "$TMP/fifo"
refused "is a FIFO" -L "$TMP/fifo" --json
cat "$TMP/fifo" >/dev/null &
reader=$!
PIDS+=($reader)
refused "is a FIFO" -L "$TMP/fifo"
kill "$reader" 2>/dev/null
mkdir "$TMP/dir"
refused "is a directory" -L "$TMP/dir"

# a new file: mode 0640 (umask 022), for the log and JSON Lines
umask 022
for mode in "-c" "--json"; do
	rm -f "$TMP/new"
	start_kvmstat new -d -s 0.1 -L "$TMP/new" $mode
	wait_lines "$TMP/new" 2
	stop new
	[ "$STATUS" = 0 ] || fail "-L new $mode: status $STATUS: $(cat "$TMP/new.err")"
	[ "$(stat -c %a "$TMP/new")" = 640 ] ||
		fail "-L new $mode: mode $(stat -c %a "$TMP/new"), want 640"
done

# CSV appended to a file with another header
start_kvmstat a -d -s 0.1 -f '^exits$' -L "$TMP/f.csv" -c
wait_lines "$TMP/f.csv" 3
stop a
cp "$TMP/f.csv" "$TMP/f.before"
refused "rotate the file" -f '^halt_exits$' -L "$TMP/f.csv" -c
grep -q "'timestamp,exits'" "$TMP/err" || fail "the file's header not named: $(cat "$TMP/err")"
grep -q "'timestamp,halt_exits'" "$TMP/err" || fail "the run's header not named: $(cat "$TMP/err")"
cmp -s "$TMP/f.csv" "$TMP/f.before" || fail "the file changed: $(cat "$TMP/f.csv")"
# the same fields append under the one header
start_kvmstat b -d -s 0.1 -f '^exits$' -L "$TMP/f.csv" -c
wait_lines "$TMP/f.csv" $(($(wc -l <"$TMP/f.before") + 2))
stop b
[ "$STATUS" = 0 ] || fail "same fields: status $STATUS: $(cat "$TMP/b.err")"
[ "$(grep -c '^timestamp' "$TMP/f.csv")" = 1 ] || fail "two headers: $(cat "$TMP/f.csv")"
echo ok
