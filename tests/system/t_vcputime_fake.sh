#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where each vCPU's time goes (--vcpu-time, issue 24) on fake VMs
# (fakevms.c) whose "vCPU" threads are real threads named "CPU N/KVM":
# two spinning in user space pinned to one host CPU each wait for it
# about half the time; every vCPU's five states sum to the wall time
# within 2 %; blocked threads count as halted+vmm without KVM's halt
# statistics (merged, no number for either alone) and as vmm with them
# (their halt_wait_ns never grows); the exporter's counters grow by the
# wall time times the vCPUs; -c is refused. No KVM needed.
source tests/system/lib.sh
source tests/system/exporter_lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"

fake_proc
mkdir -p "$TMP/dbg"
export KVMSTAT_DEBUGFS_ROOT=$TMP/dbg
cc -O2 -o "$TMP/fakevms" tests/fakes/fakevms.c || fail "cannot build fakevms"
# the CPU the spinners share: the last this test may use
CPU=$(taskset -pc $$ | awk -F': ' '{ n = split($2, a, ","); split(a[n], b, "-"); print b[2] != "" ? b[2] : b[1] }')

# fakevms_start NAME MODE [PIN]: one VM of 2 vCPU threads; VM its pid,
# FD its commands' fd
fakevms_start() {
	local fd d
	local -A before=()
	for d in "$P"/[0-9]*; do before[$d]=1; done
	mkfifo "$TMP/$1.in"
	FAKEVMS_THREADS=$2 FAKEVMS_PIN=${3:-} "$TMP/fakevms" "$P" 1 2 "$TMP/dbg" \
		<"$TMP/$1.in" >"$TMP/$1.out" 2>"$TMP/$1.err" &
	PIDS+=($!)
	exec {fd}>"$TMP/$1.in"
	FD=$fd
	for _ in $(seq 1 200); do
		grep -q '^ready$' "$TMP/$1.out" && break
		sleep 0.05
	done
	grep -q '^ready$' "$TMP/$1.out" || fail "fakevms $1: $(cat "$TMP/$1.err")"
	echo stop >&"$fd" # its main thread stops writing its stats
	for _ in $(seq 1 100); do grep -q '^busy' "$TMP/$1.out" && break; sleep 0.05; done
	# the VM's pid: the directory fakevms made
	VM=
	for d in "$P"/[0-9]*; do [ -n "${before[$d]:-}" ] || VM=${d##*/}; done
}

# vt_json ARGS: kvmstat -1 --vcpu-time --json ARGS into $TMP/j.json
vt_json() {
	"$KVMSTAT" -1 -s 1 --vcpu-time --json "$@" >"$TMP/j.json" 2>"$TMP/j.err" ||
		fail "kvmstat $* exited $?: $(cat "$TMP/j.err")"
}

# sums_to_wall: every vCPU's and VM's states add up to its interval
# (a VM's: times its vCPUs) within 2 %
sums_to_wall() {
	jq -e '[.vcpu_time.vms[] | (.vcpus[] | ([.seconds_per_second[] | numbers] | add) as $s |
		($s - 1 | fabs) < 0.02), (([.seconds_per_second[] | numbers] | add) as $s |
		($s - (.vcpus | length) | fabs) < 0.02 * (.vcpus | length))] | all' \
		"$TMP/j.json" >/dev/null ||
		fail "states do not sum to the wall time: $(jq -c '.vcpu_time' "$TMP/j.json")"
}

fakevms_start spin spin "$CPU"
S=$VM
[ -n "$S" ] || fail "no fake VM pid"

# two spinners on one CPU: each waits about half the time
vt_json -S -p "$S"
n=$(jq '[.vcpu_time.vms[] | select(.pid == '"$S"') | .vcpus[]] | length' "$TMP/j.json")
[ "$n" = 2 ] || fail "want 2 vCPUs of $S: $(jq -c '.vcpu_time' "$TMP/j.json")"
sums_to_wall
jq -e '[.vcpu_time.vms[0].vcpus[].seconds_per_second.waiting | . > 0.4] | all' "$TMP/j.json" >/dev/null ||
	fail "spinners sharing CPU $CPU wait less than 40 %: $(jq -c '.vcpu_time.vms[0].vcpus' "$TMP/j.json")"
# together they ran at most the one CPU
jq -e '[.vcpu_time.vms[0].vcpus[].seconds_per_second.waiting] | add | . > 0.95' "$TMP/j.json" >/dev/null ||
	fail "two spinners on one CPU ran more than it: $(jq -c '.vcpu_time.vms[0].vcpus' "$TMP/j.json")"
