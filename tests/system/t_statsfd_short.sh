#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Issue 12: a VM that lives for less than one refresh is noticed as it is
# created (inotify on KVM's debugfs directory, whose PID-FD entries come
# with each VM) and counted whole, including the vCPU stats fds its VMM
# closes while tearing down, just before it exits: host-wide at least the
# guest's count (other VMs may add), in a pid namespace of its own (no
# debugfs pids to go by: each creation makes a scan) exactly.
source tests/system/lib.sh
need_statsfd_guest debugfs

# A VM that lives about 0.2 s, started while kvmstat -S -l -s 1 runs.
# Host-wide, other VMs on the host (other tests) may add to the sum: it
# must hold the guest's at least; in a pid namespace of its own (no other
# VM visible), exactly.
N2=20000
start_kvmstat s -S -l -s 1 -f '^halt_exits$'
wait_lines "$TMP/s.out" 1
"$GUEST" -s -m 1 -v 1 -n "$N2" -k hlt -t 0 >"$TMP/short.out" 2>"$TMP/short.err" ||
	fail "short guest failed: $(cat "$TMP/short.err")"
ns=$(awk '$1 == "done" { print $5 }' "$TMP/short.out")
sleep 2.2
stop s
[ "$STATUS" = 0 ] || fail "kvmstat -S -l exited $STATUS: $(cat "$TMP/s.err")"
sum=$(column_sum "$TMP/s.out" halt_exits)
[ "$sum" -ge "$N2" ] || fail "a VM of $((ns / 1000000)) ms: logged halt_exits sum $sum, want at least $N2: $(cat "$TMP/s.out" "$TMP/s.err")"
echo "ok: a VM of $((ns / 1000000)) ms counted host-wide: $sum"
if unshare -p -f --mount-proc true 2>/dev/null; then
	ns_run n 1 2.2 -S -l -s 1 -f "^halt_exits$" -- -s -m 1 -v 1 -n "$N2" -k hlt -t 0
	sum=$(column_sum "$TMP/n.out" halt_exits)
	[ "$sum" = "$N2" ] || fail "a short VM in a pid namespace: logged halt_exits sum $sum, want $N2: $(cat "$TMP/n.out" "$TMP/n.err")"
	echo "ok: in a pid namespace, a VM of 0.2 s counted whole: $sum"
fi

echo ok
