#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Finding VMs reads only VM processes' fds (issue 12): the stats-fd
# provider takes the VM processes from the "PID-FD" names in KVM's debugfs
# directory and lists the fd links of those alone, not of every process.
# Checked with strace: the guest's fd directory is read, a bystander's with
# many fds never is, and kvmstat reads few fd links in all; -g NAME, which
# lists the running VMs, does the same.
source tests/system/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
kvm_usable || skip_kvm
[ -x "$GUEST" ] || fail "test guest $GUEST not built"
command -v strace >/dev/null || skip "strace missing: apt-get install strace"
command -v python3 >/dev/null || skip "no python3"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -d /sys/kernel/debug/kvm ] || skip "no KVM debugfs directory"
"$GUEST" -s -m 1 -v 1 -n 1 -k hlt -t 0 >/dev/null 2>"$TMP/probe.err" ||
	skip "test guest cannot open binary stats fds: $(cat "$TMP/probe.err")"

# a bystander holding 2000 fds (above the usual soft limit of 1024)
ulimit -Sn 2100 2>/dev/null || ulimit -Sn "$(ulimit -Hn)"
python3 -c '
import os, sys, time
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(2000)]
print("ready", flush=True)
time.sleep(120)' >"$TMP/by.out" &
by=$!
PIDS+=("$by")
wait_lines "$TMP/by.out" 1

start_guest a -s -m 1 -v 2 -n 300 -k hlt -t 60
vm=${a_VMS%% *}
go_guest a
# LeakSanitizer cannot run under ptrace (the sanitizer build in CI)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -e trace=openat,newfstatat,readlinkat -o "$TMP/st" \
	"$KVMSTAT" -S -i -1 -s 0.3 -f '^halt_exits$' >"$TMP/k.out" 2>"$TMP/k.err" ||
	fail "kvmstat -S -1 exited $?: $(cat "$TMP/k.err")"
grep -q "\"$vm/fd\"" "$TMP/st" || fail "the guest's fds were not read: $(grep '/fd"' "$TMP/st" | head)"
grep -q "\"$by/fd\"" "$TMP/st" && fail "a process that holds no VM had its fds read: $(grep "\"$by/fd\"" "$TMP/st" | head -3)"
links=$(grep -c 'readlinkat(' "$TMP/st")
[ "$links" -lt 1000 ] || fail "kvmstat read $links fd links to find the VMs"
got=$(awk '$1 == "halt_exits" { print $2 }' "$TMP/k.out")
[ "${got:-0}" -ge 600 ] || fail "halt_exits $got, want at least 600 (the guest's): $(cat "$TMP/k.out")"
# -g NAME looks for the guest among VM processes alone too (src/sys/vm.c)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -e trace=openat,newfstatat,readlinkat -o "$TMP/st2" \
	"$KVMSTAT" -t -1 -s 0.1 -g no-such-guest-here >/dev/null 2>"$TMP/g.err"
[ $? = 2 ] || fail "-g no-such-guest-here: want status 2: $(cat "$TMP/g.err")"
grep -q "$vm" "$TMP/g.err" || fail "-g: the running VM is not listed: $(cat "$TMP/g.err")"
grep -q "\"$by/fd\"" "$TMP/st2" && fail "-g read the fds of a process that holds no VM"
echo "ok: only VM processes' fds read ($links fd links); the bystander's 2000 fds untouched"
