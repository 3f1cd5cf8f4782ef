#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exits broken down by key (issue 23) where no guest runs: a fake tracefs
# names real syscall tracepoints kvm_pio, kvm_mmio, kvm_msr and
# kvm_hypercall (breakdown_lib.sh), and two fake VMs (tests/fakes/tpkeys,
# vCPU threads named as QEMU names them) make exact hits with different
# ports, MSRs, addresses and hypercalls on two vCPUs. kvmstat -1 --json
# --breakdown all must count every key exactly, per VM and per vCPU, with
# its direction and name; -1's table must list them perf kvm stat's way;
# --breakdown msr loads the msr program alone; without CAP_BPF one line
# says it needs BPF.
source tests/system/lib.sh
need_tracepoints
source tests/system/breakdown_lib.sh
breakdown_tracefs "$TMP/tracefs"
start_tpkeys a 0:ioport:0x70:1:300 0:ioport:0x71:0:200 1:ioport:0x70:1:100 \
	1:msr:0x6e0:1:250 1:msr:0x830:1:50 0:msr:0xc0000080:0:7 1:hc:0x12345:0:40 \
	1:mmio:0xfebd1000:2:30 1:mmio:0xfebd2000:1:20
start_tpkeys b 0:ioport:0x3f8:1:123 0:msr:0x10:0:77 1:ioport:0x3f8:1:5
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --json -1 -s 2 --breakdown all -f '^kvm_entry$'
sleep 0.8
go_tpkeys a
go_tpkeys b
wait "$k_PID" || fail "kvmstat: status $?: $(cat "$TMP/k.err")"
jq -e .breakdown "$TMP/k.out" >/dev/null || fail "no breakdown object: $(head -c 300 "$TMP/k.out")"

# want PID VCPU KIND KEY DIR COUNT [NAME]: one row's count (VCPU - for the
# VM's table) and its name
want() {
	local sel
	if [ "$2" = - ]; then
		sel='.breakdown.vms[] | select(.pid == $p)'
	else
		sel='.breakdown.vms[] | select(.pid == $p) | .vcpus[] | select(.vcpu == ($v | tonumber))'
	fi
	row=$(jq -c --argjson p "$1" --arg v "$2" --arg k "$3" --arg key "$4" --arg d "$5" \
		"$sel | .[\$k][] | select(.key == \$key and (.direction // \"-\") == \$d)" "$TMP/k.out")
	[ "$(jq -s 'length' <<<"$row")" = 1 ] || fail "pid $1 vcpu $2 $3 $4 $5: want one row: '$row'"
	[ "$(jq .count <<<"$row")" = "$6" ] || fail "pid $1 vcpu $2 $3 $4 $5: count, want $6: $row"
	[ -z "${7:-}" ] || [ "$(jq -r .name <<<"$row")" = "$7" ] || fail "pid $1 $3 $4: name, want $7: $row"
}
want "$a_PID" - ioport 0x70 out 400 CMOS_INDEX
want "$a_PID" 0 ioport 0x70 out 300
want "$a_PID" 1 ioport 0x70 out 100
want "$a_PID" - ioport 0x71 in 200 CMOS_DATA
want "$a_PID" - msr 0x6e0 write 250 TSC_DEADLINE
want "$a_PID" - msr 0x830 write 50 X2APIC_ICR
want "$a_PID" 0 msr 0xc0000080 read 7 EFER
want "$a_PID" - hypercall 0x12345 - 40
want "$a_PID" 1 mmio 0xfebd1000 write 30
want "$a_PID" - mmio 0xfebd2000 read 20
want "$b_PID" - ioport 0x3f8 out 128 COM1
want "$b_PID" 0 ioport 0x3f8 out 123
want "$b_PID" 1 ioport 0x3f8 out 5
want "$b_PID" 0 msr 0x10 read 77 TSC
# nothing else of theirs, and not each other's keys
n=$(jq --argjson p "$a_PID" '[.breakdown.vms[] | select(.pid == $p) | (.ioport, .msr, .mmio, .hypercall)[]] | length' "$TMP/k.out")
[ "$n" = 8 ] || fail "VM a: $n rows, want 8: $(jq -c .breakdown "$TMP/k.out")"
n=$(jq --argjson p "$b_PID" '[.breakdown.vms[] | select(.pid == $p) | (.ioport, .msr)[]] | length' "$TMP/k.out")
[ "$n" = 2 ] || fail "VM b: $n rows, want 2"
echo "ok: JSON: exact counts per key, VM and vCPU for two fake VMs"

# -1: the tables after kvm_stat's rows, perf kvm stat's keys
start_tpkeys c 0:ioport:0x64:0:42 0:msr:0x6e0:1:9
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat t -t -1 -s 3 --breakdown ioport,msr -f '^kvm_entry$'
sleep 0.8
go_tpkeys c
wait "$t_PID" || fail "kvmstat -1: status $?: $(cat "$TMP/t.err")"
grep -q '^ioport exits by key' "$TMP/t.out" || fail "-1: no ioport table: $(cat "$TMP/t.out")"
grep -q '^msr exits by key' "$TMP/t.out" || fail "-1: no msr table"
! grep -q '^mmio exits' "$TMP/t.out" || fail "-1: an mmio table though not asked for"
grep -Eq '^ 0x64:PIN +KBD_CMD +42 ' "$TMP/t.out" || fail "-1: no row 0x64:PIN KBD_CMD 42: $(cat "$TMP/t.out")"
grep -Eq '^ 0x6e0:W +TSC_DEADLINE +9 ' "$TMP/t.out" || fail "-1: no row 0x6e0:W TSC_DEADLINE 9"
echo "ok: -1: $(grep -E '^ 0x(64|6e0):' "$TMP/t.out" | tr -s ' ' | paste -sd';')"
end_tpkeys c
end_tpkeys b
end_tpkeys a

# without CAP_BPF and CAP_SYS_ADMIN: one line saying it needs BPF
if command -v setpriv >/dev/null; then
	KVMSTAT_TRACEFS_ROOT=$TMP/tracefs setpriv --bounding-set=-bpf,-sys_admin \
		--inh-caps=-bpf,-sys_admin -- "$KVMSTAT" -t -1 -s 0.1 --breakdown msr -f '^kvm_entry$' >"$TMP/nc.out" 2>"$TMP/nc.err"
	rc=$?
	[ $rc = 1 ] || fail "without CAP_BPF: status $rc, want 1: $(cat "$TMP/nc.err")"
	[ "$(wc -l <"$TMP/nc.err")" = 1 ] && grep -q '^kvmstat: --breakdown needs BPF' "$TMP/nc.err" ||
		fail "without CAP_BPF: $(cat "$TMP/nc.err")"
	echo "ok: without CAP_BPF: $(cat "$TMP/nc.err")"
fi
