#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The stats-fd provider when VMs come and go between refreshes (issue 12):
# a VM that exits mid-interval has its last partial interval logged (the
# logged halt_exits sum equals the guest's count exactly); a killed VMM's copied stats fds are closed within a second even at -s 20,
# so the kernel frees the VM (its debugfs directory goes).
source tests/system/lib.sh
need_statsfd_guest debugfs

# 1. exits mid-interval: about 2.5 s of HLT exits under -s 1, then the VM
# process exits at once (-t 0)
N=200000
start_guest a -s -m 1 -v 1 -n "$N" -k hlt -t 0
vm=${a_VMS%% *}
start_kvmstat k -S -p "$vm" -l -s 1 -f '^halt_exits$'
wait_lines "$TMP/k.out" 1
go_guest a
wait_guest a
got=$(grep -c '^done ' "$TMP/a.out")
[ "$got" = 1 ] || fail "guest did not finish: $(cat "$TMP/a.out")"
sleep 1.5
stop k
[ "$STATUS" = 0 ] || fail "kvmstat -S -p exited $STATUS: $(cat "$TMP/k.err")"
sum=$(column_sum "$TMP/k.out" halt_exits)
[ "$sum" = "$N" ] || fail "VM exited mid-interval: logged halt_exits sum $sum, want $N: $(cat "$TMP/k.out")"
echo "ok: exit mid-interval: $sum of $N"

# 3. a killed VMM under -s 20: the copies go within a second
start_guest b -s -m 1 -v 2 -n 1 -k hlt -t 120
vm=${b_VMS%% *}
go_guest b
start_kvmstat h -S -p "$vm" -l -s 20 -f '^halt_exits$'
for _ in $(seq 1 100); do
	[ "$(stats_links "$h_PID")" = 3 ] && break
	sleep 0.05
done
[ "$(stats_links "$h_PID")" = 3 ] || fail "kvmstat holds $(stats_links "$h_PID") stats fds, want 3"
compgen -G "$DBG/$vm-*" >/dev/null || fail "VM $vm has no debugfs directory"
kill -KILL "$vm"
t0=$EPOCHREALTIME
gone=0
while awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { exit !(b - a < 1.0) }'; do
	if ! compgen -G "$DBG/$vm-*" >/dev/null && [ "$(stats_links "$h_PID")" = 0 ]; then
		gone=1
		break
	fi
	sleep 0.02
done
[ $gone = 1 ] || fail "1 s after the VMM was killed, kvmstat still holds $(stats_links "$h_PID") stats fds (debugfs: $(compgen -G "$DBG/$vm-*"))"
kill -0 "$h_PID" 2>/dev/null || fail "kvmstat died with the VM: $(cat "$TMP/h.err")"
stop h
[ "$STATUS" = 0 ] || fail "kvmstat -s 20 exited $STATUS: $(cat "$TMP/h.err")"
echo "ok: a killed VMM's stats fds closed within 1 s at -s 20"
