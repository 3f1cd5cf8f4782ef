#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exits by key on real guests (issue 23): two test guests of 2 vCPUs each
# make N port I/O exits per vCPU, one on port 0x70 (112), the other on
# 0x3f8 (1016), and a third N MMIO writes to 0x9000 (36864) per vCPU.
# kvmstat --breakdown ioport,mmio must count exactly 2N per VM under its
# own port (out, named CMOS_INDEX and COM1) and N per vCPU, none of the
# other's, and 2N MMIO writes at 0x9000, in --json -1 and in the
# exporter's kvm_ioport_exits_total and kvm_mmio_exits_total; with
# --latency beside, each port's exits timed from their kvm_exit.
source tests/system/lib.sh
need_kvm
N=500
start_guest g1 -v 2 -n $N -k pio --port 112 -t 8
start_guest g2 -v 2 -n $N -k pio --port 1016 -t 8
start_guest g3 -v 2 -n $N -k mmio --mmio-addr 36864 -t 8
vm1=${g1_VMS%% *} vm2=${g2_VMS%% *} vm3=${g3_VMS%% *}
start_kvmstat k -t --json -1 -s 6 --breakdown ioport,mmio -f '^kvm_(pio|mmio)$'
wait_polling "$k_PID"
go_guest g1
go_guest g2
go_guest g3
wait "$k_PID" || fail "kvmstat: status $?: $(cat "$TMP/k.err")"
# row PID VCPU KIND KEY DIR: the count (VCPU - for the VM's table)
row() {
	local sel='.breakdown.vms[] | select(.pid == $p)'
	[ "$2" = - ] || sel="$sel"' | .vcpus[] | select(.vcpu == ($v | tonumber))'
	jq --argjson p "$1" --arg v "$2" --arg k "$3" --arg key "$4" --arg d "$5" \
		"$sel | .[\$k][] | select(.key == \$key and .direction == \$d) | .count" "$TMP/k.out"
}
for want in "$vm1 0x70 CMOS_INDEX" "$vm2 0x3f8 COM1"; do
	read -r vm port name <<<"$want"
	[ "$(row "$vm" - ioport "$port" out)" = $((2 * N)) ] ||
		fail "VM $vm port $port: '$(row "$vm" - ioport "$port" out)', want $((2 * N)): $(jq -c .breakdown "$TMP/k.out")"
	for v in 0 1; do
		[ "$(row "$vm" $v ioport "$port" out)" = $N ] || fail "VM $vm vCPU $v port $port: want $N"
	done
	n=$(jq --argjson p "$vm" '[.breakdown.vms[] | select(.pid == $p) | .ioport[]] | length' "$TMP/k.out")
	[ "$n" = 1 ] || fail "VM $vm: $n ports, want 1"
	[ "$(jq -r --argjson p "$vm" '.breakdown.vms[] | select(.pid == $p) | .ioport[0].name' "$TMP/k.out")" = "$name" ] ||
		fail "VM $vm: port not named $name"
	echo "ok: VM $vm: $((2 * N)) exits on $port ($name), $N per vCPU"
done
[ "$(row "$vm3" - mmio 0x9000 write)" = $((2 * N)) ] || fail "VM $vm3 MMIO 0x9000: '$(row "$vm3" - mmio 0x9000 write)', want $((2 * N))"
echo "ok: VM $vm3: $((2 * N)) MMIO writes at 0x9000"
wait_guest g1
wait_guest g2
wait_guest g3

# the exporter: the same counts as series
source tests/system/exporter_lib.sh
start_guest g1 -v 2 -n $N -k pio --port 112 -t 30
vm1=${g1_VMS%% *}
PORT=$(free_port)
start_kvmstat e -t --listen "127.0.0.1:$PORT" -s 0.5 --breakdown ioport -f '^kvm_pio$'
wait_polling "$e_PID"
go_guest g1
s="kvm_ioport_exits_total{pid=\"$vm1\",port=\"0x70\",name=\"CMOS_INDEX\",direction=\"out\"}"
for _ in $(seq 50); do
	[ "$(metric "$(scrape "http://127.0.0.1:$PORT/metrics")" "$s")" = $((2 * N)) ] && break
	sleep 0.2
done
[ "$(metric "$(scrape "http://127.0.0.1:$PORT/metrics")" "$s")" = $((2 * N)) ] || fail "exporter: $s not $((2 * N))"
echo "ok: exporter: $s $((2 * N))"
stop e
# with --latency beside (issue 31): each port exit timed from its
# kvm_exit, the start the exit-latency programs keep and share, to the
# re-entry. Every exit but each vCPU's last (its thread does not enter
# the guest again) is timed: 2(N-1), as many as --latency times of the
# VM's I/O exits, and their total within 10 % of those exits' total (the
# same starts; each end read by its own program)
start_guest g4 -v 2 -n $N -k pio --port 112 -t 30
vm4=${g4_VMS%% *}
PORT=$(free_port)
start_kvmstat l -t --listen "127.0.0.1:$PORT" -s 0.5 --breakdown ioport --latency -f '^kvm_pio$'
wait_polling "$l_PID"
go_guest g4
sk="pid=\"$vm4\",port=\"0x70\",name=\"CMOS_INDEX\",direction=\"out\""
want=$((2 * (N - 1)))
for _ in $(seq 100); do
	text=$(scrape "http://127.0.0.1:$PORT/metrics")
	[ "$(metric "$text" "kvm_ioport_exits_latency_seconds_count{$sk}")" = $want ] && break
	sleep 0.2
done
[ "$(metric "$text" "kvm_ioport_exits_total{$sk}")" = $((2 * N)) ] ||
	fail "exporter: port 0x70 '$(metric "$text" "kvm_ioport_exits_total{$sk}")', want $((2 * N))"
[ "$(metric "$text" "kvm_ioport_exits_latency_seconds_count{$sk}")" = $want ] ||
	fail "port 0x70 timed: '$(metric "$text" "kvm_ioport_exits_latency_seconds_count{$sk}")', want $want"
io=$(grep -E "^kvm_exit_latency_seconds_count\{pid=\"$vm4\",reason=\"(io|IOIO|IO_INSTRUCTION)\"\}" <<<"$text") ||
	fail "no exit latency of the VM's I/O exits: $(grep "^kvm_exit_latency_seconds_count{pid=\"$vm4\"" <<<"$text")"
[ "${io##* }" = $want ] || fail "the VM's I/O exits timed by --latency: $io, want $want"
ksum=$(metric "$text" "kvm_ioport_exits_latency_seconds_sum{$sk}")
lsum=$(grep -E "^kvm_exit_latency_seconds_sum\{pid=\"$vm4\",reason=\"(io|IOIO|IO_INSTRUCTION)\"\}" <<<"$text")
lsum=${lsum##* }
awk -v a="$ksum" -v b="$lsum" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.1 * b) }' ||
	fail "port 0x70's total $ksum s against the I/O exits' $lsum s: more than 10 % apart"
echo "ok: --latency: $want port exits timed, total $ksum s; the I/O exits' $lsum s"
stop l
