#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A closed pipe ends the run quietly with status 0; SIGTERM and SIGINT end
# it cleanly with every line out; SIGHUP reopens -L files and is otherwise
# ignored. Runs on a debugfs fixture so it needs no KVM.
source tests/system/lib.sh

debugfs_fixture exits=5 halt_exits=1

# closed pipe
start=$EPOCHREALTIME
"$KVMSTAT" -d -l -s 0.1 2>"$TMP/err" | head -n 3 >"$TMP/head"
st=("${PIPESTATUS[@]}")
[ "${st[0]}" = 0 ] || fail "kvmstat -l | head -3: status ${st[0]}, stderr $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "closed pipe printed: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/head")" = 3 ] || fail "head got $(wc -l <"$TMP/head") lines"

# SIGTERM / SIGINT: status 0; the log is complete lines
for sig in TERM INT; do
	start_kvmstat k -d -l -s 0.1
	wait_lines "$TMP/k.out" 4
	kill -$sig "$k_PID"
	wait "$k_PID"
	rc=$?
	[ $rc = 0 ] || fail "SIGSIG$sig: status $rc"
	[ "$(tail -c 1 "$TMP/k.out" | od -An -c | tr -d ' ')" = '\n' ] || fail "SIG$sig: last line cut"
done

# SIGHUP without -L: ignored
start_kvmstat k -d -l -s 0.1
wait_lines "$TMP/k.out" 3
kill -HUP "$k_PID"
sleep 0.3
kill -0 "$k_PID" 2>/dev/null || fail "SIGHUP without -L killed kvmstat"
n1=$(wc -l <"$TMP/k.out")
sleep 0.3
[ "$(wc -l <"$TMP/k.out")" -gt "$n1" ] || fail "no output after SIGHUP"
stop k
[ "$STATUS" = 0 ] || fail "status $STATUS after SIGHUP"

# SIGHUP with -L: reopen (logrotate)
start_kvmstat k -d -L "$TMP/log.csv" -c -s 0.1
wait_lines "$TMP/log.csv" 3
mv "$TMP/log.csv" "$TMP/log.csv.1"
kill -HUP "$k_PID"
wait_lines "$TMP/log.csv" 2
stop k
[ "$STATUS" = 0 ] || fail "-L: status $STATUS"
head -n 1 "$TMP/log.csv" | grep -q '^timestamp,exits,halt_exits$' || fail "new file header: $(head -n 1 "$TMP/log.csv")"
[ "$(grep -c timestamp "$TMP/log.csv.1")" = 1 ] || fail "rotated file has several headers"
echo ok
