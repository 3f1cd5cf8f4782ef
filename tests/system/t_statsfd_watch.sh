#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Stats-fd discovery at rest (issue 22): with KVM's debugfs watched, no
# VM coming or going costs nothing per refresh: over several refreshes
# kvmstat -l -S lists no fd directory and reads no link (the periodic
# /proc walk is gone while every VM's debugfs directory is watched). A
# vCPU created later (its vcpuN directory in the VM's debugfs directory,
# then its stats fd) is still held at once, and a new VM too. Fake VMs
# (fakevms.c) behind a fake /proc and a fake debugfs; no KVM needed.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v strace >/dev/null || skip "strace missing: apt-get install strace"

fake_proc
mkdir -p "$TMP/dbg"
export KVMSTAT_DEBUGFS_ROOT=$TMP/dbg
cc -O2 -o "$TMP/fakevms" tests/fakes/fakevms.c || fail "cannot build fakevms"

# fakevms NAME NVMS: NVMS VMs x 2 vCPUs, commands on fd NAME_FD
start_fakevms() {
	local fd
	mkfifo "$TMP/$1.in"
	"$TMP/fakevms" "$P" "$2" 2 "$TMP/dbg" <"$TMP/$1.in" >"$TMP/$1.out" 2>"$TMP/$1.err" &
	PIDS+=($!)
	exec {fd}>"$TMP/$1.in"
	printf -v "${1}_FD" '%s' "$fd"
	for _ in $(seq 1 200); do
		grep -q '^ready$' "$TMP/$1.out" && return
		sleep 0.05
	done
	fail "fakevms $1: $(cat "$TMP/$1.err")"
}

# held N: waits (10 s at most) until kvmstat holds N stats files
held() {
	for _ in $(seq 1 200); do
		[ "$(memfds "$log_PID")" = "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

start_fakevms a 4
start_kvmstat log -S -l -s 0.1 -f '^halt_exits$'
held 12 || fail "kvmstat holds $(memfds "$log_PID") stats files, want 4 x 3"
# every VM's directory watched: 3 s of refreshes (the walk was every 2 s)
# list no fd directory and read no fd link
timeout -s INT 3 strace -f -c -o "$TMP/st.out" -e trace=getdents64,readlinkat,readlink -p "$log_PID" 2>/dev/null
calls=$(awk '$NF == "total" { print $4 }' "$TMP/st.out")
[ "${calls:-0}" = 0 ] || fail "discovery at rest made $calls calls in 3 s: $(cat "$TMP/st.out")"
echo "ok: no directory listed and no link read over 3 s of refreshes"

# a vCPU made now: held, though nothing walks /proc at rest (above), so
# the watch found it (how soon is the bench's business, not a test's: it
# took 1.4-2.5 s on a loaded machine, some ms on a quiet one)
echo stop >&"$a_FD"
for _ in $(seq 1 100); do grep -q '^busy' "$TMP/a.out" && break; sleep 0.05; done
t0=$EPOCHREALTIME
echo vcpu >&"$a_FD"
for _ in $(seq 1 100); do grep -q '^vcpu' "$TMP/a.out" && break; sleep 0.05; done
held 13 || fail "a vCPU created later: kvmstat holds $(memfds "$log_PID") stats files, want 13"
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
echo "ok: a vCPU created later held (after $ms ms), with no walk at rest"

# a VM started now, then gone: held, then let go
start_fakevms b 1
held 16 || fail "a new VM: kvmstat holds $(memfds "$log_PID") stats files, want 16"
echo quit >&"$b_FD"
held 13 || fail "a VM gone: kvmstat holds $(memfds "$log_PID") stats files, want 13"
echo "ok: a VM that came and went"
echo quit >&"$a_FD"
held 0 || fail "every VM gone: kvmstat holds $(memfds "$log_PID") stats files"
stop log
[ "$STATUS" = 0 ] || fail "kvmstat -l -S exited $STATUS: $(cat "$TMP/log.err")"
