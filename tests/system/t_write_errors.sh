#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A write error (here /dev/full: no space left) is a clear one-line message
# and status 1, never a silent status 0, in every mode that prints once:
# --help, --version, -f help, batch and batch JSON. A reader that goes
# away is still a quiet status 0.
source tests/system/lib.sh

debugfs_fixture exits=1000 halt_exits=70 4242-11/exits=600

full() {	# args...: kvmstat writing to /dev/full must fail and say so
	"$KVMSTAT" "$@" >/dev/full 2>"$TMP/err"
	local rc=$?
	[ $rc = 1 ] || fail "kvmstat $* >/dev/full: status $rc, want 1"
	[ "$(wc -l <"$TMP/err")" = 1 ] ||
		fail "kvmstat $* >/dev/full: stderr is not one line: $(cat "$TMP/err")"
	grep -q 'cannot write the output: No space left on device' "$TMP/err" ||
		fail "kvmstat $* >/dev/full: stderr '$(cat "$TMP/err")'"
}
full --help
full --version
full -d -f help
full -d -1 -s 0.1
full -d -1 -s 0.1 --json

# the same runs to a working pipe succeed, and a reader that leaves early
# is no failure
"$KVMSTAT" -d -1 -s 0.1 | grep -q '^exits ' ||
	fail "batch to a pipe"
# (--help is larger than one pipe write of stdio's: the reader may be gone
# before the second, which must not be an error nor kill kvmstat)
for _ in 1 2 3 4 5; do
	"$KVMSTAT" --help | head -c 1 >/dev/null
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || fail "--help | head: status $rc"
done
echo ok
