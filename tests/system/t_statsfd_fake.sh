#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The stats-fd provider end to end with no KVM: fake VM processes
# (fakevm.py) hold stats files laid out as KVM's in memfds and appear in a
# fake /proc as QEMUs holding kvm-vm-stats and kvm-vcpu-stats:N fds, which
# kvmstat copies with pidfd_getfd as it does a real VMM's. Checks -i totals
# and per-vCPU rows, -g, --vcpu and its error; in log output while the
# counters move, exact sums counted from kvmstat's start for a VM already
# running and whole for one that starts later; a VM that exits has every
# copied fd closed at once while the other goes on; units, booleans and
# histograms in batch and JSON; the exporter's kernel totals, per-vCPU
# series and histograms, checked by promtool.
source tests/system/lib.sh
source tests/system/exporter_lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v python3 >/dev/null || skip "no python3 for the fake VMs"
command -v jq >/dev/null || skip "jq missing: apt-get install jq"

fake_proc

# batch_value FILE NAME: the total column of NAME in -1 output
batch_value() {
	awk -v want="$2" '$1 == want { print $2; found = 1 } END { if (!found) print "missing" }' "$1"
}

# batch ARGS...: kvmstat -S -1 ARGS into $TMP/b.out; fails on an error
batch() {
	"$KVMSTAT" -S -1 -s 0.2 "$@" >"$TMP/b.out" 2>"$TMP/b.err" ||
		fail "kvmstat -S -1 $* exited $?: $(cat "$TMP/b.err")"
}

# vCPU n of alpha starts with halt_exits 100 * (n + 1): 600 in all
fakevm alpha 3 100
A=$alpha_VM

batch -i -p "$A" --units
[ "$(batch_value "$TMP/b.out" halt_exits)" = 600 ] || fail "-i: $(cat "$TMP/b.out")"
[ "$(batch_value "$TMP/b.out" remote_tlb_flush)" = 100 ] || fail "VM stat: $(cat "$TMP/b.out")"
grep -q '^guest_mode .* no$' "$TMP/b.out" || fail "boolean: $(cat "$TMP/b.out")"
batch -p "$A"
[ "$(batch_value "$TMP/b.out" halt_exits)" = 0 ] || fail "without -i: $(cat "$TMP/b.out")"
batch -i -g alpha --per-vcpu -f '^halt_exits$'
for c in 0 1 2; do
	[ "$(batch_value "$TMP/b.out" "halt_exits/vcpu$c")" = $((100 * (c + 1))) ] ||
		fail "--per-vcpu: $(cat "$TMP/b.out")"
done
batch -i -p "$A" --vcpu 1 -f '^halt_exits$'
[ "$(cat "$TMP/b.out")" = "$(printf '%-42s%10s%10s' halt_exits 200 0)" ] ||
	fail "--vcpu 1: $(cat "$TMP/b.out")"
"$KVMSTAT" -S -1 -s 0.2 -p "$A" --vcpu 7 >/dev/null 2>"$TMP/err"
[ $? = 2 ] || fail "--vcpu 7 did not fail with status 2"
grep -q 'has no vCPU 7 (its vCPUs: 0 1 2)' "$TMP/err" || fail "--vcpu 7: $(cat "$TMP/err")"
echo "ok: -i 600 = 100 + 200 + 300 per vCPU, 0 without -i, --vcpu"

# log output while the counters move
start_kvmstat log -S -l -s 0.2 -f '^halt_exits$'
wait_lines "$TMP/log.out" 3
want=0
for r in $(seq 1 12); do
	vmcmd alpha add $((r % 3)) halt_exits "$r"
	want=$((want + r))
	sleep 0.03
done
# beta starts after kvmstat: its 50 + 100 before our first look count too
fakevm beta 2 50
vmcmd beta add 1 halt_exits 7
want=$((want + 150 + 7))
for _ in $(seq 1 100); do
	[ "$(memfds "$log_PID")" = 7 ] && break
	sleep 0.05
done
[ "$(memfds "$log_PID")" = 7 ] || fail "kvmstat holds $(memfds "$log_PID") stats fds, want 4 + 3"
vmquit beta
for _ in $(seq 1 100); do
	[ "$(memfds "$log_PID")" = 4 ] && break
	sleep 0.05
