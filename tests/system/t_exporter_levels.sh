#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Levels of detail of --listen and --json (issue 22), on two fake VMs
# (fakevm.py: binary stats in memfds behind a fake /proc; no KVM needed):
#  - the default scrape has each VM's series (the host's only for fields
#    no VM has: none here), --per-vcpu each vCPU's too, under names of
#    their own (kvm_vcpu_...): exactly as many as the fake VMs' fields
#    make (the counts below are computed from fakevm.py's fields and
#    start values), and who each VM is (kvm_vm_info);
#  - a VM's histogram is the bucket-wise sum of its vCPUs', in the buckets
#    something counted in;
#  - a VM's counter still at 0 is no series; once it counts it is one, and
#    still one at later scrapes;
#  - -f picks the exporter's fields and the JSON's;
#  - --json -1: a VM's fields at 0 are left out; vCPUs only with --per-vcpu.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
for t in curl jq python3; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
source tests/system/exporter_lib.sh

fake_proc
# PAST 1: vCPU N starts with halt_exits N + 1, each VM's remote_tlb_flush
# with 1; every other counter and the histogram at 0
fakevm alpha 2 1
fakevm beta 3 1
# shellcheck disable=SC2154 # fakevm sets them (printf -v)
A=$alpha_VM B=$beta_VM
NVCPU=$((2 + 3)) NVM=2

# fakevm.py's fields: what each kind makes in a scope. A histogram of 32
# log2 buckets, the last one open: 32 _bucket lines, _count and _sum.
BUCKETS=32
HIST=$((BUCKETS + 2))
VCPU_GAUGES=1                         # guest_mode
VCPU_COUNTERS=3                       # halt_exits mmio_exits halt_wait_ns
VCPU_HISTS=1                          # halt_wait_hist
VM_GAUGES=2                           # max_mmu_page_hash_collisions pages_4k
VM_COUNTERS=1                         # remote_tlb_flush
# counted at the start, per VM and per vCPU: halt_exits (and, per VM,
# remote_tlb_flush); the rest still 0
VCPU_COUNTING=1
VM_COUNTING=$((VCPU_COUNTING + VM_COUNTERS))
# the host: the fields no VM has (every field is some VM's: none; sum()
# over the VMs is the host's)
host=0
# a VM: its gauges (a VM-wide value of the vCPUs' too) and what counted
per_vm=$((VCPU_GAUGES + VM_GAUGES + VM_COUNTING))
# a vCPU (--per-vcpu): its gauges and what counted
per_vcpu=$((VCPU_GAUGES + VCPU_COUNTING))
# and kvmstat's own: kvm_vm_info per VM, kvmstat_source_up{source="statsfd"}
own=$((NVM + 1))
want_default=$((host + NVM * per_vm + own))
want_vcpu=$((want_default + NVCPU * per_vcpu))

