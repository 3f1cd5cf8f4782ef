#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A fresh host has neither tracefs nor debugfs mounted (issue 19). Run in a
# mount namespace of its own with both unmounted, kvmstat as root mounts
# tracefs for the tracepoints and debugfs for -d, says so once on stderr,
# and leaves this host's own mounts as they were; where it finds them
# mounted it mounts nothing and says nothing. Without root it ends at once
# with one line naming what is missing and the command that mounts it.
source tests/system/lib.sh
fresh_mounts
[ -d /sys/module/kvm ] || skip "no kvm module: no kvm tracepoints to count"
before=$(kfs_mounts)

# the tracepoints: tracefs mounted in kvmstat's namespace, said once
KVMSTAT=$FRESH start_kvmstat t "$KVMSTAT" -t -l -s 0.2 -f '^kvm_userspace_exit$'
wait_lines "$TMP/t.out" 2
ns=$(kfs_mounts "$t_PID")
stop t
[ "$STATUS" = 0 ] || fail "-t -l in a fresh namespace: status $STATUS: $(cat "$TMP/t.err")"
[ "$ns" = "/sys/kernel/tracing tracefs" ] ||
	fail "kvmstat's namespace has '$ns' mounted, want tracefs on /sys/kernel/tracing alone"
[ "$(cat "$TMP/t.err")" = "kvmstat: mounted tracefs on /sys/kernel/tracing (it stays mounted)" ] ||
	fail "stderr: '$(cat "$TMP/t.err")', want the one line that says tracefs was mounted"
head -n 1 "$TMP/t.out" | grep -q '^ *kvm_userspace_exit *$' ||
	fail "-l header: $(head -n 1 "$TMP/t.out")"
echo "ok: tracefs mounted for the tracepoints, said once"

# -1 as well, and the batch lines as ever
"$FRESH" "$KVMSTAT" -1 -s 0.1 -f '^kvm_userspace_exit$' >"$TMP/b.out" 2>"$TMP/b.err" ||
	fail "-1 in a fresh namespace: $(cat "$TMP/b.err")"
grep -q '^kvm_userspace_exit  *[0-9]*  *[0-9]*$' "$TMP/b.out" || fail "-1 printed: $(cat "$TMP/b.out")"
grep -q 'mounted tracefs on /sys/kernel/tracing' "$TMP/b.err" || fail "-1 said: $(cat "$TMP/b.err")"

# already mounted: nothing to mount, nothing said
"$FRESH" sh -c 'mount -t tracefs tracefs /sys/kernel/tracing && exec "$@"' sh \
	"$KVMSTAT" -1 -s 0.1 -f '^kvm_userspace_exit$' >"$TMP/m.out" 2>"$TMP/m.err" ||
	fail "-1 with tracefs mounted: $(cat "$TMP/m.err")"
[ ! -s "$TMP/m.err" ] || fail "tracefs was mounted already, yet kvmstat said: $(cat "$TMP/m.err")"
echo "ok: nothing said where tracefs is mounted"

# -d: debugfs mounted (where the kvm module has made no directory in it,
# the line after says so)
KVMSTAT=$FRESH start_kvmstat d "$KVMSTAT" -d -l -s 0.2
for _ in $(seq 1 100); do
	grep -q 'mounted debugfs' "$TMP/d.err" && break
	sleep 0.05
done
ns=$(kfs_mounts "$d_PID" 2>/dev/null)
stop d
grep -q '^kvmstat: mounted debugfs on /sys/kernel/debug (it stays mounted)$' "$TMP/d.err" ||
	fail "-d said: '$(cat "$TMP/d.err")', want the line that says debugfs was mounted"
if [ "$STATUS" = 0 ]; then
	echo "$ns" | grep -q '^/sys/kernel/debug debugfs$' ||
		fail "kvmstat -d's namespace has '$ns' mounted, want debugfs"
else
	grep -q 'no KVM debugfs directory at /sys/kernel/debug/kvm' "$TMP/d.err" ||
		fail "-d: status $STATUS: $(cat "$TMP/d.err")"
fi
echo "ok: debugfs mounted for -d (status $STATUS)"

# without root: one line, what is missing and the command, status 1
pub_kvmstat
for args in "-1" "-l -d"; do
	# shellcheck disable=SC2086
	FRESH_USER=65534 "$FRESH" "$PUB_KVMSTAT" $args -s 0.1 >"$TMP/u.out" 2>"$TMP/u.err"
	rc=$?
	[ "$rc" = 1 ] || fail "kvmstat $args as nobody: status $rc, want 1: $(cat "$TMP/u.err")"
	[ "$(wc -l <"$TMP/u.err")" = 1 ] || fail "kvmstat $args as nobody said more than one line: $(cat "$TMP/u.err")"
	[ ! -s "$TMP/u.out" ] || fail "kvmstat $args as nobody printed: $(cat "$TMP/u.out")"
	case $args in
	-1) want='tracefs is not mounted, and mounting it needs root: sudo mount -t tracefs tracefs /sys/kernel/tracing' ;;
	*) want='debugfs is not mounted, and mounting it needs root: sudo mount -t debugfs debugfs /sys/kernel/debug' ;;
	esac
	grep -qF "$want" "$TMP/u.err" || fail "kvmstat $args as nobody said: $(cat "$TMP/u.err"), want '$want'"
done
echo "ok: without root, one line with the fix"

[ "$(kfs_mounts)" = "$before" ] ||
	fail "this host's mounts changed: '$before' became '$(kfs_mounts)'"
echo "ok: this host's mounts untouched"
