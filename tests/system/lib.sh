# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers for the whole-program tests: start the test guest and
# kvmstat in the background, stop them by pid, fail with a reason.

KVMSTAT=${KVMSTAT:-./kvmstat}
GUEST=${GUEST:-tests/guest/kvmguest}
# the kernel's kvm_stat 6.12, to compare with: KVM_STAT_PEER, else the
# shared/ folder beside the checkout (tests run from its top)
if [ -z "${KVM_STAT_PEER:-}" ]; then
	for KVM_STAT_PEER in ../shared/peers/kvm_stat/kvm_stat \
		/work/shared/peers/kvm_stat/kvm_stat; do
		[ -r "$KVM_STAT_PEER" ] && break
	done
	# absolute: some tests run it from elsewhere
	KVM_STAT_PEER=$(realpath -q "$KVM_STAT_PEER" || echo "$KVM_STAT_PEER")
fi
TMP=$(mktemp -d /tmp/kvmstat-test.XXXXXX)
PIDS=()
# a tmux server of this test's own: tests (or two suites) never share one
export TMUX_TMPDIR=$TMP
unset TMUX

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ -S "$TMP/tmux-$(id -u)/default" ]; then
		tmux kill-server 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }

# Skips unless this host can open perf events on the kvm tracepoints (the
# kernel has them whenever KVM is built, even where no guest can run).
need_tracepoints() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	if [ ! -d /sys/kernel/tracing/events/kvm ]; then
		mount -t tracefs none /sys/kernel/tracing 2>/dev/null
		[ -d /sys/kernel/tracing/events/kvm ] || skip "no kvm tracepoints in tracefs"
	fi
}

# fake_tracefs DIR: a tracefs tree whose kvm:kvm_userspace_exit is the real
# tracepoint task:task_rename (fired by each write to a thread's comm), its
# "reason" the renamer's oom_score_adj (2 is IO, 5 HLT): exits on demand,
# counted exactly, where no guest can run. Skips without that tracepoint.
fake_tracefs() {
	local id t=$1/events/kvm/kvm_userspace_exit
	id=$(cat /sys/kernel/tracing/events/task/task_rename/id 2>/dev/null) ||
		skip "no task:task_rename tracepoint"
	mkdir -p "$t"
	echo "$id" >"$t/id"
	printf '%s\n' "name: kvm_userspace_exit" "ID: $id" "format:" \
		"	field:unsigned short common_type;	offset:0;	size:2;	signed:0;" \
		"	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;" \
		"	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;" \
		"	field:int common_pid;	offset:4;	size:4;	signed:1;" \
		"" \
		"	field:pid_t pid;	offset:8;	size:4;	signed:1;" \
		"	field:short reason;	offset:44;	size:2;	signed:1;" \
		"" \
		'print fmt: "reason %s", __print_symbolic(REC->reason, { 2, "KVM_EXIT_" "IO" }, { 5, "KVM_EXIT_" "HLT" })' \
		>"$t/format"
}

# fake_kvm_exit DIR: adds to fake_tracefs's DIR a kvm_exit that is
# task_rename too, with the real kvm_exit format laid over it: exit_reason
# the renamer's oom_score_adj, isa the first bytes of its old name (a
# renamer called "\1" is VMX, any other SVM). Skips where the kernel has
# no kvm:kvm_exit.
fake_kvm_exit() {
	local x=/sys/kernel/tracing/events/kvm/kvm_exit/format t=$1/events/kvm
	[ -r "$x" ] || skip "no $x"
	mkdir -p "$t/kvm_exit"
	cp "$t/kvm_userspace_exit/id" "$t/kvm_exit/id"
	awk -v id="$(cat "$t/kvm_exit/id")" '
		/^ID:/ { print "ID: " id; next }
		/ exit_reason;/ { print "\tfield:short exit_reason;\toffset:44;\tsize:2;\tsigned:1;"; next }
		/ isa;/ { print "\tfield:u32 isa;\toffset:12;\tsize:4;\tsigned:0;"; next }
		{ print }' "$x" >"$t/kvm_exit/format"
}

# kvm_usable: whether this host's KVM serves the tests that need a real
# guest (tests/kvm_probe.sh: the test guest runs and kvm:kvm_exit fires
# for its exits). The answer, once found, is kept in KVMSTAT_KVM for the
# tests run after (run.sh finds it once for all of them).
kvm_usable() {
	if [ -z "${KVMSTAT_KVM:-}" ]; then
		need_tracepoints
		KVMSTAT_KVM=$(GUEST=$GUEST tests/kvm_probe.sh)
		export KVMSTAT_KVM
	fi
	[ "$KVMSTAT_KVM" = native ]
}

