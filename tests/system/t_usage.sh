#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every bad value: one line on stderr naming the problem, exit status 2,
# nothing on stdout.
source tests/system/lib.sh

bad() {	# expected-substring args...
	local want=$1; shift
	"$KVMSTAT" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ $rc = 2 ] || fail "kvmstat $*: status $rc, want 2"
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "kvmstat $*: stderr is not one line: $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || fail "kvmstat $*: wrote to stdout"
	grep -qF -- "$want" "$TMP/err" || fail "kvmstat $*: stderr '$(cat "$TMP/err")' lacks '$want'"
}
bad 'unknown option --frobnicate' --frobnicate
bad 'invalid regular expression' -1 -f '('
bad 'is not a KVM VM' -1 -p $$
bad 'no process with pid 2147483647' -1 -p 2147483647
bad 'no guest named' -1 -g no-such-guest-name
bad 'needs seconds from 0.1 to 25.5' -s 30
bad 'needs seconds from 0.1 to 25.5' -s 0
bad 'needs a log mode' -c
bad 'cannot write log file' -L /nonexistent/dir/kvmstat.log
bad 'unexpected argument' foo

"$KVMSTAT" --help >"$TMP/help" || fail "--help failed"
for opt in --once --batch --csv --debugfs --fields --guest --help \
	--debugfs-include-past --log --log-to-file --pid --set-delay \
	--tracepoints --skip-zero-records --version; do
	grep -q -- "$opt" "$TMP/help" || fail "--help does not mention $opt"
	grep -q -- "${opt//-/\\\\-}" man/kvmstat.1 || grep -q -- "$opt" man/kvmstat.1 ||
		fail "man page does not mention $opt"
done
"$KVMSTAT" --version | grep -q '^kvmstat ' || fail "--version"
echo ok
