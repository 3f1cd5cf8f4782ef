#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# An unprivileged user on a host whose tracefs only root may enter (0700,
# as most distributions mount it) is told what is missing, in one line:
# "needs root (or CAP_PERFMON and read access to tracefs)", not to mount
# tracefs and load the kvm module, which are done. Checked on a tracefs
# tree of the test's own with mode 0700, and on the real one where it
# is 0700 too.
source tests/system/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root to become another user"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
# a copy the other user may run, outside the 0700 test directory
bin=$(mktemp -d /tmp/kvmstat-perm.XXXXXX)
trap 'rm -rf "$bin"; cleanup' EXIT
chmod 755 "$bin"
cp "$KVMSTAT" "$bin/kvmstat"
mkdir -p "$bin/tracefs/events/kvm/kvm_pio"
echo 1 >"$bin/tracefs/events/kvm/kvm_pio/id"
chmod 700 "$bin/tracefs"
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		-- "$bin/kvmstat" "$@"
}
check() {
	local what=$1; shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" != 0 ] && [ ! -s "$TMP/out" ] || fail "$what: status $rc, output $(cat "$TMP/out")"
	grep -q 'needs root (or CAP_PERFMON and read access to tracefs)' "$TMP/err" ||
		fail "$what: $(cat "$TMP/err")"
	grep -q 'mount tracefs\|load the kvm module' "$TMP/err" && fail "$what: $(cat "$TMP/err")"
	echo "ok: $what: $(head -n 1 "$TMP/err")"
}
KVMSTAT_TRACEFS_ROOT="$bin/tracefs" check "a 0700 tracefs tree" as_nobody -t -1 -s 0.1
if [ "$(stat -c %a /sys/kernel/tracing 2>/dev/null)" = 700 ]; then
	check "the real 0700 tracefs" as_nobody -t -1 -s 0.1
fi