# skip_kvm: this test needs real KVM, which this host does not offer:
# exits 76, which run.sh counts as left for the emulated KVM host
# (tests/kvmhost/), not as skipped.
skip_kvm() {
	echo "needs real KVM: ${KVMSTAT_KVM#none: }"
	exit 76
}

# Skips unless this host can run real guests and count tracepoints.
need_kvm() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	kvm_usable || skip_kvm
	need_tracepoints
	[ -x "$GUEST" ] || fail "test guest $GUEST not built"
}

# debugfs_fixture PATH=VALUE...: a KVM debugfs tree in $TMP/dbg holding
# each file PATH (its directories made, e.g. 4242-11/exits) with VALUE,
# kvmstat's through KVMSTAT_DEBUGFS_ROOT (exported); sets root to it.
debugfs_fixture() {
	local kv
	root="$TMP/dbg"
	mkdir -p "$root"
	for kv in "$@"; do
		mkdir -p "$root/$(dirname "${kv%%=*}")"
		echo "${kv#*=}" >"$root/${kv%%=*}"
	done
	export KVMSTAT_DEBUGFS_ROOT=$root
}

# need_statsfd_guest [debugfs]: skips unless the test guest can run here
# with binary stats fds (-s, as QEMU 8.1+ keeps them) and kvmstat can copy
# them (root: pidfd_getfd needs CAP_SYS_PTRACE). With "debugfs", KVM's
# debugfs directory must be there too (mounted if need be): sets DBG.
need_statsfd_guest() {
	[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
	kvm_usable || skip_kvm
	[ -x "$GUEST" ] || fail "test guest $GUEST not built"
	if [ "${1:-}" = debugfs ]; then
		mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
		DBG=/sys/kernel/debug/kvm
		[ -d "$DBG" ] || skip "no KVM debugfs directory $DBG"
	fi
	# the guest refuses -s where the kernel lacks KVM_GET_STATS_FD
	if ! "$GUEST" -s -m 1 -v 1 -n 1 -k mmio -t 0 >/dev/null 2>"$TMP/probe.err"; then
		grep -q 'KVM_GET_STATS_FD' "$TMP/probe.err" &&
			skip "kernel lacks binary stats fds: $(cat "$TMP/probe.err")"
		fail "test guest failed: $(cat "$TMP/probe.err")"
	fi
}

# fds_linked PID PATTERN...: how many of that process's fds link to
# something a shell PATTERN matches.
fds_linked() {
	local pid=$1 p args=()
	shift
	# one find, not a readlink per fd (a process start takes a second on
	# the emulated KVM host)
	for p; do args+=(${args[0]+-o} -lname "$p"); done
	find /proc/"$pid"/fd -mindepth 1 \( "${args[@]}" \) 2>/dev/null | wc -l
}

# stats_links PID: the anon_inode:kvm-*stats fds that process holds.
stats_links() {
	fds_linked "$1" 'anon_inode:kvm-vm-stats' 'anon_inode:kvm-vcpu-stats:*'
}

# ns_run NAME LINES SETTLE KVMSTAT-ARGS... -- GUEST-ARGS...: in a pid
# namespace of its own (no other VM on the host visible; debugfs names its
# pids by other numbers there, so kvmstat finds VMs by /proc), kvmstat
# with KVMSTAT-ARGS, its output in $TMP/NAME.out and NAME.err; once it has
# written LINES lines, the test guest with GUEST-ARGS (output in
# $TMP/NAME.guest); SETTLE seconds after the guest ends, SIGTERM to
# kvmstat. Fails if the guest fails or kvmstat exits other than 0.
ns_run() {
	local name=$1 lines=$2 settle=$3 ks=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		ks+=("$1")
		shift
	done
	shift
	KVMSTAT=$KVMSTAT GUEST=$GUEST unshare -p -f --mount-proc --kill-child=TERM bash -c '
		t=$1 name=$2 lines=$3 settle=$4 nks=$5
		shift 5
		: >"$t/$name.out"
		"$KVMSTAT" "${@:1:nks}" >"$t/$name.out" 2>"$t/$name.err" &
		k=$!
		for _ in $(seq 1 100); do
			[ "$(wc -l <"$t/$name.out")" -ge "$lines" ] && break
			sleep 0.05
		done
		"$GUEST" "${@:nks+1}" >"$t/$name.guest" 2>"$t/$name.guest.err" ||
			echo "guest failed" >>"$t/$name.guest.err"
		sleep "$settle"
		kill -TERM $k
		wait $k
		echo $? >"$t/$name.status"' ns_run "$TMP" "$name" "$lines" "$settle" "${#ks[@]}" "${ks[@]}" "$@" ||
		fail "the pid namespace run failed"
	grep -q "guest failed" "$TMP/$name.guest.err" &&
		fail "guest failed in a pid namespace: $(cat "$TMP/$name.guest.err")"
	[ "$(cat "$TMP/$name.status")" = 0 ] ||
		fail "kvmstat ${ks[*]} in a pid namespace exited $(cat "$TMP/$name.status"): $(cat "$TMP/$name.err")"
}

# under SANITIZE, LeakSanitizer leaves the C library's own leaks alone
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/tests/lsan.supp"

# vt_sums JSON WHAT: every vCPU of the first VM of --vcpu-time --json's
# document JSON has its states summing to its interval within 2 %; else
# fails, naming WHAT
vt_sums() {
	jq -e '[.vcpu_time.vms[0].vcpus[] | ([.seconds_per_second[] | numbers] | add) - 1 | fabs < 0.02] | all' \
		"$1" >/dev/null ||
		fail "$2: states do not sum to the wall time: $(jq -c '.vcpu_time.vms[0].vcpus' "$1")"
}

# start_kvmstat's stderr files, by pid, for wait_polling's failure
declare -A KVMSTAT_ERR

# wait_polling PID: until kvmstat PID waits in its main loop (every
# provider open, its BPF programs attached, the first sample taken): a
# guest started after that has every exit counted. 10 s at most.
wait_polling() {
	for _ in $(seq 1 200); do
		case $(cat /proc/"$1"/wchan 2>/dev/null) in *poll*) return 0 ;; esac
		kill -0 "$1" 2>/dev/null ||
			fail "kvmstat $1 exited before its main loop: $(cat "${KVMSTAT_ERR[$1]:-/dev/null}" 2>/dev/null)"
		sleep 0.05
	done
	fail "kvmstat $1 not in its main loop after 10 s (waits in $(cat /proc/"$1"/wchan 2>/dev/null))"
}

