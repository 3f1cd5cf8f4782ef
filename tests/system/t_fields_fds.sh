#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -f limits the fields shown and the file descriptors opened: BPF programs
# (per event, not per event and CPU), or perf events with --no-bpf;
# a low soft limit on open files is raised, a low hard one is a clear error.
source tests/system/lib.sh
need_tracepoints

ncpu=$(nproc)
fds() {
	start_kvmstat k -t -l -s 0.2 "$@"
	wait_lines "$TMP/k.out" 2
	# perf events and BPF objects: what the field filter decides
	n=$(for f in /proc/$k_PID/fd/*; do readlink "$f"; done | grep -c 'anon_inode:\(\[perf_event\]\|bpf\)')
	head -n 1 "$TMP/k.out" >"$TMP/header"
	stop k
}
# BPF: one program and one link per event, and the engine's maps (at most
# 8, its read-only data and .bss among them), whatever the number of CPUs
fds
all=$n
# events with perf fds of their own; child events (in the log by default,
# as in kvm_stat) are counted by one BPF program per tracepoint
nall=$(tr ' ' '\n' <"$TMP/header" | grep -c '^[^(]\+$')
grep -q 'kvm_exit(' "$TMP/header" || fail "default log lacks child events: $(cat "$TMP/header")"
fds -f '^kvm_pio$'
one=$n
[ "$(cat "$TMP/header")" = "kvm_pio " ] || fail "-f '^kvm_pio\$' header: $(cat "$TMP/header")"
[ "$nall" -ge 50 ] || fail "default shows only $nall fields"
[ "$one" -ge 3 ] && [ "$one" -le 10 ] || fail "-f '^kvm_pio\$' holds $one BPF fds, want 3..10"
[ "$all" -le $((2 * nall + 8)) ] ||
	fail "all $nall fields hold $all fds, more than 2 per event and 8 maps"
echo "ok (BPF): all fields $nall -> $all fds; -f one field -> $one fds"

# the perf fallback: one perf event per event and CPU
fds --no-bpf
all=$n
fds --no-bpf -f '^kvm_pio$'
one=$n
[ "$one" = "$ncpu" ] || fail "--no-bpf -f '^kvm_pio\$' holds $one perf fds, want $ncpu"
[ "$all" -ge $((nall * ncpu)) ] || fail "--no-bpf: all fields hold only $all fds"
echo "ok (--no-bpf): all fields $nall -> $all perf fds; -f one field -> $one perf fds"

# every field and child event as filtered perf events: hundreds of fds
lines=$( (ulimit -Sn 64; "$KVMSTAT" -t -1 -s 0.1 -f . --no-bpf 2>"$TMP/err") | wc -l)
[ "$lines" -gt 64 ] || fail "soft limit 64 not raised: $lines lines, $(cat "$TMP/err")"
(ulimit -n 64; "$KVMSTAT" -t -1 -s 0.1 -f . --no-bpf >"$TMP/out" 2>"$TMP/err")
rc=$?
[ "$rc" = 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
	grep -q 'too many open files.*the limit is 64 file descriptors; raise it (ulimit -n) or select fewer fields with -f' "$TMP/err" ||
	fail "hard limit 64: status $rc, $(cat "$TMP/err")"
echo "ok: soft limit raised ($lines fields); hard limit: $(cat "$TMP/err")"
