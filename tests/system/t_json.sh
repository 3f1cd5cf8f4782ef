#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --json against the test guest, checked with jq: -1 prints one document
# whose statsfd totals (-i: since the VM started) are exactly the guest's
# HLT exits, per VM and (--per-vcpu) per vCPU, with the guest's name; -l
# prints one object per line whose tracepoint deltas add up to exactly the
# guest's exits, per vCPU too (--per-vcpu); -L with SIGHUP goes on in a new file.
source tests/system/lib.sh
need_kvm
if ! command -v jq >/dev/null; then
	[ "${KVMSTAT_REQUIRE_KVM:-0}" = 1 ] && fail "jq missing: apt-get install jq"
	skip "jq missing: apt-get install jq"
fi
"$KVMSTAT" --help | grep -q -- '--json' ||
	skip "this kvmstat has no --json (apply build-notes/issue5-main.patch)"

N=700
V=2

# -1: one document; totals since the VM started (-i) of a finished guest
start_guest a --name guest=jsonvm,debug-threads=on -s -m 1 -v $V -n $N -k hlt -t 30
VM=${a_VMS% }
go_guest a
for _ in $(seq 1 100); do
	[ "$(grep -c '^done' "$TMP/a.out")" = $V ] && break
	sleep 0.05
done
"$KVMSTAT" --json -1 -s 0.3 -S -i -p "$VM" --per-vcpu >"$TMP/one.json" 2>"$TMP/one.err" ||
	fail "--json -1 exited $?: $(cat "$TMP/one.err")"
[ "$(jq -s length "$TMP/one.json")" = 1 ] || fail "-1 printed more than one document"
jq -e . "$TMP/one.json" >/dev/null || fail "-1 is not JSON: $(head -c 300 "$TMP/one.json")"
got=$(jq '.fields.halt_exits.total' "$TMP/one.json")
[ "$got" = $((V * N)) ] || fail "halt_exits total $got, want $((V * N))"
got=$(jq -r --argjson pid "$VM" \
	'.fields.halt_exits.vms[] | select(.pid == $pid) | "\(.guest) \(.total)"' "$TMP/one.json")
[ "$got" = "jsonvm $((V * N))" ] || fail "per VM: '$got', want 'jsonvm $((V * N))'"
got=$(jq -c '[.fields.halt_exits.vms[0].vcpus[] | [.vcpu, .total]]' "$TMP/one.json")
[ "$got" = "[[0,$N],[1,$N]]" ] || fail "per vCPU: $got"
got=$(jq -r '.fields.halt_exits | "\(.type) \(.unit) \(.valid)"' "$TMP/one.json")
[ "$got" = "cumulative none true" ] || fail "halt_exits: $got"
got=$(jq -r '.fields.halt_wait_ns | "\(.unit) \(.exponent) \(.base)"' "$TMP/one.json")
[ "$got" = "seconds -9 10" ] || fail "halt_wait_ns: $got"
# a histogram: buckets with ranges, their totals adding up to its total
got=$(jq -r '.fields.halt_wait_hist |
	"\(.histogram) \(.buckets[0].lo) \(.buckets[0].hi) \(.buckets[-1].hi) \(([.buckets[].total] | add) == .total)"' \
	"$TMP/one.json")
[ "$got" = "log2 0 1 null true" ] || fail "halt_wait_hist: $got"
# -f applies: the default hides child events and shows no bucket names
[ "$(jq '.fields | keys | map(select(test("\\("))) | length' "$TMP/one.json")" = 0 ] ||
	fail "-1 shows child events without -f"
echo "ok: --json -1: halt_exits $((V * N)) (VM jsonvm, vCPUs $N each), units, histogram"

# -l: JSON Lines; deltas add up to the exits made while it ran
start_guest b --name guest=linesvm,debug-threads=on -m 1 -v $V -n $N -k hlt -t 0.5
VM=${b_VMS% }
start_kvmstat k --json -t -l -s 0.2 -p "$VM" --per-vcpu -f 'kvm_userspace_exit'
wait_lines "$TMP/k.out" 1
go_guest b
wait_guest b
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
jq -e . "$TMP/k.out" >/dev/null || fail "a line is not JSON: $(head -3 "$TMP/k.out")"
lines=$(wc -l <"$TMP/k.out")
[ "$(jq -s length "$TMP/k.out")" = "$lines" ] || fail "not one object per line"
got=$(jq -s '[.[].fields["kvm_userspace_exit(HLT)"].delta] | add' "$TMP/k.out")
[ "$got" = $((V * N)) ] || fail "HLT deltas add up to $got, want $((V * N))"
got=$(jq -s '[.[].fields.kvm_userspace_exit.delta] | add' "$TMP/k.out")
[ "$got" = $((V * N)) ] || fail "kvm_userspace_exit deltas add up to $got"
for c in $(seq 0 $((V - 1))); do
	got=$(jq -s --argjson c "$c" '[.[].fields["kvm_userspace_exit(HLT)"].vms[]? |
		select(.guest == "linesvm") | .vcpus[]? | select(.vcpu == $c) | .delta] | add' \
		"$TMP/k.out")
	[ "$got" = $N ] || fail "vCPU $c: deltas add up to $got, want $N"
done
got=$(jq -s '[.[] | .interval] | .[0] > 0.1 and .[0] < 1' "$TMP/k.out")
[ "$got" = true ] || fail "interval: $(jq -s '[.[].interval]' "$TMP/k.out")"
echo "ok: --json -l: $lines lines, kvm_userspace_exit(HLT) deltas $((V * N)), per vCPU $N"

# -L FILE and SIGHUP: the rotated file keeps its lines, the new one grows
# wait_file FILE: until it exists (5 s at most)
wait_file() {
	for _ in $(seq 1 100); do
		[ -e "$1" ] && return
		sleep 0.05
	done
	fail "$1 never appeared"
}
start_kvmstat L --json -t -L "$TMP/k.jsonl" -s 0.1 -f 'kvm_userspace_exit'
wait_file "$TMP/k.jsonl"
wait_lines "$TMP/k.jsonl" 2
mv "$TMP/k.jsonl" "$TMP/k.jsonl.1"
kill -HUP "$L_PID"
wait_file "$TMP/k.jsonl"
wait_lines "$TMP/k.jsonl" 2
stop L
[ "$STATUS" = 0 ] || fail "kvmstat -L exited $STATUS: $(cat "$TMP/L.err")"
jq -e . "$TMP/k.jsonl.1" "$TMP/k.jsonl" >/dev/null || fail "-L lines are not JSON"
[ ! -s "$TMP/L.out" ] || fail "-L wrote to stdout"
echo "ok: --json -L: $(wc -l <"$TMP/k.jsonl.1") + $(wc -l <"$TMP/k.jsonl") lines across SIGHUP"

# usage: a mode is needed, and CSV is another format
"$KVMSTAT" --json >/dev/null 2>&1
[ $? = 2 ] || fail "--json alone was not a usage error"
"$KVMSTAT" --json -l -c >/dev/null 2>&1
[ $? = 2 ] || fail "--json -c was not a usage error"
echo "ok: usage errors"