done
[ "$(memfds "$log_PID")" = 4 ] ||
	fail "beta exited but kvmstat still holds $(memfds "$log_PID") stats fds, want 4"
vmcmd alpha add 2 halt_exits 5
want=$((want + 5))
lines=$(wc -l <"$TMP/log.out")
wait_lines "$TMP/log.out" $((lines + 3))
stop log
[ "$STATUS" = 0 ] || fail "kvmstat -l exited $STATUS: $(cat "$TMP/log.err")"
got=$(column_sum "$TMP/log.out" halt_exits)
[ "$got" = "$want" ] || fail "log sums to $got, want $want: $(cat "$TMP/log.out")"
echo "ok: log sums to $want (78 on alpha, 157 on beta started later, 5 after beta left); fds 7 -> 4"

# units, booleans, histograms
vmcmd alpha set 0 guest_mode 1
vmcmd alpha set 1 guest_mode 1
vmcmd alpha add 0 halt_wait_ns 150000000
vmcmd alpha hist 1 3 5
vmcmd alpha hist 2 10 1
batch -i -p "$A" --units
grep -q '^guest_mode .* yes on 2$' "$TMP/b.out" || fail "boolean: $(cat "$TMP/b.out")"
grep -q '^halt_wait_ns  *150000000 .* 150 ms ' "$TMP/b.out" || fail "seconds: $(cat "$TMP/b.out")"
# (us where the locale is not UTF-8)
grep -qE '^halt_wait_hist  *6 .* p50 < 8 ns, p90 < 1.02 (µs|us)' "$TMP/b.out" ||
	fail "histogram: $(cat "$TMP/b.out")"
batch -i -p "$A" -f '^halt_wait_hist'
[ "$(awk 'NR > 1 { print $1 }' "$TMP/b.out" | head -4 | tr '\n' ' ')" = \
	"halt_wait_hist(0) halt_wait_hist(1) halt_wait_hist(2) halt_wait_hist(3) " ] ||
	fail "buckets out of order: $(cat "$TMP/b.out")"
# --per-vcpu: each vCPU's values too (the default has the VMs alone)
"$KVMSTAT" -S -i -1 -s 0.2 -p "$A" --json --per-vcpu >"$TMP/j.json" 2>"$TMP/err" ||
	fail "--json exited $?: $(cat "$TMP/err")"
got=$(jq -c '[.fields.halt_exits.total, .fields.halt_wait_ns.unit,
	.fields.halt_wait_ns.exponent, .fields.guest_mode.unit,
	[.fields.guest_mode.vms[0].vcpus[].total],
	[.fields.halt_wait_hist.buckets[] | select(.total > 0) | [.lo, .hi, .total]],
	[.fields.halt_exits.vms[0].vcpus[] | [.vcpu, .total]], .fields.halt_exits.vms[0].guest]' \
	"$TMP/j.json")
want_json="[683,\"seconds\",-9,\"boolean\",[1,1,0],[[4,8,5],[512,1024,1]],[[0,130],[1,222],[2,331]],\"alpha\"]"
[ "$got" = "$want_json" ] || fail "JSON: $got, want $want_json"
echo "ok: batch and JSON units, booleans, histogram buckets: $got"

# one owner per field: statsfd's reading of alpha stands (debugfs's 9999
# for it is not added); debugfs fills in gamma, a VM without stats fds
sleep 600 &
G=$!
PIDS+=("$G")
mkdir -p "$P/$G/fd" "$TMP/dbg/$A-12" "$TMP/dbg/$G-13"
ln -s anon_inode:kvm-vm "$P/$G/fd/9"
echo 10039 >"$TMP/dbg/halt_exits"
echo 9999 >"$TMP/dbg/$A-12/halt_exits"
echo 40 >"$TMP/dbg/$G-13/halt_exits"
KVMSTAT_DEBUGFS_ROOT=$TMP/dbg "$KVMSTAT" -d -S -i -1 -s 0.2 --json -f '^halt_exits$' \
	>"$TMP/j.json" 2>"$TMP/err" || fail "-d -S --json exited $?: $(cat "$TMP/err")"