# the threads are the VM's real ones, with their names' indices
for i in 0 1; do
	tid=$(jq '.vcpu_time.vms[0].vcpus['"$i"'].tid' "$TMP/j.json")
	[ "$(cat "/proc/$S/task/$tid/comm" 2>/dev/null)" = "CPU $i/KVM" ] ||
		fail "vCPU $i: thread $tid is not CPU $i/KVM"
done
jq -e '.vcpu_time.vms[0].threads | map(.name) | index("fakevms")' "$TMP/j.json" >/dev/null ||
	fail "the VMM's main thread is not listed: $(jq -c '.vcpu_time.vms[0].threads' "$TMP/j.json")"
w=$(jq -c '[.vcpu_time.vms[0].vcpus[].seconds_per_second.waiting]' "$TMP/j.json")
echo "ok: two spinners pinned to CPU $CPU wait $w of each second; states sum to wall time"

# -1's table: a line per vCPU with -p, the merged guest+kernel said
"$KVMSTAT" -1 -s 0.5 -S --vcpu-time -p "$S" >"$TMP/b.out" 2>"$TMP/b.err" ||
	fail "-1 --vcpu-time: $(cat "$TMP/b.err")"
for i in 0 1; do
	awk -v p="$S" -v i="$i" '$1 == p && $3 == i && NF == 9 { f = 1 } END { exit !f }' "$TMP/b.out" ||
		fail "no line for vCPU $i: $(cat "$TMP/b.out")"
done
grep -q '^ +: merged' "$TMP/b.out" || fail "merged states not said: $(cat "$TMP/b.out")"
echo "quit" >&"$FD"

# blocked "vCPUs": with halt statistics (that never grow) their sleep is
# the VMM's; without them halted and vmm are one merged state
fakevms_start idle idle
I=$VM
vt_json -S -p "$I"
sums_to_wall
jq -e '[.vcpu_time.vms[0].vcpus[].seconds_per_second | .vmm > 0.95 and .halted == 0 and (.merged // null) == null] | all' "$TMP/j.json" >/dev/null ||
	fail "-S: blocked threads not vmm: $(jq -c '.vcpu_time.vms[0].vcpus' "$TMP/j.json")"
vt_json -t -p "$I"
sums_to_wall
jq -e '[.vcpu_time.vms[0].vcpus[] | .seconds_per_second | .["halted+vmm"] > 0.95 and .halted == null and .vmm == null] | all' "$TMP/j.json" >/dev/null ||
	fail "no halt statistics: not merged: $(jq -c '.vcpu_time.vms[0].vcpus' "$TMP/j.json")"
jq -e '[.vcpu_time.vms[0].vcpus[].merged | index("halted+vmm")] | all' "$TMP/j.json" >/dev/null ||
	fail "merged states not listed: $(jq -c '.vcpu_time.vms[0].vcpus' "$TMP/j.json")"
# the whole host with -S: every vCPU's halt statistics read, and by -l
# whatever -f keeps
vt_json -S
jq -e --argjson p "$I" '[.vcpu_time.vms[] | select(.pid == $p) | .vcpus[].seconds_per_second.halted == 0] | (length == 2 and all)' \
	"$TMP/j.json" >/dev/null || fail "-S, every VM: halted not measured: $(jq -c '.vcpu_time' "$TMP/j.json")"
timeout -s INT 2 "$KVMSTAT" -l -S -s 0.5 -f '^halt_exits$' --vcpu-time >"$TMP/l.out" 2>"$TMP/l.err"
awk -v p="$I" '$1 == p && $3 == "all" && $8 == "0.000" { f = 1 } END { exit !f }' "$TMP/l.out" ||
	fail "-l -f: halted not measured: $(cat "$TMP/l.out" "$TMP/l.err")"

# the whole host: every VM (found in /proc), without a source that
# reads it
vt_json -t
jq -e --argjson p "$I" '[.vcpu_time.vms[] | select(.pid == $p and .guest == "vm0" and (.vcpus | length) == 2)] | length == 1' \
	"$TMP/j.json" >/dev/null || fail "the whole host: VM $I not listed: $(jq -c '.vcpu_time' "$TMP/j.json")"
echo "ok: blocked threads: vmm with halt statistics, halted+vmm (merged) without; the host's VMs listed"

