#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exits stay counted exactly while a host CPU goes offline and online
# (issue 20), by the BPF engine and by perf events (--no-bpf), whose
# per-CPU events the kernel stops for good when their CPU goes offline.
# The exits come from the test guest where /dev/kvm exists, else from a
# process that stands for it on a fake tracefs. For BPF, kvm_userspace_exit
# is task:task_rename, its reason the renamer's oom_score_adj, here 417, a
# reason only this test's format names (HOTPLUG), so no other renamer on
# the host counts. Perf events filter by the real event's fields, which
# task_rename's do not match: for them, kvm_userspace_exit and
# kvm_vcpu_wakeup are system calls nothing else on the host makes, counted
# in groups of one and of two events per CPU. The exit maker pinned to the
# CPU that goes away makes exits there, 1000 at a time (with the test
# guest, a guest of its own each time, its one vCPU pinned there, making
# 1000 port I/O exits); in turn:
#  - exits on the CPU, the CPU offline (a refresh reads its last counts),
#    exits elsewhere, the CPU back online (a refresh opens its events
#    again), exits on it;
#  - the CPU offline and online while kvmstat is stopped (no refresh in
#    between: the online list reads the same, yet its perf events have
#    stopped), exits on it;
#  - kvmstat started with the CPU offline, which then comes online: exits
#    on it count too.
# Every exit is counted, exactly. With perf events, the CPU's go away and
# come back (the perf fds held). Last, in one long interval, the CPU goes
# and comes back and exits are made on it at once: perf events open again
# when the kernel's uevent says the CPU is online, not at the next refresh.
source tests/system/lib.sh
need_tracepoints
command -v taskset >/dev/null || skip "no taskset (util-linux)"

# a CPU that can be taken offline: the first but CPU 0 with an online file
CPU=""
for f in /sys/devices/system/cpu/cpu[1-9]*/online; do
	[ -w "$f" ] && [ "$(cat "$f")" = 1 ] || continue
	CPU=${f#/sys/devices/system/cpu/cpu}
	CPU=${CPU%/online}
	break
done
[ -n "$CPU" ] || skip "no CPU can be taken offline here (no writable online file of an online CPU but CPU 0)"
ONLINE=/sys/devices/system/cpu/cpu$CPU/online
# the CPU always comes back, whatever ends the test
trap 'echo 1 >"$ONLINE" 2>/dev/null; cleanup' EXIT
trap 'exit 143' TERM INT HUP
OTHER=$(awk -v c="$CPU" -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-");
	for (x = r[1]; x <= (r[2] == "" ? r[1] : r[2]); x++) if (x != c) { print x; exit } } }' \
	/sys/devices/system/cpu/online)
[ -n "$OTHER" ] || skip "no other CPU online beside CPU $CPU"

# set_cpu 0|1: CPU offline or online (the kernel may say busy for a moment)
set_cpu() {
	for _ in $(seq 1 20); do
		echo "$1" >"$ONLINE" 2>/dev/null && [ "$(cat "$ONLINE")" = "$1" ] && return 0
		sleep 0.05
	done
	fail "cannot set CPU $CPU online=$1"
}

if kvm_usable; then
	need_kvm
	others=$(ls /sys/kernel/debug/kvm 2>/dev/null | grep -c -- '-[0-9]*$')
	[ "$others" = 0 ] || skip "another VM runs on this host ($others): system-wide counts include it"
	MODE=guest