got=$(jq -c --argjson a "$A" --argjson g "$G" '.fields.halt_exits |
	[.provider, .total, (.vms[] | select(.pid == $a) | .total),
	 (.vms[] | select(.pid == $g) | .total)]' "$TMP/j.json")
[ "$got" = '["statsfd",723,683,40]' ] || fail "arbitration: $got: $(cat "$TMP/j.json")"
grep -q "VM $G keeps no binary stats fds open" "$TMP/err" || fail "no hint for gamma: $(cat "$TMP/err")"
# -p gamma with both asked: statsfd is left out, and says so; debugfs serves
KVMSTAT_DEBUGFS_ROOT=$TMP/dbg "$KVMSTAT" -d -S -i -1 -s 0.2 -f '^halt_exits$' -p "$G" \
	>"$TMP/b.out" 2>"$TMP/err" || fail "-d -S -p gamma exited $?: $(cat "$TMP/err")"
[ "$(batch_value "$TMP/b.out" halt_exits)" = 40 ] || fail "-d -S -p gamma: $(cat "$TMP/b.out")"
grep -q "statsfd provider left out: VM $G keeps no binary stats fds open" "$TMP/err" ||
	fail "-d -S -p gamma: $(cat "$TMP/err")"
# -S alone cannot serve it at all
"$KVMSTAT" -S -i -1 -s 0.2 -p "$G" >"$TMP/b.out" 2>"$TMP/err"
st=$?
[ "$st" != 0 ] && [ ! -s "$TMP/b.out" ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
	grep -q "VM $G keeps no binary stats fds open" "$TMP/err" ||
	fail "-S -p gamma: status $st: $(cat "$TMP/err")"
kill "$G"
rm -rf "${P:?}/$G"
echo "ok: statsfd owns halt_exits: 723 = 683 (alpha) + 40 (gamma from debugfs); -d -S -p gamma leaves statsfd out"

# the exporter: the kernel's totals, per VM and (--per-vcpu) vCPU, and
# histograms
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_kvmstat k -S --listen "127.0.0.1:$PORT" -s 0.2 --per-vcpu
want="kvm_vcpu_halt_exits_total{pid=\"$A\",guest=\"alpha\",vcpu=\"2\"}"
vm="{pid=\"$A\",guest=\"alpha\"}"
for _ in $(seq 1 100); do
	text=$(curl -sf --max-time 1 "$URL") && [ -n "$(metric "$text" "$want")" ] && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat --listen died: $(cat "$TMP/k.err")"
	sleep 0.1
done
[ "$(metric "$text" "$want")" = 331 ] || fail "$want: $(grep halt_exits <<<"$text")"
[ "$(metric "$text" "kvm_halt_exits_total$vm")" = 683 ] || fail "total: $(grep halt_exits <<<"$text")"
# the VM's and the host's are not under one name (the host's is their sum)
! grep -q '^kvm_halt_exits_total ' <<<"$text" || fail "the host's beside the VM's: $(grep halt_exits <<<"$text")"
vmcmd alpha add 2 halt_exits 34
for _ in $(seq 1 50); do
	text=$(scrape "$URL")
	[ "$(metric "$text" "$want")" = 365 ] && break
	sleep 0.1
done
[ "$(metric "$text" "$want")" = 365 ] || fail "after 34 more: $(grep halt_exits <<<"$text")"
[ "$(metric "$text" "kvm_halt_wait_hist_seconds_count$vm")" = 6 ] ||
	fail "histogram count: $(grep halt_wait_hist <<<"$text" | grep -v ' 0$')"
[ "$(metric "$text" "kvm_halt_wait_hist_seconds_bucket{pid=\"$A\",guest=\"alpha\",le=\"7e-09\"}")" = 5 ] ||
	fail "histogram bucket: $(grep halt_wait_hist_seconds_bucket <<<"$text" | head -12)"
if command -v promtool >/dev/null; then
	promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMP/lint")"
fi
stop k
[ "$STATUS" = 0 ] || fail "kvmstat --listen exited $STATUS: $(cat "$TMP/k.err")"
vmquit alpha
echo "ok: exporter $want 331 -> 365, the VM's 683, histogram count 6, promtool clean"