# series TEXT: how many samples an exposition has
series() { grep -vc '^#' <<<"$1"; }
# settled URL SERIES WANT: scrapes until SERIES reads WANT (5 s); TEXT
settled() {
	for _ in $(seq 1 50); do
		TEXT=$(scrape "$1")
		[ "$(metric "$TEXT" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	fail "$2 is '$(metric "$TEXT" "$2")', want $3"
}

P1=$(free_port)
P2=$(free_port)
while [ "$P2" = "$P1" ]; do P2=$(free_port); done
start_kvmstat d -S --listen "127.0.0.1:$P1" -s 0.2
start_kvmstat v -S --listen "127.0.0.1:$P2" -s 0.2 --per-vcpu
U1="http://127.0.0.1:$P1/metrics" U2="http://127.0.0.1:$P2/metrics"
wait_serving d "$U1"
wait_serving v "$U2"
settled "$U1" "kvm_halt_exits_total{pid=\"$B\",guest=\"beta\"}" 6
got=$(series "$TEXT")
[ "$got" = "$want_default" ] ||
	fail "default: $got series, want $want_default = $host + $NVM x $per_vm + $own: $(grep -v '^#' <<<"$TEXT" | grep -v _bucket)"
for v in "$A alpha" "$B beta"; do
	read -r vp vn <<<"$v"
	grep -q "^kvm_vm_info{pid=\"$vp\",guest=\"$vn\",vmm=\"qemu\"} 1$" <<<"$TEXT" ||
		fail "no kvm_vm_info for $vn: $(grep kvm_vm_info <<<"$TEXT")"
done
grep -q '^kvmstat_source_up{source="statsfd"} 1$' <<<"$TEXT" ||
	fail "no kvmstat_source_up: $(grep kvmstat_ <<<"$TEXT")"
grep -q 'vcpu="' <<<"$TEXT" && fail "default: vCPU series: $(grep -m3 'vcpu="' <<<"$TEXT")"
settled "$U2" "kvm_vcpu_halt_exits_total{pid=\"$B\",guest=\"beta\",vcpu=\"2\"}" 3
# a vCPU's series never under its VM's name
bad=$(grep -E '^kvm_[a-z_]+\{[^}]*vcpu="' <<<"$TEXT" | grep -v '^kvm_vcpu_' | head -3)
[ -z "$bad" ] || fail "--per-vcpu: a vCPU's series under its VM's name: $bad"
got=$(series "$TEXT")
[ "$got" = "$want_vcpu" ] ||
	fail "--per-vcpu: $got series, want $want_vcpu = $want_default + $NVCPU x $per_vcpu: $(grep -v '^#' <<<"$TEXT" | grep -v _bucket)"
if command -v promtool >/dev/null; then
	for u in "$U1" "$U2"; do
		scrape "$u" | promtool check metrics >"$TMP/lint" 2>&1 ||
			fail "promtool check metrics ($u): $(cat "$TMP/lint")"
	done
fi
echo "ok: $want_default series by default ($host host + $NVM x $per_vm + $own), $want_vcpu with --per-vcpu (+ $NVCPU x $per_vcpu)"

# a VM's counter that has not counted: no series, until it counts
zero="kvm_mmio_exits_total{pid=\"$A\",guest=\"alpha\"}"
[ -z "$(metric "$(scrape "$U1")" "$zero")" ] || fail "$zero before it counted"
vmcmd alpha add 1 mmio_exits 4
settled "$U1" "$zero" 4
for _ in 1 2 3; do
	sleep 0.3
	[ "$(metric "$(scrape "$U1")" "$zero")" = 4 ] || fail "$zero went away"
done
[ -z "$(metric "$TEXT" "kvm_mmio_exits_total{pid=\"$B\",guest=\"beta\"}")" ] ||
	fail "beta's mmio_exits, never counted, is a series"
echo "ok: $zero absent at 0, then 4, still 4 three scrapes later"

# a VM's histogram: its vCPUs' summed bucket by bucket, with the buckets
# something counted in
vmcmd alpha hist 0 3 5
vmcmd alpha hist 1 3 2
vmcmd alpha hist 1 10 1
settled "$U2" "kvm_halt_wait_hist_seconds_count{pid=\"$A\",guest=\"alpha\"}" 8
# the buckets written per VM and vCPU: those counted in anywhere (3 and
# 10) and the one below each (2 and 9: their lower edges, for
# histogram_quantile), then +Inf; with _count and _sum
bad=$(awk -v a="$A" -v lines=$((4 + 1 + 2)) '
	/^kvm_(vcpu_)?halt_wait_hist_seconds_(bucket|count|sum)\{/ && index($1, "pid=\"" a "\"") {
		key = $1
		vc = match(key, /,vcpu="[0-9]+"/)
		if (vc) { sub(/,vcpu="[0-9]+"/, "", key); sub(/^kvm_vcpu_/, "kvm_", key); sum[key] += $2 } else vm[key] = $2
	}
	END { n = 0; for (k in vm) { n++; if (vm[k] != sum[k] + 0) print k, vm[k], sum[k] + 0 } if (n != lines) print "lines", n }' <<<"$TEXT")
[ -z "$bad" ] || fail "alpha's histogram is not its vCPUs' sum: $bad"
[ "$(metric "$(scrape "$U1")" "kvm_halt_wait_hist_seconds_count{pid=\"$A\",guest=\"alpha\"}")" = 8 ] ||
	fail "default level: alpha's histogram count is not 8"
echo "ok: alpha's histogram (count 8) is its vCPUs' bucket by bucket"
stop d
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/d.err")"
stop v
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/v.err")"

# -f: the exporter's fields and the JSON's
start_kvmstat f -S --listen "127.0.0.1:$P1" -s 0.2 -f '^halt_exits$'
wait_serving f "$U1"
# (beside kvmstat's own: who the VMs are, its sources)
fams=$(scrape "$U1" | awk '/^# TYPE/ && $3 != "kvm_vm_info" && $3 !~ /^kvmstat_/ { print $3 }' | sort -u | tr '\n' ' ')
[ "$fams" = "kvm_halt_exits_total " ] || fail "-f '^halt_exits$': families $fams"
stop f
"$KVMSTAT" -S -1 -s 0.2 --json -f '^halt_exits$' >"$TMP/f.json" 2>"$TMP/f.err" ||
	fail "--json -f: status $?: $(cat "$TMP/f.err")"
[ "$(jq -c '.fields | keys' "$TMP/f.json")" = '["halt_exits"]' ] ||
	fail "--json -f '^halt_exits$': $(jq -c '.fields | keys' "$TMP/f.json")"
echo "ok: -f '^halt_exits\$' keeps that field alone in the exporter and the JSON"

# --json: a VM's fields at 0 left out (-i: totals since each VM started);
# every field at the host; vCPUs only with --per-vcpu
"$KVMSTAT" -S -i -1 -s 0.2 --json >"$TMP/j.json" 2>"$TMP/j.err" ||
	fail "--json: status $?: $(cat "$TMP/j.err")"
got=$(jq -c --argjson b "$B" '[(.fields | length),
	[.fields | to_entries[] | select(any(.value.vms[]?; .pid == $b)) | .key],
	([.fields[] | .vms[]? | select(.vcpus)] | length)]' "$TMP/j.json")
[ "$got" = '[8,["halt_exits","remote_tlb_flush"],0]' ] ||
	fail "--json: $got, want 8 fields, beta in halt_exits and remote_tlb_flush alone, no vCPUs"
bad=$(jq -c '[.fields[] | .vms[]? | select(.total == 0)]' "$TMP/j.json")
[ "$bad" = "[]" ] || fail "--json: VM entries at 0: $bad"
"$KVMSTAT" -S -i -1 -s 0.2 --json --per-vcpu >"$TMP/v.json" 2>"$TMP/v.err" ||
	fail "--json --per-vcpu: status $?: $(cat "$TMP/v.err")"
got=$(jq -c --argjson b "$B" '[.fields.halt_exits.vms[] | select(.pid == $b) | .vcpus[] | [.vcpu, .total]]' "$TMP/v.json")
[ "$got" = '[[0,1],[1,2],[2,3]]' ] || fail "--json --per-vcpu: beta's halt_exits by vCPU $got"
echo "ok: --json lists beta in halt_exits and remote_tlb_flush alone, vCPUs with --per-vcpu: $got"
vmquit alpha
vmquit beta