else
	# BPF: kvm_userspace_exit is task:task_rename, whose reason (the
	# renamer's oom_score_adj) 417 only this format names: HOTPLUG
	fake_tracefs "$TMP/tf-bpf"
	sed -i 's/{ 5, "KVM_EXIT_" "HLT" })/{ 5, "KVM_EXIT_" "HLT" }, { 417, "KVM_EXIT_" "HOTPLUG" })/' \
		"$TMP/tf-bpf/events/kvm/kvm_userspace_exit/format"
	grep -q HOTPLUG "$TMP/tf-bpf/events/kvm/kvm_userspace_exit/format" || fail "fake format not made"
	# perf events filter children by the real event's fields (task_rename
	# has no "reason"): kvm_userspace_exit and kvm_vcpu_wakeup are then
	# tracepoints only this test fires, syscalls:sys_enter_ of
	# sched_rr_get_interval and sched_get_priority_max (two events: a
	# group of two per CPU, which the kernel splits when the CPU goes)
	for e in kvm_userspace_exit:sched_rr_get_interval kvm_vcpu_wakeup:sched_get_priority_max; do
		S=/sys/kernel/tracing/events/syscalls/sys_enter_${e#*:}
		[ -r "$S/id" ] || skip "no syscalls:sys_enter_${e#*:} tracepoint for --no-bpf"
		mkdir -p "$TMP/tf-perf/events/kvm/${e%%:*}"
		cp "$S/id" "$S/format" "$TMP/tf-perf/events/kvm/${e%%:*}/"
	done
	command -v python3 >/dev/null || skip "no python3 for the exit maker"
	MODE=fake
fi

# gen_start: the exit maker, its threads in GEN_TIDS; WANT counts its
# exits from 0. Fake: a process that for each line N it reads makes N
# "exits", each a rename of itself, a sched_rr_get_interval and a
# sched_get_priority_max. Guest: a test guest set up to make 1000 port
# I/O exits with its one vCPU, waiting for its go; each burst is one such
# guest, the next one set up when a burst wants it (a guest that ran on
# until gen_end would make exits before kvmstat starts, and one stopped by
# a signal does not say how many it made). The first is set up before
# kvmstat starts: the last case's one interval has no time to spare.
gen_start() {
	WANT=0
	if [ "$MODE" = guest ]; then
		guest_ready
		return
	fi
	fresh "$TMP/gen.out"
	rm -f "$TMP/gen.in"
	mkfifo "$TMP/gen.in"
	python3 -c '
import os, sys
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("417")
comm = os.open("/proc/self/comm", os.O_WRONLY)
print(os.getpid(), flush=True)
for line in sys.stdin:
    for i in range(int(line)):
        os.write(comm, b"hp")
        os.sched_rr_get_interval(0)
        os.sched_get_priority_max(os.SCHED_FIFO)
    print("done", flush=True)' <"$TMP/gen.in" >"$TMP/gen.out" &
	GEN=$!
	PIDS+=("$GEN")
	exec {GEN_FD}>"$TMP/gen.in"
	wait_lines "$TMP/gen.out" 1
	GEN_TIDS=$(head -1 "$TMP/gen.out")
}

# guest_ready: the next burst's guest, set up and waiting, its vCPU
# thread in GEN_TIDS (on the CPU gen_on said last, if any)
guest_ready() {
	start_guest g -m 1 -v 1 -n 1000 -k pio -t 0
	GEN_TIDS=$(awk '$1 == "vcpu" { print $4 }' "$TMP/g.out")
	[ -n "$GEN_TIDS" ] || fail "the guest named no vCPU thread: $(cat "$TMP/g.out")"
	[ -z "${GEN_CPU:-}" ] || gen_on "$GEN_CPU"
}

# gen_on CPU: the exit maker's threads run on that CPU only (guest: the
# one set up, and those set up after)
gen_on() {
	local t
	GEN_CPU=$1
	for t in $GEN_TIDS; do
		taskset -pc "$1" "$t" >/dev/null || fail "taskset $1 $t"
	done
}

# gen_burst: 1000 exits on the CPU the maker runs on, made when it returns
gen_burst() {
	local n
	if [ "$MODE" = guest ]; then
		[ -n "$GEN_TIDS" ] || guest_ready
		go_guest g
		wait_guest g
		GEN_TIDS=
		n=$(awk '$1 == "done" { s += $4 } END { print s + 0 }' "$TMP/g.out")
		[ "$n" = 1000 ] || fail "the guest made $n exits, not 1000: $(cat "$TMP/g.out" "$TMP/g.err")"
		WANT=$((WANT + 1000))
		return
	fi
	n=$(wc -l <"$TMP/gen.out")
	echo 1000 >&"$GEN_FD"
	wait_lines "$TMP/gen.out" $((n + 1))
	WANT=$((WANT + 1000))
}

# gen_end: no more exits; WANT is how many were made (a guest set up for
# a burst that did not come goes, having made none)
gen_end() {
	if [ "$MODE" = guest ]; then
		if [ -n "$GEN_TIDS" ]; then
			kill -TERM "$g_PID"
			wait "$g_PID"
		fi
		GEN_TIDS='' GEN_CPU=''
		return
	fi
	exec {GEN_FD}>&-
	wait "$GEN"
}

# refreshes N: until kvmstat has logged N more intervals
refreshes() {
	wait_lines "$TMP/k.out" $(($(wc -l <"$TMP/k.out") + $1))
}

# kvmstat_start ARGS...: kvmstat as k. The fake maker's fifo keeps the
# test as its one writer (the maker ends when the test closes it); the
# guest has no fifo.
kvmstat_start() {
	if [ "$MODE" = fake ]; then
		start_kvmstat k "$@" {GEN_FD}>&-
	else
		start_kvmstat k "$@"
	fi
}

# perf_fds: the perf event fds kvmstat holds (one find, not lib.sh's
# fds_linked, which runs readlink once per fd: on the emulated KVM host a
# process start takes up to a second, and kvmstat holds some 90 fds)
perf_fds() {
	find "/proc/$k_PID/fd" -mindepth 1 -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l
}

# wait_fds lt|eq N: until kvmstat holds fewer than N perf fds, or N
# (20 s at most)
wait_fds() {
	local n end=$((SECONDS + 20))
	while :; do
		n=$(perf_fds)
		[ "$1" = lt ] && [ "$n" -lt "$2" ] && return 0
		[ "$1" = eq ] && [ "$n" = "$2" ] && return 0
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.05
	done
	fail "$run: kvmstat holds $n perf fds after 20 s, want $1 $2 (CPU $CPU online: $(cat "$ONLINE"))"
}

# column_values: the log's deltas of FIELD, those not 0
column_values() {
	awk -v want="$FIELD" '
		/^[0-9][0-9][0-9][0-9]-/ { if (col && $(col + 2)) printf " %s", $(col + 2); next }
		{ col = 0; for (i = 1; i <= NF; i++) if ($i == want) col = i }' "$TMP/k.out"
}

# check WHAT: kvmstat's log sums to the exits made
check() {
	stop k
	[ "$STATUS" = 0 ] || fail "$run $1: kvmstat exited $STATUS: $(cat "$TMP/k.err")"
	for f in $FIELDS; do
		FIELD=$f
		got=$(column_sum "$TMP/k.out" "$FIELD")
		[ "$got" = "$WANT" ] ||
			fail "$run $1: $FIELD sums to $got, want $WANT; its deltas: $(column_values); kvmstat said: $(cat "$TMP/k.err")"
	done
	grep -q 'could not be read' "$TMP/k.err" && fail "$run $1: $(cat "$TMP/k.err")"
	echo "ok: $run $1: $FIELDS = $got of $WANT"
}

# BPF; perf events, groups of one (whose read does not fail when the
# kernel stops them) and of two
runs="bpf perf2"
[ "$MODE" = fake ] && runs="bpf perf1 perf2"
for run in $runs; do
	opt=--no-bpf
	if [ "$MODE" = guest ]; then
		FIELDS='kvm_userspace_exit(IO)' FILTER='^kvm_userspace_exit'
	elif [ "$run" = bpf ]; then
		export KVMSTAT_TRACEFS_ROOT=$TMP/tf-bpf FIELDS='kvm_userspace_exit(HOTPLUG)'
		FILTER='^kvm_userspace_exit'
	elif [ "$run" = perf1 ]; then
		export KVMSTAT_TRACEFS_ROOT=$TMP/tf-perf
		FIELDS=kvm_userspace_exit FILTER='^kvm_userspace_exit$'
	else
		export KVMSTAT_TRACEFS_ROOT=$TMP/tf-perf
		FIELDS='kvm_userspace_exit kvm_vcpu_wakeup'
		FILTER='^kvm_(userspace_exit|vcpu_wakeup)$'
	fi
	[ "$run" = bpf ] && opt=""
	gen_start
	gen_on "$CPU"
	kvmstat_start -t -l -s 0.2 $opt -f "$FILTER"
	wait_lines "$TMP/k.out" 2
	nfds=$(perf_fds)
	gen_burst
	set_cpu 0
	gen_on "$OTHER"
	gen_burst
	refreshes 2
	fds_off=$(perf_fds)
	set_cpu 1
	refreshes 2
	fds_on=$(perf_fds)
	gen_on "$CPU"
	gen_burst
	if [ "$run" != bpf ]; then
		[ "$fds_off" -lt "$nfds" ] && [ "$fds_on" = "$nfds" ] ||
			fail "perf fds: $nfds at the start, $fds_off with CPU $CPU offline, $fds_on back online"
		echo "ok: $run: perf fds: $nfds, $fds_off with CPU $CPU offline, $fds_on back online"
	fi
	# offline and online with no refresh in between
	gen_on "$OTHER"
	kill -STOP "$k_PID"
	set_cpu 0
	set_cpu 1
	kill -CONT "$k_PID"
	refreshes 2
	gen_on "$CPU"
	gen_burst
	gen_on "$OTHER"
	refreshes 2
	[ "$run" != bpf ] && { [ "$(perf_fds)" = "$nfds" ] || fail "perf fds after a fast cycle: $(perf_fds), want $nfds"; }
	gen_end
	refreshes 2
	check "offline and online twice"

	# kvmstat starts with the CPU offline
	gen_start
	gen_on "$OTHER"
	set_cpu 0
	kvmstat_start -t -l -s 0.2 $opt -f "$FILTER"
	wait_lines "$TMP/k.out" 2
	set_cpu 1
	refreshes 2
	gen_on "$CPU"
	gen_burst
	gen_on "$OTHER"
	gen_burst
	gen_end
	refreshes 2
	check "offline at the start"

	# counted from the moment the CPU is back, not from the next refresh
	# (the kernel's uevents say it): one 25 s interval (-s allows 25.5
	# at most; these steps have taken 20 s on the emulated KVM host),
	# the CPU offline and online, exits on it at once; the end logs the
	# partial interval
	gen_start
	gen_on "$OTHER"
	kvmstat_start -t -l -s 25 $opt -f "$FILTER"
	wait_polling "$k_PID"
	# perf: until the uevents have taken the CPU's events away and
	# brought them back (the refresh is 25 s away); BPF counts on
	set_cpu 0
	if [ "$run" = bpf ]; then sleep 0.3; else wait_fds lt "$nfds"; fi
	set_cpu 1
	if [ "$run" = bpf ]; then sleep 0.3; else wait_fds eq "$nfds"; fi
	gen_on "$CPU"
	gen_burst
	gen_on "$OTHER"
	gen_end
	[ "$(grep -c '^[0-9][0-9][0-9][0-9]-' "$TMP/k.out")" = 0 ] ||
		fail "$run: a refresh came before the end: $(cat "$TMP/k.out")"
	check "back online, before any refresh"
done
