#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The bounds of the breakdowns (issue 23), on breakdown_lib.sh's fake
# tracefs: a fake VM touching 20 ports, port 0x100+i (i+1) times, must show
# the top 16 by count (0x104..0x113) and "other" holding exactly the rest
# (1+2+3+4 = 10); one sweeping 10,000 MSRs once each, past the kernel's
# bound of 8,192 keys, must still add up to exactly 10,000 (16 rows of 1,
# other 9,984) while the kernel's map holds no more than its fixed size.
source tests/system/lib.sh
need_tracepoints
command -v bpftool >/dev/null || skip "bpftool not installed"
source tests/system/breakdown_lib.sh
breakdown_tracefs "$TMP/tracefs"
specs=()
for i in $(seq 0 19); do specs+=("0:ioport:$((0x100 + i)):1:$((i + 1))"); done
start_tpkeys a "${specs[@]}"
start_tpkeys b 0:msr:0x40000:0:1:0:10000
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --json -1 -s 4 --breakdown ioport,msr -f '^kvm_entry$'
sleep 0.8
go_tpkeys a
go_tpkeys b
# the kernel's map while kvmstat runs: at most its fixed size
entries=$(bpftool map dump name brk_counts -j 2>/dev/null | jq length)
max=$(bpftool map show name brk_counts -j 2>/dev/null | jq .max_entries)
[ -n "$entries" ] && [ "$entries" -le "$max" ] && [ "$max" -le 10240 ] ||
	fail "brk_counts holds $entries of max $max"
echo "ok: the kernel's map: $entries entries of at most $max"
wait "$k_PID" || fail "kvmstat: status $?: $(cat "$TMP/k.err")"
vm() { jq -c --argjson p "$1" --arg k "$2" '.breakdown.vms[] | select(.pid == $p) | .[$k]' "$TMP/k.out"; }
t=$(vm "$a_PID" ioport)
[ "$(jq length <<<"$t")" = 17 ] || fail "ports: $(jq length <<<"$t") rows, want 16 and other: $t"
[ "$(jq -r '[.[:16][] | .key] | join(" ")' <<<"$t")" = "$(printf '0x%x ' $(seq $((0x113)) -1 $((0x104))) | sed 's/ $//')" ] ||
	fail "top 16 ports: $(jq -c '[.[] | .key]' <<<"$t")"
[ "$(jq -c '.[16] | [.key, .count]' <<<"$t")" = '["other",10]' ] || fail "other: $(jq -c '.[16]' <<<"$t")"
echo "ok: 20 ports: the top 16 by count, other 10"
t=$(vm "$b_PID" msr)
[ "$(jq length <<<"$t")" = 17 ] || fail "MSRs: $(jq length <<<"$t") rows, want 17"
[ "$(jq '[.[].count] | add' <<<"$t")" = 10000 ] || fail "MSRs: sum $(jq '[.[].count] | add' <<<"$t"), want 10000"
[ "$(jq -c '.[16] | [.key, .count]' <<<"$t")" = '["other",9984]' ] || fail "MSRs other: $(jq -c '.[16]' <<<"$t")"
echo "ok: 10,000 MSRs: 16 rows and other 9984, 10,000 in all"
end_tpkeys a
end_tpkeys b
