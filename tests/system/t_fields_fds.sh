#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -f limits the fields shown and the perf events (file descriptors) opened.
source tests/system/lib.sh
need_kvm

ncpu=$(nproc)
fds() {
	start_kvmstat k -t -l -s 0.2 "$@"
	wait_lines "$TMP/k.out" 2
	# perf events and BPF objects: what the field filter decides
	n=$(for f in /proc/$k_PID/fd/*; do readlink "$f"; done | grep -c 'anon_inode:\(\[perf_event\]\|bpf\)')
	head -n 1 "$TMP/k.out" >"$TMP/header"
	stop k
}
fds
all=$n
nall=$(wc -w <"$TMP/header")
fds -f '^kvm_pio$'
one=$n
[ "$(cat "$TMP/header")" = "kvm_pio " ] || fail "-f '^kvm_pio\$' header: $(cat "$TMP/header")"
[ "$nall" -ge 50 ] || fail "default shows only $nall fields"
# one perf event per CPU
[ "$one" = "$ncpu" ] || fail "-f '^kvm_pio\$' holds $one perf fds, want $ncpu"
[ "$all" -ge $((nall * ncpu)) ] || fail "all fields hold only $all fds"
echo "ok: all fields $nall -> $all perf fds; -f one field -> $one perf fds"
