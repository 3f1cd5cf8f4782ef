#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -z prints the header at once, as kvm_stat -l -z does (issue 11): on a
# debugfs fixture whose counters never move, -l -z, -l -c -z and -L -z
# show their header well before the first interval ends, and nothing
# else. Where kvm_stat can run (tracepoints, python3), its -l -z header
# for the same fields is compared with kvmstat's.
source tests/system/lib.sh

debugfs_fixture exits=1000 halt_exits=70

# zrun NAME ARGS...: kvmstat -d -z -s 5 ARGS for one second
zrun() {
	local name=$1; shift
	start_kvmstat "$name" -d -z -s 5 "$@"
	sleep 1
	stop "$name"
	[ "$STATUS" = 0 ] || fail "kvmstat $*: status $STATUS: $(cat "$TMP/$name.err")"
}
zrun plain -l
[ "$(cat "$TMP/plain.out")" = "exits halt_exits " ] ||
	fail "-l -z: '$(cat "$TMP/plain.out")', want the header at once"
zrun csv -l -c
[ "$(cat "$TMP/csv.out")" = "timestamp,exits,halt_exits" ] ||
	fail "-l -c -z: '$(cat "$TMP/csv.out")', want the header at once"
zrun file -L "$TMP/z.csv" -c
[ "$(cat "$TMP/z.csv")" = "timestamp,exits,halt_exits" ] ||
	fail "-L -c -z: '$(cat "$TMP/z.csv")', want the header at once"
unset KVMSTAT_DEBUGFS_ROOT

# the peer's header for the same tracepoint fields
peer=$KVM_STAT_PEER
# (kvm_stat also insists on KVM's debugfs directory, which a kernel that
# offers no KVM does not make even with debugfs mounted)
if [ "$(id -u)" = 0 ] && [ -r "$peer" ] && command -v python3 >/dev/null &&
	command -v unshare >/dev/null && [ -d /sys/kernel/tracing/events/kvm ] &&
	[ -d /sys/kernel/debug/kvm ]; then
	sed 's/^flags.*/& svm/' /proc/cpuinfo >"$TMP/cpuinfo"
	unshare -m sh -c 'mount --bind "$0" /proc/cpuinfo && exec python3 "$@"' \
		"$TMP/cpuinfo" "$peer" -l -z -s 5 -f 'kvm_pio|kvm_mmio' \
		>"$TMP/peer.out" 2>"$TMP/peer.err" &
	PIDS+=($!)
	peer_pid=$!
	start_kvmstat ours -t -l -z -s 5 -f 'kvm_pio|kvm_mmio'
	wait_lines "$TMP/peer.out" 1
	wait_lines "$TMP/ours.out" 1
	kill -TERM "$peer_pid"
	stop ours
	[ "$(head -n 1 "$TMP/ours.out")" = "$(head -n 1 "$TMP/peer.out")" ] ||
		fail "header '$(head -n 1 "$TMP/ours.out")', kvm_stat's '$(head -n 1 "$TMP/peer.out")'"
else
	echo "kvm_stat not compared (needs root, python3, unshare, kvm tracepoints, KVM's debugfs directory)"
fi
echo ok