# fresh FILE...: empties each FILE now. A process started in the background
# opens its output files only when it runs, so a poll right after the start
# could otherwise read what an earlier process of the same name wrote (a
# stale "ready" or log line once sent a guest its go before kvmstat had
# started, which lost its counts).
fresh() {
	local f
	for f; do : >"$f"; done
}

# start_guest NAME ARGS...: starts the guest waiting for SIGUSR1; sets
# NAME_PID (launcher) and NAME_VMS (VM pids), after its "ready" line.
# GUEST_NICE=N: at that nice level (a busy guest that must not take the
# CPUs from the monitor it is watched by)
start_guest() {
	local name=$1; shift
	local out="$TMP/$name.out"
	fresh "$out" "$TMP/$name.err"
	${GUEST_NICE:+nice -n "$GUEST_NICE"} "$GUEST" -w "$@" >"$out" 2>"$TMP/$name.err" &
	local pid=$!
	PIDS+=("$pid")
	# on a loaded nested host, starting the guest has once taken more
	# than 10 s (cause unknown): allow 30 s, and say where it waited
	for _ in $(seq 1 600); do
		grep -q '^ready$' "$out" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || fail "guest $name died: $(cat "$TMP/$name.err")"
		sleep 0.05
	done
	grep -q '^ready$' "$out" ||
		fail "guest $name never got ready in 30 s; it printed: $(cat "$out" "$TMP/$name.err"); waiting in: $(cat /proc/"$pid"/wchan 2>/dev/null)"
	printf -v "${name}_PID" '%s' "$pid"
	printf -v "${name}_VMS" '%s' "$(awk '$1 == "vm" { print $2 }' "$out" | tr '\n' ' ')"
}

# go_guest NAME: lets its vCPUs run.
go_guest() {
	local v="${1}_PID"
	kill -USR1 "${!v}"
}

# wait_guest NAME: waits for the guest's exit; fails if it failed.
wait_guest() {
	local v="${1}_PID"
	wait "${!v}" || fail "guest $1 exited with status $?: $(cat "$TMP/$1.err")"
}

# start_kvmstat NAME ARGS...: kvmstat in the background, stdout to
# $TMP/NAME.out; sets NAME_PID.
start_kvmstat() {
	local name=$1; shift
	fresh "$TMP/$name.out" "$TMP/$name.err"
	"$KVMSTAT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	local pid=$!
	PIDS+=("$pid")
	KVMSTAT_ERR[$pid]=$TMP/$name.err
	printf -v "${name}_PID" '%s' "$pid"
}