# the exporter: counters that grow by the wall time, per VM and per vCPU
# (a scrape may get the render of the last sample, 0.1 s old at most:
# 0.2 s over 3 s, and the scrapes' own time)
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_kvmstat k -S --listen "127.0.0.1:$PORT" -s 0.1 --vcpu-time -p "$I" --per-vcpu
# vm_sum TEXT: the VM's states summed, over its vCPUs (--per-vcpu writes
# theirs alone: a VM's series beside them would count twice in sum())
vm_sum() {
	awk -v p="pid=\"$I\"" 'index($1, "kvm_vcpu_seconds_total{" p) == 1 { s += $2 } END { printf "%.6f\n", s }' <<<"$1"
}
for _ in $(seq 1 100); do
	text=$(curl -sf --max-time 1 "$URL") && grep -q '^kvm_vcpu_seconds_total' <<<"$text" && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat --listen died: $(cat "$TMP/k.err")"
	sleep 0.1
done
# timed_scrape: the body into text, the middle of its request in t
timed_scrape() {
	local s
	s=$(date +%s.%N)
	text=$(scrape "$URL")
	t=$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.6f\n", (s + e) / 2 }')
}
timed_scrape
t0=$t
a=$(vm_sum "$text")
sleep 3
timed_scrape
t1=$t
b=$(vm_sum "$text")
awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { w = 2 * (t1 - t0); d = b - a; exit !(d > 0.9 * w && d < 1.1 * w) }' ||
	fail "VM counters grew $a -> $b over 2 x $t0..$t1"
grep -q "^kvm_vcpu_seconds_total{pid=\"$I\",guest=\"vm0\",vcpu=\"1\",state=\"vmm\"} " <<<"$text" ||
	fail "no per-vCPU series: $(grep kvm_vcpu_seconds <<<"$text")"
! grep '^kvm_vcpu_seconds_total{' <<<"$text" | grep -qv 'vcpu="' ||
	fail "--per-vcpu: the VM's series beside its vCPUs': $(grep '^kvm_vcpu_seconds_total{' <<<"$text" | grep -v 'vcpu="' | head -3)"
grep -q "^kvm_vmm_thread_seconds_total{pid=\"$I\",guest=\"vm0\",thread=\"fakevms\"} " <<<"$text" ||
	fail "no VMM thread series: $(grep kvm_vmm_thread <<<"$text")"
if command -v promtool >/dev/null; then
	promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMP/lint")"
fi
stop k
[ "$STATUS" = 0 ] || fail "kvmstat --listen exited $STATUS: $(cat "$TMP/k.err")"
echo "ok: exporter: the VM's states grew $a -> $b s over 2 x $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"

# the monitor: 't' lists the VM sorted by waiting, Enter its vCPUs
if command -v tmux >/dev/null; then
	S=kvmstat-vt-$$
	trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
	tmux new-session -d -s "$S" -x 120 -y 30 \
		"env KVMSTAT_PROC_ROOT=$P KVMSTAT_DEBUGFS_ROOT=$TMP/dbg $KVMSTAT -S -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
	source tests/system/tui_lib.sh
	expect "kvm statistics - summary"
	keys t; expect "where vCPU time goes"
	expect "waiting*"
	expect "$I  vm0"
	keys Enter; expect "vCPU time of pid $I"
	# after a refresh, both blocked threads spend the second in the VMM
	for _ in $(seq 50); do
		v0=$(screen | awk '$1 == 0 { print $5 }')
		v1=$(screen | awk '$1 == 1 { print $5 }')
		awk -v a="$v0" -v b="$v1" 'BEGIN { exit !(a > 0.95 && b > 0.95) }' && break
		sleep 0.1
	done
	awk -v a="$v0" -v b="$v1" 'BEGIN { exit !(a > 0.95 && b > 0.95) }' ||
		fail "vCPUs not in the VMM: $(screen)"
	keys 1; expect "vCPU*"
	keys Escape; expect "where vCPU time goes"
	keys t; expect "kvm statistics - summary"
	keys h; expect "t     where vCPU time goes"
	keys x; keys q
	for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
	echo "ok: monitor: t lists VM $I by waiting, Enter its vCPUs (vmm ~1), Escape, t back"
fi

# CSV has no place for it
"$KVMSTAT" -l -c --vcpu-time >"$TMP/c.out" 2>"$TMP/c.err"
st=$?
if [ "$st" != 2 ] || [ "$(wc -l <"$TMP/c.err")" != 1 ] ||
	! grep -q -- '--vcpu-time' "$TMP/c.err"; then
	fail "-c --vcpu-time: status $st: $(cat "$TMP/c.err")"
fi
echo "quit" >&"$FD"
echo "ok: -c --vcpu-time refused in one line"
