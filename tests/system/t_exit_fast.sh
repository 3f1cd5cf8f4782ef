#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Hundreds of perf events must not hold up the end of a run: SIGINT with
# every field and child event open ends kvmstat (and its output) within a
# second, although the kernel needs seconds to release the events.
source tests/system/lib.sh
need_tracepoints

start_kvmstat k -t -l -s 0.2 -f . --no-bpf
wait_lines "$TMP/k.out" 2
nfd=$(ls "/proc/$k_PID/fd" | wc -l)
t0=$EPOCHREALTIME
kill -INT "$k_PID"
wait "$k_PID"
rc=$?
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
[ $rc = 0 ] || fail "status $rc after SIGINT"
[ "$ms" -lt 1000 ] || fail "took $ms ms to exit holding $nfd fds"
# output through a pipe ends as promptly (nothing keeps the pipe open)
t0=$EPOCHREALTIME
out=$(timeout 10 "$KVMSTAT" -t -1 -s 0.1 -f .)
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
[ -n "$out" ] || fail "no batch output"
[ "$ms" -lt 1500 ] || fail "\$(kvmstat -1) took $ms ms"
echo "ok: exit with $nfd fds in $ms ms"
