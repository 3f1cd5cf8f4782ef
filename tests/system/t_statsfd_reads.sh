#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# One read per stats fd and refresh, and no discovery while no VM comes or
# goes (issue 22). 200 fake VMs x 4 vCPUs (fakevms.c, behind a fake /proc
# and a fake KVM debugfs); kvmstat -l -S's read system calls, counted by
# the kernel (/proc/PID/io syscr: every read, pread and readv, the reads of
# /proc files a rescan would make among them), over whole refreshes:
#  - -f '^halt_exits$' (a vCPU stat): exactly 800 a refresh, one per vCPU
#    stats fd, none of the VMs' own files (nothing of them is shown);
#  - a vCPU that comes (fakevms "vcpu"): 801 from then on;
#  - every field: exactly 1,001, one per stats fd (that vCPU's among them).
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
NVM=200

fake_proc
mkdir -p "$TMP/dbg"
export KVMSTAT_DEBUGFS_ROOT=$TMP/dbg
ulimit -n 4096 2>/dev/null
fakevms "$P" "$NVM" 4 "$TMP/dbg"

# refreshes FILE: the data lines of kvmstat -l output so far
refreshes() { grep -c '^[0-9]' "$1"; }
# syscr PID: its read system calls so far
syscr() { awk '$1 == "syscr:" { print $2 }' "/proc/$1/io"; }
# mid NAME: waits for a new refresh of NAME, then a third of the interval
# (-s 0.3: the reads of 1,000 fds take a few ms), so that no refresh is
# under way; prints "REFRESHES SYSCR"
mid() {
	local f=$TMP/$1.out v="${1}_PID" n
	n=$(refreshes "$f")
	for _ in $(seq 1 200); do
		[ "$(refreshes "$f")" -gt "$n" ] && break
		sleep 0.01
	done
	sleep 0.1
	echo "$(refreshes "$f") $(syscr "${!v}")"
}
# reads_per_refresh NAME: read system calls per refresh over 6 refreshes
reads_per_refresh() {
	local a b
	a=$(mid "$1")
	for _ in 1 2 3 4 5; do mid "$1" >/dev/null; done
	b=$(mid "$1")
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y)
		n = y[1] - x[1]; r = y[2] - x[2]
		if (n > 0 && r % n == 0) print r / n; else printf "%d reads over %d refreshes\n", r, n }'
}

start_kvmstat one -l -S -s 0.3 -f '^halt_exits$'
wait_lines "$TMP/one.out" 4
got=$(reads_per_refresh one)
[ "$got" = $((NVM * 4)) ] || fail "-f '^halt_exits\$': $got read calls a refresh, want $((NVM * 4)) (one per vCPU stats fd)"
# a vCPU comes: its fd is found (inotify on the debugfs, then its fd), and
# read from then on
echo stop >&"$fv"
echo vcpu >&"$fv"
for _ in $(seq 1 200); do
	grep -q '^vcpu ' "$TMP/fv.out" && break
	sleep 0.05
done
grep -q '^vcpu ' "$TMP/fv.out" || fail "fakevms made no vCPU: $(cat "$TMP/fv.err")"
for _ in $(seq 1 100); do
	[ "$(find "/proc/$one_PID/fd" -mindepth 1 | wc -l)" -gt $((NVM * 5)) ] &&
		[ "$(reads_per_refresh one)" = $((NVM * 4 + 1)) ] && break
	sleep 0.1
done
got=$(reads_per_refresh one)
[ "$got" = $((NVM * 4 + 1)) ] || fail "after a new vCPU: $got read calls a refresh, want $((NVM * 4 + 1))"
stop one
[ "$STATUS" = 0 ] || fail "kvmstat -l -S exited $STATUS: $(cat "$TMP/one.err")"

start_kvmstat all -l -S -s 0.3
wait_lines "$TMP/all.out" 4
got=$(reads_per_refresh all)
[ "$got" = $((NVM * 5 + 1)) ] || fail "every field: $got read calls a refresh, want $((NVM * 5 + 1)) (one per stats fd)"
stop all
[ "$STATUS" = 0 ] || fail "kvmstat -l -S exited $STATUS: $(cat "$TMP/all.err")"
echo "ok: $NVM VMs x 4 vCPUs: $((NVM * 4)) reads a refresh for a vCPU stat, $((NVM * 4 + 1)) after a vCPU came, $((NVM * 5 + 1)) for every field; nothing else read"
echo quit >&"$fv"
