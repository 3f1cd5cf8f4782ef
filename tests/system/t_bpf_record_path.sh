#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The costly BPF path, the program on kvm_exit's trace record (a perf
# event), is attached only when a kvm_exit child event is selected;
# plain events and kvm_userspace_exit's reasons are raw tracepoints.
source tests/system/lib.sh
need_tracepoints
[ -d /sys/kernel/tracing/events/kvm/kvm_exit ] ||
	[ -d /sys/kernel/debug/tracing/events/kvm/kvm_exit ] || skip "no kvm_exit tracepoint"

perf_fds() {	# options: perf event fds of a running kvmstat -t -l
	start_kvmstat k -t -l -s 0.2 "$@"
	wait_lines "$TMP/k.out" 2
	grep -q 'BPF unavailable' "$TMP/k.err" 2>/dev/null && skip "BPF unavailable: $(cat "$TMP/k.err")"
	n=$(for f in /proc/$k_PID/fd/*; do readlink "$f"; done | grep -c 'anon_inode:\[perf_event\]')
	stop k
}
perf_fds -f '^kvm_exit$'
[ "$n" = 0 ] || fail "-f '^kvm_exit\$' (no children) holds $n perf events, want 0"
perf_fds -f '^kvm_(exit|userspace_exit)$|^kvm_userspace_exit\('
[ "$n" = 0 ] || fail "kvm_exit and kvm_userspace_exit's children hold $n perf events, want 0"
perf_fds -f '^kvm_exit\('
[ "$n" = 1 ] || fail "-f '^kvm_exit\\(' holds $n perf events, want 1 (the record program's)"
echo "ok: kvm_exit's record program only with kvm_exit children"