# wait_lines FILE N: until FILE has at least N lines (10 s at most).
wait_lines() {
	for _ in $(seq 1 200); do
		[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "$1 has fewer than $2 lines: $(cat "$1")"
}

# stop NAME: SIGTERM, then its exit status in STATUS.
stop() {
	local v="${1}_PID"
	kill -TERM "${!v}" 2>/dev/null
	wait "${!v}"
	STATUS=$?
}

# column_sum FILE NAME: sums the column NAME of kvmstat -l output (header
# lines repeat; data lines start with the date and time).
column_sum() {
	awk -v want="$2" '
		/^[0-9][0-9][0-9][0-9]-/ { if (col) s += $(col + 2); next }
		{ col = 0; for (i = 1; i <= NF; i++) if ($i == want) col = i }
		END { print s + 0 }' "$1"
}

# fresh_mounts: $FRESH, a command that runs its arguments as a fresh host
# would, in a mount namespace of their own (private: nothing mounted there
# reaches this host) where tracefs and debugfs are unmounted first; with
# FRESH_USER=UID set, as that user without capabilities (setpriv). The
# process keeps its pid through both execs, so /proc/PID/mountinfo shows
# that namespace's mounts while it runs. Skips where that cannot be done.
fresh_mounts() {
	[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace of its own)"
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	FRESH=$TMP/fresh
	cat >"$FRESH" <<'EOS'
#!/bin/bash
exec unshare -m --propagation private bash -c '
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing /sys/kernel/debug; do
		while mountpoint -q "$d"; do umount -l "$d" || exit 99; done
	done
	if [ -n "${FRESH_USER:-}" ]; then
		exec setpriv --reuid="$FRESH_USER" --regid="$FRESH_USER" \
			--clear-groups --inh-caps=-all "$@"
	fi
	exec "$@"' fresh "$@"
EOS
	chmod 755 "$FRESH"
}

# kfs_mounts [PID]: the tracefs and debugfs mounts of PID's mount namespace
# (this shell's by default), "PATH TYPE" a line, sorted.
kfs_mounts() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") break
		if ($(i + 1) == "tracefs" || $(i + 1) == "debugfs") print $5, $(i + 1) }' \
		/proc/"${1:-self}"/mountinfo | sort
}

# pub_kvmstat: a copy of kvmstat that any user may run (the checkout may be
# closed to others): sets PUB_KVMSTAT.
pub_kvmstat() {
	mkdir -p "$TMP/pub"
	chmod 711 "$TMP"
	chmod 755 "$TMP/pub"
	cp "$KVMSTAT" "$TMP/pub/kvmstat"
	chmod 755 "$TMP/pub/kvmstat"
	PUB_KVMSTAT=$TMP/pub/kvmstat
}

# peer ARGS...: the kernel's kvm_stat ($KVM_STAT_PEER) with ARGS. It wants
# a vmx or svm CPU flag, which nested and paravirtual hosts lack: it runs
# over a copy of /proc/cpuinfo with the vendor's flag added. Its -1 opens
# a filtered perf event per reason and CPU: on the emulated KVM host that
# alone has taken 25 s; the timeout is for a hang only.
peer() {
	# elsewhere it asks the machine, not the flags (arm64: aarch64)
	case $(uname -m) in
	x86_64 | i?86) ;;
	*)
		timeout 300 python3 "$KVM_STAT_PEER" "$@"
		return
		;;
	esac
	if [ ! -s "$TMP/cpuinfo" ]; then
		local flag=vmx
		grep -q AuthenticAMD /proc/cpuinfo && flag=svm
		sed "s/^flags.*/& $flag/" /proc/cpuinfo >"$TMP/cpuinfo"
	fi
	timeout 300 unshare -m sh -c 'mount --bind "$0" /proc/cpuinfo && exec python3 "$@"' \
		"$TMP/cpuinfo" "$KVM_STAT_PEER" "$@"
}

# columns FILE WHAT: FILE is not empty and every line of it is kvm_stat's
# batch line (NAME TOTAL DELTA in 42, 10 and 10 columns)
columns() {
	[ -s "$1" ] || fail "$2: no output"
	local bad
	bad=$(grep -avE '^.{42}[ 0-9]{10}[ 0-9-]{10}$' "$1")
	[ -z "$bad" ] || fail "$2: lines off kvm_stat's columns: $bad"
}
