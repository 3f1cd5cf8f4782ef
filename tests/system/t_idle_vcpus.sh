#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every vCPU of a VM, idle ones included: a QEMU guest with -smp 2, whose
# second vCPU never leaves its wait for a start-up IPI (the BIOS finds
# nothing to boot), is listed with both vCPUs, by thread, in --json
# --per-vcpu (the second with 0 in the events the first counts) and in the
# monitor's vCPU drill-down. Only vCPU 0 was listed: the tracepoints count per thread
# only what happened.
source tests/system/lib.sh
need_kvm
QEMU=${QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || skip "no $QEMU (apt-get install qemu-system-x86)"
command -v tmux >/dev/null || skip "tmux not installed"

"$QEMU" -accel kvm -display none -nodefaults -m 64 -smp 2 \
	-name guest=idlevcpu,debug-threads=on >"$TMP/qemu.out" 2>&1 &
QEMU_PID=$!
PIDS+=("$QEMU_PID")
for _ in $(seq 100); do
	[ "$(grep -lx 'CPU [01]/KVM' /proc/"$QEMU_PID"/task/*/comm 2>/dev/null | wc -l)" = 2 ] && break
	kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
	sleep 0.1
done
tid() { grep -lx "CPU $1/KVM" /proc/"$QEMU_PID"/task/*/comm | cut -d/ -f5; }
tid0=$(tid 0)
tid1=$(tid 1)
[ -n "$tid0" ] && [ -n "$tid1" ] || fail "QEMU has no vCPU threads named CPU 0/KVM, CPU 1/KVM"
sleep 1

# --json, the whole host: the VM's vCPUs in its events, idle one included
"$KVMSTAT" --json -1 -t -s 1 --per-vcpu >"$TMP/j.json" || fail "kvmstat --json failed"
vcpus=$(jq -c --argjson p "$QEMU_PID" '[.fields[] | .vms[]? | select(.pid == $p) | .vcpus[]? | [.vcpu, .tid]] | unique' "$TMP/j.json")
[ "$vcpus" = "[[0,$tid0],[1,$tid1]]" ] || fail "--json lists vCPUs $vcpus, want [[0,$tid0],[1,$tid1]]"
# in each event vCPU 0 counted, vCPU 1 is there too; and in the events
# of what only a running vCPU does (port I/O, emulated instructions) vCPU
# 1 has 0. (Not in every event: QEMU may kick a waiting vCPU out of
# KVM_RUN, a wake-up, an exit to user space and FPU switches, when it
# starts late on a loaded host.)
bad=$(jq -c --argjson p "$QEMU_PID" '[.fields | to_entries[] | .key as $k | .value.vms[]? | select(.pid == $p) | select(.vcpus) |
	select([.vcpus[].vcpu] != [0, 1]) | $k]' "$TMP/j.json")
[ "$bad" = "[]" ] || fail "events without both vCPUs: $bad"
idle=$(jq -c --argjson p "$QEMU_PID" '[.fields | to_entries[] | select(.key | test("^kvm_(pio|emulate_insn)$")) | .key as $k |
	.value.vms[]? | select(.pid == $p) | select(.vcpus[0].total > 0 and .vcpus[1].total == 0) | $k]' "$TMP/j.json")
[ "$idle" != "[]" ] || fail "no kvm_pio or kvm_emulate_insn with vCPU 0 counting and idle vCPU 1 at 0: $(jq -c '.fields | {kvm_pio, kvm_emulate_insn}' "$TMP/j.json")"

# the monitor: per-guest view, Enter on the VM: both vCPUs and threads
S=kvmstat-idle-$$
tmux new-session -d -s "$S" -x 120 -y 40 "$KVMSTAT -t -s 0.5; sleep 30"
source tests/system/tui_lib.sh
expect "kvm statistics - summary"
keys b
expect "kvm statistics - guests"
expect "idlevcpu"
n=$(screen | awk -v p="$QEMU_PID" '$1 ~ /^[0-9]+$/ { i++; if ($1 == p) print i }')
[ -n "$n" ] || fail "the VM is not listed: $(screen)"
keys Home
for _ in $(seq 2 "$n"); do keys Down; done
keys Enter
expect "vCPUs of pid $QEMU_PID"
expect_row() {
	for _ in $(seq 40); do
		screen | awk -v v="$1" -v t="$2" '$1 == v && $2 == t { ok = 1 } END { exit !ok }' && return 0
		sleep 0.1
	done
	fail "no row for vCPU $1 (thread $2): $(screen)"
}
expect_row 0 "$tid0"
expect_row 1 "$tid1"
keys q
echo ok
